//! Input files of the commands: a path, or `-` for standard input, in
//! every command that reads a file (`decode`, `sim`, `ip send`, `dtn
//! send`).

use std::io::Read;
use std::path::Path;

use anyhow::Context;

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
pub fn open(path: Option<&Path>) -> anyhow::Result<(Box<dyn Read>, String)> {
    match path {
        Some(path) if !is_stdin(path) => {
            let f = std::fs::File::open(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
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
