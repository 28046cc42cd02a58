//! The first octets of an incoming bundle, kept on disk before the
//! ACK_SEGMENT that acknowledges them goes out.
//!
//! An ACK_SEGMENT inside a bundle tells the sender that the octets before
//! it need never be sent again (reactive fragmentation, RFC 9171 5.8), so
//! they must survive this node stopping at any moment, as a whole bundle
//! must before its last acknowledgement (RFC 9171 5.6). Each AX.25 link
//! spools the bundle it is receiving to one file in the store directory,
//! appending and syncing what arrived since the last acknowledgement just
//! before the next one is sent; the file goes once the node has stored the
//! bundle (whole, or the prefix as a fragment when the link drops). A file
//! left by a node that stopped is a prefix the peer was told it need not
//! send again: the node keeps it as a fragment when it starts
//! ([`spooled`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use linklab_wire::ax25::Address;

/// File names: this prefix, the remote station, [`SUFFIX`].
const PREFIX: &str = "ax25-partial-";
const SUFFIX: &str = ".bin";

/// The spool of the bundle coming in on the link with one station.
#[derive(Debug)]
pub(super) struct Spool {
    dir: PathBuf,
    path: PathBuf,
    /// The open file and the octets in it.
    file: Option<(File, usize)>,
}

impl Spool {
    /// The spool in `dir` for the link with `remote` (a file is made only
    /// when there is something to keep).
    pub(super) fn new(dir: &Path, remote: &Address) -> Spool {
        Spool {
            dir: dir.to_path_buf(),
            path: dir.join(format!("{PREFIX}{remote}{SUFFIX}")),
            file: None,
        }
    }

    /// Makes `prefix`, the incoming bundle's octets so far (which extend
    /// those kept before), durable.
    pub(super) fn keep(&mut self, prefix: &[u8]) -> io::Result<()> {
        let kept = self.file.as_ref().map_or(0, |(_, kept)| *kept);
        if prefix.len() <= kept {
            return Ok(());
        }
        if self.file.is_none() {
            let file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&self.path)?;
            // The new name is durable too.
            File::open(&self.dir)?.sync_all()?;
            self.file = Some((file, 0));
        }
        let (file, kept) = self.file.as_mut().expect("opened above");
        file.write_all(&prefix[*kept..])?;
        file.sync_data()?;
        *kept = prefix.len();
        Ok(())
    }

    /// The bundle is stored (or gone): the file goes.
    pub(super) fn clear(&mut self) {
        if self.file.take().is_some() {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// The spools a node that stopped left in `dir`: each file's path and
/// content, the first octets of a bundle a peer was told it need not send
/// again. Remove each once its content is stored.
pub fn spooled(dir: &Path) -> io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let ours = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(SUFFIX));
        if ours {
            let octets = fs::read(&path)?;
            found.push((path, octets));
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spool_grows_with_the_prefix_and_goes_when_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let remote: Address = "N0CALL-3".parse().unwrap();
        let mut spool = Spool::new(dir.path(), &remote);
        spool.keep(&[]).unwrap();
        assert!(spooled(dir.path()).unwrap().is_empty(), "nothing to keep");
        spool.keep(b"abc").unwrap();
        spool.keep(b"abc").unwrap();
        spool.keep(b"abcdef").unwrap();
        let found = spooled(dir.path()).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, b"abcdef");
        assert!(found[0].0.ends_with("ax25-partial-N0CALL-3.bin"));
        spool.clear();
        assert!(spooled(dir.path()).unwrap().is_empty());
        // The next bundle starts a new file.
        spool.keep(b"xy").unwrap();
        assert_eq!(spooled(dir.path()).unwrap()[0].1, b"xy");
    }
}
