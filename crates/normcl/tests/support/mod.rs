//! Test support (shared with the `dtn_over_norm` example): two NORM CL
//! sessions on `linklab_testkit::Pair` over an impaired datagram link.
//! The node at each end stores what it receives after a configurable
//! delay and only then calls `Session::bundle_stored`.
#![allow(dead_code)]

use core::time::Duration;
use std::collections::BTreeMap;
use std::net::SocketAddr;

use linklab_core::{earliest, Engine, Instant};
use linklab_normcl::{Event, ReceiptId, SendError, Session, TransferId};
use linklab_testkit::{GilbertElliott, Impairment, Pair};

/// A datagram on the link, with its source address.
#[derive(Debug, Clone)]
pub struct Datagram {
    pub from: SocketAddr,
    pub payload: Vec<u8>,
}

/// One end: a session and what its node did.
pub struct End {
    pub session: Session,
    /// Its address.
    pub addr: SocketAddr,
    /// How long storing a received bundle takes.
    pub store_delay: Duration,
    /// Bundles stored, with when.
    pub stored: Vec<(Instant, Vec<u8>)>,
    /// Transfer outcomes, with when.
    pub outcomes: BTreeMap<TransferId, (Instant, Result<(), String>)>,
    /// Link state changes (true: up), with when.
    pub link: Vec<(Instant, bool)>,
    /// Objects refused.
    pub refused: Vec<String>,
    storing: Vec<(Instant, ReceiptId, Vec<u8>)>,
}

impl End {
    /// An end with its session at `addr`; its node stores at once.
    pub fn new(session: Session, addr: SocketAddr) -> End {
        End {
            session,
            addr,
            store_delay: Duration::ZERO,
            stored: Vec::new(),
            outcomes: BTreeMap::new(),
            link: Vec::new(),
            refused: Vec::new(),
            storing: Vec::new(),
        }
    }

    fn drain(&mut self, now: Instant) {
        while let Some(e) = self.session.poll_event() {
            match e {
                Event::LinkUp => self.link.push((now, true)),
                Event::LinkDown { .. } => self.link.push((now, false)),
                Event::BundleReceived { receipt, bundle } => {
                    self.storing.push((now + self.store_delay, receipt, bundle))
                }
                Event::ObjectRefused { why } => self.refused.push(why),
                Event::TransferSucceeded(id) => {
                    self.outcomes.insert(id, (now, Ok(())));
                }
                Event::TransferFailed { id, why } => {
                    self.outcomes.insert(id, (now, Err(why)));
                }
            }
        }
    }

    fn store_due(&mut self, now: Instant) {
        let (due, later) = std::mem::take(&mut self.storing)
            .into_iter()
            .partition(|(at, _, _)| *at <= now);
        self.storing = later;
        for (_, receipt, bundle) in due {
            self.stored.push((now, bundle));
            self.session.bundle_stored(now, receipt);
        }
    }
}

impl Engine for End {
    type Transmit = Datagram;

    /// The session's next datagram; once there is none, its events.
    fn poll_transmit(&mut self, now: Instant) -> Option<Datagram> {
        let Some(t) = self.session.poll_transmit(now) else {
            self.drain(now);
            return None;
        };
        Some(Datagram {
            from: self.addr,
            payload: t.payload,
        })
    }

    /// The session's timer or the next store that completes.
    fn poll_timeout(&self) -> Option<Instant> {
        earliest([
            self.session.poll_timeout(),
            self.storing.iter().map(|s| s.0).min(),
        ])
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.session.poll_timeout().is_some_and(|t| t <= now) {
            self.session.handle_timeout(now);
        }
        self.store_due(now);
        self.drain(now);
    }
}

fn deliver(end: &mut End, now: Instant, d: Datagram) {
    end.session.handle_datagram(now, d.from, &d.payload);
    end.drain(now);
}

/// Two ends over a link with `impairment` each way, seeded.
pub fn new_pair(a: End, b: End, impairment: Impairment, seed: u64) -> Pair<End> {
    Pair::new([a, b], deliver, seed).with_impairment(impairment)
}

/// A link with one-way `delay` and independent `loss`.
pub fn lossy(delay: Duration, loss: f64) -> Impairment {
    Impairment {
        delay,
        loss,
        ..Impairment::default()
    }
}

/// Bursts of about 10 datagrams, 90 % lost, every ~50 datagrams
/// (Gilbert-Elliott), with one-way `delay`.
pub fn bursts(delay: Duration) -> Impairment {
    Impairment {
        delay,
        burst: Some(GilbertElliott {
            to_bad: 0.02,
            to_good: 0.1,
            loss_good: 0.0,
            loss_bad: 0.9,
        }),
        ..Impairment::default()
    }
}

/// End `i` sends a bundle now.
pub fn send(p: &mut Pair<End>, i: usize, bundle: &[u8]) -> Result<TransferId, SendError> {
    let now = p.now;
    p.engines[i].session.send_bundle(now, bundle)
}

/// Datagrams offered to the link, and lost on it, both ways.
pub fn sent_and_lost(p: &Pair<End>) -> (u64, u64) {
    p.to.iter()
        .fold((0, 0), |(s, l), c| (s + c.counts.sent, l + c.counts.lost))
}
