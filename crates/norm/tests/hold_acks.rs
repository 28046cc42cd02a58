//! `ReceiverConfig::hold_acks`: a watermark (RFC 5740 section 5.1.3) is
//! acknowledged only once the receiver's application released every
//! object up to it, and at once when it does.

use core::time::Duration;
use linklab_core::Engine;
use linklab_core::Instant;
use linklab_norm::{
    ObjectKind, Receiver, ReceiverConfig, ReceiverEvent, Sender, SenderConfig, SenderEvent,
    SyncPolicy,
};
use std::net::SocketAddr;

/// Runs a lossless, zero-delay exchange until `until` or the watermark
/// ends; the objects the receiver completed, and the watermark outcome.
fn exchange(
    sender: &mut Sender,
    receiver: &mut Receiver,
    now: &mut Instant,
    until: Instant,
) -> (Vec<u16>, Option<SenderEvent>) {
    let s: SocketAddr = "10.0.0.1:6003".parse().unwrap();
    let r: SocketAddr = "10.0.0.2:6003".parse().unwrap();
    let mut completed = Vec::new();
    while *now < until {
        while let Some(t) = sender.poll_transmit(*now) {
            receiver.handle_datagram(*now, s, &t.payload);
        }
        while let Some(t) = receiver.poll_transmit(*now) {
            sender.handle_datagram(*now, r, &t.payload);
        }
        while let Some(e) = receiver.poll_event() {
            if let ReceiverEvent::ObjectCompleted { object_id, .. } = e {
                completed.push(object_id);
            }
        }
        while let Some(e) = sender.poll_event() {
            if matches!(e, SenderEvent::WatermarkCompleted { .. }) {
                return (completed, Some(e));
            }
        }
        let next = [sender.poll_timeout(), receiver.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(until);
        *now = next.max(*now + Duration::from_micros(1)).min(until);
    }
    (completed, None)
}

fn pair(hold: bool) -> (Sender, Receiver) {
    let config = SenderConfig::new(1, "10.0.0.2:6003".parse().unwrap(), 1_000_000.0);
    let sender = Sender::new(config, Instant::ZERO).unwrap();
    let mut rc = ReceiverConfig::new(2);
    rc.sync = SyncPolicy::All;
    rc.hold_acks = hold;
    (sender, Receiver::new(rc))
}

#[test]
fn held_objects_are_acknowledged_only_after_release() {
    let (mut sender, mut receiver) = pair(true);
    let a = sender
        .enqueue(Instant::ZERO, vec![1; 3000], ObjectKind::Data)
        .unwrap();
    let b = sender
        .enqueue(Instant::ZERO, vec![2; 500], ObjectKind::Data)
        .unwrap();
    assert!(sender.set_watermark(b, &[2]));
    let mut now = Instant::ZERO;
    // Both complete, neither released: the watermark runs out unanswered.
    let (completed, outcome) = exchange(
        &mut sender,
        &mut receiver,
        &mut now,
        Instant::from_micros(60_000_000),
    );
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
    receiver.release(now, 1, b);
    assert!(sender.set_watermark(b, &[2]));
    let until = now + Duration::from_secs(60);
    let (_, outcome) = exchange(&mut sender, &mut receiver, &mut now, until);
    assert!(matches!(
        outcome,
        Some(SenderEvent::WatermarkCompleted { ref missing, .. }) if missing == &vec![2]
    ));
    // Asked once more, and the first object released: acknowledged at
    // once.
    assert!(sender.set_watermark(b, &[2]));
    let released = now;
    receiver.release(now, 1, a);
    let until = now + Duration::from_secs(60);
    let (_, outcome) = exchange(&mut sender, &mut receiver, &mut now, until);
    match outcome {
        Some(SenderEvent::WatermarkCompleted { acked, missing, .. }) => {
            assert_eq!(acked, vec![2]);
            assert!(missing.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(now, released, "acknowledged at the release");
}

#[test]
fn without_hold_completion_is_enough() {
    let (mut sender, mut receiver) = pair(false);
    let a = sender
        .enqueue(Instant::ZERO, vec![1; 3000], ObjectKind::Data)
        .unwrap();
    assert!(sender.set_watermark(a, &[2]));
    let mut now = Instant::ZERO;
    let (completed, outcome) = exchange(
        &mut sender,
        &mut receiver,
        &mut now,
        Instant::from_micros(60_000_000),
    );
    assert_eq!(completed, vec![a]);
    assert!(matches!(
        outcome,
        Some(SenderEvent::WatermarkCompleted { ref acked, .. }) if acked == &vec![2]
    ));
}
