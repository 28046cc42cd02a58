//! The Digital Data (DD) mode of a pair of Icom ID-1 D-STAR transceivers
//! on 23 cm, as Ronan, Long and Walsh used it: an Ethernet bridge over a
//! half-duplex 128 kbit/s radio link ([`DdChannel`], a [`Medium`] for two
//! stations).
//!
//! # What is known of the ID-1 in DD mode
//! - DD mode carries data only, at 128 kbit/s GMSK over the air (the
//!   paper, section II-B; the JARL D-STAR specification).
//! - The radio has an Ethernet port and bridges Ethernet frames: each
//!   frame on the air is the whole Ethernet frame (header, payload padded
//!   to 46 octets, FCS), so IP pays 18 octets of Ethernet framing per
//!   datagram on the air, besides the DD framing below.
//! - Half duplex: one radio sends at a time; a radio that hears the other
//!   waits until it stops, then switches from receive to transmit.
//! - Each Ethernet frame goes as one DD transmission of its own: a
//!   bit-synchronisation preamble, a frame sync and the radio header
//!   (callsigns, flags; 41 octets convolutionally coded to 660 bits), the
//!   frame with a length field and a CRC, and the end pattern that closes
//!   a transmission. The per-frame numbers below follow the public
//!   descriptions of the D-STAR specification; the model charges them per
//!   frame ([`DdConfig::frame_overhead_bits`]).
//!
//! # Every frame a transmission
//! Since every frame starts with a preamble and a header and ends with the
//! end pattern, the model keys the transmitter for each frame and releases
//! it after: each frame pays the turnaround, and between two frames of one
//! radio the other radio, if it has been waiting, takes the channel
//! (receiver first, then the sender's next frame; the two alternate while
//! both have frames). This is what holds the net rate well below the
//! air's 128 kbit/s: a full Ethernet frame costs [`DdConfig::frame_time`]
//! plus [`DdConfig::turnaround`], and a sender that hands the radio frames
//! faster than that fills the transmit buffer and loses what overflows it.
//!
//! # What is calibrated
//! Two parameters are not documented for the ID-1 and were fitted once
//! (example `dstar_calibrate` of `linklab-scenario`) to Ronan et al.
//! Table I's IPv4 TCP and NORM-84 rows; [`DdConfig::id1`] uses the fitted
//! values, turnaround 30 ms ([`ID1_TURNAROUND_MS`]) and a buffer of 64
//! full frames ([`ID1_BUFFER_OCTETS`]). How the fit was done, what it
//! gave and how certain each value is: docs/reproduce.md, section "Ronan
//! et al. on D-STAR, Tables I and II". The two values:
//! - [`DdConfig::turnaround`]: from the moment a radio decides to send
//!   (data waiting, channel clear) to its first bit: the receive/transmit
//!   switch, synthesiser lock and power ramp;
//! - [`DdConfig::buffer_octets`]: the radio's transmit buffer. Frames that
//!   arrive from the Ethernet port while it is full are dropped and
//!   counted ([`DdStats::overrun_drops`]).
//!
//! Both radios deciding to key at the same instant collide: neither hears
//! the other's frames. Bit errors follow an
//! [`ErrorModel`] per receiver (Gilbert-Elliott for fades and outages),
//! drawn from the seeded streams given to [`DdChannel::new`]: a run is
//! determined by its configuration and seed.

use std::collections::VecDeque;

use core::time::Duration;

use linklab_core::{Instant, Streams};

use crate::airtime::bits_duration;
use crate::errors::{ErrorModel, ErrorProcess};
use crate::medium::{Delivery, Medium, MediumEvent, Outcome, StationId};

/// DD air rate, bit/s (D-STAR specification, DD mode).
pub const DD_BIT_RATE: u32 = 128_000;

/// Bits the radio adds to every DD frame: bit-sync preamble (64), frame
/// sync (15), radio header after FEC (660), data length (16), CRC (32)
/// and end pattern (48).
pub const DD_FRAME_OVERHEAD_BITS: u64 = 64 + 15 + 660 + 16 + 32 + 48;

/// Parameters of the DD channel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DdConfig {
    /// Air bit rate, bit/s.
    pub bit_rate: u32,
    /// DD framing per frame, bits, on top of the Ethernet frame.
    pub frame_overhead_bits: u64,
    /// Octets of Ethernet FCS the radio carries per frame (the frames
    /// handed to [`Medium::transmit`] have none).
    pub ethernet_fcs_octets: usize,
    /// Decision to send to first bit (calibrated).
    pub turnaround: Duration,
    /// Transmit buffer of each radio, octets of Ethernet frames
    /// (calibrated).
    pub buffer_octets: usize,
    /// Bit errors at each receiver.
    pub errors: ErrorModel,
}

impl DdConfig {
    /// The calibrated ID-1 pair on a clean channel (Table I's control
    /// configuration); see the module documentation for what was fitted.
    pub fn id1() -> DdConfig {
        DdConfig {
            bit_rate: DD_BIT_RATE,
            frame_overhead_bits: DD_FRAME_OVERHEAD_BITS,
            ethernet_fcs_octets: 4,
            turnaround: Duration::from_millis(ID1_TURNAROUND_MS),
            buffer_octets: ID1_BUFFER_OCTETS,
            errors: ErrorModel::Perfect,
        }
    }

    /// Air time of one Ethernet frame of `octets` (without FCS).
    pub fn frame_time(&self, octets: usize) -> Duration {
        bits_duration(self.frame_bits(octets), self.bit_rate)
    }

    fn frame_bits(&self, octets: usize) -> u64 {
        (octets + self.ethernet_fcs_octets) as u64 * 8 + self.frame_overhead_bits
    }
}

/// Calibrated turnaround of the ID-1, milliseconds (fitted once on Table
/// I's IPv4 TCP and NORM-84 rows; the fit is described in
/// docs/reproduce.md).
pub const ID1_TURNAROUND_MS: u64 = 30;

/// Calibrated transmit buffer of the ID-1, octets: 64 full Ethernet
/// frames (fitted once with the turnaround).
pub const ID1_BUFFER_OCTETS: usize = 64 * 1514;

/// Counters of one radio.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DdStats {
    /// Frames accepted into the transmit buffer.
    pub frames_queued: u64,
    /// Frames dropped because the transmit buffer was full.
    pub overrun_drops: u64,
    /// Frames sent.
    pub frames_sent: u64,
    /// Times the transmitter was keyed.
    pub keyings: u64,
    /// Frames this radio received with bit errors.
    pub frames_corrupted: u64,
    /// Frames this radio could not hear: it was transmitting.
    pub frames_missed_keyed: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tx {
    /// Receiving (transmitter off).
    Off,
    /// Keyed at `since`; the first bit goes at `first_bit`.
    Keying { first_bit: Instant },
    /// Sending the head frame until `until`.
    Sending { until: Instant },
}

#[derive(Debug)]
struct Radio {
    buffer: VecDeque<Vec<u8>>,
    buffered: usize,
    tx: Tx,
    /// Bits of the frame on the air start at this instant.
    frame_start: Instant,
    /// The other radio's receiver was off (not keyed) for the whole frame
    /// on the air so far.
    heard: bool,
    errors: ErrorProcess,
    stats: DdStats,
}

/// Two ID-1 radios in DD mode (see the module documentation).
#[derive(Debug)]
pub struct DdChannel {
    config: DdConfig,
    radios: [Radio; 2],
    deliveries: VecDeque<Delivery>,
    events: VecDeque<MediumEvent>,
}

impl DdChannel {
    /// Two radios with `config`, bit errors drawn from `streams`.
    pub fn new(config: DdConfig, streams: &Streams) -> DdChannel {
        let radio = |i: usize| Radio {
            buffer: VecDeque::new(),
            buffered: 0,
            tx: Tx::Off,
            frame_start: Instant::ZERO,
            heard: false,
            errors: ErrorProcess::new(config.errors, streams.stream(&format!("dd/errors/{i}"))),
            stats: DdStats::default(),
        };
        DdChannel {
            config,
            radios: [radio(0), radio(1)],
            deliveries: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// The parameters.
    pub fn config(&self) -> &DdConfig {
        &self.config
    }

    /// Counters of `station`'s radio.
    pub fn stats(&self, station: StationId) -> DdStats {
        self.radios
            .get(station.0)
            .map(|r| r.stats)
            .unwrap_or_default()
    }

    /// Octets waiting in `station`'s transmit buffer.
    pub fn buffered(&self, station: StationId) -> usize {
        self.radios.get(station.0).map_or(0, |r| r.buffered)
    }

    /// Whether `station`'s transmitter is keyed.
    pub fn is_keyed(&self, station: StationId) -> bool {
        self.radios.get(station.0).is_some_and(|r| r.tx != Tx::Off)
    }

    /// Keys station `i` if it has frames and the other is not on the air.
    fn try_key(&mut self, now: Instant, i: usize) {
        let other_on_air = self.radios[1 - i].tx != Tx::Off;
        let radio = &self.radios[i];
        if radio.tx != Tx::Off || radio.buffer.is_empty() || other_on_air {
            return;
        }
        let radio = &mut self.radios[i];
        radio.tx = Tx::Keying {
            first_bit: now + self.config.turnaround,
        };
        radio.stats.keyings += 1;
        self.radios[1 - i].heard = false;
        self.events.push_back(MediumEvent::TransmitterKeyed {
            station: StationId(i),
            at: now,
        });
    }

    /// Starts the head frame of station `i` at `now`.
    fn start_frame(&mut self, now: Instant, i: usize) {
        let other_off = self.radios[1 - i].tx == Tx::Off;
        let radio = &mut self.radios[i];
        radio.heard = other_off;
        let Some(frame) = radio.buffer.front() else {
            radio.tx = Tx::Off;
            return;
        };
        radio.frame_start = now;
        radio.tx = Tx::Sending {
            until: now + self.config.frame_time(frame.len()),
        };
    }

    /// Station `i`'s head frame ended at `now`: deliver it, go on or
    /// release the transmitter.
    fn end_frame(&mut self, now: Instant, i: usize) {
        let bits_config = self.config;
        let (start, heard) = (self.radios[i].frame_start, self.radios[i].heard);
        let Some(frame) = self.radios[i].buffer.pop_front() else {
            self.radios[i].tx = Tx::Off;
            return;
        };
        self.radios[i].buffered -= frame.len();
        self.radios[i].stats.frames_sent += 1;
        self.events.push_back(MediumEvent::FrameSent {
            station: StationId(i),
            octets: frame.len(),
            at: now,
        });
        let j = 1 - i;
        let bits = bits_config.frame_bits(frame.len());
        let receiver = &mut self.radios[j];
        let outcome = if !heard || receiver.tx != Tx::Off {
            receiver.stats.frames_missed_keyed += 1;
            Outcome::ReceiverKeyed
        } else if !receiver
            .errors
            .frame_survives(start, now, bits, bits_config.bit_rate)
        {
            receiver.stats.frames_corrupted += 1;
            Outcome::BitErrors
        } else {
            Outcome::Intact
        };
        self.deliveries.push_back(Delivery {
            at: now,
            from: StationId(i),
            to: StationId(j),
            frame,
            outcome,
        });
        // Every DD frame is a transmission of its own (it ends with the end
        // pattern): the transmitter is released, the radio that waited for
        // the channel keys first, then this one for its next frame.
        self.radios[i].tx = Tx::Off;
        self.events.push_back(MediumEvent::TransmissionEnded {
            station: StationId(i),
            at: now,
        });
        self.try_key(now, j);
        self.try_key(now, i);
    }
}

impl Medium for DdChannel {
    fn stations(&self) -> usize {
        2
    }

    fn transmit(&mut self, now: Instant, from: StationId, frame: Vec<u8>) {
        let i = from.0;
        let Some(radio) = self.radios.get_mut(i) else {
            return;
        };
        if radio.buffered + frame.len() > self.config.buffer_octets {
            radio.stats.overrun_drops += 1;
            return;
        }
        radio.buffered += frame.len();
        radio.buffer.push_back(frame);
        radio.stats.frames_queued += 1;
        self.try_key(now, i);
    }

    fn handle_timeout(&mut self, now: Instant) {
        loop {
            let due = (0..2).find_map(|i| match self.radios[i].tx {
                Tx::Keying { first_bit } if first_bit <= now => Some((i, first_bit, true)),
                Tx::Sending { until } if until <= now => Some((i, until, false)),
                _ => None,
            });
            let Some((i, at, keying)) = due else {
                return;
            };
            if keying {
                self.events.push_back(MediumEvent::TransmissionStarted {
                    station: StationId(i),
                    at,
                });
                self.start_frame(at, i);
            } else {
                self.end_frame(at, i);
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.radios
            .iter()
            .filter_map(|r| match r.tx {
                Tx::Off => None,
                Tx::Keying { first_bit } => Some(first_bit),
                Tx::Sending { until } => Some(until),
            })
            .min()
    }

    fn poll_delivery(&mut self) -> Option<Delivery> {
        self.deliveries.pop_front()
    }

    fn poll_event(&mut self) -> Option<MediumEvent> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_until_quiet(channel: &mut DdChannel) -> Vec<Delivery> {
        let mut out = Vec::new();
        while let Some(t) = channel.poll_timeout() {
            channel.handle_timeout(t);
            out.extend(std::iter::from_fn(|| channel.poll_delivery()));
        }
        out
    }

    #[test]
    fn a_full_buffer_drops_and_counts() {
        let mut config = DdConfig::id1();
        config.buffer_octets = 3 * 1000;
        let mut channel = DdChannel::new(config, &Streams::new(1));
        for _ in 0..5 {
            channel.transmit(Instant::ZERO, StationId(0), vec![0; 1000]);
        }
        let stats = channel.stats(StationId(0));
        assert_eq!((stats.frames_queued, stats.overrun_drops), (3, 2));
        let got = run_until_quiet(&mut channel);
        assert_eq!(got.len(), 3);
        assert!(got.iter().all(Delivery::is_intact));
        // One keying per frame, each after the turnaround.
        assert_eq!(channel.stats(StationId(0)).keyings, 3);
        let t = (config.turnaround + config.frame_time(1000)) * 3;
        assert_eq!(got[2].at, Instant::ZERO + t);
    }

    #[test]
    fn a_waiting_radio_takes_the_channel_between_two_frames() {
        let config = DdConfig::id1();
        let mut channel = DdChannel::new(config, &Streams::new(1));
        channel.transmit(Instant::ZERO, StationId(0), vec![1; 1000]);
        channel.transmit(Instant::ZERO, StationId(0), vec![3; 1000]);
        let on_air = Instant::ZERO + config.turnaround;
        channel.handle_timeout(on_air);
        channel.transmit(on_air, StationId(1), vec![2; 60]);
        let got = run_until_quiet(&mut channel);
        let order: Vec<u8> = got.iter().map(|d| d.frame[0]).collect();
        assert_eq!(order, [1, 2, 3]);
        assert!(got.iter().all(Delivery::is_intact));
    }

    #[test]
    fn the_other_radio_waits_for_the_channel_then_turns_around() {
        let config = DdConfig::id1();
        let mut channel = DdChannel::new(config, &Streams::new(1));
        channel.transmit(Instant::ZERO, StationId(0), vec![1; 1500]);
        let half = Instant::ZERO + config.turnaround;
        channel.handle_timeout(half);
        channel.transmit(half, StationId(1), vec![2; 60]);
        assert!(!channel.is_keyed(StationId(1)));
        let got = run_until_quiet(&mut channel);
        assert_eq!(got.len(), 2);
        let first_end = Instant::ZERO + config.turnaround + config.frame_time(1500);
        assert_eq!(got[0].at, first_end);
        assert_eq!(
            got[1].at,
            first_end + config.turnaround + config.frame_time(60)
        );
        assert!(got.iter().all(Delivery::is_intact));
    }

    #[test]
    fn simultaneous_keying_collides() {
        let config = DdConfig::id1();
        let mut channel = DdChannel::new(config, &Streams::new(1));
        channel.transmit(Instant::ZERO, StationId(0), vec![1; 100]);
        // Station 1 keyed before it could hear station 0: force it.
        channel.radios[1].buffer.push_back(vec![2; 100]);
        channel.radios[1].buffered = 100;
        channel.radios[1].tx = Tx::Keying {
            first_bit: Instant::ZERO + config.turnaround,
        };
        let got = run_until_quiet(&mut channel);
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|d| d.outcome == Outcome::ReceiverKeyed));
    }

    #[test]
    fn an_outage_corrupts_frames() {
        let mut config = DdConfig::id1();
        config.errors = ErrorModel::GilbertElliott(crate::GilbertElliott {
            p_good_to_bad: 1.0,
            p_bad_to_good: 0.0,
            ber_good: 0.0,
            ber_bad: 0.5,
        });
        let mut channel = DdChannel::new(config, &Streams::new(3));
        channel.transmit(Instant::ZERO, StationId(0), vec![0; 500]);
        let got = run_until_quiet(&mut channel);
        assert_eq!(got[0].outcome, Outcome::BitErrors);
        assert_eq!(channel.stats(StationId(1)).frames_corrupted, 1);
    }
}
