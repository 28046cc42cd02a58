//! Two sessions over a simulated datagram link in virtual time: a fixed
//! one-way delay and seeded loss, independent or in bursts
//! (Gilbert-Elliott). The nodes at each end store what they receive
//! after a configurable delay and only then call
//! [`Session::bundle_stored`]. Tests and the example use it.

use core::time::Duration;
use linklab_core::Engine;
use std::collections::BTreeMap;
use std::net::SocketAddr;

use linklab_core::Stream;

use crate::{Event, ReceiptId, SendError, Session, TransferId};
use linklab_core::Instant;

/// How the link loses datagrams.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Loss {
    /// Each datagram lost with this probability.
    Independent(f64),
    /// Gilbert-Elliott: a good state without loss and a bad state losing
    /// each datagram with `loss_bad`; per datagram the state turns bad
    /// with `to_bad` and good again with `to_good`.
    Burst {
        /// Good to bad, per datagram.
        to_bad: f64,
        /// Bad to good, per datagram.
        to_good: f64,
        /// Loss in the bad state.
        loss_bad: f64,
    },
}

/// One end: a session and what its node did.
pub struct End {
    /// The session.
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

/// Two ends and the link between them.
pub struct Pair {
    /// The ends.
    pub ends: [End; 2],
    /// Virtual time.
    pub now: Instant,
    /// Datagrams offered to the link, and lost on it.
    pub sent: u64,
    /// Datagrams lost.
    pub lost: u64,
    delay: Duration,
    loss: Loss,
    bad: bool,
    rng: Stream,
    /// (arrival, sequence) → (to end, from, datagram).
    queue: BTreeMap<(Instant, u64), (usize, SocketAddr, Vec<u8>)>,
    seq: u64,
}

impl Pair {
    /// Two ends over a link with `delay` each way and `loss`, seeded.
    pub fn new(a: End, b: End, delay: Duration, loss: Loss, seed: u64) -> Pair {
        Pair {
            ends: [a, b],
            now: Instant::ZERO,
            sent: 0,
            lost: 0,
            delay,
            loss,
            bad: false,
            rng: Stream::from_seed(seed),
            queue: BTreeMap::new(),
            seq: 0,
        }
    }

    /// End `i` sends a bundle now.
    pub fn send(&mut self, i: usize, bundle: &[u8]) -> Result<TransferId, SendError> {
        let now = self.now;
        self.ends[i].session.send_bundle(now, bundle)
    }

    fn lose(&mut self) -> bool {
        match self.loss {
            Loss::Independent(p) => self.rng.bernoulli(p),
            Loss::Burst {
                to_bad,
                to_good,
                loss_bad,
            } => {
                let flip = if self.bad { to_good } else { to_bad };
                if self.rng.bernoulli(flip) {
                    self.bad = !self.bad;
                }
                self.bad && self.rng.bernoulli(loss_bad)
            }
        }
    }

    /// Runs until `done` holds or `limit` is reached; whether `done` held.
    pub fn run_until(&mut self, limit: Instant, done: impl Fn(&Pair) -> bool) -> bool {
        loop {
            for i in 0..2 {
                let now = self.now;
                while let Some(t) = self.ends[i].session.poll_transmit(now) {
                    self.sent += 1;
                    if self.lose() {
                        self.lost += 1;
                        continue;
                    }
                    let to = usize::from(t.destination == self.ends[1].addr);
                    let from = self.ends[i].addr;
                    self.seq += 1;
                    self.queue
                        .insert((now + self.delay, self.seq), (to, from, t.payload));
                }
                self.ends[i].drain(now);
            }
            if done(self) {
                return true;
            }
            let next = self
                .ends
                .iter()
                .flat_map(|e| {
                    [
                        e.session.poll_timeout(),
                        e.storing.iter().map(|s| s.0).min(),
                    ]
                })
                .chain([self.queue.keys().next().map(|k| k.0)])
                .flatten()
                .min();
            let Some(next) = next.filter(|&t| t <= limit) else {
                return false;
            };
            self.now = next.max(self.now + Duration::from_micros(1));
            let now = self.now;
            while let Some(entry) = self.queue.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                let (to, from, bytes) = entry.remove();
                self.ends[to].session.handle_datagram(now, from, &bytes);
            }
            for end in &mut self.ends {
                end.session.handle_timeout(now);
                end.store_due(now);
                end.drain(now);
            }
        }
    }
}
