//! The real-time driver: runs a [`Station`] on a KISS byte stream with
//! tokio, reading the clock for it and sleeping until its next timer.
//!
//! The driver owns the station. The user talks to it through a
//! [`DriverHandle`]: [`Request`]s in, [`Notice`]s out, both over channels,
//! so a command-line front end (or anything else) never blocks the loop.

use core::time::Duration;
use linklab_core::{Engine, Instant};

use linklab_wire::ax25::Address;
use thiserror::Error;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::sleep_until;

use crate::address::KissStream;
use crate::air::{AirClock, AirSettings};
use crate::kiss_writer::KissWriter;
use crate::params::KissParams;
use crate::station::{Station, StationError, StationEvent};

/// A user request to the station.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Set up a link ([`Station::connect`]).
    Connect {
        /// The remote station.
        remote: Address,
        /// Digipeaters, in path order.
        via: Vec<Address>,
    },
    /// Queue data ([`Station::send`]).
    Send {
        /// The remote station.
        remote: Address,
        /// The octets.
        data: Vec<u8>,
    },
    /// Report [`StationEvent::Unsent`] once at most `octets` queued for
    /// `remote` are unsent ([`Station::notify_unsent`]).
    NotifyUnsent {
        /// The remote station.
        remote: Address,
        /// The mark.
        octets: usize,
    },
    /// Release a link ([`Station::disconnect`]).
    Disconnect {
        /// The remote station.
        remote: Address,
    },
    /// End a link at once with DM, discarding what is not acknowledged
    /// ([`Station::abort`]).
    Abort {
        /// The remote station.
        remote: Address,
    },
    /// Release a link once all its data is acknowledged
    /// ([`Station::release`]).
    Release {
        /// The remote station.
        remote: Address,
    },
    /// Release every link, wait (at most the grace period) until they are
    /// released, flush what is left to send and stop.
    Shutdown,
}

/// What the driver tells its user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Something the station reported.
    Station(StationEvent),
    /// A request could not be carried out.
    Rejected(StationError),
}

/// Why the driver stopped other than by [`Request::Shutdown`].
#[derive(Debug, Error)]
pub enum DriverError {
    /// The TNC closed the byte stream (end of file).
    #[error("the KISS TNC closed the connection")]
    TncClosed,
    /// Reading from the TNC failed.
    #[error("cannot read from the KISS TNC: {0}")]
    Read(std::io::Error),
    /// Writing to the TNC failed.
    #[error("cannot write to the KISS TNC: {0}")]
    Write(std::io::Error),
}

/// Settings of the driver itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriverOptions {
    /// How long [`Request::Shutdown`] waits for links to be released.
    pub shutdown_grace: Duration,
    /// The port's transmitter, for the clock that holds T1 until our
    /// frames have left the air ([`AirClock`]).
    pub air: AirSettings,
}

impl Default for DriverOptions {
    fn default() -> DriverOptions {
        DriverOptions {
            shutdown_grace: Duration::from_secs(10),
            air: AirSettings::default(),
        }
    }
}

/// The user's end of a running driver.
#[derive(Debug)]
pub struct DriverHandle {
    /// Where to send requests.
    pub requests: mpsc::UnboundedSender<Request>,
    /// Notices with the time since the driver started.
    pub notices: mpsc::UnboundedReceiver<(Duration, Notice)>,
    /// The driver task; it ends after a shutdown or on an error.
    pub task: JoinHandle<Result<(), DriverError>>,
}

/// Spawns the driver on the current tokio runtime. It first sends the
/// KISS parameters of `params` (on `params.port`, which also becomes the
/// station's port), then runs until [`Request::Shutdown`], the request
/// channel closing (same as a shutdown), or an I/O error.
pub fn spawn(
    stream: Box<dyn KissStream>,
    mut station: Station,
    params: KissParams,
    options: DriverOptions,
) -> DriverHandle {
    let (requests, request_rx) = mpsc::unbounded_channel();
    let (notice_tx, notices) = mpsc::unbounded_channel();
    station.set_kiss_port(params.port);
    let task = tokio::spawn(run(stream, station, params, options, request_rx, notice_tx));
    DriverHandle {
        requests,
        notices,
        task,
    }
}

/// Elapsed real time as the engines' virtual time.
pub(crate) fn instant(start: tokio::time::Instant) -> Instant {
    Instant::ZERO + start.elapsed()
}

/// The driver loop (see [`spawn`]).
pub async fn run(
    stream: Box<dyn KissStream>,
    mut station: Station,
    params: KissParams,
    options: DriverOptions,
    mut requests: mpsc::UnboundedReceiver<Request>,
    notices: mpsc::UnboundedSender<(Duration, Notice)>,
) -> Result<(), DriverError> {
    let start = tokio::time::Instant::now();
    let (mut reader, writer) = tokio::io::split(stream);
    let mut writer = KissWriter::spawn(writer, &params);
    let mut air = AirClock::new(options.air, params.port);
    let mut shutdown_at: Option<tokio::time::Instant> = None;
    let mut buf = vec![0u8; 4096];
    let result = loop {
        // Drain the station: frames to the TNC (through the clock of when
        // they leave the air, which holds T1 until then), then events to
        // the user.
        let now = instant(start);
        while let Some(seq) = station.poll_transmitted() {
            air.answered(now, seq);
        }
        if let Some((at, octets)) = station.poll_heard() {
            air.heard(at, octets);
        }
        while let Some(frame) = station.poll_transmit(now) {
            air.transmit(now, frame.encode());
        }
        station.set_channel_busy(now, air.busy(now));
        writer.send(air.take_octets());
        let at = start.elapsed();
        while let Some(event) = station.poll_event() {
            notices.send((at, Notice::Station(event))).ok();
        }
        if shutdown_at.is_some() && station.links().next().is_none() {
            break Ok(());
        }
        let timer = linklab_core::earliest([station.poll_timeout(), air.poll_timeout()])
            .map(|t| start + (t - Instant::ZERO));
        let wake = match (timer, shutdown_at) {
            (Some(t), Some(s)) => Some(t.min(s)),
            (t, s) => t.or(s),
        };
        tokio::select! {
            read = reader.read(&mut buf) => match read {
                Ok(0) => break Err(DriverError::TncClosed),
                Ok(n) => station.handle_kiss_bytes(instant(start), buf.get(..n).unwrap_or_default()),
                Err(e) => break Err(DriverError::Read(e)),
            },
            request = requests.recv(), if shutdown_at.is_none() => {
                // Take every request already waiting before transmitting,
                // so that data queued together goes out together.
                let mut next = Some(request);
                while let Some(request) = next.take() {
                    let now = instant(start);
                    let result = match request {
                        Some(Request::Connect { remote, via }) => station.connect(now, remote, &via),
                        Some(Request::Send { remote, data }) => station.send(&remote, data),
                        Some(Request::NotifyUnsent { remote, octets }) => station.notify_unsent(&remote, octets),
                        Some(Request::Disconnect { remote }) => station.disconnect(now, &remote),
                        Some(Request::Release { remote }) => station.release(now, &remote),
                        Some(Request::Abort { remote }) => station.abort(&remote),
                        Some(Request::Shutdown) | None => {
                            station.disconnect_all(now);
                            shutdown_at = Some(tokio::time::Instant::now() + options.shutdown_grace);
                            break;
                        }
                    };
                    if let Err(error) = result {
                        notices.send((start.elapsed(), Notice::Rejected(error))).ok();
                    }
                    next = requests.try_recv().ok().map(Some);
                }
            },
            _ = sleep_until(wake.unwrap_or_else(tokio::time::Instant::now)), if wake.is_some() => {
                if shutdown_at.is_some_and(|s| s <= tokio::time::Instant::now()) {
                    break Ok(());
                }
                let now = instant(start);
                air.handle_timeout(now);
                station.set_channel_busy(now, air.busy(now));
                station.handle_timeout(now);
            },
            written = &mut writer.task => break Err(KissWriter::failed(written)),
        }
    };
    // The bad input still counted is reported, however the loop ended.
    station.flush_bad_input();
    while let Some(event) = station.poll_event() {
        notices.send((start.elapsed(), Notice::Station(event))).ok();
    }
    result?;
    writer.finish().await
}
