//! The sender's repair hold-off (RFC 5740 section 5.3): a NACK that
//! arrives within one GRTT of the repair it asks for crossed that repair
//! and is not answered again; a NACK after that is. On a path whose
//! queue holds repairs for seconds (the D-STAR radio's transmit buffer),
//! what keeps repeated NACKs from costing duplicate repairs is that the
//! GRTT is measured through the same queue.

use core::time::Duration;
use linklab_core::{Engine, Instant};
use linklab_norm::{ObjectKind, Receiver, ReceiverConfig, Sender, SenderConfig, SyncPolicy};
use std::net::SocketAddr;

/// NORM message types of NORM_DATA and NORM_NACK (RFC 5740 section 4.1).
const DATA: u8 = 2;
const NACK: u8 = 4;

#[test]
fn a_nack_crossing_its_repair_is_not_answered_again() {
    let s: SocketAddr = "10.0.0.1:6003".parse().unwrap();
    let r: SocketAddr = "10.0.0.2:6003".parse().unwrap();
    let mut sender = Sender::new(SenderConfig::new(1, r, 1_000_000.0), Instant::ZERO).unwrap();
    let mut rc = ReceiverConfig::new(2);
    rc.sync = SyncPolicy::All;
    let mut receiver = Receiver::new(rc);
    sender
        .enqueue(Instant::ZERO, vec![9; 3000], ObjectKind::Data)
        .unwrap();
    // Everything but the first NORM_DATA arrives, until the receiver asks
    // for it.
    let mut now = Instant::ZERO;
    let mut first = true;
    let nack = loop {
        while let Some(t) = sender.poll_transmit(now) {
            if first && t.payload[0] & 0x0f == DATA {
                first = false;
                continue;
            }
            receiver.handle_datagram(now, s, &t.payload);
        }
        let mut asked = None;
        while let Some(t) = receiver.poll_transmit(now) {
            // Other feedback is not delivered: the GRTT stays at its
            // initial 0.25 s.
            if t.payload[0] & 0x0f == NACK {
                asked = Some(t.payload);
            }
        }
        if let Some(nack) = asked {
            break nack;
        }
        now = [sender.poll_timeout(), receiver.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .expect("a timer runs until the receiver NACKs");
        assert!(now < Instant::from_micros(60_000_000), "no NACK");
    };
    // The NACK arrives at `at`; what the sender sends for it in the next
    // 10 ms (a repair takes 9 ms at its rate); the repairs sent so far.
    let repairs_by = |sender: &mut Sender, at: Instant| {
        sender.handle_datagram(at, r, &nack);
        let mut t = at;
        loop {
            while sender.poll_transmit(t).is_some() {}
            match sender.poll_timeout() {
                Some(next) if next <= at + Duration::from_millis(10) => t = next.max(t),
                _ => break,
            }
        }
        sender.stats().repairs_sent
    };
    // Answered with a repair (which, say, still sits in a queue).
    assert_eq!(repairs_by(&mut sender, now), 1);
    // The same NACK again within one GRTT crossed that repair: not
    // answered. (Each copy's echoed timestamp is older, so the GRTT the
    // sender measures from it only grows.)
    let grtt = sender.grtt();
    assert_eq!(repairs_by(&mut sender, now + grtt / 2), 1);
    // Ten seconds on it is a new request: the GRTT measured from the
    // stale echo is below that (0.75 of a 10 s sample and 0.25 of the
    // last estimate), so the hold-off is over.
    assert_eq!(repairs_by(&mut sender, now + Duration::from_secs(10)), 2);
}
