//! What `send` and `connect` say while they wait for the peer's UA: each
//! SABM (SABME) as it goes, with its number of N2 (AX.25 v2.2 6.3.1: the
//! set-mode command is sent again on each T1 expiry, N2 times at most),
//! and every few seconds in between, so that a station that does not
//! answer is never waited for in silence.

use std::time::Duration;

use linklab_io::{Direction, Notice, StationEvent};
use linklab_link::Config;
use linklab_wire::ax25::{same_station, Address, Frame};
use linklab_wire::control::{Control, Modulus, Unnumbered};
use tokio::time::Instant;

use super::Log;

/// The longest silence while connecting.
const EVERY: Duration = Duration::from_secs(5);

/// The wait for the peer's answer to our set-mode command.
pub(crate) struct Connecting {
    remote: Address,
    /// SABM or SABME, the last one sent.
    command: &'static str,
    n2: u8,
    /// The initial T1: the first try's wait.
    t1: Duration,
    /// Set-mode commands sent so far.
    tries: u32,
    started: Instant,
    /// When to say again that we are waiting.
    next_word: Instant,
}

impl Connecting {
    pub(crate) fn new(remote: Address, config: &Config, modulus: Modulus) -> Connecting {
        let now = Instant::now();
        Connecting {
            remote,
            command: match modulus {
                Modulus::Mod8 => "SABM",
                Modulus::Mod128 => "SABME",
            },
            n2: config.n2,
            t1: config.t1,
            tries: 0,
            started: now,
            next_word: now + EVERY,
        }
    }

    /// Counts a set-mode command to the remote among the frames sent
    /// (the station reports every frame it sends while connecting), and
    /// says it went.
    pub(crate) fn on_notice(&mut self, log: &Log, notice: &Notice) {
        let Notice::Station(StationEvent::Monitor {
            direction: Direction::Tx,
            bytes,
            modulus,
        }) = notice
        else {
            return;
        };
        let Ok(frame) = Frame::decode(bytes, *modulus) else {
            return;
        };
        let command = match frame.control() {
            Control::U {
                kind: Unnumbered::Sabm,
                ..
            } => "SABM",
            Control::U {
                kind: Unnumbered::Sabme,
                ..
            } => "SABME",
            _ => return,
        };
        if !same_station(frame.dest(), &self.remote) {
            return;
        }
        self.command = command;
        self.tries += 1;
        let (remote, command, n2) = (self.remote, self.command, self.n2);
        let tries = self.tries;
        if tries == 1 {
            log.line(&format!(
                "linklab: connecting to {remote}: {command} 1 of {n2}, T1 {:.1} s \
                 (it grows with each try)",
                self.t1.as_secs_f64()
            ));
        } else {
            log.line(&format!(
                "linklab: connecting to {remote}: no UA after {:.0} s; {command} {tries} of {n2}",
                self.started.elapsed().as_secs_f64()
            ));
        }
        self.next_word = Instant::now() + EVERY;
    }

    /// Resolves when it is time to say again that we wait (for `select!`).
    pub(crate) async fn tick(&self) {
        tokio::time::sleep_until(self.next_word).await
    }

    /// Says that we still wait, and for what.
    pub(crate) fn waiting(&mut self, log: &Log) {
        log.line(&format!(
            "linklab: connecting to {}: waiting for UA to {} {} of {} ({:.0} s so far)",
            self.remote,
            self.command,
            self.tries.max(1),
            self.n2,
            self.started.elapsed().as_secs_f64()
        ));
        self.next_word = Instant::now() + EVERY;
    }
}
