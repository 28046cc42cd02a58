//! Test harness: two sessions joined by a simulated TCP connection that
//! cuts each direction's byte stream at seeded random boundaries, and
//! helpers to drive one session with hand-made octets.
#![allow(dead_code)]

use linklab_core::Engine;
use std::time::Duration;

use linklab_core::Instant;
use linklab_tcpcl::wire::{ContactHeader, Decoded, Limits, Message, SessInit};
use linklab_tcpcl::{Config, Event, Role, Session};

/// SplitMix64: a small seeded generator, enough to cut byte streams.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `1..=max`.
    pub fn piece(&mut self, max: usize) -> usize {
        1 + (self.next() % max as u64) as usize
    }
}

/// Two sessions, `s[0]` active and `s[1]` passive, on one connection.
pub struct Pair {
    pub now: Instant,
    pub s: [Session; 2],
    /// Events each session reported, in order.
    pub events: [Vec<Event>; 2],
    /// Every octet each session sent, in order.
    pub sent: [Vec<u8>; 2],
    /// Every chunk sent, with its time and sender.
    pub log: Vec<(Instant, usize, Vec<u8>)>,
    /// Octets on their way to `s[i]`.
    in_flight: [Vec<u8>; 2],
    /// Whether `s[i]` has been told the peer closed.
    eof: [bool; 2],
    /// Largest piece the connection delivers at once.
    pub max_piece: usize,
    /// While true, nothing reaches `s[i]` (a stalled direction).
    pub stalled: [bool; 2],
    rng: Rng,
}

pub fn config(node: &str) -> Config {
    Config::new(format!("dtn://{node}/"))
}

impl Pair {
    pub fn new(active: Config, passive: Config, seed: u64) -> Pair {
        let now = Instant::ZERO;
        Pair {
            now,
            s: [
                Session::new(Role::Active, active, now).unwrap(),
                Session::new(Role::Passive, passive, now).unwrap(),
            ],
            events: [Vec::new(), Vec::new()],
            sent: [Vec::new(), Vec::new()],
            log: Vec::new(),
            in_flight: [Vec::new(), Vec::new()],
            eof: [false, false],
            max_piece: 7,
            stalled: [false, false],
            rng: Rng::new(seed),
        }
    }

    /// A pair run until both are established.
    pub fn established(active: Config, passive: Config, seed: u64) -> Pair {
        let mut pair = Pair::new(active, passive, seed);
        pair.run();
        for i in 0..2 {
            assert!(
                matches!(pair.events[i].first(), Some(Event::SessionEstablished(_))),
                "{:?}",
                pair.events[i]
            );
        }
        pair
    }

    /// Moves octets and events until nothing more happens at this instant.
    pub fn run(&mut self) {
        loop {
            let mut progress = false;
            for i in 0..2 {
                while let Some(octets) = self.s[i].poll_transmit(self.now) {
                    self.sent[i].extend(&octets);
                    self.log.push((self.now, i, octets.clone()));
                    self.in_flight[1 - i].extend(octets);
                    progress = true;
                }
                while let Some(event) = self.s[i].poll_event() {
                    self.events[i].push(event);
                    progress = true;
                }
            }
            for i in 0..2 {
                // A closed session's connection closes once its octets are
                // drained and delivered: the peer sees the end of the stream.
                if self.s[1 - i].is_closed()
                    && self.in_flight[i].is_empty()
                    && !self.eof[i]
                    && !self.stalled[i]
                {
                    self.eof[i] = true;
                    self.s[i].handle_eof(self.now);
                    progress = true;
                }
            }
            for i in 0..2 {
                if self.stalled[i] || self.in_flight[i].is_empty() {
                    continue;
                }
                let n = self.rng.piece(self.max_piece).min(self.in_flight[i].len());
                let piece: Vec<u8> = self.in_flight[i].drain(..n).collect();
                self.s[i].handle_input(self.now, &piece);
                progress = true;
            }
            if !progress {
                return;
            }
        }
    }

    /// Advances virtual time to the next timer (at most `limit` later),
    /// runs it and then the exchange it causes. Returns false if no timer
    /// was due within the limit.
    pub fn advance(&mut self, limit: Duration) -> bool {
        let horizon = self.now + limit;
        let next = self
            .s
            .iter()
            .filter_map(|s| s.poll_timeout())
            .filter(|&t| t <= horizon)
            .min();
        let Some(at) = next else {
            self.now = horizon;
            return false;
        };
        self.now = self.now.max(at);
        for s in &mut self.s {
            s.handle_timeout(self.now);
        }
        self.run();
        true
    }

    /// The messages `s[i]` sent after its contact header.
    pub fn messages(&self, i: usize) -> Vec<Message> {
        decode_stream(&self.sent[i][ContactHeader::LEN..])
    }
}

/// Decodes a stream of whole messages.
pub fn decode_stream(mut octets: &[u8]) -> Vec<Message> {
    let mut out = Vec::new();
    while !octets.is_empty() {
        match Message::decode(octets, &Limits::NONE) {
            Ok(Decoded::Message { message, len }) => {
                out.push(message);
                octets = &octets[len..];
            }
            other => panic!("undecodable output {other:?} at {octets:02x?}"),
        }
    }
    out
}

/// A passive session that has received a contact header and a SESS_INIT
/// from a hand-driven active peer; its answers are drained.
pub fn passive_established(config: Config) -> Session {
    let mut session = Session::new(Role::Passive, config, Instant::ZERO).unwrap();
    session.handle_input(Instant::ZERO, &ContactHeader::new(false).encode());
    session.handle_input(Instant::ZERO, &peer_init("dtn://peer/").to_vec().unwrap());
    drain_messages(&mut session, Instant::ZERO);
    while let Some(event) = session.poll_event() {
        assert!(matches!(event, Event::SessionEstablished(_)), "{event:?}");
    }
    session
}

/// The hand-driven peer's SESS_INIT.
pub fn peer_init(node_id: &str) -> Message {
    Message::SessInit(SessInit {
        keepalive_interval: 0,
        segment_mru: 1000,
        transfer_mru: 100_000,
        node_id: node_id.into(),
        extensions: vec![],
    })
}

/// Every octet the session wants to send, as messages (a leading contact
/// header is skipped).
pub fn drain_messages(session: &mut Session, now: Instant) -> Vec<Message> {
    let mut octets = Vec::new();
    while let Some(chunk) = session.poll_transmit(now) {
        octets.extend(chunk);
    }
    let start = if octets.starts_with(b"dtn!") {
        ContactHeader::LEN
    } else {
        0
    };
    decode_stream(&octets[start..])
}

pub fn drain_events(session: &mut Session) -> Vec<Event> {
    std::iter::from_fn(|| session.poll_event()).collect()
}
