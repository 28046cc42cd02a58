//! Fuzzes what the NORM convergence layer decodes on top of NORM: the
//! bundle object header, alone and as the content of a NORM object that a
//! real `linklab_norm::Sender` carries to a `linklab_normcl::Session`.
//!
//! Input: the object's octets.
//!
//! Invariants: no panic; what decodes re-encodes to the same octets; the
//! session delivers exactly the decoded bundle when the header names the
//! configured peer, and otherwise refuses the object (never both).
#![no_main]

use linklab_core::{Engine, Instant};
use core::time::Duration;
use libfuzzer_sys::fuzz_target;
use linklab_norm::{ObjectKind, Sender, SenderConfig};
use linklab_normcl::header::BundleObject;
use linklab_normcl::{norm_node_id, Config, Event, Session};
use std::net::SocketAddr;

const PEER: &str = "ipn:1.0";

fuzz_target!(|data: &[u8]| {
    let decoded = BundleObject::decode(data);
    if let Ok(o) = &decoded {
        assert_eq!(o.encode(), data, "what decodes re-encodes");
    }
    if data.is_empty() || data.len() > 4096 {
        return;
    }
    let a: SocketAddr = "10.0.0.1:4560".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:4560".parse().unwrap();
    let mut sc = SenderConfig::new(norm_node_id(PEER), b, 10_000_000.0);
    sc.segment_size = 256;
    let mut sender = Sender::new(sc, Instant::ZERO).unwrap();
    sender.enqueue(Instant::ZERO, data.to_vec(), ObjectKind::Data).unwrap();
    let mut session = Session::new(Config::new("ipn:2.0", PEER, a, 10_000_000.0), Instant::ZERO).unwrap();
    let mut now = Instant::ZERO;
    let (mut delivered, mut refused) = (Vec::new(), 0);
    for _ in 0..64 {
        while let Some(t) = sender.poll_transmit(now) {
            session.handle_datagram(now, a, &t.payload);
        }
        while let Some(e) = session.poll_event() {
            match e {
                Event::BundleReceived { receipt, bundle } => {
                    delivered.push(bundle);
                    session.bundle_stored(now, receipt);
                }
                Event::ObjectRefused { .. } => refused += 1,
                _ => {}
            }
        }
        now = now + Duration::from_millis(10);
        session.handle_timeout(now);
    }
    match decoded {
        Ok(o) if o.node_id == PEER => {
            assert_eq!(delivered, vec![o.bundle.to_vec()]);
            assert_eq!(refused, 0);
        }
        _ => {
            assert!(delivered.is_empty());
            assert_eq!(refused, 1);
        }
    }
});
