//! `ReceiverConfig::hold_acks`: a watermark (RFC 5740 section 5.1.3) is
//! acknowledged only once the receiver's application released every
//! object up to it, and at once when it does.

use core::time::Duration;
use linklab_core::Instant;
use linklab_norm::{
    ObjectKind, Receiver, ReceiverConfig, ReceiverEvent, Sender, SenderConfig, SenderEvent,
    SyncPolicy,
};
use linklab_testkit::{Impairment, Pair};
use support::{net, Node, RECEIVER};

mod support;

/// Runs a lossless, zero-delay exchange until `until` or the watermark
/// ends; the objects the receiver completed, and the watermark outcome.
fn exchange(pair: &mut Pair<Node>, until: Instant) -> (Vec<u16>, Option<SenderEvent>) {
    let watermark = |e: &SenderEvent| matches!(e, SenderEvent::WatermarkCompleted { .. });
    pair.run_until(until, |p| {
        p.engines[0].sender_events().iter().any(watermark)
    });
    let completed = pair.engines[1]
        .take_receiver_events()
        .into_iter()
        .filter_map(|e| match e {
            ReceiverEvent::ObjectCompleted { object_id, .. } => Some(object_id),
            _ => None,
        })
        .collect();
    let outcome = pair.engines[0]
        .take_sender_events()
        .into_iter()
        .find(watermark);
    (completed, outcome)
}

fn pair(hold: bool) -> Pair<Node> {
    let config = SenderConfig::new(1, RECEIVER.parse().unwrap(), 1_000_000.0);
    let sender = Sender::new(config, Instant::ZERO).unwrap();
    let mut rc = ReceiverConfig::new(2);
    rc.sync = SyncPolicy::All;
    rc.hold_acks = hold;
    net(sender, Receiver::new(rc), Impairment::default(), 0)
}

#[test]
fn held_objects_are_acknowledged_only_after_release() {
    let mut pair = pair(true);
    let sender = pair.engines[0].sender();
    let a = sender
        .enqueue(Instant::ZERO, vec![1; 3000], ObjectKind::Data)
        .unwrap();
    let b = sender
        .enqueue(Instant::ZERO, vec![2; 500], ObjectKind::Data)
        .unwrap();
    assert!(sender.set_watermark(b, &[2]));
    // Both complete, neither released: the watermark runs out unanswered.
    let (completed, outcome) = exchange(&mut pair, Instant::from_micros(60_000_000));
    assert_eq!(completed, vec![a, b]);
    match outcome {
        Some(SenderEvent::WatermarkCompleted { acked, missing, .. }) => {
            assert!(acked.is_empty());
            assert_eq!(missing, vec![2]);
        }
        other => panic!("{other:?}"),
    }
    // Asked again with only the second object released: the sender
    // flushes again (it was idle) and the first object still holds the
    // acknowledgement back.
    pair.engines[1].receiver().release(pair.now, 1, b);
    assert!(pair.engines[0].sender().set_watermark(b, &[2]));
    let until = pair.now + Duration::from_secs(60);
    let (_, outcome) = exchange(&mut pair, until);
    assert!(matches!(
        outcome,
        Some(SenderEvent::WatermarkCompleted { ref missing, .. }) if missing == &vec![2]
    ));
    // Asked once more, and the first object released: acknowledged at
    // once.
    assert!(pair.engines[0].sender().set_watermark(b, &[2]));
    let released = pair.now;
    pair.engines[1].receiver().release(pair.now, 1, a);
    let until = pair.now + Duration::from_secs(60);
    let (_, outcome) = exchange(&mut pair, until);
    match outcome {
        Some(SenderEvent::WatermarkCompleted { acked, missing, .. }) => {
            assert_eq!(acked, vec![2]);
            assert!(missing.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(pair.now, released, "acknowledged at the release");
}

#[test]
fn without_hold_completion_is_enough() {
    let mut pair = pair(false);
    let sender = pair.engines[0].sender();
    let a = sender
        .enqueue(Instant::ZERO, vec![1; 3000], ObjectKind::Data)
        .unwrap();
    assert!(sender.set_watermark(a, &[2]));
    let (completed, outcome) = exchange(&mut pair, Instant::from_micros(60_000_000));
    assert_eq!(completed, vec![a]);
    assert!(matches!(
        outcome,
        Some(SenderEvent::WatermarkCompleted { ref acked, .. }) if acked == &vec![2]
    ));
}
