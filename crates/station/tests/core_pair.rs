//! The station's core against a remote AX.25 station in virtual time, as
//! quinn-proto's `Pair` tests its endpoints: the core's KISS octets go to
//! the peer and the peer's frames come back as KISS octets, and time
//! jumps to the next timer when nothing moves. Deterministic: no clock,
//! no sockets.

use std::path::Path;
use std::time::{Duration, SystemTime};

use linklab_core::{Engine, Instant};
use linklab_io::{Station, StationEvent};
use linklab_link::{Config, Event};
use linklab_station::config::{self, Answer};
use linklab_station::{Core, Output};
use linklab_wire::ax25::{Address, AddressField, Frame, Pid};
use linklab_wire::kiss;

fn call(text: &str) -> Address {
    text.parse().unwrap()
}

/// A core on one port and a remote station, wired together.
struct Pair {
    now: Instant,
    core: Core,
    peer: Station,
    /// Frames the peer's side of the channel heard from the core.
    heard: Vec<Vec<u8>>,
    peer_events: Vec<Event>,
    outputs: Vec<Output>,
    decoder: kiss::Decoder,
}

impl Pair {
    fn new(file: &str) -> Pair {
        let config = config::parse(Path::new("test.toml"), file).expect("the file is good");
        let mut core = Core::new(config, SystemTime::UNIX_EPOCH);
        core.port_up(Instant::ZERO, 0);
        let peer = Station::new(call("N0CALL-7"), Config::default()).unwrap();
        Pair {
            now: Instant::ZERO,
            core,
            peer,
            heard: Vec::new(),
            peer_events: Vec::new(),
            outputs: Vec::new(),
            decoder: kiss::Decoder::new(4096),
        }
    }

    /// Moves frames both ways until nothing moves.
    fn exchange(&mut self) {
        loop {
            let mut moved = false;
            let octets = self.core.server().take_tx(0);
            if !octets.is_empty() {
                moved = true;
                self.decoder.push(&octets);
                let mut answers = Vec::new();
                while let Some(Ok(frame)) = self.decoder.next() {
                    let data = match frame.command {
                        kiss::Command::Data(data) => data,
                        // The TNC answers ACKMODE once the frame is sent:
                        // here, at once.
                        kiss::Command::AckMode { seq, data } => {
                            kiss::encode_into(
                                &kiss::Frame {
                                    port: frame.port,
                                    command: kiss::Command::AckMode {
                                        seq,
                                        data: Vec::new(),
                                    },
                                },
                                &mut answers,
                            );
                            data
                        }
                        _ => continue,
                    };
                    self.peer.handle_kiss_frame(self.now, &data);
                    // The port's identification (CALL>ID), sent once with
                    // the first frame to ask the TNC for ACKMODE, is not
                    // what these tests count.
                    let id = AddressField::decode(&data).is_ok_and(|(field, _)| {
                        field.dest().to_string() == "ID"
                            && data.ends_with(field.source().to_string().as_bytes())
                    });
                    if !id {
                        self.heard.push(data);
                    }
                }
                self.core.handle_kiss_bytes(self.now, 0, &answers);
            }
            while let Some(frame) = self.peer.poll_transmit(self.now) {
                moved = true;
                let mut octets = Vec::new();
                kiss::encode_into(
                    &kiss::Frame {
                        port: kiss::Port::default(),
                        command: kiss::Command::Data(frame.encode()),
                    },
                    &mut octets,
                );
                self.core.handle_kiss_bytes(self.now, 0, &octets);
            }
            while let Some(event) = self.peer.poll_event() {
                if let StationEvent::Link { event, .. } = event {
                    self.peer_events.push(event);
                }
            }
            while let Some(output) = self.core.poll_output() {
                moved = true;
                self.answer(output);
            }
            if !moved {
                return;
            }
        }
    }

    /// What the test's driver does with an order: echo answers, others
    /// are recorded.
    fn answer(&mut self, output: Output) {
        if let Output::Data { session, data } = &output {
            self.core.session_send(self.now, *session, data);
        }
        self.outputs.push(output);
    }

    /// Runs until `until` (virtual), stepping to each timer.
    fn run_until(&mut self, until: Instant) {
        loop {
            self.exchange();
            let next = [self.core.poll_timeout(), self.peer.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            match next {
                Some(t) if t <= until => {
                    self.now = self.now.max(t);
                    self.core.handle_timeout(self.now);
                    if self.peer.poll_timeout().is_some_and(|p| p <= self.now) {
                        self.peer.handle_timeout(self.now);
                    }
                }
                _ => {
                    self.now = until;
                    return;
                }
            }
        }
    }

    fn after(&self, seconds: u64) -> Instant {
        self.now + Duration::from_secs(seconds)
    }

    fn received(&self) -> Vec<u8> {
        self.peer_events
            .iter()
            .filter_map(|e| match e {
                Event::Data { data, .. } => Some(data.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }
}

const PORT: &str = r#"
[[port]]
name = "vhf"
kiss = "tcp:127.0.0.1:8001"
callsigns = ["N0CALL-1"]
aliases = ["RELAY"]
digipeat = true
t1-ms = 3000
"#;

#[test]
fn an_inbound_call_reaches_its_service_and_the_link_is_released_when_it_is_done() {
    let file = format!("{PORT}\n[[service]]\ncallsign = \"N0CALL-4\"\nbuiltin = \"echo\"\n");
    let mut pair = Pair::new(&file);
    pair.peer.connect(pair.now, call("N0CALL-4"), &[]).unwrap();
    pair.run_until(pair.after(5));
    assert!(pair
        .peer_events
        .iter()
        .any(|e| matches!(e, Event::Connected { .. })));
    let answer = pair.outputs.iter().find_map(|o| match o {
        Output::Answer {
            answer,
            caller,
            called,
            ..
        } => Some((answer.clone(), *caller, *called)),
        _ => None,
    });
    assert_eq!(
        answer,
        Some((Answer::Echo, call("N0CALL-7"), call("N0CALL-4")))
    );
    let text: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
    pair.peer
        .send(&call("N0CALL-4"), text[..1500].to_vec())
        .unwrap();
    pair.peer
        .send(&call("N0CALL-4"), text[1500..].to_vec())
        .unwrap();
    pair.run_until(pair.after(120));
    assert_eq!(pair.received(), text, "the echo comes back octet for octet");
    // The caller releases: the core ends the session.
    pair.peer.disconnect(pair.now, &call("N0CALL-4")).unwrap();
    pair.run_until(pair.after(30));
    assert!(pair
        .outputs
        .iter()
        .any(|o| matches!(o, Output::Ended { released: true, .. })));
    assert_eq!(pair.core.link_count(), 0);
}

#[test]
fn a_greeting_is_delivered_before_the_station_releases_the_link() {
    let file = format!(
        "{PORT}\n[[service]]\ncallsign = \"N0CALL-3\"\nbuiltin = \"greeting\"\ntext = \"Welcome %u\"\n"
    );
    let mut pair = Pair::new(&file);
    pair.peer.connect(pair.now, call("N0CALL-3"), &[]).unwrap();
    pair.run_until(pair.after(2));
    // The test's driver does what the real one does for a greeting.
    let session = pair
        .outputs
        .iter()
        .find_map(|o| match o {
            Output::Answer { session, .. } => Some(*session),
            _ => None,
        })
        .expect("answered");
    pair.core
        .session_send(pair.now, session, b"Welcome N0CALL-7\r");
    pair.core.session_close(pair.now, session);
    pair.run_until(pair.after(60));
    assert_eq!(pair.received(), b"Welcome N0CALL-7\r");
    assert!(pair
        .peer_events
        .iter()
        .any(|e| matches!(e, Event::Disconnected { .. })));
}

#[test]
fn a_callsign_of_the_port_without_a_service_is_refused_with_dm() {
    let mut pair = Pair::new(PORT);
    pair.peer.connect(pair.now, call("N0CALL-1"), &[]).unwrap();
    pair.run_until(pair.after(10));
    assert!(pair
        .peer_events
        .iter()
        .any(|e| matches!(e, Event::Disconnected { .. })));
    assert!(pair.outputs.is_empty());
}

#[test]
fn other_stations_traffic_is_left_alone() {
    let mut pair = Pair::new(PORT);
    pair.peer.connect(pair.now, call("N9XYZ"), &[]).unwrap();
    pair.run_until(pair.after(2));
    assert!(
        pair.heard.is_empty(),
        "nothing answers a call that is not ours"
    );
}

#[test]
fn a_frame_for_an_alias_is_digipeated_once() {
    let mut pair = Pair::new(PORT);
    let frame = Frame::ui(
        call("APRS"),
        call("N0CALL-7"),
        &[call("RELAY")],
        Pid::NoLayer3,
        b"position".to_vec(),
    )
    .unwrap()
    .encode();
    let mut octets = Vec::new();
    kiss::encode_into(
        &kiss::Frame {
            port: kiss::Port::default(),
            command: kiss::Command::Data(frame.clone()),
        },
        &mut octets,
    );
    pair.core.handle_kiss_bytes(pair.now, 0, &octets);
    // A copy heard again (another digipeater, a reflection): not repeated.
    pair.core.handle_kiss_bytes(pair.now, 0, &octets);
    pair.exchange();
    assert_eq!(pair.heard.len(), 1);
    let (field, _) = AddressField::decode(&pair.heard[0]).unwrap();
    assert!(field.digipeaters()[0].c_or_h(), "H set on RELAY");
    let status = pair.core.status(pair.now, "test.toml");
    assert_eq!(status.ports[0].digipeated, 1);
}

#[test]
fn beacons_go_at_their_interval() {
    let file = format!(
        "{PORT}\n[[beacon]]\nport = \"vhf\"\nto = \"ID\"\ntext = \"test station\"\nevery-s = 60\n"
    );
    let mut pair = Pair::new(&file);
    pair.run_until(Instant::ZERO + Duration::from_secs(185));
    let times = pair.heard.len();
    // At 2 s, then 62, 122 and 182 s.
    assert_eq!(times, 4);
    let (field, used) = AddressField::decode(&pair.heard[0]).unwrap();
    assert_eq!(field.source(), &call("N0CALL-1"));
    assert!(pair.heard[0].ends_with(b"test station"));
    assert!(used < pair.heard[0].len());
}

#[test]
fn a_reload_adds_a_service_and_removes_a_beacon_without_touching_a_link() {
    let first = format!(
        "{PORT}\n[[service]]\ncallsign = \"N0CALL-4\"\nbuiltin = \"echo\"\n\
         [[beacon]]\nport = \"vhf\"\ntext = \"going away\"\nevery-s = 30\n"
    );
    let mut pair = Pair::new(&first);
    pair.peer.connect(pair.now, call("N0CALL-4"), &[]).unwrap();
    pair.run_until(pair.after(5));
    let second = format!(
        "{PORT}\n[[service]]\ncallsign = \"N0CALL-4\"\nbuiltin = \"echo\"\n\
         [[service]]\ncallsign = \"N0CALL-5\"\nbuiltin = \"echo\"\n"
    );
    let config = config::parse(Path::new("test.toml"), &second).unwrap();
    let reload = pair.core.reload(pair.now, config).expect("accepted");
    assert!(reload.notes.iter().any(|n| n.contains("N0CALL-5: added")));
    assert!(reload.notes.iter().any(|n| n.contains("removed")));
    let beacons_before = pair
        .heard
        .iter()
        .filter(|f| f.ends_with(b"going away"))
        .count();
    pair.peer
        .send(&call("N0CALL-4"), b"still here".to_vec())
        .unwrap();
    pair.run_until(pair.after(120));
    assert_eq!(pair.received(), b"still here", "the link was not touched");
    let beacons_after = pair
        .heard
        .iter()
        .filter(|f| f.ends_with(b"going away"))
        .count();
    assert_eq!(beacons_before, beacons_after, "no beacon after the reload");
    let status = pair.core.status(pair.now, "test.toml");
    assert_eq!(status.services.len(), 2);
    assert!(status.services.iter().all(|s| s.registered));
}

#[test]
fn a_reload_that_removes_a_port_is_refused_and_changes_nothing() {
    let two = format!("{PORT}\n[[port]]\nname = \"hf\"\nkiss = \"tcp:127.0.0.1:8002\"\n");
    let mut pair = Pair::new(&two);
    let one = config::parse(Path::new("test.toml"), PORT).unwrap();
    let refused = pair.core.reload(pair.now, one).unwrap_err();
    assert!(refused.contains("\"hf\""), "{refused}");
    assert_eq!(pair.core.config().ports.len(), 2);
}
