//! A command line that cannot work as given: the commands return it
//! (wrapped in `anyhow`) and `main` exits with status 2 for it.

use std::fmt;

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
