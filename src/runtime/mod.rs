//! What every command that runs in real time shares: [`block_on`], the
//! runtime a command's future runs on, and the [`signals`] that stop a
//! command after its links are released, with the exit status they give.

mod signals;

pub(crate) use signals::{Signals, Stop};

use anyhow::Context;

/// Exit status of a command ended by SIGINT (128 + 2), as shells report.
pub(crate) const INTERRUPTED: i32 = 130;

/// Ends the process at once after a second signal, with its status.
pub(crate) fn quit_now(stop: Stop) -> ! {
    eprintln!(
        "linklab: interrupted again; quitting at once ({})",
        stop.name()
    );
    std::process::exit(stop.status())
}

/// Runs `future` on a single-threaded runtime. The runtime is dropped
/// without waiting for a blocked standard-input read.
pub(crate) fn block_on<T, F: std::future::Future<Output = anyhow::Result<T>>>(
    future: F,
) -> anyhow::Result<T> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    let result = runtime.block_on(future);
    runtime.shutdown_background();
    result
}
