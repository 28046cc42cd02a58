//! Station routing in virtual time: two stations wired back to back
//! through their KISS byte output, no sockets, no clock.

use std::collections::VecDeque;
use std::time::Duration;

use linklab_io::{InputError, Station, StationEvent};
use linklab_link::{Config, DisconnectReason, Event, Instant, RecoveryMode};
use linklab_wire::ax25::{Address, AddressField, CommandResponse, Frame, Pid};
use linklab_wire::control::{Modulus, Unnumbered};
use linklab_wire::kiss;
use linklab_wire::monitor;

fn addr(text: &str) -> Address {
    text.parse().unwrap()
}

/// Two stations joined by a full-duplex 9600 bit/s line with 10 ms
/// propagation, carrying KISS byte streams.
struct Wire {
    stations: [Station; 2],
    now: Instant,
    /// (arrival, receiver index, KISS octets).
    in_flight: VecDeque<(Instant, usize, Vec<u8>)>,
    line_free: [Instant; 2],
    events: [Vec<StationEvent>; 2],
    log: Vec<String>,
}

impl Wire {
    fn new(config_a: Config, config_b: Config, b_listening: bool) -> Wire {
        let mut a = Station::new(addr("N0CALL-1"), config_a).unwrap();
        let mut b = Station::new(addr("N0CALL-2"), config_b).unwrap();
        a.set_monitor(true);
        b.set_monitor(true);
        b.set_listening(b_listening);
        Wire {
            stations: [a, b],
            now: Instant::ZERO,
            in_flight: VecDeque::new(),
            line_free: [Instant::ZERO; 2],
            events: [Vec::new(), Vec::new()],
            log: Vec::new(),
        }
    }

    fn drain(&mut self) {
        for i in 0..2 {
            while let Some(frame) = self.stations[i].poll_transmit(self.now) {
                let bytes = kiss::encode(&kiss::Frame::data(frame.encode()));
                let bits = bytes.len() as u64 * 8;
                let start = self.line_free[i].max(self.now);
                let end = start + Duration::from_micros(bits * 1_000_000 / 9600);
                self.line_free[i] = end;
                self.in_flight
                    .push_back((end + Duration::from_millis(10), 1 - i, bytes));
            }
            while let Some(event) = self.stations[i].poll_event() {
                let line = match &event {
                    StationEvent::Monitor {
                        direction,
                        bytes,
                        modulus,
                    } => format!(
                        "{:?} {}",
                        direction,
                        monitor::format_raw_with(
                            bytes,
                            *modulus,
                            monitor::MonitorOptions { max_info: Some(4) }
                        )
                    ),
                    StationEvent::Link {
                        event: Event::Data { data, .. },
                        remote,
                    } => format!("{remote}: {} octets", data.len()),
                    other => format!("{other:?}"),
                };
                self.log
                    .push(format!("{:>9} {i} {line}", self.now.as_micros()));
                self.events[i].push(event);
            }
        }
    }

    /// Hands raw KISS octets to station `to` now.
    fn inject(&mut self, to: usize, bytes: &[u8]) {
        let now = self.now;
        self.stations[to].handle_kiss_bytes(now, bytes);
        self.drain();
    }

    fn next_time(&self) -> Option<Instant> {
        let flight = self.in_flight.iter().map(|f| f.0).min();
        [
            flight,
            self.stations[0].poll_timeout(),
            self.stations[1].poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Runs until `done` or `limit` of virtual time has passed.
    fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&Wire) -> bool) -> bool {
        let end = self.now + limit;
        loop {
            self.drain();
            if done(self) {
                return true;
            }
            let Some(t) = self.next_time().filter(|t| *t <= end) else {
                return false;
            };
            self.now = self.now.max(t);
            let now = self.now;
            while let Some(pos) = self.in_flight.iter().position(|f| f.0 <= now) {
                let (_, to, bytes) = self.in_flight.remove(pos).unwrap();
                self.stations[to].handle_kiss_bytes(now, &bytes);
                self.drain();
            }
            for station in &mut self.stations {
                if station.poll_timeout().is_some_and(|t| t <= now) {
                    station.handle_timeout(now);
                }
            }
        }
    }

    fn received(&self, i: usize) -> Vec<u8> {
        self.events[i]
            .iter()
            .filter_map(|e| match e {
                StationEvent::Link {
                    event: Event::Data { data, .. },
                    ..
                } => Some(data.as_slice()),
                _ => None,
            })
            .flatten()
            .copied()
            .collect()
    }

    fn has_link_event(&self, i: usize, wanted: impl Fn(&Event) -> bool) -> bool {
        self.events[i]
            .iter()
            .any(|e| matches!(e, StationEvent::Link { event, .. } if wanted(event)))
    }

    fn dump(&self) -> String {
        let tail = self.log.len().saturating_sub(80);
        self.log[tail..].join("\n")
    }
}

fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
}

/// Connects A to B, sends `data` in N1-octet chunks and releases the link,
/// calling `during` once after the first acknowledgement.
fn transfer(config: Config, data: &[u8], mut during: impl FnMut(&mut Wire)) -> Wire {
    let n1 = config.n1;
    let mut wire = Wire::new(config.clone(), config, true);
    let b = addr("N0CALL-2");
    wire.stations[0].connect(Instant::ZERO, b, &[]).unwrap();
    let up = wire.run_until(Duration::from_secs(60), |w| {
        w.has_link_event(0, |e| matches!(e, Event::Connected { .. }))
    });
    assert!(up, "not connected:\n{}", wire.dump());
    for chunk in data.chunks(n1) {
        wire.stations[0].send(&b, chunk.to_vec()).unwrap();
    }
    // Disconnects by itself once everything is acknowledged.
    let now = wire.now;
    wire.stations[0].release(now, &b).unwrap();
    let outstanding = |w: &Wire| {
        w.events[0]
            .iter()
            .rev()
            .find_map(|e| match e {
                StationEvent::Outstanding { frames, .. } => Some(*frames),
                _ => None,
            })
            .unwrap_or(0)
    };
    let total = data.len().div_ceil(n1);
    let started = wire.run_until(Duration::from_secs(60), |w| outstanding(w) < total);
    assert!(started, "nothing acknowledged:\n{}", wire.dump());
    during(&mut wire);
    let released = wire.run_until(Duration::from_secs(600), |w| {
        w.has_link_event(0, |e| {
            *e == Event::Disconnected {
                reason: DisconnectReason::LocalRequest,
            }
        }) && w.next_time().is_none()
    });
    assert!(released, "not released:\n{}", wire.dump());
    assert_eq!(outstanding(&wire), 0);
    assert_eq!(wire.received(1), data, "data differ:\n{}", wire.dump());
    assert!(
        wire.stations.iter().all(|s| s.links().next().is_none()),
        "links left over:\n{}",
        wire.dump()
    );
    wire
}

#[test]
fn transfer_20k_modulo_8() {
    let config = Config {
        modulus: Modulus::Mod8,
        ..Config::default()
    };
    let wire = transfer(config, &payload(20_000), |_| {});
    assert!(wire.log.iter().any(|l| l.contains("<SABM C P>")));
    assert!(!wire.log.iter().any(|l| l.contains("SABME")));
}

#[test]
fn transfer_20k_modulo_128() {
    let wire = transfer(Config::default(), &payload(20_000), |_| {});
    assert!(wire.log.iter().any(|l| l.contains("<SABME C P>")));
}

#[test]
fn transfer_20k_modulo_128_rej_with_polls() {
    let config = Config {
        recovery: RecoveryMode::Rej,
        poll_on_last_i_frame: true,
        n1: 128,
        ..Config::default()
    };
    transfer(config, &payload(20_000), |_| {});
}

#[test]
fn sabm_refused_with_dm_when_not_listening() {
    let config = Config {
        modulus: Modulus::Mod8,
        ..Config::default()
    };
    let mut wire = Wire::new(config.clone(), config, false);
    wire.stations[0]
        .connect(Instant::ZERO, addr("N0CALL-2"), &[])
        .unwrap();
    let refused = wire.run_until(Duration::from_secs(30), |w| {
        w.has_link_event(0, |e| {
            *e == Event::Disconnected {
                reason: DisconnectReason::Refused,
            }
        })
    });
    assert!(refused, "{}", wire.dump());
    assert!(wire
        .log
        .iter()
        .any(|l| l.contains("Tx N0CALL-2>N0CALL-1: <DM R F>")));
    wire.drain();
    assert!(wire.stations.iter().all(|s| s.links().next().is_none()));
}

#[test]
fn garbage_and_a_truncated_frame_do_not_disturb_a_transfer() {
    let data = payload(20_000);
    let wire = transfer(Config::default(), &data, |w| {
        // Octets with no FEND, a bad escape, an unknown KISS command.
        w.inject(1, b"line noise \x00\xff");
        w.inject(1, &[0xC0, 0x00, 0xDB, 0x41, 0xC0]);
        w.inject(1, &[0xC0, 0x07, 0x01, 0xC0]);
        // A frame for B cut after its address field and half a control
        // field, from a station with no link. (From A it would be error N,
        // which resets the link: see bad_input.rs.)
        let field = AddressField::new(
            addr("N0CALL-2"),
            addr("N0XYZ-7"),
            &[],
            CommandResponse::Command,
        )
        .unwrap();
        let mut frame = Vec::new();
        field.encode_into(&mut frame);
        frame.push(0x00);
        w.inject(1, &kiss::encode(&kiss::Frame::data(frame.clone())));
        // An address field cut short.
        w.inject(1, &kiss::encode(&kiss::Frame::data(frame[..9].to_vec())));
        // Another station's traffic, and a stranger polling us.
        let other = Frame::ui(
            addr("APRS"),
            addr("N0XYZ"),
            &[],
            Pid::NoLayer3,
            b"hello".to_vec(),
        )
        .unwrap();
        w.inject(1, &kiss::encode(&kiss::Frame::data(other.encode())));
        let stranger = Frame::u(
            AddressField::new(
                addr("N0CALL-2"),
                addr("N0XYZ-5"),
                &[],
                CommandResponse::Command,
            )
            .unwrap(),
            Modulus::Mod8,
            Unnumbered::Disc,
            true,
            Vec::new(),
        )
        .unwrap();
        w.inject(1, &kiss::encode(&kiss::Frame::data(stranger.encode())));
    });
    let bad: Vec<&InputError> = wire.events[1]
        .iter()
        .filter_map(|e| match e {
            StationEvent::BadInput(error) => Some(error),
            _ => None,
        })
        .collect();
    assert!(
        bad.iter().any(|e| matches!(e, InputError::Kiss(_))),
        "{bad:?}"
    );
    assert!(
        bad.iter().any(|e| matches!(e, InputError::Frame { .. })),
        "{bad:?}"
    );
    assert!(
        bad.iter().any(|e| matches!(e, InputError::Address { .. })),
        "{bad:?}"
    );
    assert!(
        bad.iter().any(|e| e
            .to_string()
            .starts_with("damaged KISS frame dropped: bad KISS escape")),
        "{bad:?}"
    );
    // The stranger's DISC is answered DM by a link made for it and dropped.
    assert!(wire
        .log
        .iter()
        .any(|l| l.contains("Tx N0CALL-2>N0XYZ-5: <DM R F>")));
    assert!(wire
        .log
        .iter()
        .any(|l| l.contains("Rx N0XYZ>APRS: <UI C> [F0] hell...")));
    assert_eq!(
        wire.events[0]
            .iter()
            .filter(|e| matches!(e, StationEvent::BadInput(_)))
            .count(),
        0
    );
}

#[test]
fn request_errors_name_the_remote_and_the_state() {
    let mut station = Station::new(addr("N0CALL-1"), Config::default()).unwrap();
    station
        .connect(Instant::ZERO, addr("N0CALL-2"), &[])
        .unwrap();
    let again = station
        .connect(Instant::ZERO, addr("N0CALL-2"), &[])
        .unwrap_err();
    assert_eq!(
        again.to_string(),
        "a link with N0CALL-2 already exists: it is being set up (SABM/SABME sent, awaiting UA)"
    );
    let nobody = station.send(&addr("N0CALL-3"), vec![1]).unwrap_err();
    assert_eq!(nobody.to_string(), "no link with N0CALL-3");
}
