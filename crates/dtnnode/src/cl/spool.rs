//! The first octets of an incoming bundle, kept on disk before the
//! acknowledgement that covers them goes out (an AX.25 CL ACK_SEGMENT, a
//! TCPCL XFER_ACK).
//!
//! An acknowledgement inside a bundle tells the sender that the octets
//! before it need never be sent again (reactive fragmentation, RFC 9171
//! 5.8), so they must survive this node stopping at any moment, as a whole
//! bundle must before its last acknowledgement (RFC 9171 5.6). Each
//! session spools the bundle it is receiving to one file in the store
//! directory, appending and syncing what arrived since the last
//! acknowledgement just before the next one is sent; the file goes once
//! the node has stored the bundle (whole, or the prefix as a fragment when
//! the session ends inside it). A file left by a node that stopped is a
//! prefix the peer was told it need not send again: the node keeps it as
//! a fragment when it starts ([`spooled`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// File names: the layer, this infix, the session's name, [`SUFFIX`]
/// (`ax25-partial-N0CALL-3.bin`).
const INFIX: &str = "-partial-";
const SUFFIX: &str = ".bin";

/// The spool of the bundle coming in on one session.
#[derive(Debug)]
pub(super) struct Spool {
    dir: PathBuf,
    path: PathBuf,
    /// The open file and the octets in it.
    file: Option<(File, usize)>,
}

impl Spool {
    /// The spool in `dir` of `layer`'s session `name` (`ax25` and the
    /// remote station, say), unique among the sessions alive; a file is
    /// made only when there is something to keep.
    pub(super) fn new(dir: &Path, layer: &str, name: &str) -> Spool {
        Spool {
            dir: dir.to_path_buf(),
            path: dir.join(format!("{layer}{INFIX}{name}{SUFFIX}")),
            file: None,
        }
    }

    /// The octets kept.
    pub(super) fn kept(&self) -> usize {
        self.file.as_ref().map_or(0, |(_, kept)| *kept)
    }

    /// Makes `prefix`, the incoming bundle's octets so far (which extend
    /// those kept before), durable.
    pub(super) fn keep(&mut self, prefix: &[u8]) -> io::Result<()> {
        if prefix.len() <= self.kept() {
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
            .is_some_and(|n| n.contains(INFIX) && n.ends_with(SUFFIX));
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
        let mut spool = Spool::new(dir.path(), "ax25", "N0CALL-3");
        spool.keep(&[]).unwrap();
        assert!(spooled(dir.path()).unwrap().is_empty(), "nothing to keep");
        spool.keep(b"abc").unwrap();
        spool.keep(b"abc").unwrap();
        spool.keep(b"abcdef").unwrap();
        assert_eq!(spool.kept(), 6);
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
