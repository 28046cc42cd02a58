//! NORM-CC receiver feedback (RFC 5740 section 5.5.2): a receiver that is
//! not the CLR answers NORM_CMD(CC) only if its rate is below the
//! sender's, except while the sender has no CLR at all. In slow start a
//! receiver reports twice what it receives, which is never below the rate
//! it is sent at; a receiver whose first answer was lost must still be
//! heard, or the sender never gets a CLR.

use core::time::Duration;
use linklab_core::{Engine, Instant};
use linklab_norm::{ObjectKind, Rate, Receiver, ReceiverConfig, Sender, SenderConfig};
use std::net::SocketAddr;

/// NORM message type of NORM_ACK (RFC 5740 section 4.1).
const ACK: u8 = 5;
/// NORM_ACK(CC)'s ack_type, in octet 14 (RFC 5740 section 4.3.2).
const ACK_TYPE_CC: u8 = 1;

#[test]
fn a_receiver_keeps_answering_a_sender_without_a_clr() {
    let s: SocketAddr = "10.0.0.1:6003".parse().unwrap();
    let r: SocketAddr = "10.0.0.2:6003".parse().unwrap();
    let mut config = SenderConfig::new(1, r, 800_000.0);
    config.rate = Rate::Cc {
        initial_bps: 800_000.0,
        min_bps: 8_000.0,
        max_bps: 10_000_000.0,
    };
    let mut sender = Sender::new(config, Instant::ZERO).unwrap();
    let mut receiver = Receiver::new(ReceiverConfig::new(2));
    sender
        .enqueue(Instant::ZERO, vec![7; 1 << 20], ObjectKind::Data)
        .unwrap();
    // The sender's packets all arrive; the receiver's feedback never does,
    // so the sender probes without a CLR for as long as it sends.
    let measured = Instant::from_micros(3_000_000);
    let end = Instant::from_micros(6_000_000);
    let (mut now, mut answers_after_measuring) = (Instant::ZERO, 0);
    while now < end {
        while let Some(t) = sender.poll_transmit(now) {
            receiver.handle_datagram(now, s, &t.payload);
        }
        while let Some(t) = receiver.poll_transmit(now) {
            let p = &t.payload;
            if p.len() > 14 && p[0] & 0x0f == ACK && p[14] == ACK_TYPE_CC && now >= measured {
                answers_after_measuring += 1;
            }
        }
        now = [sender.poll_timeout(), receiver.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .expect("the sender paces its data")
            .max(now + Duration::from_micros(1));
    }
    // By 3 s the receiver has measured its receive rate over many windows
    // (and reports twice it); probes come once per GRTT.
    assert!(
        answers_after_measuring >= 3,
        "{answers_after_measuring} NORM_ACK(CC) after the rate is measured"
    );
}
