//! Test harness: two sessions on `linklab_testkit::Pair`, joined by a
//! simulated TCP connection that cuts each direction's byte stream at
//! seeded random boundaries, and helpers to drive one session with
//! hand-made octets.
#![allow(dead_code)]

use linklab_core::{earliest, Engine, Instant, Stream, Streams};
use std::collections::VecDeque;

use linklab_tcpcl::wire::{ContactHeader, Decoded, Limits, Message, SessInit};
use linklab_tcpcl::{Config, Event, Role, Session};

/// What goes down one direction of the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunk {
    /// Octets a session sent, as `poll_transmit` gave them.
    Octets(Vec<u8>),
    /// The sender closed: the end of the stream, after its last octets.
    Eof,
}

/// One end of the connection: a session, what it said, and its receive
/// buffer, which it reads in seeded random pieces of at most `max_piece`
/// octets, so messages arrive split and run together.
pub struct Station {
    pub s: Session,
    /// Events the session reported, in order.
    pub events: Vec<Event>,
    /// Every octet the session sent, in order.
    pub sent: Vec<u8>,
    /// Largest piece the connection delivers at once.
    pub max_piece: usize,
    /// Octets received and not yet read by the session.
    inbox: VecDeque<u8>,
    /// The peer's end of stream arrived behind `inbox`.
    eof_due: bool,
    /// This session's close has been sent as [`Chunk::Eof`].
    eof_sent: bool,
    /// The last instant the pair showed this end.
    now: Instant,
    rng: Stream,
}

impl Engine for Station {
    type Transmit = Chunk;

    fn poll_transmit(&mut self, now: Instant) -> Option<Chunk> {
        self.now = now;
        if let Some(octets) = self.s.poll_transmit(now) {
            self.sent.extend(&octets);
            return Some(Chunk::Octets(octets));
        }
        self.events
            .extend(std::iter::from_fn(|| self.s.poll_event()));
        // A closed session's connection closes once its octets are out.
        if self.s.is_closed() && !self.eof_sent {
            self.eof_sent = true;
            return Some(Chunk::Eof);
        }
        None
    }

    /// The session's timer, or now while there is something to read.
    fn poll_timeout(&self) -> Option<Instant> {
        let reading = (!self.inbox.is_empty() || self.eof_due).then_some(self.now);
        earliest([self.s.poll_timeout(), reading])
    }

    /// Reads one piece (or the end of the stream, once all is read), then
    /// runs the session's due timers.
    fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        if !self.inbox.is_empty() {
            let n = (1 + self.rng.below(self.max_piece as u64) as usize).min(self.inbox.len());
            let piece: Vec<u8> = self.inbox.drain(..n).collect();
            self.s.handle_input(now, &piece);
        } else if self.eof_due {
            self.eof_due = false;
            self.s.handle_eof(now);
        }
        if self.s.poll_timeout().is_some_and(|t| t <= now) {
            self.s.handle_timeout(now);
        }
    }
}

/// A chunk reaches `station`'s receive buffer.
fn deliver(station: &mut Station, now: Instant, chunk: Chunk) {
    station.now = now;
    match chunk {
        Chunk::Octets(octets) => station.inbox.extend(octets),
        Chunk::Eof => station.eof_due = true,
    }
}

/// Two sessions, `engines[0]` active and `engines[1]` passive, on one
/// connection: `settle` moves octets and events until nothing more happens
/// at this instant; `to[i].hold` stalls the direction to `i`.
pub type Pair = linklab_testkit::Pair<Station>;

pub fn config(node: &str) -> Config {
    Config::new(format!("dtn://{node}/"))
}

/// Two sessions, not yet run; `seed` cuts the streams.
pub fn new_pair(active: Config, passive: Config, seed: u64) -> Pair {
    let now = Instant::ZERO;
    let streams = Streams::new(seed);
    let station = |i: u64, role, config| Station {
        s: Session::new(role, config, now).unwrap(),
        events: Vec::new(),
        sent: Vec::new(),
        max_piece: 7,
        inbox: VecDeque::new(),
        eof_due: false,
        eof_sent: false,
        now,
        rng: streams.stream_index(i),
    };
    linklab_testkit::Pair::new(
        [
            station(0, Role::Active, active),
            station(1, Role::Passive, passive),
        ],
        deliver,
        seed,
    )
}

/// A pair run until both are established.
pub fn established(active: Config, passive: Config, seed: u64) -> Pair {
    let mut pair = new_pair(active, passive, seed);
    pair.settle();
    for i in 0..2 {
        let events = &pair.engines[i].events;
        assert!(
            matches!(events.first(), Some(Event::SessionEstablished(_))),
            "{events:?}"
        );
    }
    pair
}

/// The messages `engines[i]` sent after its contact header.
pub fn messages(pair: &Pair, i: usize) -> Vec<Message> {
    decode_stream(&pair.engines[i].sent[ContactHeader::LEN..])
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
