//! The HDLC frame check sequence, FCS-16.
//!
//! FCS-16 is the 16-bit CRC of ISO/IEC 13239 clause 4 (formerly ISO 3309)
//! and ITU-T X.25 clause 2.2.7, which AX.25 v2.2 section 3.7 adopts: generator
//! polynomial x^16 + x^12 + x^5 + 1, register preset to all ones, remainder
//! complemented before transmission. In CRC catalogue terms it is CRC-16/X.25
//! (reflected polynomial 0x8408, init 0xFFFF, xorout 0xFFFF, check value
//! 0x906E over `b"123456789"`).
//!
//! Because HDLC sends every octet least-significant bit first, the register
//! here is kept bit-reversed and the FCS goes on the air low octet first
//! (AX.25 v2.2 section 3.8: "bit 15 first" counts polynomial coefficients,
//! which is bit 0 of this reflected register).

/// The generator polynomial x^16 + x^12 + x^5 + 1 in reflected form
/// (ITU-T X.25 clause 2.2.7).
const POLY_REFLECTED: u16 = 0x8408;

/// The register preset: all ones (ISO/IEC 13239 clause 4).
const PRESET: u16 = 0xFFFF;

/// The register content after running the receiver over a frame and its
/// correct FCS, in this module's reflected representation: 0xF0B8
/// (ITU-T X.25 clause 2.2.7, "0001 1101 0000 1111" read in reverse).
pub const GOOD_RESIDUE: u16 = 0xF0B8;

/// The 256-entry table of a reflected CRC of up to 32 bits with generator
/// `poly_reflected`: the register change caused by one octet (Sarwate's
/// method). FCS-16 here and FCS-32 in [`crate::fcs32`] both take theirs
/// from it.
pub(crate) const fn reflected_table(poly_reflected: u32) -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ poly_reflected
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

/// [`reflected_table`] for FCS-16: every entry fits 16 bits, since the
/// register only ever shifts right.
const fn build_table() -> [u16; 256] {
    let wide = reflected_table(POLY_REFLECTED as u32);
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = wide[i] as u16;
        i += 1;
    }
    table
}

/// `SLICES[0]` is the 256-entry table of one register step per octet
/// (Sarwate's method); `SLICES[k][x]` is the register change of octet `x`
/// followed by `k` zero octets, so that eight octets take eight
/// independent look-ups instead of a chain of eight ("slicing-by-8").
static SLICES: [[u16; 256]; 8] = build_slices();

const fn build_slices() -> [[u16; 256]; 8] {
    let mut slices = [[0u16; 256]; 8];
    slices[0] = build_table();
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let previous = slices[k - 1][i];
            slices[k][i] = (previous >> 8) ^ slices[0][(previous & 0xFF) as usize];
            i += 1;
        }
        k += 1;
    }
    slices
}

/// Runs the (uncomplemented) register over `data`.
#[inline]
fn run(mut crc: u16, data: &[u8]) -> u16 {
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word) ^ u64::from(crc);
        let [b0, b1, b2, b3, b4, b5, b6, b7] = word.to_le_bytes();
        crc = SLICES[7][usize::from(b0)]
            ^ SLICES[6][usize::from(b1)]
            ^ SLICES[5][usize::from(b2)]
            ^ SLICES[4][usize::from(b3)]
            ^ SLICES[3][usize::from(b4)]
            ^ SLICES[2][usize::from(b5)]
            ^ SLICES[1][usize::from(b6)]
            ^ SLICES[0][usize::from(b7)];
    }
    for &octet in chunks.remainder() {
        crc = (crc >> 8) ^ SLICES[0][usize::from((crc as u8) ^ octet)];
    }
    crc
}

/// An incremental FCS-16 computation (ISO/IEC 13239 clause 4).
///
/// ```
/// use linklab_wire::fcs::Fcs16;
/// let mut fcs = Fcs16::new();
/// fcs.update(b"1234");
/// fcs.update(b"56789");
/// assert_eq!(fcs.finish(), 0x906E);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fcs16 {
    register: u16,
}

impl Fcs16 {
    /// A computation over no octets yet: the register preset to all ones.
    pub const fn new() -> Self {
        Fcs16 { register: PRESET }
    }

    /// Feeds more octets, in transmission order.
    pub fn update(&mut self, data: &[u8]) {
        self.register = run(self.register, data);
    }

    /// The FCS of everything fed so far (the complemented register).
    /// Send it low octet first, as [`append_fcs`] does.
    pub const fn finish(&self) -> u16 {
        !self.register
    }

    /// The raw register, for residue checks: it equals [`GOOD_RESIDUE`]
    /// after a frame followed by its correct FCS.
    pub const fn register(&self) -> u16 {
        self.register
    }
}

impl Default for Fcs16 {
    fn default() -> Self {
        Self::new()
    }
}

/// The FCS-16 of `data` (ISO/IEC 13239 clause 4; AX.25 v2.2 section 3.7).
///
/// ```
/// assert_eq!(linklab_wire::fcs::fcs16(b"123456789"), 0x906E);
/// ```
pub fn fcs16(data: &[u8]) -> u16 {
    !run(PRESET, data)
}

/// Appends the FCS-16 of `buf` to it, low octet first, which puts the
/// coefficient of x^15 first on the air (AX.25 v2.2 section 3.8).
pub fn append_fcs(buf: &mut Vec<u8>) {
    let fcs = fcs16(buf);
    buf.extend_from_slice(&fcs.to_le_bytes());
}

/// Whether `frame_with_fcs` (the octets between the flags, FCS last) has a
/// correct FCS: the receiver's register ends at [`GOOD_RESIDUE`]
/// (ITU-T X.25 clause 2.2.7). Frames shorter than the FCS itself fail.
pub fn check(frame_with_fcs: &[u8]) -> bool {
    frame_with_fcs.len() >= 2 && run(PRESET, frame_with_fcs) == GOOD_RESIDUE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_value() {
        assert_eq!(fcs16(b"123456789"), 0x906E);
    }

    #[test]
    fn append_then_check() {
        let mut buf = b"123456789".to_vec();
        append_fcs(&mut buf);
        assert_eq!(&buf[9..], &[0x6E, 0x90]);
        assert!(check(&buf));
        buf[3] ^= 0x10;
        assert!(!check(&buf));
    }

    #[test]
    fn too_short_fails() {
        assert!(!check(&[]));
        assert!(!check(&[0xFF]));
    }
}
