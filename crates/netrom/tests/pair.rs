//! Two transports joined by a seeded lossy channel, stepped in virtual
//! time as quinn-proto's tests step a connection pair: byte-exact
//! transfers both ways under loss, reordering and duplication; choke
//! while a reader falls behind; refusal; the transport timeout after the
//! maximum tries; an orderly disconnect.

use linklab_core::{Duration, Engine, Instant};
use linklab_netrom::l4::{
    CircuitEvent, CircuitHandle, CloseReason, State, Transport, TransportConfig,
};
use linklab_netrom::wire::{Datagram, Message};
use linklab_testkit::impair::Impairment;
use linklab_testkit::pair::Pair;
use linklab_wire::ax25::Address;

fn addr(text: &str) -> Address {
    text.parse().unwrap()
}

fn deliver(t: &mut Transport, now: Instant, d: Datagram) {
    t.handle_datagram(now, d);
}

/// A pair of nodes A (0) and B (1) and what their users do.
struct Harness {
    pair: Pair<Transport>,
    circuit: [Option<CircuitHandle>; 2],
    events: [Vec<CircuitEvent>; 2],
    outgoing: [Vec<u8>; 2],
    offered: [usize; 2],
    received: [Vec<u8>; 2],
    /// Virtual time before which side i does not read.
    read_from: [Instant; 2],
}

impl Harness {
    fn new(config: [TransportConfig; 2], impairment: Impairment, seed: u64) -> Harness {
        let a = Transport::new(addr("A1AAA"), config[0]);
        let b = Transport::new(addr("B1BBB"), config[1]);
        Harness {
            pair: Pair::new([a, b], deliver, seed).with_impairment(impairment),
            circuit: [None, None],
            events: [Vec::new(), Vec::new()],
            outgoing: [Vec::new(), Vec::new()],
            offered: [0, 0],
            received: [Vec::new(), Vec::new()],
            read_from: [Instant::ZERO; 2],
        }
    }

    fn connect(&mut self) {
        let now = self.pair.now;
        let handle = self.pair.engines[0]
            .connect(now, addr("G1USR"), addr("B1BBB"))
            .unwrap();
        self.circuit[0] = Some(handle);
    }

    /// What the users do after each step: take events, offer data, read.
    fn users(&mut self) {
        let now = self.pair.now;
        for i in 0..2 {
            while let Some(e) = self.pair.engines[i].poll_event() {
                if let CircuitEvent::Incoming { circuit, .. } = e {
                    self.circuit[i] = Some(circuit);
                }
                self.events[i].push(e);
            }
            let Some(c) = self.circuit[i] else { continue };
            if self.offered[i] < self.outgoing[i].len() {
                if let Ok(n) = self.pair.engines[i].send(c, &self.outgoing[i][self.offered[i]..]) {
                    self.offered[i] += n;
                }
            }
            if now >= self.read_from[i] {
                let mut buf = [0u8; 512];
                loop {
                    let n = self.pair.engines[i].recv(now, c, &mut buf);
                    if n == 0 {
                        break;
                    }
                    self.received[i].extend_from_slice(&buf[..n]);
                }
            }
        }
    }

    /// Steps until `done` or `limit`; whether `done` held.
    fn run(&mut self, limit: Duration, done: impl Fn(&Harness) -> bool) -> bool {
        let end = self.pair.now + limit;
        loop {
            self.pair.settle();
            self.users();
            self.pair.settle();
            if done(self) {
                return true;
            }
            // Wake for the reader too.
            let reader = self
                .read_from
                .iter()
                .copied()
                .filter(|&t| t > self.pair.now)
                .min();
            let next = linklab_core::earliest([self.pair.next_wakeup(), reader]);
            match next {
                Some(t) if t <= end => {
                    self.pair.now = self.pair.now.max(t);
                }
                _ => return false,
            }
        }
    }

    fn closed(&self, i: usize) -> Option<CloseReason> {
        self.events[i].iter().find_map(|e| match e {
            CircuitEvent::Closed { reason, .. } => Some(*reason),
            _ => None,
        })
    }

    fn sent_by(&self, i: usize, pick: impl Fn(&Message) -> bool) -> usize {
        self.pair
            .log
            .iter()
            .filter(|(_, from, d)| *from == i && pick(&d.message))
            .count()
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

fn lossy() -> Impairment {
    Impairment {
        delay: Duration::from_millis(200),
        loss: 0.1,
        duplicate: 0.02,
        reorder: 0.05,
        reorder_delay: Duration::from_millis(800),
        ..Impairment::default()
    }
}

fn transfer_both_ways(seed: u64) -> Harness {
    let mut h = Harness::new([TransportConfig::default(); 2], lossy(), seed);
    h.outgoing = [pattern(20_000, 1), pattern(20_000, 2)];
    h.connect();
    let done = h.run(Duration::from_secs(24 * 3600), |h| {
        h.received[0].len() == 20_000 && h.received[1].len() == 20_000
    });
    assert!(
        done,
        "seed {seed}: received {} and {}",
        h.received[0].len(),
        h.received[1].len()
    );
    h
}

#[test]
fn twenty_kilobytes_each_way_byte_exact_under_loss() {
    for seed in [1, 2, 3] {
        let h = transfer_both_ways(seed);
        assert_eq!(h.received[1], h.outgoing[0], "seed {seed}: A to B");
        assert_eq!(h.received[0], h.outgoing[1], "seed {seed}: B to A");
        assert!(h.pair.to[0].counts.lost + h.pair.to[1].counts.lost > 0);
        assert!(h.closed(0).is_none() && h.closed(1).is_none());
        // Recovery used NAKs as well as the transport timeout.
        let naks = h.sent_by(
            0,
            |m| matches!(m, Message::InformationAck { flags, .. } if flags.nak),
        ) + h.sent_by(
            1,
            |m| matches!(m, Message::InformationAck { flags, .. } if flags.nak),
        );
        assert!(naks > 0, "seed {seed}: no NAK sent");
    }
}

#[test]
fn the_same_seed_gives_the_same_exchange() {
    let a = transfer_both_ways(7);
    let b = transfer_both_ways(7);
    assert_eq!(a.pair.log, b.pair.log);
    assert_eq!(a.pair.now, b.pair.now);
}

#[test]
fn a_slow_reader_chokes_the_sender_and_nothing_is_lost() {
    let small = TransportConfig {
        receive_buffer: 1000,
        ..TransportConfig::default()
    };
    let mut h = Harness::new(
        [TransportConfig::default(), small],
        Impairment::delay(Duration::from_millis(100)),
        5,
    );
    h.outgoing[0] = pattern(20_000, 9);
    // B reads nothing for the first 100 s.
    h.read_from[1] = Instant::ZERO + Duration::from_secs(100);
    h.connect();
    assert!(h.run(Duration::from_secs(3600), |h| h.received[1].len() == 20_000));
    assert_eq!(h.received[1], h.outgoing[0]);
    let chokes = h.sent_by(1, |m| match m {
        Message::InformationAck { flags, .. } | Message::Information { flags, .. } => flags.choke,
        _ => false,
    });
    let unchokes_after_choke = h
        .pair
        .log
        .iter()
        .skip_while(|(_, from, d)| {
            !(*from == 1
                && matches!(&d.message, Message::InformationAck { flags, .. } if flags.choke))
        })
        .any(|(_, from, d)| {
            *from == 1
                && matches!(&d.message, Message::InformationAck { flags, .. } if !flags.choke)
        });
    assert!(chokes > 0, "B never choked");
    assert!(unchokes_after_choke, "B never lifted its choke");
    // While choked, A sent no new information to B before B read (t < 100 s)
    // beyond what B had room for and its window.
    let before_read: usize = h
        .pair
        .log
        .iter()
        .filter(|(t, from, d)| {
            *from == 0 && *t < h.read_from[1] && matches!(d.message, Message::Information { .. })
        })
        .count();
    assert!(
        before_read <= 1000 / 236 + 1 + 4,
        "A sent {before_read} information messages into a choked B"
    );
    assert!(h.closed(0).is_none());
}

#[test]
fn connect_gives_up_after_the_maximum_tries() {
    let mut h = Harness::new([TransportConfig::default(); 2], Impairment::loss(1.0), 1);
    h.connect();
    assert!(h.run(Duration::from_secs(3600), |h| h.closed(0).is_some()));
    assert_eq!(h.closed(0), Some(CloseReason::TimedOut { tries: 3 }));
    assert_eq!(h.sent_by(0, |m| matches!(m, Message::ConnectRequest(_))), 3);
    // Three transport timeouts of 120 s.
    assert_eq!(h.pair.now, Instant::ZERO + Duration::from_secs(360));
    assert_eq!(
        h.closed(0).unwrap().to_string(),
        "no answer from the far node after 3 tries (transport timeout)"
    );
}

#[test]
fn a_circuit_whose_peer_goes_silent_is_given_up() {
    let mut h = Harness::new(
        [TransportConfig::default(); 2],
        Impairment::delay(Duration::from_millis(100)),
        1,
    );
    h.connect();
    assert!(h.run(Duration::from_secs(60), |h| h.circuit[1].is_some()
        && h.pair.engines[0].state(h.circuit[0].unwrap())
            == Some(State::Connected)));
    // The link breaks: nothing gets through any more.
    for to in &mut h.pair.to {
        to.impairment = Impairment::loss(1.0);
    }
    h.outgoing[0] = pattern(500, 3);
    let start = h.pair.now;
    assert!(h.run(Duration::from_secs(3600), |h| h.closed(0).is_some()));
    assert_eq!(h.closed(0), Some(CloseReason::TimedOut { tries: 3 }));
    assert_eq!(h.pair.now - start, Duration::from_secs(360));
    // The data not acknowledged is reported, not silently dropped.
    assert_eq!(h.pair.engines[0].unacknowledged(h.circuit[0].unwrap()), 500);
}

#[test]
fn a_refusing_node_answers_with_choke() {
    let refusing = TransportConfig {
        accept_incoming: false,
        ..TransportConfig::default()
    };
    let mut h = Harness::new(
        [TransportConfig::default(), refusing],
        Impairment::delay(Duration::from_millis(50)),
        1,
    );
    h.connect();
    assert!(h.run(Duration::from_secs(60), |h| h.closed(0).is_some()));
    assert_eq!(h.closed(0), Some(CloseReason::Refused));
    assert_eq!(
        h.sent_by(1, |m| matches!(
            m,
            Message::ConnectAck { refused: true, .. }
        )),
        1
    );
}

#[test]
fn an_orderly_disconnect_after_all_data_is_acknowledged() {
    let mut h = Harness::new([TransportConfig::default(); 2], lossy(), 11);
    h.outgoing[0] = pattern(3000, 4);
    h.connect();
    // Disconnect at once: the queued data still goes first.
    h.users();
    assert_eq!(h.offered[0], 3000);
    let a = h.circuit[0].unwrap();
    h.pair.engines[0].disconnect(a);
    assert!(h.run(Duration::from_secs(3600), |h| h.closed(0).is_some()
        && h.closed(1).is_some()));
    assert_eq!(h.closed(0), Some(CloseReason::Local));
    assert_eq!(h.closed(1), Some(CloseReason::Remote));
    assert_eq!(h.received[1], h.outgoing[0]);
    // Every information message was acknowledged before the request.
    let first_dreq = h
        .pair
        .log
        .iter()
        .position(|(_, from, d)| {
            *from == 0 && matches!(d.message, Message::DisconnectRequest { .. })
        })
        .unwrap();
    assert!(!h.pair.log[first_dreq..]
        .iter()
        .any(|(_, from, d)| *from == 0 && matches!(d.message, Message::Information { .. })));
    // Nothing is left running.
    h.pair.settle();
    assert_eq!(h.pair.engines[0].poll_timeout(), None);
}

#[test]
fn connect_requests_past_the_circuit_limit_are_refused() {
    let small = TransportConfig {
        maximum_circuits: 2,
        ..TransportConfig::default()
    };
    let mut h = Harness::new(
        [TransportConfig::default(), small],
        Impairment::delay(Duration::from_millis(50)),
        1,
    );
    let now = h.pair.now;
    let circuits: Vec<_> = (0..3)
        .map(|_| {
            h.pair.engines[0]
                .connect(now, addr("G1USR"), addr("B1BBB"))
                .unwrap()
        })
        .collect();
    assert!(h.run(Duration::from_secs(60), |h| h.events[0].len() == 3));
    let refused = h.events[0]
        .iter()
        .filter(|e| {
            matches!(
                e,
                CircuitEvent::Closed {
                    reason: CloseReason::Refused,
                    ..
                }
            )
        })
        .count();
    assert_eq!(refused, 1);
    assert_eq!(h.pair.engines[0].state(circuits[2]), Some(State::Closed));
    let mine = Transport::new(
        addr("A1AAA"),
        TransportConfig {
            maximum_circuits: 0,
            ..TransportConfig::default()
        },
    )
    .connect(now, addr("G1USR"), addr("B1BBB"));
    assert_eq!(
        mine.unwrap_err().to_string(),
        "too many NET/ROM circuits open (at most 0); release closed ones or raise the limit"
    );
}

#[test]
fn an_idle_circuit_is_disconnected_after_the_no_activity_timeout() {
    let config = TransportConfig {
        transport_no_activity_timeout: Some(Duration::from_secs(600)),
        ..TransportConfig::default()
    };
    let mut h = Harness::new(
        [config; 2],
        Impairment::delay(Duration::from_millis(100)),
        1,
    );
    h.outgoing = [pattern(300, 1), pattern(300, 2)];
    h.connect();
    assert!(
        h.run(Duration::from_secs(60), |h| h.received[0].len() == 300
            && h.received[1].len() == 300)
    );
    let quiet_from = h.pair.now;
    assert!(h.run(Duration::from_secs(3600), |h| h.closed(0).is_some()
        && h.closed(1).is_some()));
    let mut reasons = [h.closed(0).unwrap(), h.closed(1).unwrap()];
    reasons.sort_by_key(|r| r.to_string());
    assert_eq!(reasons, [CloseReason::Idle, CloseReason::Remote]);
    // The last thing heard was at most one acknowledge delay after the
    // data; the disconnect followed 600 s after it.
    let took = h.pair.now - quiet_from;
    assert!(
        took >= Duration::from_secs(600) && took <= Duration::from_secs(610),
        "{took:?}"
    );
    assert_eq!(
        CloseReason::Idle.to_string(),
        "disconnected after no activity for the idle timeout"
    );
}

mod random {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Whatever the channel does, each side reads a prefix of what the
        /// other sent, and all of it unless the circuit timed out.
        #[test]
        fn each_side_reads_a_prefix_and_all_unless_timed_out(
            seed in any::<u64>(),
            loss in 0.0f64..0.3,
            duplicate in 0.0f64..0.1,
            reorder in 0.0f64..0.2,
            window in 1u8..8,
            lens in (0usize..5000, 0usize..5000),
        ) {
            let config = TransportConfig {
                transport_requested_window_size: window,
                ..TransportConfig::default()
            };
            let impairment = Impairment {
                delay: Duration::from_millis(100),
                loss,
                duplicate,
                reorder,
                reorder_delay: Duration::from_millis(500),
                ..Impairment::default()
            };
            let mut h = Harness::new([config; 2], impairment, seed);
            h.outgoing = [pattern(lens.0, 5), pattern(lens.1, 6)];
            h.connect();
            let finished = h.run(Duration::from_secs(7 * 24 * 3600), |h| {
                (h.received[1].len() == lens.0 && h.received[0].len() == lens.1)
                    || h.closed(0).is_some()
                    || h.closed(1).is_some()
            });
            prop_assert!(finished);
            prop_assert!(h.outgoing[0].starts_with(&h.received[1]));
            prop_assert!(h.outgoing[1].starts_with(&h.received[0]));
            match (h.closed(0), h.closed(1)) {
                (None, None) => {
                    prop_assert_eq!(h.received[1].len(), lens.0);
                    prop_assert_eq!(h.received[0].len(), lens.1);
                }
                (a, b) => {
                    for reason in [a, b].into_iter().flatten() {
                        prop_assert!(matches!(reason, CloseReason::TimedOut { tries: 3 }), "{:?}", reason);
                    }
                }
            }
        }
    }
}
