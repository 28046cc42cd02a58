//! The Digital Data (DD) mode of Icom ID-1 D-STAR transceivers on 23 cm,
//! as Ronan, Long and Walsh used it: an Ethernet bridge over a half-duplex
//! 128 kbit/s radio channel ([`DdChannel`], a [`Medium`] for two radios,
//! or more on one channel).
//!
//! # What is known of the ID-1 in DD mode
//! - DD mode carries data only, at 128 kbit/s GMSK over the air (the
//!   paper, section II-B; the JARL D-STAR specification).
//! - The radio has an Ethernet port and bridges Ethernet frames: each
//!   frame on the air is the whole Ethernet frame (header, payload padded
//!   to 46 octets, FCS), so IP pays 18 octets of Ethernet framing per
//!   datagram on the air, besides the DD framing below.
//! - Half duplex: one radio sends at a time; a radio that hears another
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
//! radio a radio that has been waiting takes the channel (receiver first,
//! then the sender's next frame; two radios alternate while both have
//! frames). This is what holds the net rate well below the air's
//! 128 kbit/s: a full Ethernet frame costs [`DdConfig::frame_time`] plus
//! [`DdConfig::turnaround`], and a sender that hands the radio frames
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
//! # More than two radios
//! The calibrated model is the pair of the paper ([`DdChannel::new`]).
//! [`DdChannel::with_radios`] puts N radios on one channel, every one in
//! range of every other (no hidden stations), as in the emergency
//! communications the paper argues from, where several ID-1s share one
//! channel. Carrier sense is as for the pair: a radio senses another's
//! key-up at once and waits while any radio is keyed. Every frame is a
//! broadcast: each other radio receives it (the hosts filter by MAC
//! address). What N > 2 adds is the instant the channel clears with two
//! or more radios waiting. The ID-1's behaviour there is not documented;
//! [`DdConfig::contention`] chooses between two rules that bound it,
//! [`Contention::AllKey`] (all key, and collide) and
//! [`Contention::OneKeys`] (ideal arbitration). With two radios at most
//! one waits, and both rules are the calibrated model.
//!
//! Radios that key at the same instant collide: each is keyed and hears
//! none of the others' frames, and every other radio loses all of them
//! (no capture). Bit errors follow an [`ErrorModel`] per receiver
//! (Gilbert-Elliott for fades and outages), drawn from the seeded streams
//! given to [`DdChannel::with_radios`]: a run is determined by its
//! configuration and seed.

use std::collections::VecDeque;

use core::time::Duration;

use linklab_core::{Instant, Stream, Streams};

use crate::airtime::bits_duration;
use crate::errors::{ErrorModel, ErrorProcess};
use crate::medium::{Delivery, Medium, MediumEvent, Outcome, StationId};

/// DD air rate, bit/s (D-STAR specification, DD mode).
pub const DD_BIT_RATE: u32 = 128_000;

/// Bits the radio adds to every DD frame: bit-sync preamble (64), frame
/// sync (15), radio header after FEC (660), data length (16), CRC (32)
/// and end pattern (48).
pub const DD_FRAME_OVERHEAD_BITS: u64 = 64 + 15 + 660 + 16 + 32 + 48;

/// What the radios waiting for the channel do at the instant it clears,
/// when two or more wait (only possible with more than two radios). The
/// ID-1's behaviour is not documented: the two rules bound it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Contention {
    /// 1-persistent carrier sense without backoff: every waiting radio
    /// keys at that instant. Through the turnaround they are blind to one
    /// another (keyed, not receiving), so their frames go out together
    /// and collide.
    #[default]
    AllKey,
    /// Ideal arbitration, a bound: one waiting radio, drawn uniformly from
    /// the seeded stream `dd/access`, keys; the others sense it and keep
    /// waiting.
    OneKeys,
}

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
    /// Who keys when the channel clears with several radios waiting.
    pub contention: Contention,
}

impl DdConfig {
    /// The calibrated ID-1 pair on a clean channel (Table I's control
    /// configuration); see the module documentation for what was fitted.
    /// Several radios contend by [`Contention::AllKey`].
    pub fn id1() -> DdConfig {
        DdConfig {
            bit_rate: DD_BIT_RATE,
            frame_overhead_bits: DD_FRAME_OVERHEAD_BITS,
            ethernet_fcs_octets: 4,
            turnaround: Duration::from_millis(ID1_TURNAROUND_MS),
            buffer_octets: ID1_BUFFER_OCTETS,
            errors: ErrorModel::Perfect,
            contention: Contention::AllKey,
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
    /// Frames this radio lost to a collision: another radio's frame
    /// overlapped them on the air (never with two radios).
    pub frames_collided: u64,
    /// Frames this radio sent while another radio was keyed: no receiver
    /// got them (never with two radios).
    pub frames_sent_collided: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tx {
    /// Receiving (transmitter off).
    Off,
    /// Keyed; the first bit goes at `first_bit`.
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
    /// By station: the radios that were keyed when the frame on the air
    /// started. A radio keys only on a clear channel, so these keyed at
    /// the same instant as this one: they cannot hear the frame, and their
    /// own frames overlap it.
    keyed_with: Vec<bool>,
    errors: ErrorProcess,
    stats: DdStats,
}

impl Radio {
    /// The frame on the air started with another radio keyed: it collides
    /// with that radio's frame.
    fn in_collision(&self) -> bool {
        self.keyed_with.contains(&true)
    }
}

/// ID-1 radios in DD mode on one channel (see the module documentation).
#[derive(Debug)]
pub struct DdChannel {
    config: DdConfig,
    radios: Vec<Radio>,
    /// Draws the radio that keys under [`Contention::OneKeys`].
    access: Stream,
    deliveries: VecDeque<Delivery>,
    events: VecDeque<MediumEvent>,
}

impl DdChannel {
    /// The pair of radios of the paper with `config`, bit errors drawn
    /// from `streams` (the calibrated model).
    pub fn new(config: DdConfig, streams: &Streams) -> DdChannel {
        DdChannel::with_radios(config, 2, streams)
    }

    /// `radios` radios (stations 0 to `radios` − 1) on one channel, every
    /// one in range of every other, with `config`; receiver `i` draws its
    /// bit errors from the stream `dd/errors/{i}` of `streams`, and
    /// [`Contention::OneKeys`] from `dd/access`.
    pub fn with_radios(config: DdConfig, radios: usize, streams: &Streams) -> DdChannel {
        let radio = |i: usize| Radio {
            buffer: VecDeque::new(),
            buffered: 0,
            tx: Tx::Off,
            frame_start: Instant::ZERO,
            keyed_with: vec![false; radios],
            errors: ErrorProcess::new(config.errors, streams.stream(&format!("dd/errors/{i}"))),
            stats: DdStats::default(),
        };
        DdChannel {
            config,
            radios: (0..radios).map(radio).collect(),
            access: streams.stream("dd/access"),
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

    /// Whether no radio is keyed (every radio senses the channel at once).
    fn channel_clear(&self) -> bool {
        self.radios.iter().all(|r| r.tx == Tx::Off)
    }

    /// Keys station `i` if it has frames and the channel is clear.
    fn try_key(&mut self, now: Instant, i: usize) {
        if !self.radios[i].buffer.is_empty() && self.channel_clear() {
            self.key(now, i);
        }
    }

    /// Keys station `i`'s transmitter at `now`.
    fn key(&mut self, now: Instant, i: usize) {
        let radio = &mut self.radios[i];
        radio.tx = Tx::Keying {
            first_bit: now + self.config.turnaround,
        };
        radio.stats.keyings += 1;
        self.events.push_back(MediumEvent::TransmitterKeyed {
            station: StationId(i),
            at: now,
        });
    }

    /// Station `released` ended its frame at `now`. If that cleared the
    /// channel, the radios that were waiting take it by
    /// [`DdConfig::contention`]; `released` keys for its next frame only
    /// if none waited.
    fn contend(&mut self, now: Instant, released: usize) {
        if !self.channel_clear() {
            return;
        }
        let waiting: Vec<usize> = (0..self.radios.len())
            .filter(|&k| k != released && !self.radios[k].buffer.is_empty())
            .collect();
        match (waiting.as_slice(), self.config.contention) {
            ([], _) => self.try_key(now, released),
            ([only], _) => self.key(now, *only),
            (_, Contention::AllKey) => waiting.iter().for_each(|&k| self.key(now, k)),
            (_, Contention::OneKeys) => {
                let drawn = self.access.below(waiting.len() as u64) as usize;
                self.key(now, waiting[drawn]);
            }
        }
    }

    /// Starts the head frame of station `i` at `now`.
    fn start_frame(&mut self, now: Instant, i: usize) {
        for k in 0..self.radios.len() {
            let keyed = k != i && self.radios[k].tx != Tx::Off;
            self.radios[i].keyed_with[k] = keyed;
        }
        let radio = &mut self.radios[i];
        let Some(frame) = radio.buffer.front() else {
            radio.tx = Tx::Off;
            return;
        };
        radio.frame_start = now;
        radio.tx = Tx::Sending {
            until: now + self.config.frame_time(frame.len()),
        };
    }

    /// Station `i`'s head frame ended at `now`: deliver it to every other
    /// radio and release the transmitter.
    fn end_frame(&mut self, now: Instant, i: usize) {
        let Some(frame) = self.radios[i].buffer.pop_front() else {
            self.radios[i].tx = Tx::Off;
            return;
        };
        self.radios[i].buffered -= frame.len();
        self.radios[i].stats.frames_sent += 1;
        if self.radios[i].in_collision() {
            self.radios[i].stats.frames_sent_collided += 1;
        }
        self.events.push_back(MediumEvent::FrameSent {
            station: StationId(i),
            octets: frame.len(),
            at: now,
        });
        let bits = self.config.frame_bits(frame.len());
        for j in (0..self.radios.len()).filter(|&j| j != i) {
            let outcome = self.receive(now, i, j, bits);
            self.deliveries.push_back(Delivery {
                at: now,
                from: StationId(i),
                to: StationId(j),
                frame: frame.clone(),
                outcome,
            });
        }
        // Every DD frame is a transmission of its own (it ends with the end
        // pattern): the transmitter is released, the radios that waited for
        // the channel key first, then this one for its next frame.
        self.radios[i].tx = Tx::Off;
        self.events.push_back(MediumEvent::TransmissionEnded {
            station: StationId(i),
            at: now,
        });
        self.contend(now, i);
    }

    /// What became of station `from`'s frame of `bits`, ending at `end`,
    /// at receiver `to`. The receiver's error stream is drawn only for a
    /// frame it heard alone.
    fn receive(&mut self, end: Instant, from: usize, to: usize, bits: u64) -> Outcome {
        let sender = &self.radios[from];
        let (start, collided) = (sender.frame_start, sender.in_collision());
        let keyed = sender.keyed_with[to] || self.radios[to].tx != Tx::Off;
        let rate = self.config.bit_rate;
        let receiver = &mut self.radios[to];
        if keyed {
            receiver.stats.frames_missed_keyed += 1;
            Outcome::ReceiverKeyed
        } else if collided {
            receiver.stats.frames_collided += 1;
            Outcome::Collision
        } else if !receiver.errors.frame_survives(start, end, bits, rate) {
            receiver.stats.frames_corrupted += 1;
            Outcome::BitErrors
        } else {
            Outcome::Intact
        }
    }

    /// The radio with the earliest step due at or before `now` (the lowest
    /// station first at the same instant): when, and whether it is the
    /// first bit (else the end of a frame).
    fn next_due(&self, now: Instant) -> Option<(Instant, usize, bool)> {
        let due = self
            .radios
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r.tx {
                Tx::Keying { first_bit } if first_bit <= now => Some((first_bit, i, true)),
                Tx::Sending { until } if until <= now => Some((until, i, false)),
                _ => None,
            });
        due.min_by_key(|&(at, i, _)| (at, i))
    }
}

impl Medium for DdChannel {
    fn stations(&self) -> usize {
        self.radios.len()
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
        while let Some((at, i, first_bit)) = self.next_due(now) {
            if first_bit {
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

    /// A fading channel (Gilbert-Elliott) and a buffer of 12 full frames.
    fn fading() -> DdConfig {
        let mut config = DdConfig::id1();
        config.buffer_octets = 12 * 1514;
        config.errors = ErrorModel::GilbertElliott(crate::GilbertElliott {
            p_good_to_bad: 2e-5,
            p_bad_to_good: 1e-3,
            ber_good: 1e-6,
            ber_bad: 1e-2,
        });
        config
    }

    /// Runs `channel` for 60 s with frames of mixed sizes handed to radios
    /// 0 and 1 at random times (seeded by `seed`, about 14 a second each:
    /// more than the channel carries); returns every delivery and event.
    fn mixed_traffic(channel: &mut DdChannel, seed: u64) -> (Vec<Delivery>, Vec<MediumEvent>) {
        const SIZES: [usize; 5] = [46, 200, 576, 1000, 1500];
        let streams = Streams::new(seed);
        let mut traffic = [streams.stream("test/0"), streams.stream("test/1")];
        let mean = Duration::from_millis(70);
        let end = Instant::ZERO + Duration::from_secs(60);
        let mut next = traffic
            .each_mut()
            .map(|s| Instant::ZERO + s.exponential_duration(mean));
        let (mut deliveries, mut events) = (Vec::new(), Vec::new());
        loop {
            let i = usize::from(next[1] < next[0]);
            let arrival = (next[i] < end).then_some(next[i]);
            let due = channel
                .poll_timeout()
                .filter(|&t| arrival.is_none_or(|a| t <= a));
            match (due, arrival) {
                (Some(t), _) => channel.handle_timeout(t),
                (None, Some(a)) => {
                    let octets = SIZES[traffic[i].below(SIZES.len() as u64) as usize];
                    channel.transmit(a, StationId(i), vec![i as u8; octets]);
                    next[i] = a + traffic[i].exponential_duration(mean);
                }
                (None, None) => return (deliveries, events),
            }
            deliveries.extend(std::iter::from_fn(|| channel.poll_delivery()));
            events.extend(std::iter::from_fn(|| channel.poll_event()));
        }
    }

    /// FNV-1a over the deliveries (time, stations, length, outcome) and the
    /// events, in order.
    fn digest(deliveries: &[Delivery], events: &[MediumEvent]) -> u64 {
        let text = deliveries
            .iter()
            .map(|d| {
                let (at, from, to) = (d.at.as_micros(), d.from.0, d.to.0);
                format!("{at} {from} {to} {} {:?};", d.frame.len(), d.outcome)
            })
            .chain(events.iter().map(|e| format!("{e:?};")))
            .collect::<String>();
        text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    /// Checks one transmission of two radios: keyed, first bit a
    /// turnaround later, last bit a frame time after that, delivered to
    /// the other radio then, released.
    fn check_transmission(config: &DdConfig, events: &[MediumEvent], delivery: &Delivery) {
        use MediumEvent::*;
        let [TransmitterKeyed { station, at: keyed }, TransmissionStarted {
            station: s1,
            at: first,
        }, FrameSent {
            station: s2,
            octets,
            at: last,
        }, TransmissionEnded {
            station: s3,
            at: released,
        }] = *events
        else {
            panic!("not one transmission: {events:?}");
        };
        assert!([s1, s2, s3].iter().all(|&s| s == station), "{events:?}");
        assert_eq!(first, keyed + config.turnaround);
        assert_eq!(last, first + config.frame_time(octets));
        assert_eq!(released, last);
        assert_eq!(
            (
                delivery.at,
                delivery.from,
                delivery.to,
                delivery.frame.len()
            ),
            (last, station, StationId(1 - station.0), octets)
        );
    }

    #[test]
    fn two_radios_behave_as_the_calibrated_pair() {
        let config = fading();
        let mut channel = DdChannel::new(config, &Streams::new(11));
        let (deliveries, events) = mixed_traffic(&mut channel, 11);
        assert_eq!(channel.stations(), 2);
        assert_eq!(events.len(), 4 * deliveries.len());
        for (transmission, delivery) in events.chunks(4).zip(&deliveries) {
            check_transmission(&config, transmission, delivery);
        }
        // Recorded from the two-radio model before it took N radios: the
        // same deliveries, events and error draws.
        let pair = |queued, overrun, corrupted| DdStats {
            frames_queued: queued,
            overrun_drops: overrun,
            frames_sent: queued,
            keyings: queued,
            frames_corrupted: corrupted,
            ..DdStats::default()
        };
        assert_eq!(channel.stats(StationId(0)), pair(522, 272, 54));
        assert_eq!(channel.stats(StationId(1)), pair(534, 330, 40));
        assert_eq!(deliveries.len(), 1056);
        assert_eq!(digest(&deliveries, &events), 0xb4fc_1a23_2fd7_0276);
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

    #[test]
    fn every_other_radio_receives_each_frame() {
        let config = DdConfig::id1();
        let mut channel = DdChannel::with_radios(config, 4, &Streams::new(1));
        assert_eq!(channel.stations(), 4);
        channel.transmit(Instant::ZERO, StationId(2), vec![2; 100]);
        let got = run_until_quiet(&mut channel);
        let end = Instant::ZERO + config.turnaround + config.frame_time(100);
        let heard: Vec<_> = got.iter().map(|d| (d.at, d.from.0, d.to.0)).collect();
        assert_eq!(heard, [(end, 2, 0), (end, 2, 1), (end, 2, 3)]);
        assert!(got.iter().all(Delivery::is_intact));
    }

    /// Three radios under `contention`, seeded by `seed`: radio 0 sends 300
    /// octets; while it is on the air radio 1 gets two frames (200 and 100
    /// octets, first octets 1 and 11) and radio 2 one (500, first octet
    /// 2), and both wait.
    fn two_wait_at_the_clear(contention: Contention, seed: u64) -> ThreeRadios {
        let mut config = DdConfig::id1();
        config.contention = contention;
        let mut channel = DdChannel::with_radios(config, 3, &Streams::new(seed));
        channel.transmit(Instant::ZERO, StationId(0), vec![0; 300]);
        let on_air = Instant::ZERO + config.turnaround;
        channel.handle_timeout(on_air);
        channel.transmit(on_air, StationId(1), vec![1; 200]);
        channel.transmit(on_air, StationId(1), vec![11; 100]);
        channel.transmit(on_air, StationId(2), vec![2; 500]);
        assert_eq!(channel.buffered(StationId(2)), 500);
        assert!(!channel.is_keyed(StationId(1)) && !channel.is_keyed(StationId(2)));
        let deliveries = run_until_quiet(&mut channel)
            .into_iter()
            .map(|d| (d.at, d.from.0, d.to.0, d.frame[0], d.outcome))
            .collect();
        let keyings = std::iter::from_fn(|| channel.poll_event())
            .filter_map(|e| match e {
                MediumEvent::TransmitterKeyed { station, at } => Some((station.0, at)),
                _ => None,
            })
            .collect();
        ThreeRadios {
            channel,
            deliveries,
            keyings,
        }
    }

    /// A run of [`two_wait_at_the_clear`].
    struct ThreeRadios {
        channel: DdChannel,
        /// When, from, to, first octet, outcome.
        deliveries: Vec<(Instant, usize, usize, u8, Outcome)>,
        /// Station, when.
        keyings: Vec<(usize, Instant)>,
    }

    #[test]
    fn all_key_the_waiting_radios_collide() {
        use Outcome::*;
        let ThreeRadios {
            channel,
            deliveries,
            keyings,
        } = two_wait_at_the_clear(Contention::AllKey, 1);
        let config = channel.config();
        let (t, f) = (config.turnaround, |octets| config.frame_time(octets));
        let clear = Instant::ZERO + t + f(300);
        let (end_1, end_2) = (clear + t + f(200), clear + t + f(500));
        // Radio 1 released first, keys again only when radio 2 ends.
        let last = end_2 + t + f(100);
        assert_eq!(
            deliveries,
            [
                (clear, 0, 1, 0, Intact),
                (clear, 0, 2, 0, Intact),
                (end_1, 1, 0, 1, Collision),
                (end_1, 1, 2, 1, ReceiverKeyed),
                (end_2, 2, 0, 2, Collision),
                (end_2, 2, 1, 2, ReceiverKeyed),
                (last, 1, 0, 11, Intact),
                (last, 1, 2, 11, Intact),
            ]
        );
        assert_eq!(
            keyings,
            [(0, Instant::ZERO), (1, clear), (2, clear), (1, end_2)]
        );
        let stats = |i| channel.stats(StationId(i));
        assert_eq!(stats(0).frames_collided, 2);
        assert_eq!(
            [stats(1).frames_missed_keyed, stats(2).frames_missed_keyed],
            [1, 1]
        );
        assert_eq!(
            [stats(0).keyings, stats(1).keyings, stats(2).keyings],
            [1, 2, 1]
        );
    }

    #[test]
    fn a_receiver_keyed_for_part_of_a_frame_cannot_hear_it() {
        let three = two_wait_at_the_clear(Contention::AllKey, 1);
        let config = three.channel.config();
        let clear = Instant::ZERO + config.turnaround + config.frame_time(300);
        let end_1 = clear + config.turnaround + config.frame_time(200);
        // Radio 1's transmitter is off from `end_1` on, while radio 2's
        // frame is still on the air, and no other radio sends then.
        let at_1 = three
            .deliveries
            .iter()
            .find(|d| (d.1, d.2) == (2, 1))
            .expect("radio 2's frame reaches radio 1");
        assert!(at_1.0 > end_1);
        assert_eq!(at_1.4, Outcome::ReceiverKeyed);
    }

    #[test]
    fn one_keys_the_waiting_radios_take_turns() {
        let three = two_wait_at_the_clear(Contention::OneKeys, 1);
        let config = three.channel.config();
        let senders: Vec<(usize, u8)> = three
            .deliveries
            .iter()
            .step_by(2)
            .map(|d| (d.1, d.3))
            .collect();
        assert!(
            senders == [(0, 0), (1, 1), (2, 2), (1, 11)]
                || senders == [(0, 0), (2, 2), (1, 1), (1, 11)],
            "{senders:?}"
        );
        // One frame after the other, each a turnaround and its air time
        // after the one before, heard intact by both other radios.
        let mut end = Instant::ZERO;
        for pair in three.deliveries.chunks(2) {
            let octets = match pair[0].3 {
                0 => 300,
                1 => 200,
                2 => 500,
                _ => 100,
            };
            end = end + config.turnaround + config.frame_time(octets);
            for d in pair {
                assert_eq!((d.0, d.1, d.4), (end, pair[0].1, Outcome::Intact));
            }
        }
        assert_eq!(three.keyings.len(), 4);
    }

    #[test]
    fn one_keys_draws_the_waiting_radio_uniformly() {
        let radio_1_first = (0..200)
            .filter(|&seed| two_wait_at_the_clear(Contention::OneKeys, seed).deliveries[2].1 == 1)
            .count();
        assert!((70..=130).contains(&radio_1_first), "{radio_1_first}");
    }
}
