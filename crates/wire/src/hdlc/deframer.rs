//! Line bits to frames: flag hunt, zero-bit deletion, abort and idle
//! detection, FCS check (ISO/IEC 13239 clause 4; AX.25 v2.2 sections 3.1,
//! 3.6, 3.7, 3.9, 3.10).
//!
//! The receiver works at three speeds, all implementing the bit rule of
//! [`step`] and agreeing bit for bit:
//!
//! - the word path ([`Deframer::words`]) takes 64 line bits at a time:
//!   inside a frame as long as they hold no run of six 1s (then every 0
//!   after five 1s is a stuffed one and every other bit is data, which a
//!   few shifts and masks find for the whole word), and outside a frame
//!   as long as they hold no flag. It decodes NRZI a word at a time and
//!   runs the FCS over the frame as it fills it, eight octets at a time;
//! - the octet path ([`Deframer::scan`]) takes the octets from there up to
//!   the next one holding a flag or the start of an abort, through the
//!   [`DESTUFF`] table;
//! - the bit rule ([`Deframer::bit`]) takes that octet one bit at a time.
//!
//! So a frame costs a word step per eight octets, plus a few octet steps
//! and eight bit steps around each flag.

use std::collections::VecDeque;

use super::{BitStream, LineCode, NrziDecoder, FLAG};
use crate::fcs::{self, Fcs16};

/// What one received bit means, given the run of 1s before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// A data bit (a 0, or one of the first five 1s of a run).
    Data(bool),
    /// A 0 after five 1s: inserted by the sender, deleted here
    /// (AX.25 v2.2 section 3.6).
    Stuffed,
    /// The sixth 1 of a run: part of a flag or an abort, not data.
    Sixth,
    /// A 0 after six 1s: a flag, 01111110 (AX.25 v2.2 section 3.1).
    Flag,
    /// The seventh 1 of a run: an abort, or the line going idle
    /// (ISO/IEC 13239 clause 4; AX.25 v2.2 section 3.10).
    Abort,
    /// A bit inside or ending a run of seven or more 1s.
    Idle,
}

/// The receiver's bit rule. `ones` is the run of 1s before `bit`,
/// saturated at 7; returns the meaning and the new run.
const fn step(ones: u8, bit: bool) -> (Step, u8) {
    if bit {
        match ones {
            0..=4 => (Step::Data(true), ones + 1),
            5 => (Step::Sixth, 6),
            6 => (Step::Abort, 7),
            _ => (Step::Idle, 7),
        }
    } else {
        let meaning = match ones {
            0..=4 => Step::Data(false),
            5 => Step::Stuffed,
            6 => Step::Flag,
            _ => Step::Idle,
        };
        (meaning, 0)
    }
}

// Fields of a `DESTUFF` entry.
const COUNT_SHIFT: u32 = 8;
const ONES_SHIFT: u32 = 12;
const HAS_ZERO: u32 = 1 << 15;
const ZERO_KEPT: u32 = 1 << 16;
const EVENT: u32 = 1 << 17;

/// Zero-bit deletion an octet at a time: `DESTUFF[ones][octet]` is the
/// effect of receiving `octet` (LSB first) after a run of `ones` 1s.
/// Bits 0..=7 hold the data bits, 8..=11 their number, 12..=14 the new
/// run, bit 15 says the octet has a 0 and bit 16 whether its last 0 was
/// data. Bit 17 marks octets holding a flag or the start of an abort;
/// those go through the bit rule one bit at a time.
static DESTUFF: [[u32; 256]; 8] = build_destuff_table();

/// `ONES_AFTER[octet]`: the run of 1s after receiving `octet`, saturated
/// at 7. For an octet holding a 0 it is the number of 1s above its last 0,
/// whatever came before; 0xFF leaves 7 (it is an event from any shorter
/// run).
static ONES_AFTER: [u8; 256] = build_ones_after();

const fn build_ones_after() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut octet = 0;
    while octet < 256 {
        let leading = (octet as u8).leading_ones() as u8;
        table[octet] = if leading > 7 { 7 } else { leading };
        octet += 1;
    }
    table
}

const fn build_destuff_table() -> [[u32; 256]; 8] {
    let mut table = [[0u32; 256]; 8];
    let mut row = 0;
    while row < 8 {
        let mut octet = 0;
        while octet < 256 {
            let mut ones = row as u8;
            let mut data = 0u32;
            let mut count = 0u32;
            let mut zeros = 0u32;
            let mut event = false;
            let mut i = 0;
            while i < 8 {
                let bit = (octet >> i) & 1 != 0;
                let (meaning, next) = step(ones, bit);
                ones = next;
                if !bit {
                    zeros = HAS_ZERO;
                }
                match meaning {
                    Step::Data(value) => {
                        if value {
                            data |= 1 << count;
                        } else {
                            zeros = HAS_ZERO | ZERO_KEPT;
                        }
                        count += 1;
                    }
                    Step::Flag | Step::Abort => event = true,
                    Step::Stuffed | Step::Sixth | Step::Idle => {}
                }
                i += 1;
            }
            table[row][octet] = if event {
                EVENT
            } else {
                data | (count << COUNT_SHIFT) | ((ones as u32) << ONES_SHIFT) | zeros
            };
            octet += 1;
        }
        row += 1;
    }
    table
}

/// Eight flags back to back, as a word of data bits (AX.25 v2.2
/// section 3.1): a preamble or an idle line filled with flags.
const FLAGS_WORD: u64 = u64::from_le_bytes([FLAG; 8]);

/// Deletes from `bits` the bit at the lowest set bit of `marks`, moving
/// the bits above it down one place; returns the bits and the other marks,
/// moved the same way. Returns both unchanged when `marks` is 0.
#[inline]
const fn delete_lowest(bits: u64, marks: u64) -> (u64, u64) {
    let lowest = marks & marks.wrapping_neg();
    let below = lowest.wrapping_sub(1);
    let bits = (bits & below) | ((bits >> 1) & !below);
    (bits, (marks ^ lowest) >> 1)
}

/// Data bits of a frame not yet moved into its octets: `len` of them,
/// fewer than 64, LSB first in `bits` (whose higher bits are 0).
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    bits: u64,
    len: u32,
}

impl Pending {
    /// Appends the `count` low bits of `bits` (at most 64; the bits above
    /// them 0); returns the first 64 bits once they are complete.
    #[inline]
    fn push(&mut self, bits: u64, count: u32) -> Option<u64> {
        let word = self.bits | (bits << self.len);
        let filled = self.len + count;
        if filled < 64 {
            self.bits = word;
            self.len = filled;
            None
        } else {
            // The bits that did not fit (`>> 1 >>` as `len` may be 0).
            self.bits = bits >> 1 >> (63 - self.len);
            self.len = filled - 64;
            Some(word)
        }
    }

    /// Takes the first eight bits, if there are as many.
    fn take_octet(&mut self) -> Option<u8> {
        let octet = (self.len >= 8).then_some(self.bits as u8)?;
        self.bits >>= 8;
        self.len -= 8;
        Some(octet)
    }
}

/// Limits and line code of a [`Deframer`] (ISO/IEC 13239 clause 4;
/// AX.25 v2.2 section 3.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeframerConfig {
    /// How the line bits are coded.
    pub line_code: LineCode,
    /// The fewest octets between flags, FCS included, for a valid frame;
    /// values under 2 (the FCS alone) count as 2.
    pub min_len: usize,
    /// The most octets between flags, FCS included. Longer frames are
    /// counted and dropped as soon as they pass this length, which bounds
    /// the receiver's memory.
    pub max_len: usize,
}

impl DeframerConfig {
    /// Generic HDLC limits: at least 4 octets (FCS included), at most 4096.
    pub const fn new(line_code: LineCode) -> Self {
        DeframerConfig {
            line_code,
            min_len: 4,
            max_len: 4096,
        }
    }

    /// AX.25 limits: at least 17 octets (two address subfields, control
    /// field and FCS; AX.25 v2.2 section 3.9 gives the minimum as 136
    /// bits), at most 4096 octets.
    pub const fn ax25(line_code: LineCode) -> Self {
        DeframerConfig {
            line_code,
            min_len: 17,
            max_len: 4096,
        }
    }
}

impl Default for DeframerConfig {
    fn default() -> Self {
        Self::new(LineCode::Nrz)
    }
}

/// What a [`Deframer`] has found so far. A run of flags (or flags sharing
/// their 0) holds no frame and is not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeframerStats {
    /// Frames delivered: the right size and a correct FCS.
    pub frames_ok: u64,
    /// Frames dropped for a wrong FCS (AX.25 v2.2 section 4.4.6).
    pub fcs_errors: u64,
    /// Frames cut short by seven or more contiguous 1s (AX.25 v2.2
    /// section 3.10).
    pub aborts: u64,
    /// Octet-aligned frames shorter than `min_len` (AX.25 v2.2 section 3.9).
    pub too_short: u64,
    /// Frames longer than `max_len`.
    pub too_long: u64,
    /// Frames that are not a whole number of octets (AX.25 v2.2
    /// section 3.9).
    pub not_octet_aligned: u64,
}

/// A sans-IO HDLC receiver (ISO/IEC 13239 clause 4; AX.25 v2.2 section 3).
///
/// Feed it line bits, packed LSB-first, in chunks of any size: whole
/// octets with [`push`](Self::push) or [`push_with`](Self::push_with), or
/// a bit count with [`push_bits`](Self::push_bits) and
/// [`push_bits_with`](Self::push_bits_with). Flags are found at any bit
/// offset, and chunks need not end on frame or octet boundaries. Each
/// frame between two flags with a correct FCS comes out without its FCS:
/// handed to the callback of the `_with` methods (no copy), or queued for
/// [`poll_frame`](Self::poll_frame). Everything else is dropped and
/// counted in [`stats`](Self::stats).
///
/// The receiver starts as if the line had been idle (all 1s): the first
/// frame needs a whole flag before it.
///
/// ```
/// use linklab_wire::hdlc::{Deframer, DeframerConfig, Encoder, LineCode};
/// let mut encoder = Encoder::new(LineCode::Nrz);
/// encoder.frame(b"hello, world");
/// let bits = encoder.finish();
/// let mut deframer = Deframer::new(DeframerConfig::default());
/// for chunk in bits.octets().chunks(3) {
///     deframer.push(chunk);
/// }
/// assert_eq!(deframer.poll_frame(), Some(b"hello, world".to_vec()));
/// assert_eq!(deframer.stats().frames_ok, 1);
/// ```
#[derive(Debug, Clone)]
pub struct Deframer {
    config: DeframerConfig,
    min_len: usize,
    /// `8 * max_len`: the most data bits a frame may have.
    max_bits: usize,
    /// `max_bits + 6`: past this many data bits since the opening flag
    /// (six of which may yet turn out to be the closing flag's), a frame
    /// is surely too long.
    drop_bits: usize,
    nrzi: NrziDecoder,
    /// The run of 1s received, saturated at 7.
    ones: u8,
    /// Whether the last 0 received was a data bit.
    zero_kept: bool,
    /// Whether a flag opened a frame that is still being received.
    in_frame: bool,
    /// Whole octets of the frame being received, filled eight at a time
    /// (and octet by octet when the frame closes). A frame is dropped as
    /// soon as a word moved in takes it past `drop_bits`, so it never
    /// holds more than `max_len + 8` octets.
    buf: Vec<u8>,
    /// Further data bits.
    pending: Pending,
    /// The FCS register over `buf[..fcs_len]`, eight octets at a time,
    /// which the word path keeps up to date as it fills `buf` so that
    /// closing a frame needs no second pass over it. Whatever ends up in
    /// `buf` belongs to the frame if the frame passes the alignment check:
    /// at most six of the data bits received are the closing flag's, and
    /// `content_bits` rounds them away only when it is a multiple of eight.
    fcs: Fcs16,
    fcs_len: usize,
    stats: DeframerStats,
    queue: VecDeque<Vec<u8>>,
}

impl Deframer {
    /// A receiver with nothing received.
    pub fn new(config: DeframerConfig) -> Self {
        Deframer {
            config,
            min_len: config.min_len.max(2),
            max_bits: config.max_len.saturating_mul(8),
            drop_bits: config.max_len.saturating_mul(8).saturating_add(6),
            nrzi: NrziDecoder::new(),
            ones: 7,
            zero_kept: false,
            in_frame: false,
            buf: Vec::new(),
            pending: Pending::default(),
            fcs: Fcs16::new(),
            fcs_len: 0,
            stats: DeframerStats::default(),
            queue: VecDeque::new(),
        }
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &DeframerConfig {
        &self.config
    }

    /// The counts so far.
    pub fn stats(&self) -> &DeframerStats {
        &self.stats
    }

    /// Receives whole octets of line bits and queues the frames found for
    /// [`poll_frame`](Self::poll_frame).
    pub fn push(&mut self, line: &[u8]) {
        self.push_bits(line, line.len().saturating_mul(8));
    }

    /// Receives the first `bit_len` bits of `line` (capped at its length)
    /// and queues the frames found for [`poll_frame`](Self::poll_frame).
    pub fn push_bits(&mut self, line: &[u8], bit_len: usize) {
        let mut queue = std::mem::take(&mut self.queue);
        self.push_bits_with(line, bit_len, |frame| queue.push_back(frame.to_vec()));
        self.queue = queue;
    }

    /// Takes the oldest queued frame (without its FCS).
    pub fn poll_frame(&mut self) -> Option<Vec<u8>> {
        self.queue.pop_front()
    }

    /// Receives whole octets of line bits, handing each frame found
    /// (without its FCS) to `on_frame`.
    pub fn push_with<F: FnMut(&[u8])>(&mut self, line: &[u8], on_frame: F) {
        self.push_bits_with(line, line.len().saturating_mul(8), on_frame);
    }

    /// Receives the first `bit_len` bits of `line` (capped at its length),
    /// handing each frame found (without its FCS) to `on_frame`.
    pub fn push_bits_with<F: FnMut(&[u8])>(
        &mut self,
        line: &[u8],
        bit_len: usize,
        mut on_frame: F,
    ) {
        let whole = (bit_len / 8).min(line.len());
        let (octets, rest) = line.split_at(whole);
        self.octets(octets, &mut on_frame);
        let tail = bit_len.saturating_sub(whole * 8).min(8);
        if let Some(&last) = rest.first() {
            for i in 0..tail {
                let mut bit = (last >> i) & 1 != 0;
                if self.config.line_code == LineCode::Nrzi {
                    bit = self.nrzi.decode_bit(bit);
                }
                self.bit(bit, &mut on_frame);
            }
        }
        // A frame already past the limit is counted now, not at its end.
        if self.in_frame && self.frame_bits() > self.drop_bits {
            self.too_long();
        }
    }

    /// Whole octets: the word path while it applies, then the octet path
    /// up to the next octet holding a flag or an abort, which goes through
    /// the bit rule, or for at most eight octets; and so on.
    fn octets<F: FnMut(&[u8])>(&mut self, line: &[u8], on_frame: &mut F) {
        let mut rest = line;
        while !rest.is_empty() {
            rest = self.words(rest);
            // The word path stops at most one octet before an octet
            // holding a flag or an abort, or at the end of the line.
            let (used, event) = self.scan(rest.get(..8).unwrap_or(rest));
            rest = rest.get(used..).unwrap_or_default();
            if let Some(data) = event {
                for i in 0..8 {
                    self.bit((data >> i) & 1 != 0, on_frame);
                }
            }
        }
    }

    /// The word path: takes 64 line bits at a time (eight octets, read
    /// little-endian so that bit `i` is the `i`-th on the air) for as long
    /// as each word is
    ///
    /// - inside a frame, without a run of six 1s (flag, abort or idle): bit
    ///   by bit, a 1 is data and a 0 is data unless five 1s precede it, in
    ///   which case it is a stuffed 0 (AX.25 v2.2 section 3.6);
    /// - eight more flags right after a flag, with nothing received since:
    ///   they open and close only empty frames, which count for nothing;
    /// - outside a frame, without a flag: there nothing but a flag changes
    ///   more than the run of 1s (`zero_kept` matters only inside a frame,
    ///   and a flag resets it).
    ///
    /// Of the first word that is none of these, the octets before the one
    /// where the run of six 1s (or the flag) ends are taken the same way,
    /// and the word path stops. Returns the octets not taken.
    fn words<'a>(&mut self, line: &'a [u8]) -> &'a [u8] {
        let coded = self.config.line_code == LineCode::Nrzi;
        let in_frame = self.in_frame;
        let mut nrzi = self.nrzi;
        // The data bits before the word; only the run of 1s at the top
        // and the 0 under it matter.
        let mut previous = !(u64::MAX >> self.ones.min(7));
        let mut zero_kept = self.zero_kept;
        let mut pending = self.pending;
        let mut taken = 0;
        let (words, _) = line.as_chunks::<8>();
        for &octets in words {
            let mut next_nrzi = nrzi;
            let line_word = u64::from_le_bytes(octets);
            let data = if coded {
                next_nrzi.decode_word(line_word)
            } else {
                line_word
            };
            // Bit `i` of `before(k)` is the data bit `k` places before bit
            // `i`, reaching back into the previous word.
            let before = |k: u32| (data << k) | (previous >> (64 - k));
            let after_five = before(1) & before(2) & before(3) & before(4) & before(5);
            let after_flag =
                data == FLAGS_WORD && in_frame && pending.len == 0 && self.buf.is_empty();
            // The bits the word path leaves to the others.
            let stops = if !in_frame {
                // A flag: a 0 after exactly six 1s.
                !data & after_five & before(6) & !before(7)
            } else if after_flag {
                0
            } else {
                // A 1 after five 1s, or a 0 after six: flag, abort or idle.
                after_five & (data | before(6))
            };
            // The number of bits of `data` taken: up to the octet where
            // the first stop is.
            let len = match stops {
                0 => 64,
                _ => stops.trailing_zeros() & !7,
            };
            if len == 0 {
                break;
            }
            if in_frame && !after_flag {
                let taken_bits = u64::MAX >> (64 - len);
                let stuffed = !data & after_five & taken_bits;
                // Delete the stuffed 0s, lowest first: each one moves the
                // bits (and stuffed 0s) above it down one place. A word
                // mostly has zero to two, so two steps are taken
                // unconditionally (a step is a no-op when none is left),
                // which spares a hard-to-predict branch.
                let mut destuffed = data & taken_bits;
                let mut marks = stuffed;
                let mut count = len;
                for _ in 0..2 {
                    count -= u32::from(marks != 0);
                    (destuffed, marks) = delete_lowest(destuffed, marks);
                }
                while marks != 0 {
                    count -= 1;
                    (destuffed, marks) = delete_lowest(destuffed, marks);
                }
                // The bits taken hold a 0 (else they would hold six 1s);
                // the last one is stuffed if the highest stuffed bit is at
                // its place.
                let zeros = !data & taken_bits;
                zero_kept = stuffed.leading_zeros() != zeros.leading_zeros();
                if let Some(word) = pending.push(destuffed, count) {
                    self.buf.extend_from_slice(&word.to_le_bytes());
                    // The FCS runs one word behind, which is faster than
                    // running it over the word just completed.
                    let end = self.fcs_len + 8;
                    if end < self.buf.len() {
                        self.fcs
                            .update(self.buf.get(self.fcs_len..end).unwrap_or_default());
                        self.fcs_len = end;
                    }
                }
            }
            if len == 64 {
                nrzi = next_nrzi;
            } else if let Some(&last) = octets.get((len as usize / 8).saturating_sub(1)) {
                // Decoding the last octet taken leaves the decoder at the
                // level of its last bit, which is all it carries over.
                nrzi.decode_octet(last);
            }
            previous = data << (64 - len);
            taken += len as usize / 8;
            if len < 64 || self.buf.len().saturating_mul(8) > self.drop_bits {
                break;
            }
        }
        self.nrzi = nrzi;
        self.ones = previous.leading_ones().min(7) as u8;
        self.zero_kept = zero_kept;
        self.pending = pending;
        if in_frame && self.frame_bits() > self.drop_bits {
            self.too_long();
        }
        line.get(taken..).unwrap_or_default()
    }

    /// Runs the table over `line`, keeping the hot state in registers,
    /// until an octet holding a flag or an abort (returned NRZI-decoded,
    /// for the bit rule) or a frame passing the length limit. Returns the
    /// number of octets taken, that octet included.
    #[inline]
    fn scan(&mut self, line: &[u8]) -> (usize, Option<u8>) {
        let coded = self.config.line_code == LineCode::Nrzi;
        let in_frame = self.in_frame;
        let mut nrzi = self.nrzi;
        let mut ones = self.ones;
        let mut zero_kept = self.zero_kept;
        let mut pending = self.pending;
        let mut used = 0;
        let mut event = None;
        let mut overflow = false;
        for &octet in line {
            used += 1;
            let data = if coded {
                nrzi.decode_octet(octet)
            } else {
                octet
            };
            let entry = DESTUFF[usize::from(ones & 7)][usize::from(data)];
            if entry & EVENT != 0 {
                event = Some(data);
                break;
            }
            // Independent of the run before, so no chain of look-ups.
            ones = ONES_AFTER[usize::from(data)];
            if entry & HAS_ZERO != 0 {
                zero_kept = entry & ZERO_KEPT != 0;
            }
            if in_frame {
                let count = (entry >> COUNT_SHIFT) & 0xF;
                if let Some(word) = pending.push(u64::from(entry & 0xFF), count) {
                    self.buf.extend_from_slice(&word.to_le_bytes());
                    let received = self.buf.len().saturating_mul(8) + pending.len as usize;
                    if received > self.drop_bits {
                        overflow = true;
                        break;
                    }
                }
            }
        }
        self.nrzi = nrzi;
        self.ones = ones;
        self.zero_kept = zero_kept;
        self.pending = pending;
        if overflow {
            self.too_long();
        }
        (used, event)
    }

    /// The bit rule, for one data bit (after NRZI decoding).
    fn bit<F: FnMut(&[u8])>(&mut self, bit: bool, on_frame: &mut F) {
        let (meaning, ones) = step(self.ones, bit);
        self.ones = ones;
        match meaning {
            Step::Data(value) => {
                if !value {
                    self.zero_kept = true;
                }
                if self.in_frame {
                    if let Some(word) = self.pending.push(u64::from(value), 1) {
                        self.flush_word(word);
                    }
                }
            }
            Step::Stuffed | Step::Idle if !bit => self.zero_kept = false,
            Step::Stuffed | Step::Idle | Step::Sixth => {}
            Step::Flag => {
                if self.in_frame {
                    self.close_frame(on_frame);
                }
                self.zero_kept = false;
                self.open_frame();
            }
            Step::Abort => {
                if self.in_frame {
                    let content = self.content_bits();
                    if content > self.max_bits {
                        self.stats.too_long += 1;
                    } else if content > 0 {
                        self.stats.aborts += 1;
                    }
                }
                self.drop_frame();
            }
        }
    }

    /// Data bits received since the opening flag.
    fn frame_bits(&self) -> usize {
        self.buf
            .len()
            .saturating_mul(8)
            .saturating_add(self.pending.len as usize)
    }

    /// Data bits of the frame proper, once a flag or abort has been seen:
    /// the bits before the 0 that precedes the closing run of 1s. Five of
    /// those 1s, and that 0 unless it was a stuffed one, were taken as
    /// data on the way.
    fn content_bits(&self) -> usize {
        self.frame_bits()
            .saturating_sub(5 + usize::from(self.zero_kept))
    }

    fn flush_word(&mut self, word: u64) {
        self.buf.extend_from_slice(&word.to_le_bytes());
        if self.frame_bits() > self.drop_bits {
            self.too_long();
        }
    }

    fn too_long(&mut self) {
        self.stats.too_long += 1;
        self.drop_frame();
    }

    fn open_frame(&mut self) {
        self.drop_frame();
        self.in_frame = true;
    }

    fn drop_frame(&mut self) {
        self.in_frame = false;
        self.buf.clear();
        self.pending = Pending::default();
        self.fcs = Fcs16::new();
        self.fcs_len = 0;
    }

    /// Checks and delivers the frame ended by a flag (AX.25 v2.2
    /// sections 3.9 and 4.4.6).
    fn close_frame<F: FnMut(&[u8])>(&mut self, on_frame: &mut F) {
        let content = self.content_bits();
        if content == 0 {
            return;
        }
        if content > self.max_bits {
            self.stats.too_long += 1;
            return;
        }
        if !content.is_multiple_of(8) {
            self.stats.not_octet_aligned += 1;
            return;
        }
        while let Some(octet) = self.pending.take_octet() {
            self.buf.push(octet);
        }
        let len = content / 8;
        if len < self.min_len {
            self.stats.too_short += 1;
            return;
        }
        // `fcs_len <= len`: see `fcs`.
        let mut fcs = self.fcs;
        fcs.update(self.buf.get(self.fcs_len..len).unwrap_or_default());
        match self.buf.get(..len) {
            Some(frame) if fcs.register() == fcs::GOOD_RESIDUE => {
                self.stats.frames_ok += 1;
                on_frame(frame.get(..len.saturating_sub(2)).unwrap_or_default());
            }
            _ => self.stats.fcs_errors += 1,
        }
    }
}

/// Receives a whole bit stream with a fresh [`Deframer`]; returns the
/// frames found (without FCS) and the counts.
pub fn decode_all(line: &BitStream, config: DeframerConfig) -> (Vec<Vec<u8>>, DeframerStats) {
    let mut deframer = Deframer::new(config);
    let mut frames = Vec::new();
    deframer.push_bits_with(line.octets(), line.bit_len(), |frame| {
        frames.push(frame.to_vec())
    });
    (frames, *deframer.stats())
}
