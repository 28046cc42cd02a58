//! One listening station and many links on one KISS port: ten stations
//! connect at once and each sends a few KB; every transfer arrives
//! byte-exact, and a flood of connection requests from strangers beyond
//! the station's link limit is refused without growing it. Virtual time.

mod hub;

use linklab_core::{Engine, Instant};
use std::time::Duration;

use hub::{addr, payload, Hub};
use linklab_io::{InputError, Station, StationEvent, BAD_INPUT_BURST, DEFAULT_MAX_LINKS};
use linklab_link::{Config, Event};
use linklab_wire::ax25::{Address, AddressField, CommandResponse, Frame};
use linklab_wire::control::{Modulus, Unnumbered};
use linklab_wire::kiss;

const CLIENTS: usize = 10;

fn client(n: usize) -> String {
    format!("N{n}XYZ-{n}")
}

/// Ten clients, modulo 8 and modulo 128 alternately, all connecting at
/// the same instant and sending 3-4 KB each, then releasing.
#[test]
fn ten_concurrent_links_all_byte_exact() {
    let server = addr("N0CALL-2");
    let mut stations = vec![("N0CALL-2".to_string(), Config::default(), true)];
    for n in 0..CLIENTS {
        let config = Config {
            modulus: if n % 2 == 0 {
                Modulus::Mod8
            } else {
                Modulus::Mod128
            },
            n1: 128,
            ..Config::default()
        };
        stations.push((client(n), config, false));
    }
    let specs: Vec<(&str, Config, bool)> = stations
        .iter()
        .map(|(c, config, l)| (c.as_str(), config.clone(), *l))
        .collect();
    let mut hub = Hub::new(&specs);
    let data: Vec<Vec<u8>> = (0..CLIENTS)
        .map(|n| payload(3000 + 100 * n, n as u8))
        .collect();
    for n in 0..CLIENTS {
        hub.stations[n + 1]
            .connect(Instant::ZERO, server, &[])
            .unwrap();
    }
    let up = hub.run_until(Duration::from_secs(120), |h| {
        (1..=CLIENTS).all(|i| {
            h.idle_connected(i, &server) && !h.stations[i].link(&server).unwrap().negotiating()
        })
    });
    assert!(up, "not all connected:\n{}", hub.dump());
    assert_eq!(hub.stations[0].links().count(), CLIENTS);
    let now = hub.now;
    for (n, data) in data.iter().enumerate() {
        for chunk in data.chunks(128) {
            hub.stations[n + 1].send(&server, chunk.to_vec()).unwrap();
        }
        hub.stations[n + 1].release(now, &server).unwrap();
    }
    let done = hub.run_until(Duration::from_secs(1200), |h| {
        (1..=CLIENTS).all(|i| h.released(i, &server))
    });
    assert!(done, "not all released:\n{}", hub.dump());
    for (n, data) in data.iter().enumerate() {
        let from = addr(&client(n));
        assert_eq!(&hub.received(0, &from), data, "data from {from} differ");
        // Exactly one link set-up and one release at the server, no error.
        let events: Vec<&Event> = hub.link_events(0, &from).map(|(_, e)| e).collect();
        let connected = events
            .iter()
            .filter(|e| matches!(e, Event::Connected { incoming: true, .. }))
            .count();
        assert_eq!(connected, 1, "{from}: {events:?}");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::Error(_) | Event::LinkFailure { .. })),
            "{from}: {events:?}"
        );
    }
    for events in &hub.events {
        assert!(!events
            .iter()
            .any(|e| matches!(e, StationEvent::BadInput(_))));
    }
    hub.drain();
    assert!(hub.stations.iter().all(|s| s.links().next().is_none()));
}

fn sabm_from(n: usize) -> Vec<u8> {
    let stranger: Address = format!(
        "Q{}{}ZZ-{}",
        n / 26 % 10,
        (b'A' + (n % 26) as u8) as char,
        n % 16
    )
    .parse()
    .unwrap();
    let field =
        AddressField::new(addr("N0CALL-2"), stranger, &[], CommandResponse::Command).unwrap();
    let frame = Frame::u(field, Modulus::Mod8, Unnumbered::Sabm, true, Vec::new()).unwrap();
    kiss::encode(&kiss::Frame::data(frame.encode()))
}

/// 500 SABMs from different callsigns in one burst: the listening station
/// accepts up to its limit, refuses the rest with DM and says so.
#[test]
fn sabm_flood_is_capped() {
    let mut station = Station::new(addr("N0CALL-2"), Config::default()).unwrap();
    station.set_listening(true);
    assert_eq!(station.max_links(), DEFAULT_MAX_LINKS);
    station.set_max_links(20);
    let burst: Vec<u8> = (0..500).flat_map(sabm_from).collect();
    let now = Instant::ZERO;
    station.handle_kiss_bytes(now, &burst);
    assert_eq!(station.links().count(), 20);
    let mut ua = 0;
    let mut dm = 0;
    while let Some(frame) = station.poll_transmit(now) {
        match frame.control() {
            linklab_wire::control::Control::U {
                kind: Unnumbered::Ua,
                pf: true,
            } => ua += 1,
            linklab_wire::control::Control::U {
                kind: Unnumbered::Dm,
                pf: true,
            } => dm += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((ua, dm), (20, 480));
    // The first refusals are reported one by one, the rest counted
    // (BAD_INPUT_BURST), and the count comes out on a flush.
    station.flush_bad_input();
    let mut refused = Vec::new();
    let mut counted = 0;
    let mut connected = 0;
    while let Some(event) = station.poll_event() {
        match event {
            StationEvent::BadInput(error @ InputError::TooManyLinks { .. }) => {
                refused.push(error.to_string())
            }
            StationEvent::BadInputCount(count) => counted += count.count,
            StationEvent::Link {
                event: Event::Connected { .. },
                ..
            } => connected += 1,
            _ => {}
        }
    }
    assert_eq!(connected, 20);
    assert_eq!(refused.len(), BAD_INPUT_BURST);
    assert_eq!(refused.len() as u64 + counted, 480);
    assert_eq!(
        refused[0],
        "frame from Q0UZZ-4 refused: this station already has 20 links, the most it keeps \
         (a command is answered DM)"
    );
    // Links that end free their place: a DISC from one of the twenty,
    // then a new station gets in.
    let first = station.links().next().unwrap().remote();
    let field = AddressField::new(addr("N0CALL-2"), first, &[], CommandResponse::Command).unwrap();
    let disc = Frame::u(field, Modulus::Mod8, Unnumbered::Disc, true, Vec::new()).unwrap();
    station.handle_kiss_bytes(now, &kiss::encode(&kiss::Frame::data(disc.encode())));
    station.handle_kiss_bytes(now, &sabm_from(999));
    assert_eq!(station.links().count(), 20);
    assert!(station.links().any(|l| l.remote().to_string() == "Q8LZZ-7"));
    assert!(station.link(&first).is_none());
}
