//! The real-time driver of an [`IpStation`]: reads the TNC's byte stream
//! and the clock with tokio, and steps an [`Application`] on the host's
//! sockets after every poll.
//!
//! When the application is done the driver lingers: it keeps running
//! until everything sent has left (datagram mode) or been acknowledged by
//! AX.25 (VC mode), then releases the VC links and waits for them to be
//! released, each phase bounded by [`IpDriverOptions::linger`].

use core::time::Duration;

use linklab_core::{earliest, Instant};
use linklab_ip::Host;
use linklab_link::State;
use tokio::io::AsyncReadExt;
use tokio::time::sleep_until;

use crate::address::KissStream;
use crate::driver::{instant, DriverError};
use crate::ip_station::{IpEvent, IpStation};
use crate::kiss_writer::KissWriter;
use crate::params::KissParams;

/// Shortest sleep of the loop, so that a component asking for attention
/// "now" again and again cannot spin it.
const MIN_SLEEP: Duration = Duration::from_millis(1);

/// What runs on the host: stepped after each poll, in real time.
pub trait Application {
    /// Acts on the host's sockets at `now` (the host was just polled).
    fn step(&mut self, host: &mut Host, now: Instant);
    /// When the application next wants to act without any network event.
    fn poll_at(&self) -> Option<Instant>;
    /// The application has finished, successfully or not.
    fn done(&self) -> bool;
    /// Something the station reported, `at` after the driver started.
    fn event(&mut self, at: Duration, event: IpEvent);
    /// The user interrupted (Ctrl-C): finish up soon.
    fn interrupt(&mut self, now: Instant);
}

/// Settings of the driver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IpDriverOptions {
    /// Most time spent, after the application is done, waiting for what
    /// was sent to be delivered, and then again for the VC links to be
    /// released.
    pub linger: Duration,
}

/// Where the driver is in its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    /// The application is done; waiting for the AX.25 side to deliver.
    Draining {
        until: tokio::time::Instant,
    },
    /// DISC sent on every VC link; waiting for them to be released.
    Releasing {
        until: tokio::time::Instant,
    },
}

/// Runs `app` on `station` over `stream` until the application is done
/// and the links are released (see the module documentation), a second
/// Ctrl-C, or an I/O error. It first sends the KISS parameters of
/// `params`.
pub async fn run<A: Application>(
    stream: Box<dyn KissStream>,
    station: &mut IpStation,
    params: KissParams,
    app: &mut A,
    options: IpDriverOptions,
) -> Result<(), DriverError> {
    let start = tokio::time::Instant::now();
    let (mut reader, writer) = tokio::io::split(stream);
    let mut writer = KissWriter::spawn(writer, &params);
    let mut phase = Phase::Running;
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let mut interrupts = 0u32;
    let mut buf = vec![0u8; 4096];
    let result = loop {
        let now = instant(start);
        station.poll(now);
        app.step(station.host_mut(), now);
        station.poll(now);
        let mut out = Vec::new();
        while let Some(bytes) = station.poll_transmit(now) {
            out.extend_from_slice(&bytes);
        }
        writer.send(out);
        let at = start.elapsed();
        while let Some(event) = station.poll_event() {
            app.event(at, event);
        }
        let wall = tokio::time::Instant::now();
        match phase {
            Phase::Running if app.done() => {
                phase = Phase::Draining {
                    until: wall + options.linger,
                };
                continue;
            }
            Phase::Draining { until } if station.host().ax25().pending() == 0 || wall >= until => {
                station.host_mut().ax25_mut().disconnect_all(now);
                phase = Phase::Releasing {
                    until: wall + options.linger,
                };
                continue;
            }
            Phase::Releasing { until } => {
                let released = station
                    .host()
                    .ax25()
                    .links()
                    .all(|(_, link)| link.state() == State::Disconnected);
                if released || wall >= until {
                    break Ok(());
                }
            }
            _ => {}
        }
        let deadline = match phase {
            Phase::Running => None,
            Phase::Draining { until } | Phase::Releasing { until } => Some(until),
        };
        let wake = earliest([station.poll_timeout(now), app.poll_at()])
            .map(|t| start + (t - Instant::ZERO))
            .into_iter()
            .chain(deadline)
            .min()
            .map(|t| t.max(wall + MIN_SLEEP));
        tokio::select! {
            read = reader.read(&mut buf) => match read {
                Ok(0) => break Err(DriverError::TncClosed),
                Ok(n) => station.handle_kiss_bytes(instant(start), buf.get(..n).unwrap_or_default()),
                Err(e) => break Err(DriverError::Read(e)),
            },
            _ = sleep_until(wake.unwrap_or(wall)), if wake.is_some() => {
                station.handle_timeout(instant(start));
            },
            // SIGTERM (systemd, `timeout`, `kill`) as Ctrl-C: the links
            // are released, not left for the peer to find dead.
            _ = async {
                match terminate.as_mut() {
                    Some(t) => t.recv().await,
                    None => std::future::pending().await,
                }
            } => {
                interrupts += 1;
                if interrupts > 1 {
                    break Ok(());
                }
                app.interrupt(instant(start));
            },
            _ = tokio::signal::ctrl_c() => {
                interrupts += 1;
                if interrupts > 1 {
                    break Ok(());
                }
                app.interrupt(instant(start));
            },
            written = &mut writer.task => break Err(KissWriter::failed(written)),
        }
    };
    // The bad input still counted is reported, however the loop ended.
    station.flush_bad_input();
    while let Some(event) = station.poll_event() {
        app.event(start.elapsed(), event);
    }
    result?;
    writer.finish().await
}
