//! The full-duplex point-to-point line of Bux et al. (1982): two stations,
//! one channel per direction with transmission rate v, a constant one-way
//! delay t_p = t_proc + t_prop, and bit errors (independent, p_bit, or
//! Gilbert-Elliott), a FIFO transmission queue per direction.
//!
//! A frame of n line bits ([`hdlc_bits`]: stuffed body and FCS plus one
//! flag; idle time is flag fill, so frames need no extra opening flag)
//! starts when the previous one in its direction ends, finishes n/v later,
//! and is delivered t_p after that: delivery = start + n/v + t_p.

use core::time::Duration;
use std::collections::VecDeque;

use linklab_core::{Instant, Streams};
use linklab_sim::TimeWeighted;

use crate::airtime::{bits_duration, hdlc_bits};
use crate::errors::{ErrorModel, ErrorProcess};
use crate::medium::{Delivery, Medium, MediumEvent, Outcome, StationId};

/// Parameters of a line (the same in both directions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineConfig {
    /// Transmission rate v, bit/s.
    pub bit_rate: u32,
    /// One-way processing plus propagation delay t_p.
    pub delay: Duration,
    /// Bit errors, judged per direction.
    pub errors: ErrorModel,
}

impl LineConfig {
    /// Bux et al. (1982), terrestrial link: v = 4.8 kbit/s, t_p = 50 ms.
    pub fn bux_terrestrial_4800() -> Self {
        LineConfig {
            bit_rate: 4_800,
            delay: Duration::from_millis(50),
            errors: ErrorModel::Perfect,
        }
    }

    /// Bux et al. (1982), terrestrial link: v = 48 kbit/s, t_p = 50 ms.
    pub fn bux_terrestrial_48k() -> Self {
        LineConfig {
            bit_rate: 48_000,
            ..Self::bux_terrestrial_4800()
        }
    }

    /// Bux et al. (1982), satellite link: v = 48 kbit/s, t_p = 350 ms.
    pub fn bux_satellite_48k() -> Self {
        LineConfig {
            bit_rate: 48_000,
            delay: Duration::from_millis(350),
            errors: ErrorModel::Perfect,
        }
    }

    /// The same line with bit errors `errors` (e.g. Bux's p_bit = 10⁻⁵:
    /// `ErrorModel::Independent { ber: 1e-5 }`).
    pub fn with_errors(self, errors: ErrorModel) -> Self {
        LineConfig { errors, ..self }
    }
}

/// Counters of one direction of a line.
#[derive(Debug, Clone, PartialEq)]
pub struct DirectionStats {
    /// Frames sent.
    pub frames_sent: u64,
    /// Frames delivered with bit errors.
    pub lost_to_errors: u64,
    /// 1 while the transmitter is sending: its time average is the
    /// direction's utilisation.
    pub busy: TimeWeighted,
}

#[derive(Debug)]
struct Direction {
    queue: VecDeque<Vec<u8>>,
    /// The frame being sent, its bit count, start and end.
    sending: Option<(Vec<u8>, u64, Instant, Instant)>,
    in_flight: VecDeque<Delivery>,
    errors: ErrorProcess,
    stats: DirectionStats,
}

/// A full-duplex point-to-point line between stations 0 and 1.
#[derive(Debug)]
pub struct PointToPointLine {
    config: LineConfig,
    /// Index = sending station.
    dirs: [Direction; 2],
    deliveries: VecDeque<Delivery>,
    events: VecDeque<MediumEvent>,
}

impl PointToPointLine {
    /// A line; the direction from station i draws its errors from stream
    /// `"{name}/{i}/errors"` of `streams`.
    pub fn new(config: LineConfig, streams: &Streams, name: &str) -> Self {
        let dir = |i: usize| Direction {
            queue: VecDeque::new(),
            sending: None,
            in_flight: VecDeque::new(),
            errors: ErrorProcess::new(config.errors, streams.stream(&format!("{name}/{i}/errors"))),
            stats: DirectionStats {
                frames_sent: 0,
                lost_to_errors: 0,
                busy: TimeWeighted::new(Instant::ZERO, 0.0),
            },
        };
        PointToPointLine {
            config,
            dirs: [dir(0), dir(1)],
            deliveries: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// The line's parameters.
    pub fn config(&self) -> &LineConfig {
        &self.config
    }

    /// Statistics of the direction from `station`.
    pub fn stats(&self, station: StationId) -> Option<&DirectionStats> {
        self.dirs.get(station.0).map(|d| &d.stats)
    }

    /// Frames waiting in `station`'s transmit queue, not counting one being
    /// sent.
    pub fn queued(&self, station: StationId) -> usize {
        self.dirs.get(station.0).map_or(0, |d| d.queue.len())
    }

    fn start_next(&mut self, i: usize, now: Instant) {
        let rate = self.config.bit_rate;
        let d = &mut self.dirs[i];
        if d.sending.is_some() {
            return;
        }
        match d.queue.pop_front() {
            Some(body) => {
                let bits = hdlc_bits(&body);
                let end = now + bits_duration(bits, rate);
                d.sending = Some((body, bits, now, end));
                d.stats.busy.set(now, 1.0);
            }
            None => d.stats.busy.set(now, 0.0),
        }
    }

    fn finish(&mut self, i: usize, now: Instant) {
        let rate = self.config.bit_rate;
        let delay = self.config.delay;
        let d = &mut self.dirs[i];
        let Some((body, bits, start, end)) = d.sending.take() else {
            return;
        };
        d.stats.frames_sent += 1;
        let outcome = if d.errors.frame_survives(start, end, bits, rate) {
            Outcome::Intact
        } else {
            d.stats.lost_to_errors += 1;
            Outcome::BitErrors
        };
        self.events.push_back(MediumEvent::FrameSent {
            station: StationId(i),
            octets: body.len(),
            at: now,
        });
        d.in_flight.push_back(Delivery {
            at: end + delay,
            from: StationId(i),
            to: StationId(1 - i),
            frame: body,
            outcome,
        });
        self.start_next(i, now);
    }

    fn next_due(&self) -> Option<(Instant, usize, bool)> {
        let mut best: Option<(Instant, usize, bool)> = None;
        for (i, d) in self.dirs.iter().enumerate() {
            // Arrivals before sends at equal times: (t, dir, false) < (t, dir, true).
            let cands = [
                d.in_flight.front().map(|x| (x.at, i, false)),
                d.sending.as_ref().map(|s| (s.3, i, true)),
            ];
            for c in cands.into_iter().flatten() {
                if best.is_none_or(|b| c < b) {
                    best = Some(c);
                }
            }
        }
        best
    }
}

impl Medium for PointToPointLine {
    fn stations(&self) -> usize {
        2
    }

    fn transmit(&mut self, now: Instant, from: StationId, frame: Vec<u8>) {
        let Some(d) = self.dirs.get_mut(from.0) else {
            return;
        };
        d.queue.push_back(frame);
        self.start_next(from.0, now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        while let Some((at, i, is_send)) = self.next_due() {
            if at > now {
                break;
            }
            if is_send {
                self.finish(i, at);
            } else if let Some(delivery) = self.dirs[i].in_flight.pop_front() {
                self.deliveries.push_back(delivery);
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.next_due().map(|(at, _, _)| at)
    }

    fn poll_delivery(&mut self) -> Option<Delivery> {
        self.deliveries.pop_front()
    }

    fn poll_event(&mut self) -> Option<MediumEvent> {
        self.events.pop_front()
    }
}
