//! Test support: a NORM sender (`engines[0]`, at [`SENDER`]) and receiver
//! (`engines[1]`, at [`RECEIVER`]) on `linklab_testkit::Pair`, each
//! keeping what it reported.
#![allow(dead_code)]

use linklab_core::{Engine, Instant};
use linklab_norm::{Receiver, ReceiverEvent, Sender, SenderEvent, Transmit};
use linklab_testkit::{Impairment, Pair};
use std::net::SocketAddr;

pub const SENDER: &str = "10.0.0.1:6003";
pub const RECEIVER: &str = "10.0.0.2:6003";

/// One node: the sender or the receiver, with its events.
pub enum Node {
    Sender(Box<Sender>, Vec<SenderEvent>),
    Receiver(Box<Receiver>, Vec<ReceiverEvent>),
}

impl Node {
    pub fn sender(&mut self) -> &mut Sender {
        match self {
            Node::Sender(s, _) => s,
            Node::Receiver(..) => panic!("not the sender"),
        }
    }

    pub fn receiver(&mut self) -> &mut Receiver {
        match self {
            Node::Receiver(r, _) => r,
            Node::Sender(..) => panic!("not the receiver"),
        }
    }

    pub fn take_sender_events(&mut self) -> Vec<SenderEvent> {
        match self {
            Node::Sender(_, events) => std::mem::take(events),
            Node::Receiver(..) => panic!("not the sender"),
        }
    }

    pub fn take_receiver_events(&mut self) -> Vec<ReceiverEvent> {
        match self {
            Node::Receiver(_, events) => std::mem::take(events),
            Node::Sender(..) => panic!("not the receiver"),
        }
    }

    pub fn sender_events(&self) -> &[SenderEvent] {
        match self {
            Node::Sender(_, events) => events,
            Node::Receiver(..) => panic!("not the sender"),
        }
    }

    pub fn receiver_events(&self) -> &[ReceiverEvent] {
        match self {
            Node::Receiver(_, events) => events,
            Node::Sender(..) => panic!("not the receiver"),
        }
    }
}

impl Engine for Node {
    type Transmit = Transmit;

    /// The next datagram; once there is none, the events are collected.
    fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        match self {
            Node::Sender(s, events) => s.poll_transmit(now).or_else(|| {
                events.extend(std::iter::from_fn(|| s.poll_event()));
                None
            }),
            Node::Receiver(r, events) => r.poll_transmit(now).or_else(|| {
                events.extend(std::iter::from_fn(|| r.poll_event()));
                None
            }),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match self {
            Node::Sender(s, _) => s.poll_timeout(),
            Node::Receiver(r, _) => r.poll_timeout(),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        match self {
            Node::Sender(s, _) => s.handle_timeout(now),
            Node::Receiver(r, _) => r.handle_timeout(now),
        }
    }
}

/// A datagram from the other node arrives.
fn deliver(node: &mut Node, now: Instant, t: Transmit) {
    match node {
        Node::Sender(s, _) => s.handle_datagram(now, RECEIVER.parse().unwrap(), &t.payload),
        Node::Receiver(r, _) => r.handle_datagram(now, SENDER.parse().unwrap(), &t.payload),
    }
}

/// `sender` and `receiver` over a network with `impairment` each way,
/// seeded by `seed`.
pub fn net(sender: Sender, receiver: Receiver, impairment: Impairment, seed: u64) -> Pair<Node> {
    Pair::new(
        [
            Node::Sender(Box::new(sender), Vec::new()),
            Node::Receiver(Box::new(receiver), Vec::new()),
        ],
        deliver,
        seed,
    )
    .with_impairment(impairment)
}

/// The address of `text`.
pub fn addr(text: &str) -> SocketAddr {
    text.parse().unwrap()
}
