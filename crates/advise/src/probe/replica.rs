//! The probe in virtual time: the same [`Prober`] against a peer running
//! linklab's AX.25 engine, each behind a host and KISS TNC
//! ([`linklab_scenario::transfer::HostAndTnc`]: serial link, processor,
//! carrier hold) on a CSMA [`RadioChannel`], the models `linklab
//! channel` runs in real time. The fit ([`super::fit`](mod@super::fit)) runs it with
//! candidate values of the hidden parameters and compares the round
//! trips with the measured ones, as Ronan et al.'s reproduction fitted
//! its TNC with the transfer simulation.

use core::time::Duration;

use linklab_channel::{
    ErrorModel, Medium, MediumEvent, RadioChannel, RadioConfig, StationConfig, StationId, TncConfig,
};
use linklab_core::{earliest, Engine, Instant, Streams};
use linklab_link::{AckPolicy, Config, DataLink};
use linklab_scenario::transfer::{HostAndTnc, HostConfig, KissPath};
use linklab_sim::{drive, World};
use linklab_wire::ax25::Address;
use linklab_wire::control::Modulus;

use super::prober::{ProbeConfig, ProbeEvent, Prober, Sample};

/// What the replica is built from: the known values and the candidate
/// hidden ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Replica {
    /// Radio bit rate, bit/s.
    pub bit_rate: u32,
    /// The probe's station: persistence and slot time it sets, TXDELAY
    /// (hidden), TXTAIL.
    pub local: StationConfig,
    /// The peer's station.
    pub peer: StationConfig,
    /// The TNC at each end (per-frame time hidden).
    pub tnc: TncConfig,
    /// Carrier hold of each TNC.
    pub carrier_hold: Duration,
    /// The peer host's delay from stack to serial port and back.
    pub peer_latency: Duration,
    /// The peer's T2 (for windows sent without P).
    pub peer_t2: Duration,
    /// The peer's window k: it acknowledges at once when that many
    /// frames are unacknowledged (linklab's and Dire Wolf's policy).
    pub peer_window: u8,
    /// Independent bit-error probability of the channel.
    pub ber: f64,
}

const HORIZON: Duration = Duration::from_secs(24 * 3600);

/// The replica running: the prober and the peer's engine, each behind its
/// host and TNC, on the radio channel.
struct VirtualLink {
    radio: RadioChannel,
    stations: [HostAndTnc; 2],
    prober: Prober,
    peer: DataLink,
    samples: Vec<Sample>,
    failed: Option<String>,
}

/// Runs `config`'s plan on the replica with the random streams
/// `streams`; the samples in order, or why the probe failed.
pub fn run(
    replica: &Replica,
    config: &ProbeConfig,
    streams: &Streams,
) -> Result<Vec<Sample>, String> {
    let mut phases = streams.stream("slot-phase");
    let mut phased = |s: StationConfig| StationConfig {
        slot_phase: Duration::from_micros(
            phases.below(u64::try_from(s.slot_time.as_micros().max(1)).unwrap_or(1)),
        ),
        ..s
    };
    let errors = if replica.ber > 0.0 {
        ErrorModel::Independent { ber: replica.ber }
    } else {
        ErrorModel::Perfect
    };
    let radio = RadioChannel::new(
        RadioConfig {
            errors,
            ..RadioConfig::new(replica.bit_rate)
        },
        &[phased(replica.local), phased(replica.peer)],
        streams,
        "radio",
    );
    let path = |latency| KissPath {
        host: HostConfig { latency },
        tnc: replica.tnc,
        carrier_hold: replica.carrier_hold,
    };
    let peer_config = Config {
        modulus: Modulus::Mod8,
        xid: false,
        t2: replica.peer_t2,
        window_mod8: replica.peer_window,
        ack_policy: AckPolicy::WindowOrT2,
        ..Config::default()
    };
    let local: Address = config.local;
    let mut peer =
        DataLink::new(peer_config, config.remote, local, &[]).map_err(|e| e.to_string())?;
    peer.set_accept_incoming(true);
    let mut link = VirtualLink {
        radio,
        stations: [
            HostAndTnc::new(&path(Duration::ZERO)),
            HostAndTnc::new(&path(replica.peer_latency)),
        ],
        prober: Prober::new(config.clone(), Instant::ZERO),
        peer,
        samples: Vec::new(),
        failed: None,
    };
    drive(&mut link, Instant::ZERO, Instant::ZERO + HORIZON).map_err(|e| e.to_string())?;
    match link.failed {
        Some(why) => Err(why),
        None => Ok(link.samples),
    }
}

impl VirtualLink {
    fn on_medium_event(&mut self, now: Instant, event: MediumEvent) {
        let other = |s: StationId| 1 - s.0.min(1);
        match event {
            MediumEvent::TransmitterKeyed { station, .. } => {
                self.stations[other(station)].other_keyed();
            }
            MediumEvent::TransmissionEnded { station, at } => {
                self.stations[other(station)].other_unkeyed(at);
            }
            MediumEvent::FrameSent {
                station, octets, ..
            } => {
                if let Some(s) = self.stations.get_mut(station.0) {
                    s.frame_sent(now, octets);
                }
            }
            _ => {}
        }
    }
}

impl World for VirtualLink {
    fn settle(&mut self, now: Instant) {
        loop {
            let mut busy = false;
            while let Some(frame) = self.prober.poll_transmit() {
                busy = true;
                self.stations[0].send(now, frame.encode());
            }
            while let Some(frame) = self.peer.poll_transmit(now) {
                busy = true;
                self.stations[1].send(now, frame.encode());
            }
            while self.peer.poll_event().is_some() {}
            for (i, station) in self.stations.iter_mut().enumerate() {
                busy |= station.shuttle(now, StationId(i), &mut self.radio);
            }
            while let Some(event) = self.radio.poll_event() {
                busy = true;
                self.on_medium_event(now, event);
            }
            while let Some(delivery) = self.radio.poll_delivery() {
                busy = true;
                if let (true, Some(s)) =
                    (delivery.is_intact(), self.stations.get_mut(delivery.to.0))
                {
                    s.receive(now, delivery.frame, 0);
                }
            }
            while let Some((frame, _)) = self.stations[0].poll_delivery(now) {
                busy = true;
                self.prober.handle_frame(now, &frame);
            }
            while let Some((frame, _)) = self.stations[1].poll_delivery(now) {
                busy = true;
                if let Ok(f) = linklab_wire::ax25::Frame::decode(&frame, self.peer.modulus()) {
                    self.peer.handle_frame(now, &f);
                }
            }
            while let Some(event) = self.prober.poll_event() {
                busy = true;
                match event {
                    ProbeEvent::Sample(s) => self.samples.push(s),
                    ProbeEvent::Failed(why) => self.failed = Some(why),
                    ProbeEvent::Connected | ProbeEvent::Finished => {}
                }
            }
            if !busy {
                break;
            }
        }
    }

    fn done(&self) -> bool {
        self.prober.is_done()
    }

    fn next_wake(&mut self, _now: Instant) -> Option<Instant> {
        earliest([
            self.radio.poll_timeout(),
            self.stations[0].next_wake(),
            self.stations[1].next_wake(),
            self.prober.poll_timeout(),
            self.peer.poll_timeout(),
        ])
    }

    fn advance(&mut self, to: Instant) {
        // The host and TNC paths move in `settle` (`HostAndTnc::shuttle`).
        self.radio.handle_timeout(to);
        if self.prober.poll_timeout().is_some_and(|t| t <= to) {
            self.prober.handle_timeout(to);
        }
        if self.peer.poll_timeout().is_some_and(|t| t <= to) {
            self.peer.handle_timeout(to);
        }
    }
}
