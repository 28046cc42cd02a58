//! Several stations on one channel in virtual time: every frame a station
//! sends reaches all the others (a KISS reflector, or one radio channel
//! without collisions), 9600 bit/s full duplex per station, 10 ms delay.
//! A frame can be lost on the way, as one with a bad FCS is: the TNC drops
//! it, so the KISS host never sees it.

// Each test crate that includes this module uses a different part of it.
#![allow(dead_code)]

use linklab_core::{Engine, Instant};
use std::collections::VecDeque;
use std::time::Duration;

use linklab_io::{InputError, Station, StationEvent};
use linklab_link::{Config, DisconnectReason, Event, State};
use linklab_wire::ax25::{Address, Frame};
use linklab_wire::kiss;
use linklab_wire::monitor;

pub fn addr(text: &str) -> Address {
    text.parse().unwrap()
}

/// Deterministic test data, different for each `seed`.
pub fn payload(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i * 7 + i / 251) as u8 ^ seed.wrapping_mul(37))
        .collect()
}

/// One event as a log line.
fn log_line(event: &StationEvent) -> String {
    match event {
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
    }
}

/// Decides whether a frame sent by station `from` is lost on the channel.
pub type Loss = Box<dyn FnMut(usize, &Frame) -> bool>;

pub struct Hub {
    pub stations: Vec<Station>,
    pub now: Instant,
    /// (arrival, receiver, KISS octets).
    in_flight: VecDeque<(Instant, usize, Vec<u8>)>,
    line_free: Vec<Instant>,
    /// Every event of each station, in order.
    pub events: Vec<Vec<StationEvent>>,
    /// Frames each station sent, in monitor format, with the time sent.
    pub sent: Vec<Vec<(Instant, String)>>,
    /// Frames lost, in monitor format.
    pub lost: Vec<String>,
    pub loss: Option<Loss>,
    /// Every event, one line each: time (µs), station, and the event
    /// (monitored frames in monitor format, data as its length).
    pub log: Vec<String>,
}

impl Hub {
    /// Stations with these callsigns and configurations, listening or not.
    pub fn new(stations: &[(&str, Config, bool)]) -> Hub {
        let n = stations.len();
        Hub {
            stations: stations
                .iter()
                .map(|(call, config, listening)| {
                    let mut station = Station::new(addr(call), config.clone()).unwrap();
                    station.set_listening(*listening);
                    station
                })
                .collect(),
            now: Instant::ZERO,
            in_flight: VecDeque::new(),
            line_free: vec![Instant::ZERO; n],
            events: vec![Vec::new(); n],
            sent: vec![Vec::new(); n],
            lost: Vec::new(),
            loss: None,
            log: Vec::new(),
        }
    }

    pub fn drain(&mut self) {
        for i in 0..self.stations.len() {
            while let Some(frame) = self.stations[i].poll_transmit(self.now) {
                let text = monitor::format_raw(&frame.encode(), frame.modulus());
                if self.loss.as_mut().is_some_and(|lose| lose(i, &frame)) {
                    self.lost.push(text);
                    continue;
                }
                self.sent[i].push((self.now, text));
                let bytes = kiss::encode(&kiss::Frame::data(frame.encode()));
                let bits = bytes.len() as u64 * 8;
                let start = self.line_free[i].max(self.now);
                let end = start + Duration::from_micros(bits * 1_000_000 / 9600);
                self.line_free[i] = end;
                for to in (0..self.stations.len()).filter(|&to| to != i) {
                    self.in_flight
                        .push_back((end + Duration::from_millis(10), to, bytes.clone()));
                }
            }
            while let Some(event) = self.stations[i].poll_event() {
                let line = log_line(&event);
                self.log
                    .push(format!("{:>9} {i} {line}", self.now.as_micros()));
                self.events[i].push(event);
            }
        }
    }

    /// Whether station `i` has had a link event that is `wanted`.
    pub fn has_link_event(&self, i: usize, wanted: impl Fn(&Event) -> bool) -> bool {
        self.events[i]
            .iter()
            .any(|e| matches!(e, StationEvent::Link { event, .. } if wanted(event)))
    }

    /// Hands raw KISS octets to station `to` now.
    pub fn inject(&mut self, to: usize, bytes: &[u8]) {
        let now = self.now;
        self.stations[to].handle_kiss_bytes(now, bytes);
        self.drain();
    }

    /// Hands an AX.25 frame, in a KISS frame, to station `to` now.
    pub fn inject_frame(&mut self, to: usize, ax25: &[u8]) {
        self.inject(to, &kiss::encode(&kiss::Frame::data(ax25.to_vec())));
    }

    /// When something happens next: a frame arrives or a timer runs out.
    pub fn next_time(&self) -> Option<Instant> {
        let flight = self.in_flight.iter().map(|f| f.0).min();
        let timers = self.stations.iter().filter_map(Station::poll_timeout);
        flight.into_iter().chain(timers).min()
    }

    /// Runs until `done` or `limit` of virtual time has passed.
    pub fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&Hub) -> bool) -> bool {
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

    /// The data station `i` received from `remote`, from event `since` on.
    pub fn received_since(&self, i: usize, remote: &Address, since: usize) -> Vec<u8> {
        self.link_events(i, remote)
            .filter(|(n, _)| *n >= since)
            .filter_map(|(_, e)| match e {
                Event::Data { data, .. } => Some(data.as_slice()),
                _ => None,
            })
            .flatten()
            .copied()
            .collect()
    }

    pub fn received(&self, i: usize, remote: &Address) -> Vec<u8> {
        self.received_since(i, remote, 0)
    }

    /// Station `i`'s events of the link with `remote`, with their index.
    pub fn link_events(
        &self,
        i: usize,
        remote: &Address,
    ) -> impl Iterator<Item = (usize, &Event)> + '_ {
        let remote = *remote;
        self.events[i]
            .iter()
            .enumerate()
            .filter_map(move |(n, e)| match e {
                StationEvent::Link { remote: r, event } if *r == remote => Some((n, event)),
                _ => None,
            })
    }

    /// Station `i`'s bad-input reports from event `since` on.
    pub fn bad_input_since(&self, i: usize, since: usize) -> Vec<&InputError> {
        self.events[i][since..]
            .iter()
            .filter_map(|e| match e {
                StationEvent::BadInput(error) => Some(error),
                _ => None,
            })
            .collect()
    }

    /// Whether station `i`'s link with `remote` is connected with nothing
    /// outstanding.
    pub fn idle_connected(&self, i: usize, remote: &Address) -> bool {
        self.stations[i]
            .link(remote)
            .is_some_and(|l| l.state() == State::Connected && l.unacked() + l.queued() == 0)
    }

    /// Station `i` connects to `remote`; waits until both ends are up.
    pub fn connect(&mut self, i: usize, remote: &Address) {
        let now = self.now;
        let me = self.stations[i].mycall();
        self.stations[i].connect(now, *remote, &[]).unwrap();
        let j = self
            .stations
            .iter()
            .position(|s| s.mycall() == *remote)
            .unwrap();
        let up = self.run_until(Duration::from_secs(60), |h| {
            h.idle_connected(i, remote)
                && h.idle_connected(j, &me)
                && !h.stations[i].link(remote).unwrap().negotiating()
        });
        assert!(up, "{me} not connected to {remote}:\n{}", self.dump());
    }

    /// Whether station `i` saw its link with `remote` released at its
    /// request.
    pub fn released(&self, i: usize, remote: &Address) -> bool {
        self.link_events(i, remote).any(|(_, e)| {
            *e == Event::Disconnected {
                reason: DisconnectReason::LocalRequest,
            }
        })
    }

    /// The last frames sent and every event, for failure messages.
    pub fn dump(&self) -> String {
        let mut lines: Vec<(Instant, String)> = self
            .sent
            .iter()
            .enumerate()
            .flat_map(|(i, sent)| sent.iter().map(move |(t, s)| (*t, format!("{i} Tx {s}"))))
            .collect();
        lines.sort_by_key(|(t, _)| *t);
        let tail = lines.len().saturating_sub(60);
        let mut text: Vec<String> = lines[tail..]
            .iter()
            .map(|(t, s)| format!("{:>10} {s}", t.as_micros()))
            .collect();
        for (i, events) in self.events.iter().enumerate() {
            for event in events {
                if !matches!(
                    event,
                    StationEvent::Outstanding { .. }
                        | StationEvent::Link {
                            event: Event::Data { .. },
                            ..
                        }
                ) {
                    text.push(format!("{i} {event:?}"));
                }
            }
        }
        text.push(format!("lost: {:?}", self.lost));
        text.join("\n")
    }
}
