//! NRZI line coding: a 0 is a change of line level, a 1 is no change
//! (AX.25 v2.2 physical layer, as used by Bell 202 AFSK packet radio;
//! ISO/IEC 13239 clause 4, NRZI option). Works an octet at a time on
//! LSB-first packed bits, carrying the line level across octets.

/// `NRZI_ENCODE[d]`: the line bits for data octet `d` when the line was at
/// level 0 before it. From level 1 the line bits are the complement.
static NRZI_ENCODE: [u8; 256] = build_encode_table();

const fn build_encode_table() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut data = 0;
    while data < 256 {
        let mut level = 0u8;
        let mut line = 0u8;
        let mut bit = 0;
        while bit < 8 {
            if (data >> bit) & 1 == 0 {
                level ^= 1;
            }
            line |= level << bit;
            bit += 1;
        }
        table[data] = line;
        data += 1;
    }
    table
}

/// The sending side of NRZI (AX.25 v2.2 physical layer): turns data bits
/// into line levels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NrziEncoder {
    /// The level of the last line bit sent, as a mask: 0x00 or 0xFF.
    level: u8,
}

impl NrziEncoder {
    /// An encoder whose line starts at level 0.
    pub const fn new() -> Self {
        NrziEncoder { level: 0 }
    }

    /// Codes eight data bits (LSB first) into eight line bits.
    #[inline]
    pub fn encode_octet(&mut self, data: u8) -> u8 {
        let line = NRZI_ENCODE[usize::from(data)] ^ self.level;
        self.level = ((line as i8) >> 7) as u8;
        line
    }

    /// Codes one data bit into one line bit.
    pub fn encode_bit(&mut self, data: bool) -> bool {
        if !data {
            self.level = !self.level;
        }
        self.level != 0
    }

    /// Codes whole octets in place.
    pub fn encode_in_place(&mut self, octets: &mut [u8]) {
        for octet in octets {
            *octet = self.encode_octet(*octet);
        }
    }
}

/// The receiving side of NRZI (AX.25 v2.2 physical layer): a data 1 where
/// the line level stayed, a data 0 where it changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NrziDecoder {
    /// The last line bit received, 0 or 1.
    level: u8,
}

impl NrziDecoder {
    /// A decoder that takes the line to have been at level 0.
    pub const fn new() -> Self {
        NrziDecoder { level: 0 }
    }

    /// Decodes eight line bits (LSB first) into eight data bits.
    #[inline]
    pub fn decode_octet(&mut self, line: u8) -> u8 {
        let previous = (line << 1) | self.level;
        self.level = line >> 7;
        !(line ^ previous)
    }

    /// Decodes 64 line bits (LSB first, that is, eight octets read as a
    /// little-endian `u64`) into 64 data bits: each bit is compared with
    /// the one before it, the first with the last level received.
    #[inline]
    pub fn decode_word(&mut self, line: u64) -> u64 {
        let previous = (line << 1) | u64::from(self.level);
        self.level = (line >> 63) as u8;
        !(line ^ previous)
    }

    /// Decodes one line bit into one data bit.
    pub fn decode_bit(&mut self, line: bool) -> bool {
        let line = u8::from(line);
        let data = line == self.level;
        self.level = line;
        data
    }

    /// Decodes whole octets in place.
    pub fn decode_in_place(&mut self, octets: &mut [u8]) {
        for octet in octets {
            *octet = self.decode_octet(*octet);
        }
    }
}
