//! Test support: two DTEs joined by a lossless packet pipe, in virtual
//! time (DTE/DTE operation as ISO 8208 allows: A plays the DTE, B the
//! DCE's part in channel choice and call collision), on
//! `linklab_testkit::Pair`. Every packet goes through `encode` and
//! `handle_octets`, and a monitor checks the window from the packets
//! alone: a data packet's P(S) never runs W or more ahead of the last P(R)
//! its sender has received.
#![allow(dead_code)]

use linklab_core::{Engine, Instant};
use std::collections::BTreeMap;

use linklab_testkit::Pair;
use linklab_x25::{Body, Config, Dte, DteAddress, Event, Lci, Packet, Role};

pub fn config(role: Role, address: &str) -> Config {
    Config {
        role,
        address: DteAddress::new(address).unwrap(),
        ..Config::default()
    }
}

/// Watches the window of one side's calls.
#[derive(Default)]
pub struct WindowMonitor {
    /// Last P(R) delivered to this side, per LCI.
    last_pr: BTreeMap<Lci, u8>,
    /// Most outstanding data packets seen.
    pub max_outstanding: usize,
}

impl WindowMonitor {
    /// `packet` was delivered to this side.
    pub fn delivered(&mut self, packet: &Packet) {
        let pr = match &packet.body {
            Body::Data(d) => d.pr,
            Body::ReceiveReady { pr } | Body::ReceiveNotReady { pr } => *pr,
            Body::ResetRequest { .. } | Body::ResetConfirmation | Body::CallAccepted { .. } => 0,
            Body::CallRequest { .. } => 0,
            _ => return,
        };
        self.last_pr.insert(packet.lci, pr);
    }

    /// `packet` was sent by this side, whose window on its LCI is `window`.
    pub fn sent(&mut self, packet: &Packet, window: u8) {
        if matches!(
            packet.body,
            Body::ResetRequest { .. } | Body::ResetConfirmation | Body::CallAccepted { .. }
        ) {
            self.last_pr.insert(packet.lci, 0);
        }
        if let Body::Data(d) = &packet.body {
            let m = u16::from(packet.modulus.value());
            let pr = *self.last_pr.get(&packet.lci).unwrap_or(&0);
            let outstanding = usize::from((u16::from(d.ps) + m - u16::from(pr)) % m) + 1;
            assert!(
                outstanding <= usize::from(window),
                "sent P(S) {} with {outstanding} outstanding, W = {window}",
                d.ps
            );
            self.max_outstanding = self.max_outstanding.max(outstanding);
        }
    }
}

/// One end of the pipe: a DTE, its events and its window monitor.
pub struct Station {
    pub dte: Dte,
    pub events: Vec<Event>,
    pub monitor: WindowMonitor,
}

impl Engine for Station {
    type Transmit = Packet;

    /// The DTE's next packet, watched by the monitor; once there is none,
    /// its events are collected.
    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        let Some(packet) = self.dte.poll_transmit(now) else {
            self.events
                .extend(std::iter::from_fn(|| self.dte.poll_event()));
            return None;
        };
        let window = self.dte.call_params(packet.lci).map_or(0, |p| p.tx_window);
        self.monitor.sent(&packet, window);
        Some(packet)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.dte.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.dte.handle_timeout(now)
    }
}

/// A packet arrives at `station` through its octets.
fn deliver(station: &mut Station, now: Instant, packet: Packet) {
    let octets = packet.encode().unwrap();
    station.monitor.delivered(&Packet::decode(&octets).unwrap());
    station.dte.handle_octets(now, &octets);
}

/// Two DTEs over a lossless pipe: `settle` delivers what is in flight
/// without advancing time, `advance` runs the next time-out, and
/// `to[i].hold` holds the packets to side `i` in the pipe.
pub type Pipe = Pair<Station>;

/// Two DTEs over a lossless pipe.
pub fn new_pipe(a: Config, b: Config) -> Pipe {
    let station = |config| Station {
        dte: Dte::new(config).unwrap(),
        events: Vec::new(),
        monitor: WindowMonitor::default(),
    };
    Pair::new([station(a), station(b)], deliver, 0)
}

/// What the x25 tests do with a pipe beyond the pair's own steps.
pub trait PipeExt {
    /// A pair whose packet layers are restarted (A restarts).
    fn restarted(a: Config, b: Config) -> Pipe;
    /// Feeds raw octets to `side` as if they came down the pipe.
    fn inject(&mut self, side: usize, octets: &[u8]);
    /// The events of `side` so far, taken.
    fn take_events(&mut self, side: usize) -> Vec<Event>;
    /// Packet type names sent by `side` since log index `from`.
    fn sent_names(&self, side: usize, from: usize) -> Vec<&'static str>;
    /// A calls B with `options`; B accepts. Returns the LCI.
    fn connect(&mut self, options: linklab_x25::CallOptions) -> Lci;
    /// The most outstanding data packets each side had.
    fn max_outstanding(&self) -> [usize; 2];
}

impl PipeExt for Pipe {
    fn restarted(a: Config, b: Config) -> Pipe {
        let mut pipe = new_pipe(a, b);
        pipe.engines[0].dte.start(pipe.now);
        pipe.settle();
        assert!(matches!(
            pipe.take_events(0).as_slice(),
            [Event::Restarted { by_peer: false, .. }]
        ));
        assert!(matches!(
            pipe.take_events(1).as_slice(),
            [Event::Restarted { by_peer: true, .. }]
        ));
        pipe
    }

    fn inject(&mut self, side: usize, octets: &[u8]) {
        self.engines[side].dte.handle_octets(self.now, octets);
        self.settle();
    }

    fn take_events(&mut self, side: usize) -> Vec<Event> {
        self.transmit();
        core::mem::take(&mut self.engines[side].events)
    }

    fn sent_names(&self, side: usize, from: usize) -> Vec<&'static str> {
        self.log[from..]
            .iter()
            .filter(|(_, s, _)| *s == side)
            .map(|(_, _, p)| p.body.name())
            .collect()
    }

    fn connect(&mut self, options: linklab_x25::CallOptions) -> Lci {
        let lci = self.engines[0].dte.call(self.now, options).unwrap();
        self.settle();
        let incoming = self.take_events(1);
        assert!(
            matches!(incoming.as_slice(), [Event::IncomingCall { lci: l, .. }] if *l == lci),
            "{incoming:?}"
        );
        self.engines[1].dte.accept(lci).unwrap();
        self.settle();
        let connected = self.take_events(0);
        assert!(
            matches!(connected.as_slice(), [Event::Connected { lci: l, .. }] if *l == lci),
            "{connected:?}"
        );
        self.take_events(1);
        lci
    }

    fn max_outstanding(&self) -> [usize; 2] {
        self.engines.each_ref().map(|e| e.monitor.max_outstanding)
    }
}

/// The messages delivered in `events`, as (q, d, data).
pub fn messages(events: &[Event]) -> Vec<(bool, bool, Vec<u8>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Data { q, d, data, .. } => Some((*q, *d, data.clone())),
            _ => None,
        })
        .collect()
}
