//! T1 from the air: two stations, each with the transmit clock
//! (`AirClock`) as the drivers run it, on the emulated channel's sans-IO
//! core (`linklab_emu::Air`, the model behind `linklab channel`) in
//! virtual time: a half-duplex 1200 bit/s radio channel with CSMA,
//! TXDELAY 300 ms, P 63, SLOTTIME 100 ms, seeded.
//!
//! A window of 256-octet I frames is about 12 s on the air at 1200 bit/s,
//! four times an initial T1 of 3 s. Counted from the hand-over to the TNC
//! (as before the clock), T1 expires while the frames are still queued;
//! counted from the end of their transmission (ACKMODE answers from the
//! channel, or the estimate without them) it never expires on a lossless
//! channel, and once the TNC answers ACKMODE, T1 runs from the answer.

use core::time::Duration;
use std::collections::BTreeMap;

use linklab_channel::{ErrorModel, StationConfig};
use linklab_core::{Engine, Instant};
use linklab_emu::{Air, ClientId, Output, Plan};
use linklab_io::{AckMode, AirClock, AirSettings, Direction, LinkSettings, Station, StationEvent};
use linklab_link::{Event, State};
use linklab_wire::ax25::{Address, Frame};
use linklab_wire::control::{Control, Modulus, Supervisory};
use linklab_wire::kiss::Port;

const RATE: u32 = 1200;
const FILE: usize = 16 * 1024;

fn radio() -> StationConfig {
    StationConfig {
        persistence: 63,
        slot_time: Duration::from_millis(100),
        txdelay: Duration::from_millis(300),
        txtail: Duration::from_millis(10),
        slot_phase: Duration::ZERO,
    }
}

fn call(text: &str) -> Address {
    text.parse().unwrap()
}

/// One station of the pair with its port's clock.
struct Side {
    station: Station,
    air: AirClock,
    /// Frames this side handed to its TNC, as the monitor shows them.
    sent: Vec<Frame>,
    /// What its links reported.
    events: Vec<Event>,
}

impl Side {
    fn new(mycall: &str, air: AirSettings) -> Side {
        let config = LinkSettings {
            t1_ms: Some(3000),
            window: Some(7),
            ..LinkSettings::default()
        }
        .config_at(Modulus::Mod8, Some(RATE))
        .unwrap();
        let mut station = Station::new(call(mycall), config).unwrap();
        station.set_listening(true);
        station.set_monitor(true);
        Side {
            station,
            air: AirClock::new(air, Port::ZERO),
            sent: Vec::new(),
            events: Vec::new(),
        }
    }

    /// The driver's step: ACKMODE answers to the clock, frames through
    /// the clock to the TNC, T1 held while frames are not on the air.
    fn drain(&mut self, now: Instant) -> Vec<u8> {
        while let Some(seq) = self.station.poll_transmitted() {
            self.air.answered(now, seq);
        }
        if let Some(at) = self.station.poll_heard() {
            self.air.heard(at);
        }
        while let Some(frame) = self.station.poll_transmit(now) {
            self.air.transmit(now, frame.encode());
        }
        self.station.set_channel_busy(now, self.air.busy(now));
        while let Some(event) = self.station.poll_event() {
            match event {
                StationEvent::Link { event, .. } => self.events.push(event),
                StationEvent::Monitor {
                    direction: Direction::Tx,
                    bytes,
                    ..
                } => self
                    .sent
                    .push(Frame::decode(&bytes, Modulus::Mod8).unwrap()),
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
    fn enquiries(&self) -> usize {
        self.sent
            .iter()
            .filter(|f| {
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

    fn i_frames(&self) -> usize {
        self.sent
            .iter()
            .filter(|f| matches!(f.control(), Control::I { .. }))
            .count()
    }
}

/// A sends `FILE` octets to B over the channel; returns both sides when
/// B has all of it and A has it acknowledged, or after ten minutes.
fn transfer(air: AirSettings, seed: u64) -> (Side, Side) {
    let mut plan = Plan::simple(2, 0, RATE, radio(), ErrorModel::Perfect).unwrap();
    plan.seed = seed;
    let mut channel = Air::new(&plan);
    channel.attach(ClientId(0), 0);
    channel.attach(ClientId(1), 1);
    let mut sides = [Side::new("N0A", air), Side::new("N0B", air)];
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

fn settings(ackmode: AckMode) -> AirSettings {
    AirSettings {
        ackmode,
        bit_rate: RATE,
        txdelay: Duration::from_millis(300),
        persistence: 63,
        slot_time: Duration::from_millis(100),
    }
}

/// The frames of a 16 KB file in 256-octet I frames.
const FRAMES: usize = FILE / 256;

/// A's T1 never expired (no enquiry) and no frame went twice; the
/// frames both sides sent are shown if it did.
fn assert_no_t1_expiry(a: &Side, b: &Side, seed: u64) {
    let controls = |side: &Side| side.sent.iter().map(|f| f.control()).collect::<Vec<_>>();
    assert_eq!(
        a.enquiries(),
        0,
        "seed {seed}: T1 expired\n{:?}\n{:?}",
        controls(a),
        controls(b)
    );
    assert_eq!(a.i_frames(), FRAMES, "seed {seed}: a frame went twice");
}

#[test]
fn with_ackmode_answered_a_lossless_window_of_seven_never_times_out() {
    for seed in 1..=3 {
        let (a, b) = transfer(settings(AckMode::Auto), seed);
        assert_eq!(a.air.ackmode(), Some(true), "the channel answers ACKMODE");
        assert_eq!(b.air.ackmode(), Some(true));
        assert_no_t1_expiry(&a, &b, seed);
    }
}

#[test]
fn without_ackmode_the_estimate_keeps_t1_from_expiring_on_queued_frames() {
    for seed in 1..=3 {
        let (a, b) = transfer(settings(AckMode::Off), seed);
        assert_eq!(a.air.ackmode(), Some(false));
        assert_no_t1_expiry(&a, &b, seed);
    }
}

#[test]
fn t1_counted_from_the_hand_over_expires_on_the_same_transfer() {
    // The control: a clock that takes every frame as sent the moment it
    // is handed over (no ACKMODE, an infinitely fast radio) is T1 as it
    // ran before. The same transfer then times out and resends.
    let hand_over = AirSettings {
        ackmode: AckMode::Off,
        bit_rate: u32::MAX,
        txdelay: Duration::ZERO,
        persistence: 255,
        slot_time: Duration::ZERO,
    };
    let (a, _) = transfer(hand_over, 1);
    assert!(a.enquiries() > 0, "T1 never expired");
    assert!(a.i_frames() > FRAMES, "nothing was sent twice");
}

#[test]
fn t1_starts_at_the_tncs_answer() {
    // After the ACKMODE answer for the last frame handed over, A's T1
    // runs T1V from that answer: its deadline is the answer's time + T1V.
    let mut side = Side::new("N0A", settings(AckMode::On));
    let now = Instant::ZERO;
    side.station.connect(now, call("N0B"), &[]).unwrap();
    let octets = side.drain(now);
    assert!(!octets.is_empty());
    let link = side.station.link(&call("N0B")).unwrap();
    assert_eq!(
        link.poll_timeout(),
        None,
        "T1 held while the SABM waits in the TNC"
    );
    let answer_at = Instant::from_micros(2_500_000);
    side.station.handle_kiss_bytes(
        answer_at,
        &linklab_wire::kiss::encode(&linklab_wire::kiss::Frame {
            port: Port::ZERO,
            command: linklab_wire::kiss::Command::AckMode {
                seq: 0,
                data: Vec::new(),
            },
        }),
    );
    side.drain(answer_at);
    let link = side.station.link(&call("N0B")).unwrap();
    assert_eq!(link.poll_timeout(), Some(answer_at + link.t1v()));
}
