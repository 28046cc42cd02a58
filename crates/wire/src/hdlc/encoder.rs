//! Frame bodies to line bits: FCS, zero-bit insertion, flags, aborts, NRZI
//! (ISO/IEC 13239 clause 4; AX.25 v2.2 sections 3.1, 3.6, 3.7, 3.10).

use super::{BitStream, LineCode, NrziEncoder, ABORT_ONES, FLAG};
use crate::fcs::Fcs16;

/// Zero-bit insertion an octet at a time: `STUFF[run][octet]` describes
/// sending `octet` (LSB first) after `run` contiguous 1s. Bits 0..=9 hold
/// the stuffed bits, bits 16..=19 their number (8 to 10: at most two zeros
/// go into one octet), bits 24..=26 the run of 1s after it (0 to 4). Rows
/// 5 to 7 repeat row 4 so that a 3-bit index is always in range; the
/// encoder never reaches them.
static STUFF: [[u32; 256]; 8] = build_stuff_table();

const fn build_stuff_table() -> [[u32; 256]; 8] {
    let mut table = [[0u32; 256]; 8];
    let mut row = 0;
    while row < 8 {
        let mut octet = 0;
        while octet < 256 {
            let mut run = if row > 4 { 4 } else { row as u32 };
            let mut bits = 0u32;
            let mut count = 0u32;
            let mut i = 0;
            while i < 8 {
                if (octet >> i) & 1 != 0 {
                    bits |= 1 << count;
                    count += 1;
                    run += 1;
                    if run == 5 {
                        // AX.25 v2.2 section 3.6: a 0 after five 1s.
                        count += 1;
                        run = 0;
                    }
                } else {
                    count += 1;
                    run = 0;
                }
                i += 1;
            }
            table[row][octet] = bits | (count << 16) | (run << 24);
            octet += 1;
        }
        row += 1;
    }
    table
}

/// Line bits one frame adds after a flag: `body` and its FCS-16 after
/// zero-bit insertion, and the closing flag (AX.25 v2.2 sections 3.1,
/// 3.6, 3.7): what [`Encoder::frame`] adds after a flag, counted without
/// producing the bits. Airtime models call it for every simulated frame.
///
/// ```
/// use linklab_wire::hdlc::{frame_bits, Encoder, LineCode};
/// let body = b"\xff\xff any frame body";
/// let mut encoder = Encoder::new(LineCode::Nrz);
/// encoder.flags(1);
/// encoder.frame(body);
/// assert_eq!(frame_bits(body), encoder.bit_len() as u64 - 8);
/// ```
pub fn frame_bits(body: &[u8]) -> u64 {
    let mut fcs = Fcs16::new();
    fcs.update(body);
    let (bits, run) = stuffed_bits(body, 0);
    let (fcs_bits, _) = stuffed_bits(&fcs.finish().to_le_bytes(), run);
    bits + fcs_bits + u64::from(FLAG_BITS)
}

/// Bits in one flag.
const FLAG_BITS: u32 = 8;

/// The run of contiguous 1s after sending `octet` after `run` of them.
/// The run after an octet holding a 0 does not depend on the run before
/// it, so the next table look-up need not wait for this one; only 0xFF
/// carries the run on: (run + 8) mod 5.
#[inline]
fn run_after(run: u32, octet: u8) -> u32 {
    if octet == 0xFF {
        let carried = run + 3;
        if carried >= 5 {
            carried - 5
        } else {
            carried
        }
    } else {
        STUFF[0][usize::from(octet)] >> 24
    }
}

/// The number of line bits `octets` take after zero-bit insertion,
/// starting after `run` contiguous 1s, and the run after them: the count
/// [`Encoder::stuff`] makes, from the same table.
///
/// Eight octets at a time where no 0 goes in: when the 64 bits (sent LSB
/// first) hold no five contiguous 1s, and the 1s they start with do not
/// make five with the run carried in, they are sent as they are and the
/// run after them is their last 1s. Elsewhere an octet at a time.
fn stuffed_bits(octets: &[u8], mut run: u32) -> (u64, u32) {
    let mut bits = 0u64;
    let mut chunks = octets.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word);
        let fives = x & (x >> 1) & (x >> 2) & (x >> 3) & (x >> 4);
        if fives == 0 && run + x.trailing_ones() < 5 {
            bits += 64;
            run = x.leading_ones();
        } else {
            (bits, run) = stuffed_octets(chunk, bits, run);
        }
    }
    stuffed_octets(chunks.remainder(), bits, run)
}

/// [`stuffed_bits`] an octet at a time, adding to `bits`.
fn stuffed_octets(octets: &[u8], mut bits: u64, mut run: u32) -> (u64, u32) {
    for &octet in octets {
        let entry = STUFF[(run & 7) as usize][usize::from(octet)];
        bits += u64::from((entry >> 16) & 0xF);
        run = run_after(run, octet);
    }
    (bits, run)
}

/// A sans-IO HDLC transmitter (ISO/IEC 13239 clause 4; AX.25 v2.2
/// section 3): call [`flags`](Self::flags), [`frame`](Self::frame) and
/// [`abort_frame`](Self::abort_frame) in sending order, then take the line
/// bits with [`take_octets`](Self::take_octets) as they are produced or
/// with [`finish`](Self::finish) at the end.
///
/// Frames sent back to back share one flag (AX.25 v2.2 section 3.1): a
/// frame opens with a flag only if the last thing sent was not one.
///
/// ```
/// use linklab_wire::hdlc::{decode_all, DeframerConfig, Encoder, LineCode};
/// let mut encoder = Encoder::new(LineCode::Nrzi);
/// encoder.flags(4); // preamble
/// encoder.frame(b"first frame");
/// encoder.frame(b"second frame");
/// let bits = encoder.finish();
/// let (frames, stats) = decode_all(&bits, DeframerConfig::new(LineCode::Nrzi));
/// assert_eq!(frames, vec![b"first frame".to_vec(), b"second frame".to_vec()]);
/// assert_eq!(stats.frames_ok, 2);
/// ```
#[derive(Debug, Clone)]
pub struct Encoder {
    line_code: LineCode,
    nrzi: NrziEncoder,
    /// Complete line octets.
    out: Vec<u8>,
    /// Pending bits, LSB first; fewer than 32 between calls.
    acc: u64,
    acc_len: u32,
    after_flag: bool,
}

impl Encoder {
    /// An encoder with nothing sent yet.
    pub fn new(line_code: LineCode) -> Self {
        Encoder {
            line_code,
            nrzi: NrziEncoder::new(),
            out: Vec::new(),
            acc: 0,
            acc_len: 0,
            after_flag: false,
        }
    }

    /// Sends `count` flags: a preamble, or inter-frame time fill
    /// (AX.25 v2.2 sections 3.1 and 3.11).
    pub fn flags(&mut self, count: usize) {
        for _ in 0..count {
            self.put(u64::from(FLAG), 8);
        }
        if count > 0 {
            self.after_flag = true;
        }
    }

    /// Sends one frame: opening flag (unless shared), `body` (address
    /// through information field) and its FCS with zero-bit insertion, and
    /// the closing flag (ISO/IEC 13239 clause 4; AX.25 v2.2 sections 3.6
    /// and 3.7).
    pub fn frame(&mut self, body: &[u8]) {
        if !self.after_flag {
            self.put(u64::from(FLAG), 8);
        }
        let mut fcs = Fcs16::new();
        fcs.update(body);
        // Stuffed length is at most 10/8 of the octets, plus flag.
        self.out.reserve(body.len() + body.len() / 4 + 8);
        let run = self.stuff(body, 0);
        self.stuff(&fcs.finish().to_le_bytes(), run);
        self.put(u64::from(FLAG), 8);
        self.after_flag = true;
    }

    /// Sends the start of a frame, `partial` with zero-bit insertion after
    /// the opening flag (unless shared), and aborts it with fifteen
    /// contiguous 1s (AX.25 v2.2 section 3.10).
    pub fn abort_frame(&mut self, partial: &[u8]) {
        if !self.after_flag {
            self.put(u64::from(FLAG), 8);
        }
        self.stuff(partial, 0);
        self.put((1 << ABORT_ONES) - 1, ABORT_ONES);
        self.after_flag = false;
    }

    /// The number of line bits sent so far.
    pub fn bit_len(&self) -> usize {
        self.out
            .len()
            .saturating_mul(8)
            .saturating_add(self.acc_len as usize)
    }

    /// Takes the complete line octets produced so far; up to seven bits
    /// stay behind until more is sent or [`finish`](Self::finish).
    pub fn take_octets(&mut self) -> Vec<u8> {
        while self.acc_len >= 8 {
            let octet = self.acc as u8;
            self.emit(octet);
            self.acc >>= 8;
            self.acc_len -= 8;
        }
        std::mem::take(&mut self.out)
    }

    /// Everything not yet taken, as a bit stream; the last octet is padded
    /// with zero bits past [`BitStream::bit_len`].
    pub fn finish(mut self) -> BitStream {
        let bit_len = self.bit_len();
        let mut octets = self.take_octets();
        if self.acc_len > 0 {
            let octet = self.acc as u8;
            self.emit(octet);
            octets.append(&mut self.out);
        }
        BitStream::from_parts(octets, bit_len)
    }

    /// Zero-bit insertion of `octets` after `run` contiguous 1s; returns
    /// the run of 1s at the end.
    #[inline]
    fn stuff(&mut self, octets: &[u8], mut run: u32) -> u32 {
        let mut acc = self.acc;
        let mut acc_len = self.acc_len;
        let mut nrzi = self.nrzi;
        let coded = self.line_code == LineCode::Nrzi;
        for &octet in octets {
            let entry = STUFF[(run & 7) as usize][usize::from(octet)];
            run = run_after(run, octet);
            acc |= u64::from(entry & 0x3FF) << acc_len;
            acc_len += (entry >> 16) & 0xF;
            if acc_len >= 32 {
                let mut word = (acc as u32).to_le_bytes();
                if coded {
                    nrzi.encode_in_place(&mut word);
                }
                self.out.extend_from_slice(&word);
                acc >>= 32;
                acc_len -= 32;
            }
        }
        self.acc = acc;
        self.acc_len = acc_len;
        self.nrzi = nrzi;
        run
    }

    /// Appends `count` (at most 32) unstuffed bits.
    #[inline]
    fn put(&mut self, bits: u64, count: u32) {
        self.acc |= bits << self.acc_len;
        self.acc_len += count;
        if self.acc_len >= 32 {
            self.emit_word(self.acc as u32);
            self.acc >>= 32;
            self.acc_len -= 32;
        }
    }

    #[inline]
    fn emit_word(&mut self, word: u32) {
        let mut octets = word.to_le_bytes();
        if self.line_code == LineCode::Nrzi {
            self.nrzi.encode_in_place(&mut octets);
        }
        self.out.extend_from_slice(&octets);
    }

    #[inline]
    fn emit(&mut self, octet: u8) {
        let octet = match self.line_code {
            LineCode::Nrz => octet,
            LineCode::Nrzi => self.nrzi.encode_octet(octet),
        };
        self.out.push(octet);
    }
}

/// Encodes `frames` as one transmission: `preamble` flags, then the frames
/// back to back sharing flags (AX.25 v2.2 sections 3.1 and 3.11).
pub fn encode_frames<'a, I>(frames: I, preamble: usize, line_code: LineCode) -> BitStream
where
    I: IntoIterator<Item = &'a [u8]>,
{
    let mut encoder = Encoder::new(line_code);
    encoder.flags(preamble);
    for frame in frames {
        encoder.frame(frame);
    }
    encoder.finish()
}
