//! A closed standard output (`linklab ... | head`) ends the program
//! quietly with status 0, as `cat` and `ls` do, wherever the output was
//! being written.
//!
//! Two paths lead there: `print!`/`println!` panic on a write error, and
//! the hook of [`quiet_when_closed`] turns that panic into `exit(0)`;
//! writers that return errors write through [`Stdout`], which marks a
//! broken pipe as [`Closed`] so that `main` can tell it from a broken
//! pipe on a socket (a real error) with [`is_closed`].

use std::fmt;
use std::io::{self, Write};

/// The prefix of the panic message of `print!` and `println!` when
/// writing fails (std's `print_to`); the `io::Error` follows it.
const PRINT_PANIC: &str = "failed printing to stdout: ";

/// `EPIPE`, the same on Linux, the BSDs and macOS.
const EPIPE: i32 = 32;

/// The error inside the `io::Error` of a write to a closed standard
/// output through [`Stdout`].
#[derive(Debug)]
pub struct Closed;

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("standard output is closed")
    }
}

impl std::error::Error for Closed {}

/// The locked standard output, its broken-pipe errors marked [`Closed`].
pub struct Stdout(io::StdoutLock<'static>);

/// Standard output for writers that return errors.
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

/// `error` marked as [`Closed`] if it is a broken pipe.
fn mark(error: io::Error) -> io::Error {
    if error.kind() == io::ErrorKind::BrokenPipe {
        io::Error::new(io::ErrorKind::BrokenPipe, Closed)
    } else {
        error
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(mark)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(mark)
    }
}

/// Whether `error` comes from writing to a closed standard output.
pub fn is_closed(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .and_then(|e| e.get_ref())
            .is_some_and(|inner| inner.is::<Closed>())
    })
}

/// Installs a panic hook that ends the process with status 0, printing
/// nothing, when `print!` or `println!` finds standard output closed;
/// any other panic is reported as before.
pub fn quiet_when_closed() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied());
        let closed = format!("{PRINT_PANIC}{}", io::Error::from_raw_os_error(EPIPE));
        if message == Some(closed.as_str()) {
            std::process::exit(0);
        }
        report(info);
    }));
}
