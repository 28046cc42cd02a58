//! A bit-at-a-time HDLC sender and receiver, written as plainly as the
//! specification reads (ISO/IEC 13239 clause 4; AX.25 v2.2 sections 3.1,
//! 3.6 to 3.10), with one `bool` per bit and a bitwise CRC.
//!
//! It is not meant for use: it is the test oracle that the table-driven
//! [`Encoder`](super::Encoder) and [`Deframer`](super::Deframer) must agree
//! with bit for bit and count for count, and the baseline of the `hdlc`
//! benchmark.

use super::{BitStream, DeframerConfig, DeframerStats, LineCode};

/// FCS-16 one bit at a time: x^16 + x^12 + x^5 + 1, reflected, preset to
/// all ones, complemented (ITU-T X.25 clause 2.2.7).
pub fn fcs16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0xFFFF;
    for &octet in data {
        for i in 0..8 {
            let bit = (octet >> i) & 1 != 0;
            let feedback = (crc & 1 != 0) != bit;
            crc >>= 1;
            if feedback {
                crc ^= 0x8408;
            }
        }
    }
    !crc
}

/// The flag's bits in sending order (AX.25 v2.2 section 3.1).
const FLAG_BITS: [bool; 8] = [false, true, true, true, true, true, true, false];

/// Sends `preamble` flags and then `frames` back to back, each with its
/// FCS and zero-bit insertion, sharing flags; like
/// [`encode_frames`](super::encode_frames).
pub fn encode(frames: &[&[u8]], preamble: usize, line_code: LineCode) -> BitStream {
    let mut bits: Vec<bool> = Vec::new();
    for _ in 0..preamble {
        bits.extend_from_slice(&FLAG_BITS);
    }
    for frame in frames {
        if bits.is_empty() {
            bits.extend_from_slice(&FLAG_BITS);
        }
        let mut octets = frame.to_vec();
        let fcs = fcs16(frame);
        octets.push((fcs & 0xFF) as u8);
        octets.push((fcs >> 8) as u8);
        let mut ones = 0;
        for octet in octets {
            for i in 0..8 {
                let bit = (octet >> i) & 1 != 0;
                bits.push(bit);
                if bit {
                    ones += 1;
                    if ones == 5 {
                        bits.push(false);
                        ones = 0;
                    }
                } else {
                    ones = 0;
                }
            }
        }
        bits.extend_from_slice(&FLAG_BITS);
    }
    if line_code == LineCode::Nrzi {
        let mut level = false;
        for bit in bits.iter_mut() {
            if !*bit {
                level = !level;
            }
            *bit = level;
        }
    }
    bits.into_iter().collect()
}

/// A receiver that looks at one bit at a time; like
/// [`Deframer`](super::Deframer) and counting the same way.
#[derive(Debug, Clone)]
pub struct Deframer {
    config: DeframerConfig,
    line_level: bool,
    ones: u32,
    last_zero_was_data: bool,
    in_frame: bool,
    bits: Vec<bool>,
    frames: Vec<Vec<u8>>,
    stats: DeframerStats,
}

impl Deframer {
    /// A receiver that takes the line to have been idle (all 1s) before.
    pub fn new(config: DeframerConfig) -> Self {
        Deframer {
            config,
            line_level: false,
            ones: 7,
            last_zero_was_data: false,
            in_frame: false,
            bits: Vec::new(),
            frames: Vec::new(),
            stats: DeframerStats::default(),
        }
    }

    /// Receives one line bit.
    pub fn push_bit(&mut self, line_bit: bool) {
        let bit = match self.config.line_code {
            LineCode::Nrz => line_bit,
            LineCode::Nrzi => {
                let same = line_bit == self.line_level;
                self.line_level = line_bit;
                same
            }
        };
        if bit {
            self.ones = self.ones.saturating_add(1);
            if self.ones <= 5 {
                self.take(true);
            } else if self.ones == 7 {
                self.abort();
            }
        } else {
            if self.ones <= 4 {
                self.take(false);
                self.last_zero_was_data = true;
            } else if self.ones == 6 {
                self.flag();
            } else {
                // Stuffed 0 after five 1s, or the end of an idle run.
                self.last_zero_was_data = false;
            }
            self.ones = 0;
        }
    }

    /// Frames received so far, without FCS.
    pub fn take_frames(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.frames)
    }

    /// The counts so far.
    pub fn stats(&self) -> DeframerStats {
        self.stats
    }

    fn take(&mut self, bit: bool) {
        if !self.in_frame {
            return;
        }
        self.bits.push(bit);
        if self.bits.len() > self.config.max_len.saturating_mul(8).saturating_add(6) {
            self.stats.too_long += 1;
            self.in_frame = false;
        }
    }

    /// The bits before the 0 that came before the closing run of 1s.
    fn content_len(&self) -> usize {
        let closing = 5 + usize::from(self.last_zero_was_data);
        self.bits.len().saturating_sub(closing)
    }

    fn abort(&mut self) {
        if self.in_frame {
            let len = self.content_len();
            if len > self.config.max_len.saturating_mul(8) {
                self.stats.too_long += 1;
            } else if len > 0 {
                self.stats.aborts += 1;
            }
        }
        self.in_frame = false;
    }

    fn flag(&mut self) {
        if self.in_frame {
            self.close();
        }
        self.in_frame = true;
        self.bits.clear();
        self.last_zero_was_data = false;
    }

    fn close(&mut self) {
        let len = self.content_len();
        if len == 0 {
            return;
        }
        if len > self.config.max_len.saturating_mul(8) {
            self.stats.too_long += 1;
            return;
        }
        if !len.is_multiple_of(8) {
            self.stats.not_octet_aligned += 1;
            return;
        }
        let mut octets = vec![0u8; len / 8];
        for (i, &bit) in self.bits[..len].iter().enumerate() {
            if bit {
                octets[i / 8] |= 1 << (i % 8);
            }
        }
        if octets.len() < self.config.min_len.max(2) {
            self.stats.too_short += 1;
            return;
        }
        let body_len = octets.len() - 2;
        let sent = u16::from(octets[body_len]) | (u16::from(octets[body_len + 1]) << 8);
        if fcs16(&octets[..body_len]) == sent {
            self.stats.frames_ok += 1;
            octets.truncate(body_len);
            self.frames.push(octets);
        } else {
            self.stats.fcs_errors += 1;
        }
    }
}

/// Receives a whole bit stream with a fresh reference [`Deframer`].
pub fn decode_all(line: &BitStream, config: DeframerConfig) -> (Vec<Vec<u8>>, DeframerStats) {
    let mut deframer = Deframer::new(config);
    for bit in line.iter() {
        deframer.push_bit(bit);
    }
    (deframer.take_frames(), deframer.stats())
}
