//! Raw bit streams packed LSB-first (AX.25 v2.2 section 3.8 bit order).

/// A sequence of line bits: bit `i` is bit `i % 8` of octet `i / 8`, so the
/// first bit on the air is the least-significant bit of the first octet
/// (AX.25 v2.2 section 3.8). Bits past [`bit_len`](Self::bit_len) in the
/// last octet are zero.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BitStream {
    octets: Vec<u8>,
    bit_len: usize,
}

impl BitStream {
    /// An empty stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A stream of whole octets, `8 * octets.len()` bits long.
    pub fn from_octets(octets: Vec<u8>) -> Self {
        let bit_len = octets.len().saturating_mul(8);
        BitStream { octets, bit_len }
    }

    /// Assembles a stream from packed octets and a bit length; octets past
    /// the length are dropped and unused bits of the last octet cleared.
    pub(crate) fn from_parts(mut octets: Vec<u8>, bit_len: usize) -> Self {
        let bit_len = bit_len.min(octets.len().saturating_mul(8));
        octets.truncate(bit_len.div_ceil(8));
        let tail = bit_len % 8;
        if tail != 0 {
            if let Some(last) = octets.last_mut() {
                *last &= (1u8 << tail) - 1;
            }
        }
        BitStream { octets, bit_len }
    }

    /// The packed octets; the last one may be partly used.
    pub fn octets(&self) -> &[u8] {
        &self.octets
    }

    /// The packed octets, by value.
    pub fn into_octets(self) -> Vec<u8> {
        self.octets
    }

    /// The number of bits.
    pub fn bit_len(&self) -> usize {
        self.bit_len
    }

    /// Whether the stream holds no bits.
    pub fn is_empty(&self) -> bool {
        self.bit_len == 0
    }

    /// Bit `index`, or `None` past the end.
    pub fn get(&self, index: usize) -> Option<bool> {
        if index >= self.bit_len {
            return None;
        }
        self.octets
            .get(index / 8)
            .map(|octet| octet >> (index % 8) & 1 != 0)
    }

    /// Inverts bit `index` (a line bit error); returns false past the end.
    pub fn flip(&mut self, index: usize) -> bool {
        if index >= self.bit_len {
            return false;
        }
        match self.octets.get_mut(index / 8) {
            Some(octet) => {
                *octet ^= 1 << (index % 8);
                true
            }
            None => false,
        }
    }

    /// Appends one bit.
    pub fn push(&mut self, bit: bool) {
        let shift = self.bit_len % 8;
        if shift == 0 {
            self.octets.push(0);
        }
        if let Some(last) = self.octets.last_mut() {
            *last |= u8::from(bit) << shift;
        }
        self.bit_len += 1;
    }

    /// Appends all bits of `other`.
    pub fn extend_from(&mut self, other: &BitStream) {
        if self.bit_len.is_multiple_of(8) {
            self.octets.extend_from_slice(&other.octets);
            self.bit_len += other.bit_len;
        } else {
            for bit in other.iter() {
                self.push(bit);
            }
        }
    }

    /// The bits in transmission order.
    pub fn iter(&self) -> impl Iterator<Item = bool> + '_ {
        (0..self.bit_len).map(|i| self.get(i).unwrap_or(false))
    }
}

impl FromIterator<bool> for BitStream {
    fn from_iter<I: IntoIterator<Item = bool>>(iter: I) -> Self {
        let mut stream = BitStream::new();
        for bit in iter {
            stream.push(bit);
        }
        stream
    }
}
