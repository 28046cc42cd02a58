//! The signals that stop a link command: SIGINT (Ctrl-C), SIGTERM (`kill`,
//! `timeout`, a service manager's stop) and SIGHUP (the terminal went
//! away). Each is caught, so that the command ends its links as on a
//! normal end (DISC, or DM for a cut transfer) before it exits; a second
//! one quits at once.

use anyhow::Context;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// A signal that asks a command to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// SIGINT.
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP.
    HangUp,
}

impl Stop {
    /// The signal's name, as `kill -l` gives it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "SIGINT",
            Stop::Terminate => "SIGTERM",
            Stop::HangUp => "SIGHUP",
        }
    }

    /// The exit status a shell shows for a process this signal ended,
    /// 128 + its number: 130, 143, 129.
    pub(crate) fn status(self) -> i32 {
        128 + match self {
            Stop::Interrupt => 2,
            Stop::Terminate => 15,
            Stop::HangUp => 1,
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP, caught from [`Signals::new`] on.
pub(crate) struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hang_up: Signal,
}

impl Signals {
    /// Catches the three (inside the runtime), from now on.
    pub(crate) fn new() -> anyhow::Result<Signals> {
        let catch = |kind| signal(kind).context("cannot catch signals");
        Ok(Signals {
            interrupt: catch(SignalKind::interrupt())?,
            terminate: catch(SignalKind::terminate())?,
            hang_up: catch(SignalKind::hangup())?,
        })
    }

    /// The next of them to arrive (cancel-safe, for `select!`).
    pub(crate) async fn recv(&mut self) -> Stop {
        tokio::select! {
            Some(()) = self.interrupt.recv() => Stop::Interrupt,
            Some(()) = self.terminate.recv() => Stop::Terminate,
            Some(()) = self.hang_up.recv() => Stop::HangUp,
            else => std::future::pending().await,
        }
    }
}
