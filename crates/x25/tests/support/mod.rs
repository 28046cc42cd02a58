//! Test support: two DTEs joined by a lossless packet pipe, in virtual
//! time (DTE/DTE operation as ISO 8208 allows: A plays the DTE, B the
//! DCE's part in channel choice and call collision). Every packet goes
//! through `encode` and `handle_octets`, and a monitor checks the window
//! from the packets alone: a data packet's P(S) never runs W or more
//! ahead of the last P(R) its sender has received.
#![allow(dead_code)]

use linklab_core::Engine;
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use linklab_core::Instant;
use linklab_x25::{Body, Config, Dte, DteAddress, Event, Lci, Packet, Role};

/// SplitMix64 for seeded message sizes.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
}

pub fn config(role: Role, address: &str) -> Config {
    Config {
        role,
        address: DteAddress::new(address).unwrap(),
        ..Config::default()
    }
}

/// Watches the window of one direction of one call.
#[derive(Default)]
pub struct WindowMonitor {
    /// Last P(R) delivered to each side, per LCI.
    last_pr: [BTreeMap<Lci, u8>; 2],
    /// Most outstanding data packets seen, per side.
    pub max_outstanding: [usize; 2],
}

impl WindowMonitor {
    /// `packet` was delivered to `side`.
    pub fn delivered(&mut self, side: usize, packet: &Packet) {
        let pr = match &packet.body {
            Body::Data(d) => d.pr,
            Body::ReceiveReady { pr } | Body::ReceiveNotReady { pr } => *pr,
            Body::ResetRequest { .. } | Body::ResetConfirmation | Body::CallAccepted { .. } => 0,
            Body::CallRequest { .. } => 0,
            _ => return,
        };
        self.last_pr[side].insert(packet.lci, pr);
    }

    /// `packet` was sent by `side` whose window on its LCI is `window`.
    pub fn sent(&mut self, side: usize, packet: &Packet, window: u8) {
        if matches!(
            packet.body,
            Body::ResetRequest { .. } | Body::ResetConfirmation | Body::CallAccepted { .. }
        ) {
            self.last_pr[side].insert(packet.lci, 0);
        }
        if let Body::Data(d) = &packet.body {
            let m = u16::from(packet.modulus.value());
            let pr = *self.last_pr[side].get(&packet.lci).unwrap_or(&0);
            let outstanding = usize::from((u16::from(d.ps) + m - u16::from(pr)) % m) + 1;
            assert!(
                outstanding <= usize::from(window),
                "side {side} sent P(S) {} with {outstanding} outstanding, W = {window}",
                d.ps
            );
            self.max_outstanding[side] = self.max_outstanding[side].max(outstanding);
        }
    }
}

/// Two DTEs over a lossless pipe.
pub struct Pipe {
    pub dtes: [Dte; 2],
    pub now: Instant,
    /// Every packet sent: (sender, packet).
    pub log: Vec<(usize, Packet)>,
    pub events: [Vec<Event>; 2],
    pub monitor: WindowMonitor,
    /// Packets in flight to side 0 and side 1.
    in_flight: [VecDeque<Vec<u8>>; 2],
    /// While true, packets to that side are held in the pipe.
    pub hold: [bool; 2],
}

impl Pipe {
    pub fn new(a: Config, b: Config) -> Pipe {
        Pipe {
            dtes: [Dte::new(a).unwrap(), Dte::new(b).unwrap()],
            now: Instant::ZERO,
            log: Vec::new(),
            events: [Vec::new(), Vec::new()],
            monitor: WindowMonitor::default(),
            in_flight: [VecDeque::new(), VecDeque::new()],
            hold: [false; 2],
        }
    }

    /// A pair whose packet layers are restarted (A restarts).
    pub fn restarted(a: Config, b: Config) -> Pipe {
        let mut pipe = Pipe::new(a, b);
        pipe.dtes[0].start(pipe.now);
        pipe.run();
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

    /// Collects what each side sends.
    pub fn collect(&mut self) {
        for side in 0..2 {
            while let Some(packet) = self.dtes[side].poll_transmit(self.now) {
                let window = self.dtes[side]
                    .call_params(packet.lci)
                    .map_or(0, |p| p.tx_window);
                self.monitor.sent(side, &packet, window);
                self.in_flight[1 - side].push_back(packet.encode().unwrap());
                self.log.push((side, packet));
            }
            while let Some(event) = self.dtes[side].poll_event() {
                self.events[side].push(event);
            }
        }
    }

    /// Delivers what is in flight (not held), collecting answers, until
    /// nothing moves. Time does not advance.
    pub fn run(&mut self) {
        loop {
            self.collect();
            let mut moved = false;
            for side in 0..2 {
                if self.hold[side] {
                    continue;
                }
                while let Some(octets) = self.in_flight[side].pop_front() {
                    moved = true;
                    self.monitor
                        .delivered(side, &Packet::decode(&octets).unwrap());
                    self.dtes[side].handle_octets(self.now, &octets);
                }
            }
            if !moved {
                self.collect();
                if self
                    .in_flight
                    .iter()
                    .zip(self.hold)
                    .all(|(q, h)| h || q.is_empty())
                {
                    return;
                }
            }
        }
    }

    /// Feeds raw octets to `side` as if they came down the pipe.
    pub fn inject(&mut self, side: usize, octets: &[u8]) {
        self.dtes[side].handle_octets(self.now, octets);
        self.run();
    }

    /// Advances to the next time-out (if any, within `limit`) and runs it.
    pub fn advance(&mut self, limit: Duration) -> bool {
        let next = self.dtes.iter().filter_map(|d| d.poll_timeout()).min();
        match next {
            Some(t) if t <= self.now + limit => {
                self.now = self.now.max(t);
                for dte in &mut self.dtes {
                    dte.handle_timeout(self.now);
                }
                self.run();
                true
            }
            _ => false,
        }
    }

    pub fn take_events(&mut self, side: usize) -> Vec<Event> {
        self.collect();
        core::mem::take(&mut self.events[side])
    }

    /// Packet type names sent by `side` since log index `from`.
    pub fn sent_names(&self, side: usize, from: usize) -> Vec<&'static str> {
        self.log[from..]
            .iter()
            .filter(|(s, _)| *s == side)
            .map(|(_, p)| p.body.name())
            .collect()
    }

    /// A calls B with `options`; B accepts. Returns the LCI.
    pub fn connect(&mut self, options: linklab_x25::CallOptions) -> Lci {
        let lci = self.dtes[0].call(self.now, options).unwrap();
        self.run();
        let incoming = self.take_events(1);
        assert!(
            matches!(incoming.as_slice(), [Event::IncomingCall { lci: l, .. }] if *l == lci),
            "{incoming:?}"
        );
        self.dtes[1].accept(lci).unwrap();
        self.run();
        let connected = self.take_events(0);
        assert!(
            matches!(connected.as_slice(), [Event::Connected { lci: l, .. }] if *l == lci),
            "{connected:?}"
        );
        self.take_events(1);
        lci
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
