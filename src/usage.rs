//! A command line that cannot work as given: the commands return it
//! (wrapped in `anyhow`) and `main` exits with status 2 for it.

use std::fmt;
use std::path::Path;

/// A command line that cannot work as given (exit status 2).
#[derive(Debug)]
pub struct UsageError(String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// `text` as a [`UsageError`].
pub fn usage(text: String) -> anyhow::Error {
    anyhow::Error::new(UsageError(text))
}

/// Whether `e`, or any error it was given as context to, is a
/// [`UsageError`] or a [`crate::sim_cmd::InputError`]: a command line or
/// input file that cannot work (exit status 2), however many contexts
/// were added on the way up.
pub fn is_usage_or_input(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| c.is::<UsageError>() || c.is::<crate::sim_cmd::InputError>())
}

/// An error of reading an input file the user named, as a usage error:
/// the file is missing or unreadable before anything starts (exit
/// status 2), with the message `e` already has.
pub fn input_file(e: anyhow::Error) -> anyhow::Error {
    usage(message(&e))
}

/// Checks before any work that output directory `dir` (given with
/// `option`) can be made and written in, so that a run never fails at its
/// end, its results lost, on a path that could never work. Makes the
/// directory (it is written into later anyway).
pub fn check_out_dir(option: &str, dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| {
        usage(format!(
            "{option} {}: cannot create the directory: {e}",
            dir.display()
        ))
    })?;
    let probe = dir.join(format!(".linklab-write-check-{}", std::process::id()));
    std::fs::File::create(&probe).map_err(|e| {
        usage(format!(
            "{option} {}: cannot write in the directory: {e}",
            dir.display()
        ))
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Checks before any work that output file `path` (given with `option`)
/// can be written, without changing a file that is there (it is replaced
/// only when the command writes it) and without leaving one that was not.
pub fn check_out_file(option: &str, path: &Path) -> anyhow::Result<()> {
    let fail =
        |e: std::io::Error| usage(format!("{option} {}: cannot write it: {e}", path.display()));
    if path.symlink_metadata().is_ok() {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(fail)?;
    } else {
        std::fs::File::create(path).map_err(fail)?;
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// `e` and its causes, joined with ": " as `{:#}` joins them, but without
/// a cause whose text the message before it already holds (an error that
/// prints its source, such as "cannot listen on ADDR: Address already in
/// use (os error 98)", would otherwise show the OS error twice).
pub fn message(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}
