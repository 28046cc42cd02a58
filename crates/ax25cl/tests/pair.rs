//! Two bundle agents over AX.25 CL sessions over two real AX.25
//! `DataLink`s: a 7182-octet bundle with seeded frame loss, with the link
//! cut mid-bundle, and the acknowledgement pattern of `ack_window`.

mod support;

use std::time::Duration;

use linklab_ax25cl::wire::{Decoded, Message, MessageType};
use linklab_ax25cl::{Cause, Event};
use linklab_dtn::bundle;
use support::{payload, Pair};

const FILE: usize = 7182;
const LIMIT: Duration = Duration::from_secs(3600);

/// The messages of a CL's output after its contact header.
fn messages(sent: &[Vec<u8>]) -> Vec<Message> {
    sent.iter()
        .skip(1)
        .map(|octets| match Message::decode(octets, u64::MAX) {
            Ok(Decoded::Message { message, len }) if len == octets.len() => message,
            other => panic!("not one message: {other:?}"),
        })
        .collect()
}

fn acks(pair: &Pair) -> Vec<u64> {
    messages(&pair.nodes[1].sent_messages)
        .into_iter()
        .filter_map(|m| match m {
            Message::AckSegment {
                acknowledged_length,
            } => Some(acknowledged_length),
            _ => None,
        })
        .collect()
}

#[test]
fn a_bundle_is_acknowledged_every_ack_window_segments_and_at_its_end() {
    for (ack_window, expected) in [(8u64, 4usize), (32, 1), (1, 0)] {
        let mut pair = Pair::new(ack_window as u32, 0.0, 1);
        pair.send(payload(FILE, 1));
        pair.run(1, LIMIT);
        let delivered = &pair.nodes[1].delivered;
        assert_eq!(delivered.len(), 1);
        assert_eq!(delivered[0].payload, payload(FILE, 1));
        let bundle = pair.nodes[0].transmits[0].octets.len() as u64;
        let segments = messages(&pair.nodes[0].sent_messages)
            .iter()
            .filter(|m| m.message_type() == MessageType::DataSegment)
            .count() as u64;
        assert_eq!(segments, bundle.div_ceil(248));
        let acks = acks(&pair);
        // Every ack_window segments of 248 octets, and the whole bundle.
        let mut want: Vec<u64> = (1..)
            .map(|n| n * ack_window * 248)
            .take_while(|&l| l < bundle)
            .collect();
        want.push(bundle);
        assert_eq!(acks, want, "ack_window {ack_window}");
        if expected > 0 {
            assert_eq!(acks.len(), expected);
        }
        assert!(matches!(
            pair.nodes[0].cl_events.last(),
            Some(Event::BundleSent { .. })
        ));
    }
}

#[test]
fn lossy_links_deliver_the_bundle_once_and_intact() {
    for seed in 0..6 {
        let mut pair = Pair::new(8, 0.08, seed);
        pair.send(payload(FILE, seed as u8));
        pair.run(1, LIMIT);
        let delivered = &pair.nodes[1].delivered;
        assert_eq!(delivered.len(), 1, "seed {seed}");
        assert_eq!(delivered[0].payload, payload(FILE, seed as u8));
        assert_eq!(pair.nodes[0].agent.stored(), 0);
    }
}

#[test]
fn a_link_cut_mid_bundle_resumes_from_the_last_acknowledged_octet() {
    for (cut_at, ack_window, loss, seed) in [
        (3000, 8, 0.0, 1),
        (600, 8, 0.0, 2),
        (5000, 32, 0.0, 3),
        (4000, 8, 0.05, 4),
        (7000, 1, 0.03, 5),
        (7400, 8, 0.0, 6),
    ] {
        let mut pair = Pair::new(ack_window, loss, seed);
        pair.cut_at_octets = Some(cut_at);
        pair.send(payload(FILE, 9));
        pair.run(1, LIMIT);
        let case = format!("cut at {cut_at}, ack_window {ack_window}, seed {seed}");
        assert_eq!(pair.cuts, 1, "{case}");
        let delivered = &pair.nodes[1].delivered;
        assert_eq!(delivered.len(), 1, "{case}");
        assert_eq!(delivered[0].payload, payload(FILE, 9), "{case}");

        // The sender's session ended with part of the bundle acknowledged.
        let sender = &pair.nodes[0];
        let acknowledged = sender
            .cl_events
            .iter()
            .find_map(|e| match e {
                Event::TransferInterrupted { acknowledged, .. } => Some(*acknowledged),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no interruption: {case}"));
        assert!(
            sender.cl_events.contains(&Event::SessionEnded {
                cause: Cause::LinkDown
            }),
            "{case}"
        );
        // The receiver kept what arrived, at least what it acknowledged (or
        // had the whole bundle, its last acknowledgement lost in the cut).
        let kept = pair.nodes[1].cl_events.iter().find_map(|e| match e {
            Event::PartialReceived { data } => Some(data.len() as u64),
            Event::BundleReceived { data } => Some(data.len() as u64),
            _ => None,
        });
        assert!(kept.is_some_and(|k| k >= acknowledged), "{case}");

        // The agent's remainder is a proper fragment: it starts at the first
        // payload octet not acknowledged and says the whole ADU's length
        // (with nothing of the payload acknowledged, the whole bundle goes
        // again).
        let first = &sender.transmits[0];
        assert!(first.bundle.fragment_info.is_none());
        let decoded = bundle::decode(&first.octets).unwrap();
        let payload_start = bundle::payload_range(&decoded).start as u64;
        let resumed = sender.transmits.last().unwrap();
        assert_eq!(sender.transmits.len(), 2, "{case}");
        match acknowledged.checked_sub(payload_start).filter(|&d| d > 0) {
            Some(done) => {
                let info = resumed
                    .bundle
                    .fragment_info
                    .as_ref()
                    .unwrap_or_else(|| panic!("not a fragment: {case}"));
                assert_eq!(info.total_adu_length, FILE as u64, "{case}");
                assert_eq!(info.offset, done, "{case}");
                let fragment = bundle::decode(&resumed.octets).unwrap();
                assert_eq!(
                    bundle::payload(&fragment, &resumed.octets),
                    &payload(FILE, 9)[done as usize..],
                    "{case}"
                );
            }
            None => assert_eq!(resumed.octets, first.octets, "{case}"),
        }
        assert_eq!(pair.nodes[0].agent.stored(), 0, "{case}");
    }
}
