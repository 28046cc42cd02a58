//! Two sessions wired together, their byte streams cut at seeded random
//! boundaries: establishment, transfers both ways with segmentation,
//! acknowledgements, refusal, keepalive, idle timeout and termination.

mod support;

use std::time::Duration;

use linklab_core::Engine;
use linklab_tcpcl::wire::{ContactHeader, Message, MessageType, END, START};
use linklab_tcpcl::{
    AcceptError, Cause, Event, RefuseReason, SendError, SessTermReason, Side, State, Termination,
};
use proptest::prelude::*;
use support::config;

fn received(events: &[Event]) -> Vec<Vec<u8>> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TransferReceived { data, .. } => Some(data.clone()),
            _ => None,
        })
        .collect()
}

fn succeeded(events: &[Event]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TransferSucceeded { id } => Some(*id),
            _ => None,
        })
        .collect()
}

fn termination(events: &[Event]) -> &Termination {
    match events.last() {
        Some(Event::SessionTerminated(t)) => t,
        other => panic!("not terminated: {other:?}"),
    }
}

fn payload(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

#[test]
fn establishment_negotiates_parameters() {
    let mut a = config("a");
    a.keepalive_interval = 30;
    a.segment_mru = 500;
    a.transfer_mru = 5000;
    let mut b = config("b");
    b.keepalive_interval = 10;
    let pair = support::established(a, b, 1);
    let Event::SessionEstablished(pa) = &pair.engines[0].events[0] else {
        unreachable!()
    };
    let Event::SessionEstablished(pb) = &pair.engines[1].events[0] else {
        unreachable!()
    };
    assert_eq!(pa.peer_node_id, "dtn://b/");
    assert_eq!(pb.peer_node_id, "dtn://a/");
    assert_eq!((pa.keepalive_interval, pb.keepalive_interval), (10, 10));
    assert_eq!((pb.segment_mtu, pb.transfer_mtu), (500, 5000));
    assert_eq!(pa.segment_mtu, 64 * 1024);
    assert!(!pa.peer_can_tls && !pb.peer_can_tls);
    // The wire: contact headers with CAN_TLS = 0, then one SESS_INIT each.
    for i in 0..2 {
        assert_eq!(
            pair.engines[i].sent[..6],
            ContactHeader::new(false).encode()
        );
        assert_eq!(pair.engines[i].sent[5], 0, "CAN_TLS must be 0");
        let messages = support::messages(&pair, i);
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0].message_type(), MessageType::SessInit);
    }
}

#[test]
fn transfers_both_ways_are_segmented_and_acknowledged() {
    let mut a = config("a");
    a.max_segment = 100; // a sends segments of 100
    let mut b = config("b");
    b.segment_mru = 64; // b receives at most 64: a sends 64
    let mut pair = support::established(a, b, 2);
    let big = payload(1000, 1);
    let small = payload(10, 2);
    let id = pair.engines[0].s.send_transfer(pair.now, &big).unwrap();
    assert_eq!(id, 0);
    assert_eq!(
        pair.engines[0].s.send_transfer(pair.now, &small).unwrap(),
        1
    );
    assert_eq!(
        pair.engines[1].s.send_transfer(pair.now, &small).unwrap(),
        0
    );
    pair.settle();
    assert_eq!(
        received(&pair.engines[1].events),
        vec![big.clone(), small.clone()]
    );
    assert_eq!(received(&pair.engines[0].events), vec![small.clone()]);
    assert_eq!(succeeded(&pair.engines[0].events), vec![0, 1]);
    assert_eq!(succeeded(&pair.engines[1].events), vec![0]);

    // 1000 octets in segments of 64: 16 segments, START on the first with
    // the Transfer Length, END on the last; one cumulative ack each.
    let segments: Vec<_> = support::messages(&pair, 0)
        .into_iter()
        .filter_map(|m| match m {
            Message::XferSegment(s) if s.transfer_id == 0 => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(segments.len(), 16);
    assert!(segments.iter().all(|s| s.data.len() <= 64));
    assert_eq!(segments[0].flags, START);
    assert_eq!(segments[0].extensions[0].as_transfer_length(), Some(1000));
    assert_eq!(segments[15].flags, END);
    assert!(segments[1..15].iter().all(|s| s.flags == 0));
    let acks: Vec<_> = support::messages(&pair, 1)
        .into_iter()
        .filter_map(|m| match m {
            Message::XferAck(a) if a.transfer_id == 0 => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(acks.len(), 16);
    for (i, (ack, seg)) in acks.iter().zip(&segments).enumerate() {
        assert_eq!(ack.flags, seg.flags);
        assert_eq!(ack.acknowledged_length, (64 * (i as u64 + 1)).min(1000));
    }
    let acked: Vec<u64> = pair.engines[0]
        .events
        .iter()
        .filter_map(|e| match e {
            Event::TransferAcked {
                id: 0,
                octets,
                total,
            } => {
                assert_eq!(*total, 1000);
                Some(*octets)
            }
            _ => None,
        })
        .collect();
    assert_eq!(acked.len(), 16);
    assert_eq!(acked.last(), Some(&1000));
}

#[test]
fn the_incoming_prefix_is_what_the_queued_acks_acknowledge() {
    let mut a = config("a");
    a.max_segment = 100;
    let mut pair = support::established(a, config("b"), 3);
    assert_eq!(pair.engines[1].s.incoming(), None);
    let data = payload(450, 3);
    let id = pair.engines[0].s.send_transfer(pair.now, &data).unwrap();
    // Segments reach b one octet at a time; b's XFER_ACKs are held back.
    let mut sent = Vec::new();
    while let Some(octets) = pair.engines[0].s.poll_transmit(pair.now) {
        sent.extend(octets);
    }
    let mut prefixes = Vec::new();
    for octet in &sent {
        pair.engines[1]
            .s
            .handle_input(pair.now, std::slice::from_ref(octet));
        let prefix = pair.engines[1].s.incoming().map(|(i, p)| (i, p.to_vec()));
        if let Some((incoming, prefix)) = prefix {
            assert_eq!(incoming, id);
            assert_eq!(prefix, data[..prefix.len()]);
            if prefixes.last() != Some(&prefix.len()) {
                prefixes.push(prefix.len());
            }
        }
    }
    // Whole segments only, never part of one.
    assert_eq!(prefixes, vec![100, 200, 300, 400]);
    assert_eq!(pair.engines[1].s.incoming(), None, "received whole");
    let mut acked = Vec::new();
    while let Some(octets) = pair.engines[1].s.poll_transmit(pair.now) {
        acked.extend(octets);
    }
    let acks: Vec<u64> = support::decode_stream(&acked)
        .into_iter()
        .filter_map(|m| match m {
            Message::XferAck(ack) => Some(ack.acknowledged_length),
            _ => None,
        })
        .collect();
    assert_eq!(acks, vec![100, 200, 300, 400, 450]);
}

/// A pair where b holds its last XFER_ACKs, a's transfer of 300 octets
/// (segments of 100) received whole by b: its Transfer ID.
fn held_transfer(keepalive: u16, seed: u64) -> (support::Pair, u64) {
    let mut a = config("a");
    a.max_segment = 100;
    a.keepalive_interval = keepalive;
    let mut b = config("b");
    b.hold_final_ack = true;
    let mut pair = support::established(a, b, seed);
    let id = pair.engines[0]
        .s
        .send_transfer(pair.now, &payload(300, 8))
        .unwrap();
    pair.settle();
    assert_eq!(received(&pair.engines[1].events), vec![payload(300, 8)]);
    (pair, id)
}

/// The Acknowledged Lengths b sent.
fn acked_lengths(pair: &support::Pair) -> Vec<u64> {
    support::messages(pair, 1)
        .into_iter()
        .filter_map(|m| match m {
            Message::XferAck(ack) => Some(ack.acknowledged_length),
            _ => None,
        })
        .collect()
}

#[test]
fn a_held_last_ack_goes_once_accepted_and_the_session_lives_meanwhile() {
    // Keepalive 2 s: a silence of 4 s would end the session.
    let (mut pair, id) = held_transfer(2, 21);
    assert_eq!(acked_lengths(&pair), vec![100, 200]);
    assert_eq!(pair.engines[1].s.acknowledged(id), Some(200));
    assert!(succeeded(&pair.engines[0].events).is_empty());
    let start = pair.now;
    while pair.now - start < Duration::from_secs(30) {
        assert!(pair.advance(Duration::from_secs(60)));
    }
    for i in 0..2 {
        assert_eq!(pair.engines[i].s.state(), State::Established);
    }
    assert!(support::messages(&pair, 1).contains(&Message::Keepalive));
    assert!(succeeded(&pair.engines[0].events).is_empty(), "still held");

    let now = pair.now;
    pair.engines[1].s.accept_transfer(now, id).unwrap();
    assert_eq!(
        pair.engines[1].s.accept_transfer(now, id),
        Err(AcceptError(id)),
        "sent once"
    );
    assert_eq!(pair.engines[1].s.acknowledged(id), None);
    pair.settle();
    assert_eq!(acked_lengths(&pair), vec![100, 200, 300]);
    assert_eq!(succeeded(&pair.engines[0].events), vec![id]);
}

#[test]
fn an_ending_session_waits_for_a_held_last_ack() {
    let (mut pair, id) = held_transfer(0, 22);
    pair.engines[0]
        .s
        .terminate(pair.now, SessTermReason::Unknown);
    pair.settle();
    for i in 0..2 {
        assert_eq!(pair.engines[i].s.state(), State::Ending, "{i}");
    }
    let now = pair.now;
    pair.engines[1].s.accept_transfer(now, id).unwrap();
    pair.settle();
    assert_eq!(succeeded(&pair.engines[0].events), vec![id]);
    assert_eq!(termination(&pair.engines[0].events).cause, Cause::Requested);
    assert_eq!(
        termination(&pair.engines[1].events).cause,
        Cause::PeerTerminated(SessTermReason::Unknown)
    );
}

#[test]
fn a_held_last_ack_is_dropped_when_the_ending_timeout_closes_the_session() {
    let (mut pair, id) = held_transfer(0, 23);
    pair.engines[0]
        .s
        .terminate(pair.now, SessTermReason::Unknown);
    // Both wait for the XFER_ACK until the ending timeout (section 6.1).
    let ending = pair.now + Duration::from_secs(10);
    while !pair.engines[1].s.is_closed() {
        assert!(pair.advance(Duration::from_secs(60)));
    }
    assert!(pair.now >= ending);
    // The first cause of the end is the one reported.
    assert_eq!(
        termination(&pair.engines[1].events).cause,
        Cause::PeerTerminated(SessTermReason::Unknown)
    );
    let now = pair.now;
    assert_eq!(
        pair.engines[1].s.accept_transfer(now, id),
        Err(AcceptError(id))
    );
    assert_eq!(acked_lengths(&pair), vec![100, 200]);
    assert!(pair.engines[0]
        .events
        .contains(&Event::TransferAborted { id }));
}

#[test]
fn an_empty_transfer_is_one_segment() {
    let mut pair = support::established(config("a"), config("b"), 3);
    pair.engines[0].s.send_transfer(pair.now, &[]).unwrap();
    pair.settle();
    assert_eq!(received(&pair.engines[1].events), vec![Vec::<u8>::new()]);
    assert_eq!(succeeded(&pair.engines[0].events), vec![0]);
}

#[test]
fn sender_respects_the_peers_transfer_mru() {
    let mut b = config("b");
    b.transfer_mru = 100;
    let mut pair = support::established(config("a"), b, 4);
    assert_eq!(
        pair.engines[0].s.send_transfer(pair.now, &[0; 101]),
        Err(SendError::TooLarge {
            length: 101,
            transfer_mtu: 100
        })
    );
    assert!(pair.engines[0].s.send_transfer(pair.now, &[0; 100]).is_ok());
}

#[test]
fn a_refused_transfer_stops_and_the_next_one_goes_through() {
    let mut a = config("a");
    a.max_segment = 10;
    let mut pair = support::established(a, config("b"), 5);
    pair.engines.iter_mut().for_each(|e| e.max_piece = 1000);
    let first = payload(200, 3);
    let second = payload(30, 4);
    pair.engines[0].s.send_transfer(pair.now, &first).unwrap();
    // Deliver only the first segment to b, then b's user refuses.
    let seg = pair.engines[0].s.poll_transmit(pair.now).unwrap();
    pair.engines[1].s.handle_input(pair.now, &seg);
    assert!(matches!(
        pair.engines[1].s.poll_event(),
        Some(Event::TransferStarted {
            id: 0,
            length: Some(200)
        })
    ));
    pair.engines[1]
        .s
        .refuse_transfer(pair.now, 0, RefuseReason::Completed)
        .unwrap();
    assert!(pair.engines[1]
        .s
        .refuse_transfer(pair.now, 0, RefuseReason::Completed)
        .is_err());
    pair.settle();
    pair.engines[0].s.send_transfer(pair.now, &second).unwrap();
    pair.settle();
    assert!(pair.engines[0].events.contains(&Event::TransferRefused {
        id: 0,
        reason: RefuseReason::Completed
    }));
    assert_eq!(received(&pair.engines[1].events), vec![second]);
    assert_eq!(succeeded(&pair.engines[0].events), vec![1]);
    // a stopped sending segments of transfer 0 soon after the refusal: not
    // all 20 went out.
    let zero_segments = support::messages(&pair, 0)
        .iter()
        .filter(|m| matches!(m, Message::XferSegment(s) if s.transfer_id == 0))
        .count();
    assert!(zero_segments < 20, "{zero_segments}");
}

#[test]
fn keepalives_keep_a_quiet_session_up() {
    let mut a = config("a");
    a.keepalive_interval = 5;
    let mut pair = support::established(a, config("b"), 6);
    for _ in 0..20 {
        assert!(pair.advance(Duration::from_secs(60)));
    }
    assert!(pair.now >= linklab_core::Instant::ZERO + Duration::from_secs(40));
    for i in 0..2 {
        assert_eq!(pair.engines[i].s.state(), State::Established);
        assert!(support::messages(&pair, i).contains(&Message::Keepalive));
    }
}

#[test]
fn a_silent_peer_is_dropped_after_twice_the_keepalive() {
    let mut a = config("a");
    a.keepalive_interval = 5;
    let mut pair = support::established(a, config("b"), 7);
    let start = pair.now;
    pair.to[0].hold = true; // nothing reaches a any more
    while pair.engines[0].s.state() == State::Established {
        assert!(pair.advance(Duration::from_secs(60)));
    }
    assert_eq!(pair.now - start, Duration::from_secs(10));
    assert!(pair.engines[0].events.contains(&Event::SessionEnding {
        reason: SessTermReason::IdleTimeout,
        initiator: Side::Local
    }));
    // With no reply the ending timeout closes it.
    while !pair.engines[0].s.is_closed() {
        assert!(pair.advance(Duration::from_secs(60)));
    }
    assert_eq!(
        termination(&pair.engines[0].events).cause,
        Cause::KeepaliveTimeout
    );
}

#[test]
fn the_idle_timeout_ends_a_session_with_only_keepalives() {
    let mut a = config("a");
    a.keepalive_interval = 5;
    a.idle_timeout = Some(Duration::from_secs(32));
    let mut pair = support::established(a, config("b"), 8);
    while !pair.engines[0].s.is_closed() {
        assert!(pair.advance(Duration::from_secs(60)));
    }
    pair.settle();
    assert_eq!(
        pair.now,
        linklab_core::Instant::ZERO + Duration::from_secs(32)
    );
    let t = termination(&pair.engines[0].events);
    assert_eq!(t.cause, Cause::IdleTimeout);
    assert_eq!(t.sent, Some(SessTermReason::IdleTimeout));
    assert_eq!(t.received, Some(SessTermReason::IdleTimeout));
    let t = termination(&pair.engines[1].events);
    assert_eq!(t.cause, Cause::PeerTerminated(SessTermReason::IdleTimeout));
}

#[test]
fn termination_lets_the_transfer_on_the_wire_finish_and_aborts_the_rest() {
    let mut a = config("a");
    a.max_segment = 50;
    let mut pair = support::established(a, config("b"), 9);
    let on_wire = payload(500, 5);
    pair.engines[0].s.send_transfer(pair.now, &on_wire).unwrap();
    pair.engines[0]
        .s
        .send_transfer(pair.now, &payload(20, 6))
        .unwrap();
    // One segment of transfer 0 leaves, then a terminates.
    let seg = pair.engines[0].s.poll_transmit(pair.now).unwrap();
    pair.engines[1].s.handle_input(pair.now, &seg);
    pair.engines[0].s.terminate(pair.now, SessTermReason::Busy);
    assert_eq!(
        pair.engines[0].s.send_transfer(pair.now, &[1]),
        Err(SendError::Ending)
    );
    pair.settle();
    assert_eq!(received(&pair.engines[1].events), vec![on_wire]);
    assert_eq!(succeeded(&pair.engines[0].events), vec![0]);
    assert!(pair.engines[0]
        .events
        .contains(&Event::TransferAborted { id: 1 }));
    for i in 0..2 {
        assert!(pair.engines[i].s.is_closed());
    }
    let t = termination(&pair.engines[0].events);
    assert_eq!(
        (t.cause.clone(), t.sent, t.received),
        (
            Cause::Requested,
            Some(SessTermReason::Busy),
            Some(SessTermReason::Busy)
        )
    );
    // b replied with REPLY set and the same reason.
    let term = support::messages(&pair, 1)
        .into_iter()
        .find_map(|m| match m {
            Message::SessTerm(t) => Some(t),
            _ => None,
        })
        .unwrap();
    assert!(term.is_reply());
    assert_eq!(term.reason, SessTermReason::Busy);
}

#[test]
fn crossing_sess_terms_end_both_sides() {
    let mut pair = support::established(config("a"), config("b"), 10);
    pair.engines[0]
        .s
        .terminate(pair.now, SessTermReason::Unknown);
    pair.engines[1]
        .s
        .terminate(pair.now, SessTermReason::ResourceExhaustion);
    pair.settle();
    for i in 0..2 {
        let t = termination(&pair.engines[i].events);
        assert_eq!(t.cause, Cause::Requested);
        assert!(t.sent.is_some() && t.received.is_some());
    }
}

#[test]
fn a_version_3_peer_gets_version_mismatch() {
    let mut pair = support::new_pair(config("a"), config("b"), 11);
    // Replace a's contact header by a version-3 one.
    let mut header = pair.engines[0].s.poll_transmit(pair.now).unwrap();
    header[4] = 3;
    pair.engines[1].s.handle_input(pair.now, &header);
    let messages = support::drain_messages(&mut pair.engines[1].s, pair.now);
    assert_eq!(
        messages,
        vec![Message::SessTerm(linklab_tcpcl::wire::SessTerm {
            flags: 0,
            reason: SessTermReason::VersionMismatch
        })]
    );
    let events = support::drain_events(&mut pair.engines[1].s);
    assert_eq!(termination(&events).cause, Cause::VersionMismatch(3));
}

#[test]
fn a_peer_that_demands_tls_is_named() {
    // The passive peer says CAN_TLS, then refuses the plain session.
    let mut pair = support::new_pair(config("a"), config("b"), 12);
    let mut active = std::mem::replace(
        &mut pair.engines[0].s,
        linklab_tcpcl::Session::new(linklab_tcpcl::Role::Active, config("x"), pair.now).unwrap(),
    );
    let mut reply = ContactHeader::new(true).encode().to_vec();
    reply.extend([0x05, 0x00, 0x04]); // SESS_TERM, Contact Failure
    active.handle_input(pair.now, &reply);
    let events = support::drain_events(&mut active);
    let t = termination(&events);
    assert_eq!(t.cause, Cause::TlsRequired);
    assert!(t.to_string().contains("requires TLS"));
    // ...or just closes the connection.
    let mut active =
        linklab_tcpcl::Session::new(linklab_tcpcl::Role::Active, config("x"), pair.now).unwrap();
    active.handle_input(pair.now, &ContactHeader::new(true).encode());
    active.handle_eof(pair.now);
    assert_eq!(
        termination(&support::drain_events(&mut active)).cause,
        Cause::TlsRequired
    );
}

#[test]
fn an_unanswered_contact_times_out() {
    let mut pair = support::new_pair(config("a"), config("b"), 13);
    pair.to[0].hold = true;
    pair.to[1].hold = true;
    while !pair.engines[0].s.is_closed() {
        assert!(pair.advance(Duration::from_secs(100)));
    }
    assert_eq!(
        termination(&pair.engines[0].events).cause,
        Cause::EstablishmentTimeout
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any sizes, any MRUs, any cutting of the streams: every transfer
    /// arrives whole and in order both ways, every one is acknowledged, and
    /// the session ends cleanly on both sides.
    #[test]
    fn transfers_survive_any_stream_cutting(
        seed in any::<u64>(),
        max_piece in 1usize..300,
        mru in (1u64..200, 1u64..200),
        max_segment in 1u64..300,
        sizes_a in prop::collection::vec(0usize..700, 0..6),
        sizes_b in prop::collection::vec(0usize..700, 0..6),
    ) {
        let mut a = config("a");
        a.segment_mru = mru.0;
        a.max_segment = max_segment;
        let mut b = config("b");
        b.segment_mru = mru.1;
        let mut pair = support::established(a, b, seed);
        pair.engines.iter_mut().for_each(|e| e.max_piece = max_piece);
        let from_a: Vec<Vec<u8>> = sizes_a.iter().enumerate().map(|(i, &n)| payload(n, i as u8)).collect();
        let from_b: Vec<Vec<u8>> = sizes_b.iter().enumerate().map(|(i, &n)| payload(n, 100 + i as u8)).collect();
        for data in &from_a {
            pair.engines[0].s.send_transfer(pair.now, data).unwrap();
        }
        for data in &from_b {
            pair.engines[1].s.send_transfer(pair.now, data).unwrap();
        }
        pair.settle();
        prop_assert_eq!(received(&pair.engines[1].events), from_a.clone());
        prop_assert_eq!(received(&pair.engines[0].events), from_b.clone());
        prop_assert_eq!(succeeded(&pair.engines[0].events), (0..from_a.len() as u64).collect::<Vec<_>>());
        prop_assert_eq!(succeeded(&pair.engines[1].events), (0..from_b.len() as u64).collect::<Vec<_>>());
        // No segment exceeded what its receiver allows.
        for (i, limit) in [(0, mru.1.min(max_segment)), (1, mru.0)] {
            for m in support::messages(&pair, i) {
                if let Message::XferSegment(s) = m {
                    prop_assert!(s.data.len() as u64 <= limit);
                }
            }
        }
        pair.engines[1].s.terminate(pair.now, SessTermReason::Unknown);
        pair.settle();
        prop_assert!(pair.engines[0].s.is_closed() && pair.engines[1].s.is_closed());
        prop_assert_eq!(&termination(&pair.engines[1].events).cause, &Cause::Requested);
    }
}
