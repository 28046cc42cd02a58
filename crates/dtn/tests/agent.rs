//! Bundle agents talking over modelled links, in virtual time.

use std::time::Duration;

use linklab_core::Instant;
use linklab_dtn::{
    crc, Agent, Config, CrcType, Delivery, Eid, Event, LinkId, MemoryStore, ReasonCode, Reception,
    RedbStore, SendRequest, StatusKind, Store, StoreError,
};
use proptest::prelude::*;

fn eid(text: &str) -> Eid {
    text.parse().unwrap()
}

/// Nodes whose link `LinkId(j)` at node `i` leads to node `j`; every link
/// carries whole bundles of at most `mtu` octets and never loses one.
struct Net<S: Store> {
    nodes: Vec<Agent<S>>,
    mtu: Option<usize>,
    now: Instant,
    /// Largest bundle carried.
    largest: usize,
    /// Bundles carried.
    carried: usize,
}

impl Net<MemoryStore> {
    /// A line of nodes `ipn:1.0 - ipn:2.0 - ...` (or the `dtn` names given),
    /// each routing by its neighbours.
    fn line(names: &[&str], mtu: Option<usize>) -> Net<MemoryStore> {
        let nodes = names
            .iter()
            .map(|name| {
                let mut config = Config::new(eid(name));
                config.dtn_time_at_zero = 800_000_000_000;
                Agent::open(config, MemoryStore::new()).unwrap()
            })
            .collect();
        let mut net = Net {
            nodes,
            mtu,
            now: Instant::ZERO,
            largest: 0,
            carried: 0,
        };
        let count = names.len();
        for i in 0..count {
            for (j, name) in names.iter().enumerate() {
                if j == i {
                    continue;
                }
                // Towards j: the neighbour on j's side.
                let hop = if j > i { i + 1 } else { i - 1 };
                let pattern = match name.strip_suffix(".0") {
                    Some(ipn) => format!("{ipn}.*"),
                    None => format!("{name}*"),
                };
                net.nodes[i].add_route(pattern.parse().unwrap(), LinkId(hop as u32));
            }
            for hop in [i.wrapping_sub(1), i + 1] {
                if hop < count {
                    net.nodes[i].link_up(LinkId(hop as u32), mtu);
                }
            }
        }
        net
    }
}

impl<S: Store> Net<S> {
    /// Carries bundles until no node has one to send.
    fn run(&mut self) {
        loop {
            let mut moved = false;
            for i in 0..self.nodes.len() {
                while let Some(transmit) = self.nodes[i].poll_transmit(self.now).unwrap() {
                    moved = true;
                    self.carried += 1;
                    self.largest = self.largest.max(transmit.octets.len());
                    if let Some(mtu) = self.mtu {
                        assert!(
                            transmit.octets.len() <= mtu,
                            "{} > {mtu}",
                            transmit.octets.len()
                        );
                    }
                    let peer = transmit.link.0 as usize;
                    let reception = self.nodes[peer]
                        .handle_bundle(self.now, &transmit.octets)
                        .unwrap();
                    assert!(
                        !matches!(reception, Reception::Discarded { .. }),
                        "{reception:?}"
                    );
                    self.nodes[i]
                        .transfer_succeeded(self.now, transmit.id)
                        .unwrap();
                }
            }
            if !moved {
                return;
            }
        }
    }

    fn deliveries(&mut self, node: usize) -> Vec<Delivery> {
        let mut all = Vec::new();
        while let Some(delivery) = self.nodes[node].poll_delivery() {
            self.nodes[node]
                .delivery_done(self.now, delivery.id)
                .unwrap();
            all.push(delivery);
        }
        all
    }

    fn events(&mut self, node: usize) -> Vec<Event> {
        std::iter::from_fn(|| self.nodes[node].poll_event()).collect()
    }
}

fn reports(events: &[Event]) -> Vec<(Eid, StatusKind, ReasonCode)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::StatusReport { from, report, .. } => {
                Some((from.clone(), report.statuses[0].0, report.reason))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_bundle_crosses_a_relay_and_its_reports_come_back() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0", "ipn:3.0"], None);
    net.nodes[0].register(eid("ipn:1.7")).unwrap();
    net.nodes[2].register(eid("ipn:3.9")).unwrap();
    let mut request = SendRequest::new(eid("ipn:1.7"), eid("ipn:3.9"), b"CQ DTN".to_vec());
    request.reports = vec![
        StatusKind::Received,
        StatusKind::Forwarded,
        StatusKind::Delivered,
    ];
    request.report_status_time = true;
    let id = net.nodes[0].send(net.now, &request).unwrap();
    net.run();
    let delivered = net.deliveries(2);
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0].payload, b"CQ DTN");
    assert_eq!(delivered[0].bundle, id);
    assert_eq!(delivered[0].source, eid("ipn:1.7"));
    // The delivered report leaves C only now; carry it.
    net.run();
    let mut got = reports(&net.events(0));
    got.sort_by_key(|(from, kind, _)| (from.to_string(), *kind as u8));
    let expected = vec![
        (
            eid("ipn:1.0"),
            StatusKind::Forwarded,
            ReasonCode::NoAdditionalInformation,
        ),
        (
            eid("ipn:2.0"),
            StatusKind::Received,
            ReasonCode::NoAdditionalInformation,
        ),
        (
            eid("ipn:2.0"),
            StatusKind::Forwarded,
            ReasonCode::NoAdditionalInformation,
        ),
        (
            eid("ipn:3.0"),
            StatusKind::Received,
            ReasonCode::NoAdditionalInformation,
        ),
        (
            eid("ipn:3.0"),
            StatusKind::Delivered,
            ReasonCode::NoAdditionalInformation,
        ),
    ];
    assert_eq!(got, expected);
    for node in &net.nodes {
        assert_eq!(node.stored(), 0);
    }
}

#[test]
fn dtn_scheme_endpoints_work_too() {
    let mut net = Net::line(&["dtn://alpha/", "dtn://beta/", "dtn://gamma/"], None);
    net.nodes[2].register(eid("dtn://gamma/mail")).unwrap();
    net.nodes[0].register(eid("dtn://alpha/out")).unwrap();
    let mut request = SendRequest::new(
        eid("dtn://alpha/out"),
        eid("dtn://gamma/mail"),
        b"hello".to_vec(),
    );
    request.reports = vec![StatusKind::Delivered];
    net.nodes[0].send(net.now, &request).unwrap();
    net.run();
    assert_eq!(net.deliveries(2)[0].payload, b"hello");
    net.run();
    let got = reports(&net.events(0));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, eid("dtn://gamma/"));
}

#[test]
fn a_bundle_waits_for_its_endpoint_to_register() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0"], None);
    net.nodes[0].register(eid("ipn:1.1")).unwrap();
    let request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.5"), b"later".to_vec());
    net.nodes[0].send(net.now, &request).unwrap();
    net.run();
    assert!(net.deliveries(1).is_empty());
    net.nodes[1].register(eid("ipn:2.5")).unwrap();
    assert_eq!(net.deliveries(1)[0].payload, b"later");
}

#[test]
fn large_bundles_are_fragmented_to_the_mtu_and_reassembled() {
    let mtu = 200;
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0", "ipn:3.0"], Some(mtu));
    net.nodes[2].register(eid("ipn:3.1")).unwrap();
    net.nodes[0].register(eid("ipn:1.1")).unwrap();
    let payload: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 256) as u8).collect();
    let mut request = SendRequest::new(eid("ipn:1.1"), eid("ipn:3.1"), payload.clone());
    request.reports = vec![StatusKind::Delivered];
    let id = net.nodes[0].send(net.now, &request).unwrap();
    net.run();
    let events = net.events(0);
    let Some(Event::Fragmented { fragments, .. }) = events
        .iter()
        .find(|e| matches!(e, Event::Fragmented { .. }))
    else {
        panic!("no fragmentation: {events:?}");
    };
    assert!(*fragments >= 5000 / mtu, "{fragments} fragments");
    assert!(net.largest <= mtu);
    let delivered = net.deliveries(2);
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0].bundle, id);
    assert_eq!(delivered[0].payload, payload);
    net.run();
    assert_eq!(
        reports(&net.events(0)).len(),
        1,
        "one report for the whole bundle"
    );
    for node in &net.nodes {
        assert_eq!(node.stored(), 0);
    }
}

#[test]
fn a_bundle_that_may_not_be_fragmented_waits() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0"], Some(100));
    net.nodes[0].register(eid("ipn:1.1")).unwrap();
    let mut request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), vec![0x55; 500]);
    request.may_fragment = false;
    net.nodes[0].send(net.now, &request).unwrap();
    net.run();
    assert_eq!(net.carried, 0);
    assert!(net
        .events(0)
        .iter()
        .any(|e| matches!(e, Event::TooLarge { size, .. } if *size > 500)));
    assert_eq!(net.nodes[0].stored(), 1);
}

#[test]
fn expired_bundles_are_deleted_with_a_report() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0"], None);
    net.nodes[0].register(eid("ipn:1.1")).unwrap();
    net.nodes[0].link_down(LinkId(1));
    let mut request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), b"stale".to_vec());
    request.lifetime = Duration::from_secs(10);
    request.reports = vec![StatusKind::Deleted];
    net.nodes[0].send(net.now, &request).unwrap();
    let due = net.nodes[0].poll_timeout().unwrap();
    assert_eq!(due, Instant::from_micros(10_000_000));
    net.nodes[0]
        .handle_timeout(Instant::from_micros(9_999_000))
        .unwrap();
    assert_eq!(net.nodes[0].stored(), 1);
    net.nodes[0].handle_timeout(due).unwrap();
    assert_eq!(net.nodes[0].stored(), 0);
    let events = net.events(0);
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Deleted {
            reason: ReasonCode::LifetimeExpired,
            ..
        }
    )));
    assert_eq!(
        reports(&events),
        vec![(
            eid("ipn:1.0"),
            StatusKind::Deleted,
            ReasonCode::LifetimeExpired
        )]
    );
    assert_eq!(net.nodes[0].poll_timeout(), None);
}

#[test]
fn an_expired_bundle_arriving_is_discarded() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0"], None);
    net.nodes[0].register(eid("ipn:1.1")).unwrap();
    let mut request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), b"x".to_vec());
    request.lifetime = Duration::from_secs(1);
    net.nodes[0].send(net.now, &request).unwrap();
    let transmit = net.nodes[0].poll_transmit(net.now).unwrap().unwrap();
    let late = Instant::from_micros(2_000_000);
    let reception = net.nodes[1].handle_bundle(late, &transmit.octets).unwrap();
    assert!(matches!(
        reception,
        Reception::Discarded {
            reason: ReasonCode::LifetimeExpired,
            ..
        }
    ));
}

#[test]
fn a_hop_limit_stops_a_bundle() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0", "ipn:3.0"], None);
    let mut config = Config::new(eid("ipn:1.0"));
    config.hop_limit = Some(1);
    config.dtn_time_at_zero = 800_000_000_000;
    net.nodes[0] = Agent::open(config, MemoryStore::new()).unwrap();
    net.nodes[0].add_route("*".parse().unwrap(), LinkId(1));
    net.nodes[0].link_up(LinkId(1), None);
    net.nodes[0].register(eid("ipn:1.1")).unwrap();
    net.nodes[2].register(eid("ipn:3.1")).unwrap();
    let mut request = SendRequest::new(eid("ipn:1.1"), eid("ipn:3.1"), b"far".to_vec());
    request.reports = vec![StatusKind::Deleted];
    net.nodes[0].send(net.now, &request).unwrap();
    net.run();
    assert!(net.deliveries(2).is_empty());
    assert!(net.events(1).iter().any(|e| matches!(
        e,
        Event::Deleted {
            reason: ReasonCode::HopLimitExceeded,
            ..
        }
    )));
    net.run();
    assert_eq!(
        reports(&net.events(0)),
        vec![(
            eid("ipn:2.0"),
            StatusKind::Deleted,
            ReasonCode::HopLimitExceeded
        )]
    );
}

#[test]
fn a_copy_of_a_delivered_bundle_is_not_delivered_again() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0"], None);
    net.nodes[0].register(eid("ipn:1.1")).unwrap();
    net.nodes[1].register(eid("ipn:2.1")).unwrap();
    let request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), b"once".to_vec());
    net.nodes[0].send(net.now, &request).unwrap();
    let transmit = net.nodes[0].poll_transmit(net.now).unwrap().unwrap();
    let first = net.nodes[1]
        .handle_bundle(net.now, &transmit.octets)
        .unwrap();
    assert!(matches!(first, Reception::Accepted(_)));
    // Stored, not yet delivered: a copy is a duplicate.
    let copy = net.nodes[1]
        .handle_bundle(net.now, &transmit.octets)
        .unwrap();
    assert!(matches!(copy, Reception::Duplicate(_)));
    assert_eq!(net.deliveries(1).len(), 1);
    // Delivered: still a duplicate.
    let copy = net.nodes[1]
        .handle_bundle(net.now, &transmit.octets)
        .unwrap();
    assert!(matches!(copy, Reception::Duplicate(_)));
    assert!(net.deliveries(1).is_empty());
}

#[test]
fn a_failed_transfer_is_tried_again_later() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0"], None);
    net.nodes[0].register(eid("ipn:1.1")).unwrap();
    net.nodes[1].register(eid("ipn:2.1")).unwrap();
    let request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), b"retry".to_vec());
    net.nodes[0].send(net.now, &request).unwrap();
    let transmit = net.nodes[0].poll_transmit(net.now).unwrap().unwrap();
    net.nodes[0].transfer_failed(net.now, transmit.id);
    assert!(net.nodes[0].poll_transmit(net.now).unwrap().is_none());
    let retry = net.nodes[0].poll_timeout().unwrap();
    assert_eq!(retry, Instant::from_micros(30_000_000));
    net.now = retry;
    net.run();
    assert_eq!(net.deliveries(1)[0].payload, b"retry");
}

#[test]
fn a_waiting_bundle_goes_at_once_when_its_link_has_a_new_contact() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0", "ipn:3.0"], None);
    net.nodes[1].register(eid("ipn:2.1")).unwrap();
    let to_1 = SendRequest::new(eid("ipn:2.1"), eid("ipn:1.1"), b"west".to_vec());
    let to_3 = SendRequest::new(eid("ipn:2.1"), eid("ipn:3.1"), b"east".to_vec());
    net.nodes[1].send(net.now, &to_1).unwrap();
    net.nodes[1].send(net.now, &to_3).unwrap();
    while let Some(transmit) = net.nodes[1].poll_transmit(net.now).unwrap() {
        net.nodes[1].transfer_failed(net.now, transmit.id);
    }
    // A contact with ipn:3.0 frees only the bundle routed there.
    assert_eq!(net.nodes[1].retry_now(LinkId(2)), 1);
    let transmit = net.nodes[1].poll_transmit(net.now).unwrap().unwrap();
    assert_eq!(transmit.link, LinkId(2));
    assert!(net.nodes[1].poll_transmit(net.now).unwrap().is_none());
    // A bundle in flight is not retried; nothing waits for link 2 now.
    assert_eq!(net.nodes[1].retry_now(LinkId(2)), 0);
    net.nodes[1]
        .transfer_succeeded(net.now, transmit.id)
        .unwrap();
    assert_eq!(net.nodes[1].stored(), 1, "the other still waits");
}

#[test]
fn the_rest_of_a_broken_transfer_goes_at_once_on_the_next_contact() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0"], None);
    net.nodes[1].register(eid("ipn:2.1")).unwrap();
    let payload: Vec<u8> = (0..3000u32).map(|i| (i % 253) as u8).collect();
    let request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), payload.clone());
    net.nodes[0].send(net.now, &request).unwrap();
    let transmit = net.nodes[0].poll_transmit(net.now).unwrap().unwrap();
    net.nodes[1]
        .handle_partial_bundle(net.now, &transmit.octets[..1500])
        .unwrap();
    net.nodes[0]
        .transfer_partial(net.now, transmit.id, 1500)
        .unwrap();
    net.nodes[0].link_down(LinkId(1));
    assert!(net.nodes[0].poll_transmit(net.now).unwrap().is_none());
    // The same instant: no retry wait is let run out.
    net.nodes[0].link_up(LinkId(1), None);
    assert_eq!(net.nodes[0].retry_now(LinkId(1)), 1);
    net.run();
    let delivered = net.deliveries(1);
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0].payload, payload);
    assert_eq!(net.nodes[0].stored(), 0);
}

#[test]
fn a_link_going_down_takes_its_transfers_back() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0"], None);
    net.nodes[0].register(eid("ipn:1.1")).unwrap();
    net.nodes[1].register(eid("ipn:2.1")).unwrap();
    let request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), b"again".to_vec());
    net.nodes[0].send(net.now, &request).unwrap();
    let lost = net.nodes[0].poll_transmit(net.now).unwrap().unwrap();
    net.nodes[0].link_down(LinkId(1));
    // A late report about the lost transfer changes nothing.
    net.nodes[0].transfer_succeeded(net.now, lost.id).unwrap();
    assert_eq!(net.nodes[0].stored(), 1);
    net.nodes[0].link_up(LinkId(1), None);
    net.run();
    assert_eq!(net.deliveries(1)[0].payload, b"again");
}

#[test]
fn reactive_fragmentation_sends_only_what_did_not_get_through() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0"], None);
    net.nodes[0].register(eid("ipn:1.1")).unwrap();
    net.nodes[1].register(eid("ipn:2.1")).unwrap();
    let payload: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
    let request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), payload.clone());
    net.nodes[0].send(net.now, &request).unwrap();
    let transmit = net.nodes[0].poll_transmit(net.now).unwrap().unwrap();
    // The link breaks after 1200 octets.
    let sent = 1200;
    let kept = net.nodes[1]
        .handle_partial_bundle(net.now, &transmit.octets[..sent])
        .unwrap();
    assert!(matches!(kept, Some(Reception::Accepted(_))), "{kept:?}");
    net.nodes[0]
        .transfer_partial(net.now, transmit.id, sent)
        .unwrap();
    assert!(net.deliveries(1).is_empty(), "half an ADU is not delivered");
    net.now = net.nodes[0].poll_timeout().unwrap();
    net.run();
    assert!(
        net.largest < transmit.octets.len() - 1000,
        "only the rest went again"
    );
    let delivered = net.deliveries(1);
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0].payload, payload);
    // Too short a prefix to keep anything.
    assert!(net.nodes[1]
        .handle_partial_bundle(net.now, &transmit.octets[..20])
        .unwrap()
        .is_none());
}

#[test]
fn a_fragment_sent_again_whole_replaces_the_prefix_kept_of_it() {
    let mut net = Net::line(&["ipn:1.0", "ipn:2.0"], None);
    net.nodes[1].register(eid("ipn:2.1")).unwrap();
    let payload: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
    let request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), payload.clone());
    net.nodes[0].send(net.now, &request).unwrap();
    // A first transfer breaks after 1200 octets, both ends agreeing.
    let first = net.nodes[0].poll_transmit(net.now).unwrap().unwrap();
    net.nodes[1]
        .handle_partial_bundle(net.now, &first.octets[..1200])
        .unwrap();
    net.nodes[0]
        .transfer_partial(net.now, first.id, 1200)
        .unwrap();
    // The rest goes as a fragment; that transfer breaks too, the receiver
    // keeping 600 octets of it whose acknowledgements never reached the
    // sender, which sends the same fragment again.
    net.now = net.nodes[0].poll_timeout().unwrap();
    let rest = net.nodes[0].poll_transmit(net.now).unwrap().unwrap();
    let kept = net.nodes[1]
        .handle_partial_bundle(net.now, &rest.octets[..600])
        .unwrap();
    assert!(matches!(kept, Some(Reception::Accepted(_))), "{kept:?}");
    net.nodes[0].transfer_partial(net.now, rest.id, 0).unwrap();
    net.now = net.nodes[0].poll_timeout().unwrap();
    let again = net.nodes[0].poll_transmit(net.now).unwrap().unwrap();
    assert_eq!(again.octets.len(), rest.octets.len(), "the same fragment");
    let whole = net.nodes[1].handle_bundle(net.now, &again.octets).unwrap();
    assert!(matches!(whole, Reception::Accepted(_)), "{whole:?}");
    let delivered = net.deliveries(1);
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0].payload, payload);
    // A shorter copy of what is held is still a duplicate.
    let short = net.nodes[1]
        .handle_partial_bundle(net.now, &rest.octets[..600])
        .unwrap();
    assert!(!matches!(short, Some(Reception::Accepted(_))), "{short:?}");
}

/// The bundle a node sends for `payload`, with blocks of `crc_type`.
fn sample_bundle(crc_type: CrcType, hop_limit: Option<u64>) -> Vec<u8> {
    let mut config = Config::new(eid("ipn:1.0"));
    config.crc_type = crc_type;
    config.hop_limit = hop_limit;
    let mut agent = Agent::open(config, MemoryStore::new()).unwrap();
    agent.add_route("*".parse().unwrap(), LinkId(0));
    agent.link_up(LinkId(0), None);
    let request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), b"flip me".to_vec());
    agent
        .send(Instant::from_micros(5_000_000), &request)
        .unwrap();
    agent
        .poll_transmit(Instant::from_micros(6_000_000))
        .unwrap()
        .unwrap()
        .octets
}

#[test]
fn every_flipped_bit_is_rejected() {
    for (crc_type, hop_limit) in [
        (CrcType::CRC32_CASTAGNOLI, Some(30)),
        (CrcType::CRC16_X25, Some(30)),
        (CrcType::CRC32_CASTAGNOLI, None),
    ] {
        let octets = sample_bundle(crc_type, hop_limit);
        let mut receiver = Agent::open(Config::new(eid("ipn:2.0")), MemoryStore::new()).unwrap();
        for bit in 0..octets.len() * 8 {
            let mut flipped = octets.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            // Our own check alone catches it...
            assert!(
                crc::verify_bundle(&flipped).is_err(),
                "{crc_type:?}: bit {bit} not caught by the CRC check"
            );
            // ...and so the agent refuses it.
            assert!(
                receiver.handle_bundle(Instant::ZERO, &flipped).is_err(),
                "{crc_type:?}: bit {bit} accepted"
            );
        }
        assert_eq!(receiver.stored(), 0);
        let whole = receiver.handle_bundle(Instant::ZERO, &octets).unwrap();
        assert!(matches!(whole, Reception::Accepted(_)));
    }
}

#[test]
fn garbage_gets_a_clear_error() {
    let mut agent = Agent::open(Config::new(eid("ipn:2.0")), MemoryStore::new()).unwrap();
    let error = agent
        .handle_bundle(Instant::ZERO, b"\x9f\x01\xff")
        .unwrap_err();
    assert!(error.to_string().contains("not a bundle"), "{error}");
    let error = agent.handle_bundle(Instant::ZERO, &[]).unwrap_err();
    assert!(error.to_string().contains("truncated"), "{error}");
    let bad_node = Agent::open(Config::new(eid("ipn:2.3")), MemoryStore::new()).unwrap_err();
    assert!(bad_node.to_string().contains("not a node ID"), "{bad_node}");
    let error = agent.register(eid("ipn:3.1")).unwrap_err();
    assert!(error.to_string().contains("not an endpoint of this node"));
    let request = SendRequest::new(eid("ipn:9.1"), eid("ipn:2.1"), vec![]);
    assert!(agent.send(Instant::ZERO, &request).is_err());
}

#[test]
fn a_redb_store_keeps_bundles_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.redb");
    let config = Config::new(eid("ipn:1.0"));
    let id = {
        let mut agent = Agent::open(config.clone(), RedbStore::open(&path).unwrap()).unwrap();
        agent.register(eid("ipn:1.1")).unwrap();
        let request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), b"kept".to_vec());
        agent.send(Instant::ZERO, &request).unwrap()
    };
    let mut agent = Agent::open(config, RedbStore::open(&path).unwrap()).unwrap();
    assert_eq!(agent.stored(), 1);
    agent.add_route("ipn:2.*".parse().unwrap(), LinkId(4));
    agent.link_up(LinkId(4), None);
    let transmit = agent.poll_transmit(Instant::ZERO).unwrap().unwrap();
    assert_eq!(transmit.bundle, id);
    assert_eq!(transmit.link, LinkId(4));
    // A second bundle from the restarted node gets a new creation
    // timestamp even at the same time.
    let request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), b"kept".to_vec());
    let second = agent.send(Instant::ZERO, &request).unwrap();
    assert_ne!(second, id);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Fragments of any size, arriving in any order and some twice, are
    /// reassembled into the ADU exactly once.
    #[test]
    fn fragments_reassemble_in_any_order(
        length in 1usize..3000,
        mtu in 120usize..700,
        seed in any::<u64>(),
    ) {
        let mut sender = Net::line(&["ipn:1.0", "ipn:2.0"], Some(mtu));
        let payload: Vec<u8> = (0..length).map(|i| (i as u64 ^ seed) as u8).collect();
        sender.nodes[0].register(eid("ipn:1.1")).unwrap();
        let request = SendRequest::new(eid("ipn:1.1"), eid("ipn:2.1"), payload.clone());
        sender.nodes[0].send(sender.now, &request).unwrap();
        let mut pieces = Vec::new();
        while let Some(t) = sender.nodes[0].poll_transmit(sender.now).unwrap() {
            prop_assert!(t.octets.len() <= mtu);
            pieces.push(t.octets.clone());
            sender.nodes[0].transfer_succeeded(sender.now, t.id).unwrap();
        }
        // A seeded shuffle, with every third piece sent twice.
        let mut state = seed | 1;
        let mut order: Vec<Vec<u8>> = pieces.iter().step_by(3).cloned().collect();
        order.extend(pieces.iter().cloned());
        for i in (1..order.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            order.swap(i, (state % (i as u64 + 1)) as usize);
        }
        let receiver = &mut sender.nodes[1];
        receiver.register(eid("ipn:2.1")).unwrap();
        let mut delivered = Vec::new();
        for octets in order {
            receiver.handle_bundle(Instant::ZERO, &octets).unwrap();
            while let Some(d) = receiver.poll_delivery() {
                receiver.delivery_done(Instant::ZERO, d.id).unwrap();
                delivered.push(d.payload);
            }
        }
        prop_assert_eq!(delivered.len(), 1);
        prop_assert_eq!(&delivered[0], &payload);
        prop_assert_eq!(receiver.stored(), 0);
    }
}

/// A store whose disk can be made to fail.
struct Flaky {
    inner: MemoryStore,
    failing: std::rc::Rc<std::cell::Cell<bool>>,
}

impl Store for Flaky {
    fn load(&mut self) -> Result<linklab_dtn::store::Snapshot, StoreError> {
        self.inner.load()
    }

    fn commit(&mut self, batch: &linklab_dtn::Batch) -> Result<(), StoreError> {
        if self.failing.get() {
            return Err(StoreError::Io("disk full".into()));
        }
        self.inner.commit(batch)
    }
}

#[test]
fn nothing_is_accepted_or_confirmed_that_the_store_did_not_take() {
    let failing = std::rc::Rc::new(std::cell::Cell::new(false));
    let store = Flaky {
        inner: MemoryStore::new(),
        failing: failing.clone(),
    };
    let mut node = Agent::open(Config::new(eid("ipn:2.0")), store).unwrap();
    node.register(eid("ipn:2.1")).unwrap();
    let octets = sample_bundle(CrcType::CRC32_CASTAGNOLI, None);
    failing.set(true);
    let error = node.handle_bundle(Instant::ZERO, &octets).unwrap_err();
    assert!(error.to_string().contains("disk full"), "{error}");
    assert_eq!(node.stored(), 0);
    assert!(node.poll_delivery().is_none());
    failing.set(false);
    assert!(matches!(
        node.handle_bundle(Instant::ZERO, &octets).unwrap(),
        Reception::Accepted(_)
    ));
    let delivery = node.poll_delivery().unwrap();
    failing.set(true);
    assert!(node.delivery_done(Instant::ZERO, delivery.id).is_err());
    // Not confirmed: still stored, and the confirmation can be retried.
    assert_eq!(node.stored(), 1);
    failing.set(false);
    node.delivery_done(Instant::ZERO, delivery.id).unwrap();
    assert_eq!(node.stored(), 0);
    assert!(matches!(
        node.handle_bundle(Instant::ZERO, &octets).unwrap(),
        Reception::Duplicate(_)
    ));
}
