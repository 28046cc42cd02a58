//! Output files that never replace a user's file: the commands that write
//! what arrives from a peer (`ip serve`, `dtn recv`) refuse an `--out FILE`
//! that exists before they start, and give a name already taken (a file
//! from an earlier run in `--out DIR`) a suffix instead of writing over it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::usage::usage;

/// Refuses, before anything starts, an `--out` file that is there already.
pub fn refuse_existing(option: &str, path: &Path) -> anyhow::Result<()> {
    if path.symlink_metadata().is_ok() {
        return Err(usage(format!(
            "{option} {}: a file is there already; name a new file or a directory \
             (nothing is overwritten)",
            path.display()
        )));
    }
    Ok(())
}

/// Writes `body` to a new file at `path`, or at `path.1`, `path.2`, ...
/// when that name is taken: never over an existing file. Returns the path
/// written.
pub fn write_new(path: &Path, body: &[u8]) -> anyhow::Result<PathBuf> {
    let mut candidate = path.to_path_buf();
    let mut suffix = 0u64;
    loop {
        match std::fs::File::options()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(mut file) => {
                file.write_all(body)
                    .with_context(|| format!("cannot write {}", candidate.display()))?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                suffix += 1;
                let mut name = path.as_os_str().to_owned();
                name.push(format!(".{suffix}"));
                candidate = PathBuf::from(name);
            }
            Err(e) => {
                return Err(e).with_context(|| format!("cannot write {}", candidate.display()))
            }
        }
    }
}
