//! A NORM sender and receiver over a seeded lossy network: every object
//! arrives intact at 0, 10 and 30 % loss, in both fixed-rate and NORM-CC
//! modes, and a watermark is acknowledged.

use core::time::Duration;
use linklab_core::{Instant, Stream};
use linklab_norm::{
    Feedback, ObjectKind, Rate, Receiver, ReceiverConfig, ReceiverEvent, Sender, SenderConfig,
    SenderEvent, SyncPolicy,
};
use linklab_testkit::Impairment;
use proptest::prelude::*;
use support::{net, RECEIVER};

mod support;

struct Outcome {
    delivered: Vec<(u16, Vec<u8>)>,
    sender_events: Vec<SenderEvent>,
    elapsed: Duration,
    repairs: u64,
    decoded: u64,
}

fn run(
    config: SenderConfig,
    objects: &[Vec<u8>],
    loss: f64,
    seed: u64,
    watermark: bool,
    limit: Duration,
) -> Outcome {
    let mut sender = Sender::new(config, Instant::ZERO).unwrap();
    let mut rc = ReceiverConfig::new(2);
    rc.seed = seed ^ 0x5eed;
    rc.feedback = Feedback::ToSender;
    // The first datagrams may be lost too: try for every object.
    rc.sync = SyncPolicy::All;
    let receiver = Receiver::new(rc);
    let mut ids = Vec::new();
    for o in objects {
        ids.push(
            sender
                .enqueue(Instant::ZERO, o.clone(), ObjectKind::Data)
                .unwrap(),
        );
    }
    if watermark {
        assert!(sender.set_watermark(*ids.last().unwrap(), &[2]));
    }
    let impairment = Impairment {
        delay: Duration::from_millis(20),
        loss,
        ..Impairment::default()
    };
    let mut pair = net(sender, receiver, impairment, seed);
    pair.run_until(Instant::ZERO + limit, |p| {
        let completed = p.engines[1]
            .receiver_events()
            .iter()
            .filter(|e| matches!(e, ReceiverEvent::ObjectCompleted { .. }))
            .count();
        completed == objects.len()
            && p.engines[0].sender_events().iter().any(|e| {
                matches!(
                    e,
                    SenderEvent::FlushCompleted | SenderEvent::WatermarkCompleted { .. }
                )
            })
    });
    let [mut sender, mut receiver] = pair.engines;
    let delivered = received(receiver.receiver_events());
    let sender_events = sender.sender_events().to_vec();
    let now = pair.now;
    Outcome {
        delivered,
        sender_events,
        elapsed: now - Instant::ZERO,
        repairs: sender.sender().stats().repairs_sent,
        decoded: receiver.receiver().stats().blocks_decoded,
    }
}

/// The objects the receiver completed, as (id, data).
fn received(events: &[ReceiverEvent]) -> Vec<(u16, Vec<u8>)> {
    events
        .iter()
        .filter_map(|e| match e {
            ReceiverEvent::ObjectCompleted {
                object_id, data, ..
            } => Some((*object_id, data.clone())),
            _ => None,
        })
        .collect()
}

fn objects(seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Stream::from_seed(seed);
    [1, 700, 5_000, 40_000, 1024 * 16]
        .iter()
        .map(|&n| (0..n).map(|_| rng.next_u64() as u8).collect())
        .collect()
}

fn fixed(kbps: f64) -> SenderConfig {
    let mut c = SenderConfig::new(1, RECEIVER.parse().unwrap(), kbps * 1000.0);
    c.segment_size = 512;
    c.block_len = 16;
    c.num_parity = 8;
    c
}

fn assert_delivered(out: &Outcome, objects: &[Vec<u8>]) {
    assert_eq!(
        out.delivered.len(),
        objects.len(),
        "after {:?}",
        out.elapsed
    );
    let mut got: Vec<&Vec<u8>> = out.delivered.iter().map(|(_, d)| d).collect();
    got.sort_by_key(|d| d.len());
    let mut want: Vec<&Vec<u8>> = objects.iter().collect();
    want.sort_by_key(|d| d.len());
    assert!(got == want, "objects differ");
}

#[test]
fn fixed_rate_delivers_intact_at_0_10_and_30_percent_loss() {
    let objs = objects(1);
    let total: usize = objs.iter().map(Vec::len).sum();
    for (loss, seed) in [(0.0, 1), (0.1, 2), (0.3, 3)] {
        let out = run(
            fixed(128.0),
            &objs,
            loss,
            seed,
            false,
            Duration::from_secs(600),
        );
        assert_delivered(&out, &objs);
        if loss == 0.0 {
            assert_eq!(out.repairs, 0);
            // 62 kB at 128 kbit/s with headers: a little over 3.9 s.
            let secs = out.elapsed.as_secs_f64();
            assert!(secs > total as f64 * 8.0 / 128_000.0, "{secs}");
        } else {
            assert!(out.repairs > 0);
            assert!(out.decoded > 0, "parity repairs are decoded");
        }
    }
}

#[test]
fn proactive_parity_repairs_without_nacks_at_low_loss() {
    let objs = objects(2);
    let mut c = fixed(84.0);
    c.auto_parity = 4;
    let out = run(c, &objs, 0.05, 9, false, Duration::from_secs(600));
    assert_delivered(&out, &objs);
    assert!(out.decoded > 0);
}

#[test]
fn watermark_is_acknowledged() {
    let objs = objects(3);
    let out = run(fixed(128.0), &objs, 0.1, 4, true, Duration::from_secs(600));
    assert_delivered(&out, &objs);
    let wm = out
        .sender_events
        .iter()
        .find_map(|e| match e {
            SenderEvent::WatermarkCompleted { acked, missing, .. } => {
                Some((acked.clone(), missing.clone()))
            }
            _ => None,
        })
        .expect("watermark completes");
    assert_eq!(wm, (vec![2], vec![]));
}

#[test]
fn norm_cc_delivers_and_adapts_its_rate() {
    let objs = objects(4);
    for (loss, seed) in [(0.0, 5), (0.1, 6), (0.3, 7)] {
        let mut c = fixed(128.0);
        c.rate = Rate::Cc {
            initial_bps: 64_000.0,
            min_bps: 8_000.0,
            max_bps: 1_000_000.0,
        };
        let out = run(c, &objs, loss, seed, false, Duration::from_secs(900));
        assert_delivered(&out, &objs);
        let rates: Vec<f64> = out
            .sender_events
            .iter()
            .filter_map(|e| match e {
                SenderEvent::RateChanged { bits_per_second } => Some(*bits_per_second),
                _ => None,
            })
            .collect();
        assert!(!rates.is_empty(), "NORM-CC changes the rate at {loss}");
        if loss == 0.0 {
            // Slow start without loss climbs above the initial rate.
            assert!(rates.iter().any(|&r| r > 64_000.0), "{rates:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn any_object_survives_any_seed(len in 1usize..20_000, seed in any::<u64>(), loss in 0.0f64..0.3) {
        let mut rng = Stream::from_seed(seed);
        let obj: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        let mut c = fixed(256.0);
        c.seed = seed;
        let out = run(c, std::slice::from_ref(&obj), loss, seed, false, Duration::from_secs(600));
        prop_assert_eq!(out.delivered.len(), 1);
        prop_assert!(out.delivered[0].1 == obj);
    }
}
