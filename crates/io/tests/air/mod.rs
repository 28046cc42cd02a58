//! Two stations, each with the transmit clock (`AirClock`) as the
//! drivers run it, on the emulated channel's sans-IO core
//! (`linklab_emu::Air`, the model behind `linklab channel`) in virtual
//! time: a half-duplex 1200 bit/s radio channel with CSMA, TXDELAY 300 ms,
//! P 63, SLOTTIME 100 ms, seeded. A sends a 16 KB file to B.
#![allow(dead_code)]

use core::time::Duration;
use std::collections::BTreeMap;

use linklab_channel::{ErrorModel, StationConfig};
use linklab_core::{Engine, Instant};
use linklab_emu::{Air, ClientId, Output, Plan};
use linklab_io::{AckMode, AirClock, AirSettings, Direction, LinkSettings, Station, StationEvent};
use linklab_link::{Config, Event, State};
use linklab_wire::ax25::{Address, Frame};
use linklab_wire::control::{Control, Modulus, Supervisory};
use linklab_wire::kiss::Port;

pub const RATE: u32 = 1200;
pub const FILE: usize = 16 * 1024;
/// The frames of a 16 KB file in 256-octet I frames.
pub const FRAMES: usize = FILE / 256;

pub fn radio() -> StationConfig {
    StationConfig {
        persistence: 63,
        slot_time: Duration::from_millis(100),
        txdelay: Duration::from_millis(300),
        txtail: Duration::from_millis(10),
        slot_phase: Duration::ZERO,
    }
}

pub fn call(text: &str) -> Address {
    text.parse().unwrap()
}

/// linklab's own settings on this radio: initial T1 3 s, window 7, T2
/// from the bit rate, as `linklab send --bitrate 1200 --t1-ms 3000
/// --window 7` runs.
pub fn linklab() -> Config {
    LinkSettings {
        t1_ms: Some(3000),
        window: Some(7),
        ..LinkSettings::default()
    }
    .config_at(Modulus::Mod8, Some(RATE))
    .unwrap()
}

/// One station of the pair with its port's clock.
pub struct Side {
    pub station: Station,
    pub air: AirClock,
    /// Frames this side handed to its TNC, as the monitor shows them,
    /// with when.
    pub sent: Vec<(Instant, Frame)>,
    /// Frames its TNC gave it, with when.
    pub heard: Vec<(Instant, Frame)>,
    /// What its links reported.
    pub events: Vec<Event>,
}

impl Side {
    pub fn new(mycall: &str, air: AirSettings, config: Config) -> Side {
        let mut station = Station::new(call(mycall), config).unwrap();
        station.set_listening(true);
        station.set_monitor(true);
        Side {
            station,
            air: AirClock::new(air, Port::ZERO),
            sent: Vec::new(),
            heard: Vec::new(),
            events: Vec::new(),
        }
    }

    /// The driver's step: ACKMODE answers to the clock, frames through
    /// the clock to the TNC, T1 held while frames are not on the air.
    pub fn drain(&mut self, now: Instant) -> Vec<u8> {
        while let Some(seq) = self.station.poll_transmitted() {
            self.air.answered(now, seq);
        }
        if let Some((at, octets)) = self.station.poll_heard() {
            self.air.heard(at, octets);
        }
        while let Some(frame) = self.station.poll_transmit(now) {
            self.air.transmit(now, frame.encode());
        }
        self.station.set_channel_busy(now, self.air.busy(now));
        while let Some(event) = self.station.poll_event() {
            match event {
                StationEvent::Link { event, .. } => self.events.push(event),
                StationEvent::Monitor {
                    direction, bytes, ..
                } => {
                    let frame = Frame::decode(&bytes, Modulus::Mod8).unwrap();
                    match direction {
                        Direction::Tx => self.sent.push((now, frame)),
                        Direction::Rx => self.heard.push((now, frame)),
                    }
                }
                _ => {}
            }
        }
        self.air.take_octets()
    }

    fn next(&self) -> Option<Instant> {
        linklab_core::earliest([self.station.poll_timeout(), self.air.poll_timeout()])
    }

    fn timeout(&mut self, now: Instant) {
        self.air.handle_timeout(now);
        self.station.set_channel_busy(now, self.air.busy(now));
        self.station.handle_timeout(now);
    }

    /// Enquiries (RR/RNR commands with P = 1): one per T1 expiry.
    pub fn enquiries(&self) -> usize {
        self.sent
            .iter()
            .filter(|(_, f)| {
                matches!(
                    f.control(),
                    Control::S {
                        kind: Supervisory::Rr | Supervisory::Rnr,
                        pf: true,
                        ..
                    }
                ) && f.is_command()
            })
            .count()
    }

    pub fn i_frames(&self) -> usize {
        self.sent
            .iter()
            .filter(|(_, f)| matches!(f.control(), Control::I { .. }))
            .count()
    }
}

/// A sends `FILE` octets to B over the channel, both with linklab's
/// settings; returns both sides when B has all of it and A has it
/// acknowledged, or after ten minutes.
pub fn transfer(air: AirSettings, seed: u64) -> (Side, Side) {
    transfer_between([linklab(), linklab()], air, seed)
}

/// [`transfer`] with A's and B's link settings given.
pub fn transfer_between(configs: [Config; 2], air: AirSettings, seed: u64) -> (Side, Side) {
    let mut plan = Plan::simple(2, 0, RATE, radio(), ErrorModel::Perfect).unwrap();
    plan.seed = seed;
    let mut channel = Air::new(&plan);
    channel.attach(ClientId(0), 0);
    channel.attach(ClientId(1), 1);
    let [a, b] = configs;
    let mut sides = [Side::new("N0A", air, a), Side::new("N0B", air, b)];
    let mut now = Instant::ZERO;
    sides[0].station.connect(now, call("N0B"), &[]).unwrap();
    let mut queued = false;
    let mut received = 0;
    // KISS octets for a client, by the model time they are due.
    let mut deliveries: BTreeMap<(Instant, u64), (usize, Vec<u8>)> = BTreeMap::new();
    let mut order = 0;
    let end = Instant::from_micros(600_000_000);
    while now < end {
        for (i, side) in sides.iter_mut().enumerate() {
            let octets = side.drain(now);
            if !octets.is_empty() {
                channel.handle_input(now, ClientId(i as u64), &octets);
            }
        }
        while let Some(output) = channel.poll_output() {
            if let Output::ToClient {
                client,
                octets,
                due,
                ..
            } = output
            {
                order += 1;
                deliveries.insert((due.max(now), order), (client.0 as usize, octets));
            }
        }
        let a_link = sides[0].station.link(&call("N0B")).map(|l| l.state());
        if !queued && a_link == Some(State::Connected) {
            for chunk in vec![0x5Au8; FILE].chunks(256) {
                sides[0].station.send(&call("N0B"), chunk.to_vec()).unwrap();
            }
            queued = true;
        }
        received += sides[1]
            .events
            .drain(..)
            .filter_map(|e| match e {
                Event::Data { data, .. } => Some(data.len()),
                _ => None,
            })
            .sum::<usize>();
        let acknowledged = sides[0]
            .station
            .link(&call("N0B"))
            .is_some_and(|l| l.unacked() == 0 && l.queued() == 0);
        if queued && received == FILE && acknowledged {
            let [a, b] = sides;
            return (a, b);
        }
        let next = [
            channel.poll_timeout(),
            sides[0].next(),
            sides[1].next(),
            deliveries.keys().next().map(|(t, _)| *t),
        ]
        .into_iter()
        .flatten()
        .min()
        .expect("something is always due");
        now = next.max(now);
        while let Some(entry) = deliveries.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (client, octets) = entry.remove();
            sides[client].station.handle_kiss_bytes(now, &octets);
        }
        if channel.poll_timeout().is_some_and(|t| t <= now) {
            channel.handle_timeout(now);
        }
        for side in &mut sides {
            if side.next().is_some_and(|t| t <= now) {
                side.timeout(now);
            }
        }
    }
    panic!("no complete transfer in ten minutes: {received} octets received");
}

/// The port's clock for this radio.
pub fn settings(ackmode: AckMode) -> AirSettings {
    AirSettings {
        ackmode,
        bit_rate: RATE,
        txdelay: Duration::from_millis(300),
        persistence: 63,
        slot_time: Duration::from_millis(100),
    }
}
