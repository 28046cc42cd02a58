//! Input files of the commands: a path, or `-` for standard input, in
//! every command that reads a file (`decode`, `sim`, `send`, `ip send`,
//! `dtn send`).

use std::io::Read;
use std::path::Path;

use anyhow::Context;

use crate::usage::usage;

/// Whether `path` names standard input (`-`).
fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The name of `path` in messages: the path, or "standard input".
pub fn name(path: &Path) -> String {
    if is_stdin(path) {
        "standard input".into()
    } else {
        path.display().to_string()
    }
}

/// A reader of `path`, standard input for none or `-`, and its name for
/// messages.
pub fn open(path: Option<&Path>) -> anyhow::Result<(Box<dyn Read + Send>, String)> {
    match path {
        Some(path) if !is_stdin(path) => {
            // A file that cannot be opened is an input error (exit 2),
            // found before anything is sent or computed.
            let f = std::fs::File::open(path)
                .map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
            Ok((Box::new(f), name(path)))
        }
        _ => Ok((Box::new(std::io::stdin()), "standard input".into())),
    }
}

/// The whole content of `path`, or of standard input for `-`.
pub fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    let (mut reader, name) = open(Some(path))?;
    let mut data = Vec::new();
    reader
        .read_to_end(&mut data)
        .with_context(|| format!("cannot read {name}"))?;
    Ok(data)
}

/// Octets [`ReadAhead`] reads at a time.
const BLOCK: usize = 64 * 1024;

/// Blocks [`ReadAhead`] holds read and not yet taken.
const BLOCKS_AHEAD: usize = 2;

/// A file or standard input read on a thread of its own, at most a few
/// blocks ahead of its consumer, so that an async command can take it a
/// piece at a time without blocking its loop, and memory does not grow
/// with the input's size.
pub struct ReadAhead {
    /// Blocks in order; closed after the last, or after an error.
    pub blocks: tokio::sync::mpsc::Receiver<anyhow::Result<Vec<u8>>>,
    /// The input's length if it is a regular file.
    pub len: Option<u64>,
}

impl ReadAhead {
    /// Opens `path` (standard input for `-`), so that an error is known
    /// before anything else is done, and starts reading it.
    pub fn open(path: &Path) -> anyhow::Result<ReadAhead> {
        let (mut reader, name) = open(Some(path))?;
        let len = if is_stdin(path) {
            None
        } else {
            std::fs::metadata(path)
                .ok()
                .filter(std::fs::Metadata::is_file)
                .map(|m| m.len())
        };
        let (tx, blocks) = tokio::sync::mpsc::channel(BLOCKS_AHEAD);
        std::thread::spawn(move || loop {
            let mut block = vec![0; BLOCK];
            let read = reader.read(&mut block);
            let sent = match read {
                Ok(0) => return,
                Ok(n) => {
                    block.truncate(n);
                    tx.blocking_send(Ok(block))
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let error = anyhow::Error::new(e).context(format!("cannot read {name}"));
                    tx.blocking_send(Err(error)).ok();
                    return;
                }
            };
            if sent.is_err() {
                // The consumer is gone.
                return;
            }
        });
        Ok(ReadAhead { blocks, len })
    }
}
