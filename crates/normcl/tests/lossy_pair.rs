//! Two NORM CL sessions over a seeded lossy datagram link: bundles arrive
//! intact and once at 5 % and 20 % loss and under burst loss, transfers
//! succeed only once the peer stored the bundle, and fail clearly when
//! the peer is gone or misconfigured.

use core::time::Duration;
use std::collections::BTreeMap;
use std::net::SocketAddr;

use linklab_core::{Engine, Instant, Stream};
use linklab_testkit::{Impairment, Pair};
use support::{bursts, lossy, new_pair, send, sent_and_lost, End};

mod support;
use linklab_normcl::{Config, Session, TransferId};

const A: &str = "ipn:1.0";
const B: &str = "ipn:2.0";

fn addr(i: u8) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, i], 4560))
}

fn config(me: &str, peer: &str, peer_addr: SocketAddr) -> Config {
    // The paper's D-STAR rate (128 kbit/s); smaller segments keep the
    // tests quick in debug builds.
    let mut c = Config::new(me, peer, peer_addr, 128_000.0);
    c.segment_size = 512;
    c.block_len = 16;
    c.num_parity = 8;
    c.instance_id = 7;
    c
}

fn pair(impairment: Impairment, seed: u64) -> Pair<End> {
    let a = Session::new(config(A, B, addr(2)), Instant::ZERO).unwrap();
    let b = Session::new(config(B, A, addr(1)), Instant::ZERO).unwrap();
    new_pair(End::new(a, addr(1)), End::new(b, addr(2)), impairment, seed)
}

/// Bundles of varied sizes (1 octet to a few blocks), each distinct.
fn bundles(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Stream::from_seed(seed);
    (0..n)
        .map(|i| {
            let len = 1 + rng.below(12_000) as usize;
            let mut b: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
            b[0] = i as u8;
            b
        })
        .collect()
}

/// Sends `bundles` from end 0, sending again (as the bundle agent would)
/// whatever fails, until every one succeeded; checks end 1 stored each
/// intact and, unless an attempt failed, once.
fn deliver(mut p: Pair<End>, bundles: &[Vec<u8>]) -> Pair<End> {
    let mut attempts: BTreeMap<TransferId, usize> = BTreeMap::new();
    for (i, b) in bundles.iter().enumerate() {
        attempts.insert(send(&mut p, 0, b).unwrap(), i);
    }
    let limit = Instant::from_micros(600_000_000);
    let mut resent = vec![0; bundles.len()];
    loop {
        let all_ok = |p: &Pair<End>| {
            let ok: Vec<usize> = p.engines[0]
                .outcomes
                .iter()
                .filter(|(_, (_, r))| r.is_ok())
                .map(|(id, _)| id.0 as usize)
                .collect();
            ok.len() == bundles.len()
        };
        let retry = |p: &Pair<End>| p.engines[0].outcomes.values().any(|(_, r)| r.is_err());
        assert!(
            p.run_until(limit, |p| all_ok(p) || retry(p)),
            "not all acknowledged by {:?}",
            p.now
        );
        let failed: Vec<TransferId> = p.engines[0]
            .outcomes
            .iter()
            .filter(|(_, (_, r))| r.is_err())
            .map(|(id, _)| *id)
            .collect();
        if failed.is_empty() {
            break;
        }
        for id in failed {
            p.engines[0].outcomes.remove(&id);
            let i = attempts.remove(&id).unwrap();
            resent[i] += 1;
            assert!(resent[i] < 5, "bundle {i} failed five times");
            if !p.engines[0].session.is_up() {
                p.run_until(limit, |p| p.engines[0].session.is_up());
            }
            attempts.insert(send(&mut p, 0, &bundles[i]).unwrap(), i);
        }
    }
    // Let the last acknowledgements settle, then compare.
    let settle = p.now + Duration::from_secs(5);
    p.run_until(settle, |_| false);
    let mut seen = vec![0; bundles.len()];
    for (_, b) in &p.engines[1].stored {
        let i = bundles.iter().position(|x| x == b).expect("intact");
        seen[i] += 1;
    }
    for (i, n) in seen.iter().enumerate() {
        assert!(*n >= 1, "bundle {i} never stored");
        assert!(*n <= 1 + resent[i], "bundle {i} stored {n} times");
    }
    p
}

/// Every success came after the peer stored that bundle.
fn acknowledged_after_stored(p: &Pair<End>, bundles: &[Vec<u8>]) {
    let latest_store = |b: &Vec<u8>| {
        p.engines[1]
            .stored
            .iter()
            .filter(|(_, x)| x == b)
            .map(|(t, _)| *t)
            .min()
            .unwrap()
    };
    // Transfer IDs were handed out in order of `bundles` for first tries.
    for (id, (at, r)) in &p.engines[0].outcomes {
        if r.is_ok() && (id.0 as usize) < bundles.len() {
            assert!(*at >= latest_store(&bundles[id.0 as usize]));
        }
    }
}

#[test]
fn lossless_link_delivers_each_bundle_once() {
    let b = bundles(12, 1);
    let p = deliver(pair(lossy(Duration::from_millis(30), 0.0), 1), &b);
    assert_eq!(p.engines[1].stored.len(), b.len());
    assert_eq!(p.engines[0].session.sender_stats().repairs_sent, 0);
    acknowledged_after_stored(&p, &b);
}

#[test]
fn five_percent_loss_delivers_intact() {
    for seed in 1..=3 {
        let b = bundles(12, seed);
        let p = deliver(pair(lossy(Duration::from_millis(30), 0.05), seed), &b);
        assert!(sent_and_lost(&p).1 > 0);
        assert!(p.engines[0].session.sender_stats().repairs_sent > 0);
        acknowledged_after_stored(&p, &b);
    }
}

#[test]
fn twenty_percent_loss_delivers_intact() {
    for seed in 1..=3 {
        let b = bundles(12, 10 + seed);
        let p = deliver(pair(lossy(Duration::from_millis(30), 0.20), seed), &b);
        let (sent, lost) = sent_and_lost(&p);
        assert!(lost as f64 > 0.1 * sent as f64);
        acknowledged_after_stored(&p, &b);
    }
}

#[test]
fn burst_loss_delivers_intact() {
    let loss = bursts(Duration::from_millis(30));
    for seed in 1..=3 {
        let b = bundles(12, 20 + seed);
        let p = deliver(pair(loss, seed), &b);
        acknowledged_after_stored(&p, &b);
    }
}

#[test]
fn both_directions_at_once() {
    let mut p = pair(lossy(Duration::from_millis(30), 0.05), 4);
    let ab = bundles(6, 31);
    let ba = bundles(6, 32);
    for b in &ab {
        send(&mut p, 0, b).unwrap();
    }
    for b in &ba {
        send(&mut p, 1, b).unwrap();
    }
    let done = |p: &Pair<End>| {
        p.engines
            .iter()
            .all(|e| e.outcomes.len() == 6 && e.outcomes.values().all(|(_, r)| r.is_ok()))
    };
    assert!(p.run_until(Instant::from_micros(120_000_000), done));
    let stored = |i: usize| -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = p.engines[i].stored.iter().map(|(_, b)| b.clone()).collect();
        v.sort();
        v
    };
    let sorted = |v: &[Vec<u8>]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    assert_eq!(stored(1), sorted(&ab));
    assert_eq!(stored(0), sorted(&ba));
}

#[test]
fn acknowledgement_waits_for_the_store() {
    let mut p = pair(lossy(Duration::from_millis(30), 0.0), 5);
    // Storing takes a second, within the acknowledgement bound (at least
    // `min_ack_wait`, 2 s).
    p.engines[1].store_delay = Duration::from_secs(1);
    let b = bundles(1, 41);
    let id = send(&mut p, 0, &b[0]).unwrap();
    assert!(p.run_until(Instant::from_micros(60_000_000), |p| {
        !p.engines[0].outcomes.is_empty()
    }));
    let (acked, outcome) = &p.engines[0].outcomes[&id];
    assert_eq!(outcome, &Ok(()));
    let (stored, _) = p.engines[1].stored[0];
    assert!(stored >= Instant::from_micros(1_000_000));
    assert!(*acked >= stored);
}

#[test]
fn a_silent_peer_fails_the_transfer_and_the_link_goes_down() {
    let mut p = pair(lossy(Duration::from_millis(30), 1.0), 6);
    let b = bundles(2, 51);
    let first = send(&mut p, 0, &b[0]).unwrap();
    assert!(p.run_until(Instant::from_micros(600_000_000), |p| {
        !p.engines[0].outcomes.is_empty()
    }));
    let bound = p.engines[0].session.ack_bound();
    let (at, outcome) = &p.engines[0].outcomes[&first];
    assert!(outcome.is_err());
    // Sent within a second at 128 kbit/s, then at most two rounds.
    assert!(at.as_micros() <= 1_000_000 + 2 * bound.as_micros() as u64);
    assert!(p.engines[0].session.is_up(), "one unanswered request");
    let second = send(&mut p, 0, &b[1]).unwrap();
    assert!(p.run_until(Instant::from_micros(600_000_000), |p| {
        p.engines[0].outcomes.contains_key(&second)
    }));
    assert!(p.engines[0].outcomes[&second].1.is_err());
    assert!(!p.engines[0].session.is_up(), "down after two");
    assert_eq!(
        send(&mut p, 0, &b[0]),
        Err(linklab_normcl::SendError::LinkDown)
    );
    // Up again after the retry interval.
    let down = p.now;
    assert!(p.run_until(Instant::from_micros(600_000_000), |p| {
        p.engines[0].session.is_up()
    }));
    assert!(p.now >= down + Duration::from_secs(30));
    assert!(p.engines[1].stored.is_empty());
}

#[test]
fn datagrams_of_another_norm_node_are_dropped() {
    let a = Session::new(config(A, B, addr(2)), Instant::ZERO).unwrap();
    // B expects ipn:9.0 at A's address: A's NormNodeId is not that one.
    let b = Session::new(config(B, "ipn:9.0", addr(1)), Instant::ZERO).unwrap();
    let mut p = new_pair(
        End::new(a, addr(1)),
        End::new(b, addr(2)),
        Impairment::delay(Duration::from_millis(30)),
        7,
    );
    let id = send(&mut p, 0, &[1, 2, 3]).unwrap();
    assert!(p.run_until(Instant::from_micros(600_000_000), |p| {
        p.engines[0].outcomes.contains_key(&id)
    }));
    assert!(p.engines[0].outcomes[&id].1.is_err());
    assert!(p.engines[1].stored.is_empty());
    assert!(p.engines[1].session.refused_datagrams() > 0);
}

#[test]
fn an_object_naming_another_node_is_refused_and_never_acknowledged() {
    use linklab_norm::{ObjectKind, Sender, SenderConfig, SenderEvent};
    use linklab_normcl::header::BundleObject;
    // A plain NORM sender with ipn:1.0's NormNodeId whose object header
    // names ipn:5.0.
    let mut sender = Sender::new(
        SenderConfig::new(linklab_normcl::norm_node_id(A), addr(2), 128_000.0),
        Instant::ZERO,
    )
    .unwrap();
    let object = BundleObject {
        node_id: "ipn:5.0",
        bundle: &[9; 100],
    }
    .encode();
    let id = sender
        .enqueue(Instant::ZERO, object, ObjectKind::Data)
        .unwrap();
    sender.set_watermark(id, &[linklab_normcl::norm_node_id(B)]);
    let mut b = Session::new(config(B, A, addr(1)), Instant::ZERO).unwrap();
    let mut now = Instant::ZERO;
    let mut refused = Vec::new();
    let outcome = loop {
        while let Some(t) = sender.poll_transmit(now) {
            b.handle_datagram(now, addr(1), &t.payload);
        }
        while let Some(t) = b.poll_transmit(now) {
            sender.handle_datagram(now, addr(2), &t.payload);
        }
        while let Some(e) = b.poll_event() {
            match e {
                linklab_normcl::Event::ObjectRefused { why } => refused.push(why),
                linklab_normcl::Event::BundleReceived { .. } => panic!("delivered"),
                _ => {}
            }
        }
        if let Some(e) = sender
            .poll_event()
            .filter(|e| matches!(e, SenderEvent::WatermarkCompleted { .. }))
        {
            break e;
        }
        now = [sender.poll_timeout(), b.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .unwrap()
            .max(now + Duration::from_micros(1));
        b.handle_timeout(now);
    };
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].contains("ipn:5.0"));
    assert!(matches!(outcome, SenderEvent::WatermarkCompleted { acked, .. } if acked.is_empty()));
}

#[test]
fn replayed_datagrams_deliver_a_bundle_once_per_sender_instance() {
    use linklab_norm::{ObjectKind, Sender, SenderConfig};
    use linklab_normcl::header::BundleObject;
    let object = BundleObject {
        node_id: A,
        bundle: &[7; 3000],
    }
    .encode();
    // Every datagram of one object from a sender instance.
    let datagrams = |instance_id: u16| {
        let mut c = SenderConfig::new(linklab_normcl::norm_node_id(A), addr(2), 1e6);
        c.instance_id = instance_id;
        let mut sender = Sender::new(c, Instant::ZERO).unwrap();
        sender
            .enqueue(Instant::ZERO, object.clone(), ObjectKind::Data)
            .unwrap();
        let mut out = Vec::new();
        let mut now = Instant::ZERO;
        while now < Instant::from_micros(200_000) {
            while let Some(t) = sender.poll_transmit(now) {
                out.push(t.payload);
            }
            now = now + Duration::from_millis(1);
        }
        out
    };
    let mut b = Session::new(config(B, A, addr(1)), Instant::ZERO).unwrap();
    let mut received = 0;
    let mut now = Instant::ZERO;
    // Instance 1 twice over, then instance 2 (the peer restarted): the
    // same object ID, a new object.
    for run in [datagrams(1), datagrams(1), datagrams(2)] {
        for d in run {
            now = now + Duration::from_millis(1);
            b.handle_datagram(now, addr(1), &d);
            while let Some(e) = b.poll_event() {
                if let linklab_normcl::Event::BundleReceived { receipt, bundle } = e {
                    assert_eq!(bundle, vec![7; 3000]);
                    b.bundle_stored(now, receipt);
                    received += 1;
                }
            }
        }
    }
    assert_eq!(received, 2);
}
