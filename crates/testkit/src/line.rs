//! A full-duplex serial line in virtual time, as between two HDLC
//! stations: each frame occupies its side for its octets plus 4 (a flag
//! and the 16-bit FCS, bit stuffing ignored) at the line's bit rate, then
//! travels through an [`Impaired`] channel (the propagation delay and any
//! loss).

use core::time::Duration;

use linklab_core::{Instant, Stream, Streams};

use crate::impair::{Impaired, Impairment};

/// Octets an HDLC frame adds to its address, control and information
/// fields on the line: one closing flag and a 16-bit FCS (ISO/IEC 13239
/// 4.1), plus one opening flag.
const FRAMING_OCTETS: u64 = 4;

/// Two directions of a point-to-point line; `from[i]` carries what side
/// `i` sends, in order.
#[derive(Debug)]
pub struct Line {
    bit_rate: u64,
    free: [Instant; 2],
    /// Each direction's channel, for tests that impair one more.
    pub from: [Impaired<Vec<u8>>; 2],
}

impl Line {
    /// A line of `bit_rate` bit/s, `propagation` long, that loses a
    /// frame with probability `loss` (each direction its own seeded draw).
    pub fn new(bit_rate: u64, propagation: Duration, loss: f64, seed: u64) -> Line {
        let streams = Streams::new(seed);
        let impairment = Impairment {
            delay: propagation,
            loss,
            ..Impairment::default()
        };
        Line {
            bit_rate: bit_rate.max(1),
            free: [Instant::ZERO; 2],
            from: [0, 1].map(|i| Impaired::bytes(impairment, streams.stream_index(i).next_u64())),
        }
    }

    /// `side` sends a frame's `octets` at `now`, after what it sent before.
    pub fn send(&mut self, side: usize, now: Instant, octets: Vec<u8>) {
        let bits = (octets.len() as u64 + FRAMING_OCTETS) * 8;
        let start = self.free[side].max(now);
        let end = start + Duration::from_micros(bits * 1_000_000 / self.bit_rate);
        self.free[side] = end;
        self.from[side].send(end, octets);
    }

    /// When the next frame arrives at either end.
    pub fn next_arrival(&self) -> Option<Instant> {
        self.from.iter().filter_map(Impaired::next_arrival).min()
    }

    /// The next frame from `side` that has arrived by `now`.
    pub fn recv(&mut self, side: usize, now: Instant) -> Option<Vec<u8>> {
        self.from[side].recv(now)
    }
}

/// `len` seeded random octets.
pub fn random_octets(rng: &mut Stream, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_queue_behind_each_other_and_arrive_after_the_delay() {
        // 9600 bit/s: 8 octets + 4 take 10 ms.
        let mut line = Line::new(9600, Duration::from_millis(5), 0.0, 1);
        line.send(0, Instant::ZERO, vec![0; 8]);
        line.send(0, Instant::ZERO, vec![1; 8]);
        assert_eq!(line.next_arrival(), Some(Instant::from_micros(15_000)));
        assert_eq!(line.recv(0, Instant::from_micros(14_999)), None);
        assert_eq!(line.recv(0, Instant::from_micros(15_000)), Some(vec![0; 8]));
        assert_eq!(line.next_arrival(), Some(Instant::from_micros(25_000)));
        assert_eq!(line.recv(1, Instant::from_micros(30_000)), None);
    }
}
