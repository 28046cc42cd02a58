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
//!
//! The writes and syncs run on tokio's blocking pool, never on the
//! reactor's thread: a slow disk stalls only the session waiting for its
//! own acknowledgement, not the other sessions' I/O.

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
    /// The open file, between writes.
    file: Option<File>,
    /// The octets in the file, durable.
    kept: usize,
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
            kept: 0,
        }
    }

    /// The octets kept.
    #[cfg(test)]
    fn kept(&self) -> usize {
        self.kept
    }

    /// Makes `prefix`, the incoming bundle's octets so far (which extend
    /// those kept before), durable, off the reactor's thread. After an
    /// error the next call writes the whole prefix again. Await it to the
    /// end: a write dropped half way may still land.
    pub(super) async fn keep(&mut self, prefix: &[u8]) -> io::Result<()> {
        if prefix.len() <= self.kept {
            return Ok(());
        }
        // Both reset until the write succeeds; the file exists once
        // something is kept.
        let kept = std::mem::take(&mut self.kept);
        let file = self.file.take();
        let octets = prefix[kept..].to_vec();
        let (dir, path) = (self.dir.clone(), self.path.clone());
        let written = tokio::task::spawn_blocking(move || append(file, &dir, &path, &octets))
            .await
            .map_err(io::Error::other)??;
        self.file = Some(written);
        self.kept = prefix.len();
        Ok(())
    }

    /// The bundle is stored (or gone): the file goes (also one a failed
    /// write left).
    pub(super) fn clear(&mut self) {
        self.kept = 0;
        self.file = None;
        let _ = fs::remove_file(&self.path);
    }
}

/// Appends `octets` to `file` and syncs them; without a file, makes (or
/// truncates) the one at `path` first and syncs its name in `dir`. The
/// blocking half of [`Spool::keep`].
fn append(file: Option<File>, dir: &Path, path: &Path, octets: &[u8]) -> io::Result<File> {
    let mut file = match file {
        Some(file) => file,
        None => {
            let file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(path)?;
            // The new name is durable too.
            File::open(dir)?.sync_all()?;
            file
        }
    };
    file.write_all(octets)?;
    file.sync_data()?;
    Ok(file)
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
    use std::io::Read;
    use std::time::Duration;

    /// A single-threaded runtime, as the node's reactor.
    fn reactor() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
    }

    #[test]
    fn a_spool_grows_with_the_prefix_and_goes_when_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = Spool::new(dir.path(), "ax25", "N0CALL-3");
        let rt = reactor();
        rt.block_on(spool.keep(&[])).unwrap();
        assert!(spooled(dir.path()).unwrap().is_empty(), "nothing to keep");
        rt.block_on(spool.keep(b"abc")).unwrap();
        rt.block_on(spool.keep(b"abc")).unwrap();
        rt.block_on(spool.keep(b"abcdef")).unwrap();
        assert_eq!(spool.kept(), 6);
        let found = spooled(dir.path()).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, b"abcdef");
        assert!(found[0].0.ends_with("ax25-partial-N0CALL-3.bin"));
        spool.clear();
        assert!(spooled(dir.path()).unwrap().is_empty());
        // The next bundle starts a new file.
        rt.block_on(spool.keep(b"xy")).unwrap();
        assert_eq!(spooled(dir.path()).unwrap()[0].1, b"xy");
    }

    #[test]
    fn a_spool_write_that_blocks_leaves_the_reactor_running() {
        // The spool's path is a FIFO: opening it to write blocks until a
        // reader opens it, as a stalled disk would. The reader here opens
        // it only once another task on the reactor's one thread has run,
        // which it cannot if the write holds that thread.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tcpcl-partial-1.bin");
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        assert!(made.unwrap().success(), "mkfifo");
        let (ran, ran_rx) = std::sync::mpsc::channel();
        let spool_dir = dir.path().to_path_buf();
        let reactor_thread = std::thread::spawn(move || {
            let mut spool = Spool::new(&spool_dir, "tcpcl", "1");
            let other = async {
                tokio::task::yield_now().await;
                ran.send(()).unwrap();
            };
            let (kept, ()) = reactor().block_on(async { tokio::join!(spool.keep(b"abc"), other) });
            kept
        });
        ran_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("another task ran while the spool's write was blocked");
        let mut got = [0u8; 3];
        File::open(&path).unwrap().read_exact(&mut got).unwrap();
        assert_eq!(&got, b"abc");
        // A FIFO cannot be synced: the spool says so rather than claim
        // the octets are durable.
        let kept = reactor_thread.join().unwrap();
        assert!(kept.is_err(), "{kept:?}");
    }
}
