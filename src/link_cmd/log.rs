//! What the link commands say on standard error: link events, monitored
//! frames and bad input, clear of the progress bar.

use std::time::Duration;

use anyhow::anyhow;
use indicatif::ProgressBar;
use linklab_io::{Direction, Notice, StationEvent};
use linklab_link::{DisconnectReason, Event, FailureReason, LinkError, Version};
use linklab_wire::ax25::Address;
use linklab_wire::monitor;

/// Information octets shown per monitored frame.
const MONITOR_OPTIONS: monitor::MonitorOptions = monitor::MonitorOptions { max_info: Some(32) };

/// Standard-error output that stays clear of the progress bar.
pub(crate) struct Log {
    pub(crate) monitor: bool,
    pub(crate) bar: Option<ProgressBar>,
}

impl Log {
    /// Lines on standard error, with every frame too if `monitor`.
    pub(crate) fn new(monitor: bool) -> Log {
        Log { monitor, bar: None }
    }

    pub(crate) fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    /// Logs what every command shows the same way; returns the link event
    /// (with its remote) for the command to act on.
    pub(crate) fn notice(
        &self,
        at: Duration,
        notice: Notice,
    ) -> anyhow::Result<Option<(Address, Event)>> {
        match notice {
            Notice::Rejected(error) => Err(anyhow!(error)),
            Notice::Station(StationEvent::Monitor {
                direction,
                bytes,
                modulus,
            }) => {
                if self.monitor {
                    let dir = match direction {
                        Direction::Tx => "TX",
                        Direction::Rx => "RX",
                    };
                    let line = monitor::format_raw_with(&bytes, modulus, MONITOR_OPTIONS);
                    self.line(&format!("{dir} {:>9.3} {line}", at.as_secs_f64()));
                }
                Ok(None)
            }
            Notice::Station(StationEvent::BadInput(error)) => {
                self.line(&format!("linklab: bad input ignored: {error}"));
                Ok(None)
            }
            Notice::Station(StationEvent::BadInputCount(count)) => {
                self.line(&format!("linklab: {count}"));
                Ok(None)
            }
            Notice::Station(StationEvent::LateFinals { remote, count }) => {
                self.line(&format!(
                    "linklab: {count} more late answers (F=1 with no poll outstanding, \
                     protocol error A) on the link with {remote}"
                ));
                Ok(None)
            }
            Notice::Station(StationEvent::Outstanding { .. } | StationEvent::Unsent { .. }) => {
                Ok(None)
            }
            Notice::Station(StationEvent::Link { remote, event }) => {
                match &event {
                    Event::Connected { version, incoming } => {
                        let (dir, modulo) = (
                            if *incoming { "from" } else { "to" },
                            match version {
                                Version::V2_0 => "AX.25 v2.0, modulo 8",
                                Version::V2_2 => "AX.25 v2.2, modulo 128",
                            },
                        );
                        self.line(&format!("linklab: connected {dir} {remote} ({modulo})"));
                    }
                    Event::Disconnected { reason } => self.line(&format!(
                        "linklab: disconnected from {remote}: {}",
                        disconnect_reason(*reason)
                    )),
                    Event::LinkFailure { reason } => self.line(&format!(
                        "linklab: link with {remote} failed: {}",
                        failure_reason(*reason)
                    )),
                    Event::Error(error) => {
                        // The station passes on a link's first error A
                        // only, and counts the rest.
                        let more = if *error == LinkError::UnexpectedFinal {
                            " (any more are counted, and the count shown when the link ends)"
                        } else {
                            ""
                        };
                        self.line(&format!(
                            "linklab: protocol error on link with {remote}: {error}{more}"
                        ))
                    }
                    Event::Negotiated { outcome, params } => self.line(&format!(
                        "linklab: parameters with {remote} ({outcome:?}): N1 {} out/{} in, \
                         k {} out, {:?}, T1 {} ms, N2 {}",
                        params.n1_tx,
                        params.n1_rx,
                        params.k_tx,
                        params.recovery,
                        params.t1.as_millis(),
                        params.n2
                    )),
                    Event::Data { .. } | Event::UnitData { .. } => {}
                }
                Ok(Some((remote, event)))
            }
        }
    }
}

pub(crate) fn disconnect_reason(reason: DisconnectReason) -> &'static str {
    match reason {
        DisconnectReason::LocalRequest => "released at our request",
        DisconnectReason::ReleaseTimeout => "no answer to our DISC; released anyway",
        DisconnectReason::RemoteRequest => "released by the peer (DISC)",
        DisconnectReason::RemoteDm => "the peer sent DM",
        DisconnectReason::Refused => "connection refused (DM)",
        DisconnectReason::Abandoned => "connection attempt abandoned",
    }
}

pub(crate) fn failure_reason(reason: FailureReason) -> &'static str {
    match reason {
        FailureReason::ConnectTimeout => "no answer to N2 connection requests",
        FailureReason::UnacknowledgedData => "data unacknowledged after N2 tries",
        FailureReason::NoResponseToEnquiry => "no answer to N2 polls",
        FailureReason::PeerBusy => "the peer stayed busy for N2 polls",
    }
}
