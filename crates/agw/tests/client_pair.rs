//! The AGWPE client engine against linklab's server, in virtual time: two
//! [`Server`]s, one radio port each, joined by an ideal half-millisecond
//! medium, and a [`Client`] on each. The client's pacing by 'Y', its
//! count of acknowledged octets, registration, release, the heard list
//! and monitoring, all without a socket or a clock.

use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

use linklab_agw::client::{Client, ClientEvent, ClientOptions, Link};
use linklab_agw::{ClientId, PortConfig, Server};
use linklab_core::Instant;
use linklab_io::{AckMode, KissParams};
use linklab_link::Config;
use linklab_wire::ax25::Address;
use linklab_wire::control::Modulus;

const DELAY: Duration = Duration::from_micros(500);

fn call(text: &str) -> Address {
    text.parse().unwrap()
}

fn port_config() -> PortConfig {
    PortConfig {
        description: "test port".into(),
        kiss: KissParams::default(),
        link: Config {
            modulus: Modulus::Mod8,
            ..Config::default()
        },
        answer_for: Vec::new(),
        max_links: 64,
        bit_rate: None,
        ackmode: AckMode::Off,
    }
}

/// One server with its client.
struct Side {
    server: Server,
    id: ClientId,
    client: Client,
    events: Vec<ClientEvent>,
}

struct Pair {
    now: Instant,
    sides: [Side; 2],
    /// KISS octets on the way: when, to which side.
    air: VecDeque<(Instant, usize, Vec<u8>)>,
}

impl Pair {
    fn new(options: ClientOptions) -> Pair {
        let side = || {
            let mut server = Server::new(vec![port_config()], SystemTime::UNIX_EPOCH);
            server.port_up(Instant::ZERO, 0);
            let id = server.client_connected();
            Side {
                server,
                id,
                client: Client::new(options),
                events: Vec::new(),
            }
        };
        Pair {
            now: Instant::ZERO,
            sides: [side(), side()],
            air: VecDeque::new(),
        }
    }

    /// Moves every octet that can move at `now`.
    fn settle(&mut self) {
        loop {
            let mut moved = false;
            for i in 0..2 {
                let now = self.now;
                let side = &mut self.sides[i];
                while let Some(bytes) = side.client.poll_transmit() {
                    side.server.handle_client_bytes(now, side.id, &bytes);
                    moved = true;
                }
                let out = side.server.take_output(side.id);
                if !out.is_empty() {
                    side.client.handle_bytes(now, &out).unwrap();
                    moved = true;
                }
                while let Some(event) = side.client.poll_event() {
                    side.events.push(event);
                }
                let tx = side.server.take_tx(0);
                if !tx.is_empty() {
                    self.air.push_back((now + DELAY, 1 - i, tx));
                }
            }
            if !moved {
                break;
            }
        }
    }

    fn run_until(&mut self, limit: Duration, done: impl Fn(&Pair) -> bool) -> bool {
        let end = self.now + limit;
        self.settle();
        while !done(self) {
            let next = self
                .air
                .iter()
                .map(|(t, _, _)| *t)
                .chain(self.sides.iter().filter_map(|s| s.server.poll_timeout()))
                .chain(self.sides.iter().filter_map(|s| s.client.poll_timeout()))
                .min();
            let Some(next) = next.filter(|t| *t <= end) else {
                return done(self);
            };
            self.now = self.now.max(next);
            let (due, rest): (Vec<_>, Vec<_>) =
                self.air.drain(..).partition(|(t, _, _)| *t <= self.now);
            self.air = rest.into();
            for (_, to, bytes) in due {
                self.sides[to].server.handle_kiss_bytes(self.now, 0, &bytes);
            }
            for side in &mut self.sides {
                side.server.handle_timeout(self.now);
                side.client.handle_timeout(self.now);
            }
            self.settle();
        }
        true
    }
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31)).collect()
}

#[test]
fn a_paced_transfer_is_counted_acknowledged_and_released() {
    let options = ClientOptions {
        paclen: 256,
        max_outstanding: 6,
        query_every: Duration::from_millis(100),
    };
    let mut pair = Pair::new(options);
    pair.sides[1].client.register(&call("N0CALL-2"));
    pair.sides[0].client.register(&call("N0CALL-1"));
    pair.sides[0].client.toggle_monitor();
    pair.settle();
    assert!(pair.sides[1].events.contains(&ClientEvent::Registered {
        call: call("N0CALL-2"),
        ok: true
    }));
    let link = Link {
        port: 0,
        local: call("N0CALL-1"),
        remote: call("N0CALL-2"),
    };
    pair.sides[0].client.connect(link, &[]);
    let data = pattern(20 * 1024);
    let now = pair.now;
    pair.sides[0].client.send(now, link, &data);
    assert!(pair.run_until(Duration::from_secs(600), |p| {
        p.sides[0].client.is_connected(&link) && p.sides[0].client.all_acknowledged(&link)
    }));
    assert_eq!(pair.sides[0].client.acknowledged(&link), data.len() as u64);
    // Paced: never more than six frames handed ahead.
    let most = pair.sides[0]
        .events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Outstanding { frames, .. } => Some(*frames),
            _ => None,
        })
        .max()
        .unwrap();
    assert!((1..=6).contains(&most), "{most}");
    pair.sides[0].client.disconnect(link);
    assert!(pair.run_until(Duration::from_secs(60), |p| {
        p.sides[1]
            .events
            .iter()
            .any(|e| matches!(e, ClientEvent::Disconnected { .. }))
            && p.sides[0]
                .events
                .iter()
                .any(|e| matches!(e, ClientEvent::Disconnected { .. }))
    }));
    let back = Link {
        port: 0,
        local: call("N0CALL-2"),
        remote: call("N0CALL-1"),
    };
    let mut received = Vec::new();
    for event in &pair.sides[1].events {
        match event {
            ClientEvent::Connected { link, incoming } => {
                assert_eq!((*link, *incoming), (back, true));
            }
            ClientEvent::Data { link, data, .. } => {
                assert_eq!(*link, back);
                received.extend_from_slice(data);
            }
            ClientEvent::Disconnected {
                retry_out, text, ..
            } => {
                assert!(!retry_out, "{text}");
            }
            _ => {}
        }
    }
    assert!(received == data, "data differs");
    let sent_side = &pair.sides[0].events;
    assert!(sent_side.contains(&ClientEvent::Connected {
        link,
        incoming: false
    }));
    assert!(sent_side.iter().any(|e| matches!(
        e,
        ClientEvent::Disconnected { acknowledged, unacknowledged: 0, .. } if *acknowledged == data.len() as u64
    )));
    // Monitoring: the I frames sent ('T') and the peer's RRs ('S').
    let kinds: Vec<u8> = sent_side
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Monitor(r) => Some(r.kind),
            _ => None,
        })
        .collect();
    assert!(kinds.contains(&b'T') && kinds.contains(&b'S'), "{kinds:?}");

    // The heard list and the ports.
    pair.sides[0].client.ask_heard(0);
    pair.sides[0].client.ask_ports();
    pair.settle();
    let heard: Vec<_> = pair.sides[0]
        .events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Heard {
                port: 0,
                entry: Some(entry),
            } => Some(entry.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert_eq!(heard[0].station, "N0CALL-2");
    assert!(heard[0].first.is_some() && heard[0].last >= heard[0].first);
    assert!(pair.sides[0]
        .events
        .contains(&ClientEvent::Ports(vec!["Port1 test port".into()])));
}

#[test]
fn a_second_registration_is_refused_and_a_call_nobody_answers_retries_out() {
    let mut pair = Pair::new(ClientOptions::default());
    let id = pair.sides[0].server.client_connected();
    let mut other = Client::new(ClientOptions::default());
    pair.sides[0].client.register(&call("N0CALL-1"));
    pair.settle();
    other.register(&call("N0CALL-1"));
    let bytes = other.poll_transmit().unwrap();
    pair.sides[0]
        .server
        .handle_client_bytes(pair.now, id, &bytes);
    other
        .handle_bytes(pair.now, &pair.sides[0].server.take_output(id))
        .unwrap();
    assert_eq!(
        other.poll_event(),
        Some(ClientEvent::Registered {
            call: call("N0CALL-1"),
            ok: false
        })
    );
    // Nobody is N0CALL-7: the attempt ends after N2 tries.
    let link = Link {
        port: 0,
        local: call("N0CALL-1"),
        remote: call("N0CALL-7"),
    };
    pair.sides[0].client.connect(link, &[call("DIGI")]);
    let now = pair.now;
    pair.sides[0].client.send(now, link, b"never sent");
    assert!(pair.run_until(Duration::from_secs(3600), |p| {
        p.sides[0]
            .events
            .iter()
            .any(|e| matches!(e, ClientEvent::Disconnected { .. }))
    }));
    let d = pair.sides[0]
        .events
        .iter()
        .find(|e| matches!(e, ClientEvent::Disconnected { .. }))
        .unwrap();
    assert!(
        matches!(
            d,
            ClientEvent::Disconnected {
                retry_out: true,
                acknowledged: 0,
                unacknowledged: 10,
                ..
            }
        ),
        "{d:?}"
    );
    assert!(pair.sides[0].client.links().is_empty());
}
