//! The block CRCs of RFC 9171 clause 4.2.1 and 4.2.2, checked independently
//! of the bundle decoder.
//!
//! Every block of a received bundle that carries a CRC is checked here, by
//! code of our own, before the bundle is decoded: a decoder that let a
//! flipped bit through would otherwise put a corrupt bundle into the store.
//! The walk over the bundle's CBOR is deliberately minimal: it finds each
//! block's extent, its CRC type and the place of its CRC value, and nothing
//! else.
//!
//! CRC type 1 (RFC 9171 4.2.1), the X.25 CRC-16 (polynomial 0x1021
//! reflected, initial value and final XOR 0xFFFF), is exactly HDLC's
//! FCS-16, so it is [`linklab_wire::fcs::fcs16`]; CRC type 2 is
//! [`crc32c`] here.

use linklab_wire::fcs::fcs16;
use thiserror::Error;

/// CRC type 2 (RFC 9171 4.2.1): CRC-32C (Castagnoli), polynomial
/// 0x1EDC6F41 reflected, initial value and final XOR 0xFFFFFFFF.
pub fn crc32c(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &octet in data {
        crc ^= u32::from(octet);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Why a bundle failed the CRC check.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CrcError {
    /// The octets are not a CBOR array of CBOR arrays.
    #[error("not a bundle: {0}")]
    Malformed(&'static str),
    /// A block names a CRC type other than 0, 1 and 2.
    #[error("block {index} has unknown CRC type {crc_type}")]
    UnknownType {
        /// Position of the block in the bundle (0 is the primary block).
        index: usize,
        /// The CRC type found.
        crc_type: u64,
    },
    /// A block's item count does not fit its CRC type (a CRC value with
    /// type 0, or none with type 1 or 2).
    #[error("block {index} has {items} items, which does not fit CRC type {crc_type}")]
    ItemCount {
        /// Position of the block in the bundle.
        index: usize,
        /// Items in the block's array.
        items: usize,
        /// The CRC type found.
        crc_type: u64,
    },
    /// The CRC value does not match the block's contents.
    #[error("block {index} fails its CRC-{bits} check")]
    Mismatch {
        /// Position of the block in the bundle.
        index: usize,
        /// 16 or 32.
        bits: u8,
    },
}

/// Checks the CRC of every block of the bundle in `octets` (RFC 9171 4.2.1:
/// the CRC is computed over the whole block, CRC field included with its
/// value set to zeros). Blocks of CRC type 0 are not checked, but their item
/// count must show no CRC value.
pub fn verify_bundle(octets: &[u8]) -> Result<(), CrcError> {
    let mut reader = Reader { octets, at: 0 };
    let head = reader.head()?;
    if head.major != MAJOR_ARRAY {
        return Err(CrcError::Malformed("a bundle is a CBOR array"));
    }
    let mut index = 0;
    loop {
        match head.length {
            Length::Definite(n) if index as u64 == n => break,
            Length::Indefinite if reader.peek()? == BREAK => {
                reader.at += 1;
                break;
            }
            _ => {}
        }
        verify_block(&mut reader, index)?;
        index += 1;
    }
    if reader.at != octets.len() {
        return Err(CrcError::Malformed("octets after the end of the bundle"));
    }
    Ok(())
}

/// Checks the block at the reader's position and moves past it.
fn verify_block(reader: &mut Reader<'_>, index: usize) -> Result<(), CrcError> {
    let start = reader.at;
    let head = reader.head()?;
    let Length::Definite(items) = head.length else {
        return Err(CrcError::Malformed("a block is a definite-length array"));
    };
    if head.major != MAJOR_ARRAY {
        return Err(CrcError::Malformed("a block is a CBOR array"));
    }
    // The CRC type is item 2 of the primary block (4.3.1) and item 3 of a
    // canonical block (4.3.2).
    let crc_type_item = if index == 0 { 2 } else { 3 };
    let mut crc_type = None;
    let mut last_value = 0..0;
    for item in 0..items {
        if item == crc_type_item {
            let head = reader.head()?;
            match (head.major, head.length) {
                (MAJOR_UNSIGNED, Length::Definite(value)) => crc_type = Some(value),
                _ => return Err(CrcError::Malformed("the CRC type is an unsigned integer")),
            }
        } else {
            let item_start = reader.at;
            let head = reader.head()?;
            if head.major == MAJOR_BYTES {
                if let Length::Definite(len) = head.length {
                    let value_start = reader.at;
                    reader.take(len)?;
                    last_value = value_start..reader.at;
                    continue;
                }
            }
            reader.at = item_start;
            reader.skip_item(0)?;
            last_value = 0..0;
        }
    }
    let crc_type = crc_type.ok_or(CrcError::Malformed("a block has a CRC type"))?;
    let items = usize::try_from(items).unwrap_or(usize::MAX);
    let (without_crc, bits) = match crc_type {
        0 => (items, 0),
        1 => (items.wrapping_sub(1), 16),
        2 => (items.wrapping_sub(1), 32),
        other => {
            return Err(CrcError::UnknownType {
                index,
                crc_type: other,
            })
        }
    };
    let fits = if index == 0 {
        without_crc == 8 || without_crc == 10
    } else {
        without_crc == 5
    };
    if !fits {
        return Err(CrcError::ItemCount {
            index,
            items,
            crc_type,
        });
    }
    if bits == 0 {
        return Ok(());
    }
    if last_value.len() != usize::from(bits / 8) {
        return Err(CrcError::Mismatch { index, bits });
    }
    let block = &reader.octets[start..reader.at];
    let value = &reader.octets[last_value.clone()];
    let (value_start, value_end) = (last_value.start - start, last_value.end - start);
    let computed: Vec<u8> = {
        let mut zeroed = block.to_vec();
        zeroed[value_start..value_end].fill(0);
        if bits == 16 {
            fcs16(&zeroed).to_be_bytes().to_vec()
        } else {
            crc32c(&zeroed).to_be_bytes().to_vec()
        }
    };
    if computed != value {
        return Err(CrcError::Mismatch { index, bits });
    }
    Ok(())
}

pub(crate) const MAJOR_UNSIGNED: u8 = 0;
pub(crate) const MAJOR_BYTES: u8 = 2;
const MAJOR_TEXT: u8 = 3;
pub(crate) const MAJOR_ARRAY: u8 = 4;
const MAJOR_MAP: u8 = 5;
const MAJOR_TAG: u8 = 6;
const MAJOR_SIMPLE: u8 = 7;
const BREAK: u8 = 0xFF;
/// Nesting deeper than this is refused rather than followed (no bundle
/// field nests more than a few levels).
const MAX_DEPTH: usize = 32;

#[derive(Clone, Copy)]
pub(crate) enum Length {
    Definite(u64),
    Indefinite,
}

pub(crate) struct Head {
    pub(crate) major: u8,
    pub(crate) length: Length,
}

/// A cursor over CBOR octets (RFC 8949 clause 3).
pub(crate) struct Reader<'a> {
    pub(crate) octets: &'a [u8],
    pub(crate) at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Result<u8, CrcError> {
        self.octets
            .get(self.at)
            .copied()
            .ok_or(CrcError::Malformed("bundle truncated"))
    }

    pub(crate) fn take(&mut self, len: u64) -> Result<&[u8], CrcError> {
        let len = usize::try_from(len).map_err(|_| CrcError::Malformed("length too large"))?;
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.octets.len())
            .ok_or(CrcError::Malformed("bundle truncated"))?;
        let slice = &self.octets[self.at..end];
        self.at = end;
        Ok(slice)
    }

    /// Reads an initial byte and its argument (RFC 8949 3.1).
    pub(crate) fn head(&mut self) -> Result<Head, CrcError> {
        let initial = self.peek()?;
        self.at += 1;
        let major = initial >> 5;
        let info = initial & 0x1F;
        let length = match info {
            0..=23 => Length::Definite(u64::from(info)),
            24..=27 => {
                let bytes = self.take(1 << (info - 24))?;
                Length::Definite(bytes.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b)))
            }
            31 if matches!(major, MAJOR_BYTES | MAJOR_TEXT | MAJOR_ARRAY | MAJOR_MAP) => {
                Length::Indefinite
            }
            _ => return Err(CrcError::Malformed("reserved CBOR initial byte")),
        };
        Ok(Head { major, length })
    }

    /// Moves past one complete data item.
    pub(crate) fn skip_item(&mut self, depth: usize) -> Result<(), CrcError> {
        if depth > MAX_DEPTH {
            return Err(CrcError::Malformed("CBOR nested too deeply"));
        }
        let head = self.head()?;
        match (head.major, head.length) {
            (MAJOR_UNSIGNED | 1 | MAJOR_SIMPLE, _) => Ok(()),
            (MAJOR_BYTES | MAJOR_TEXT, Length::Definite(len)) => self.take(len).map(|_| ()),
            (MAJOR_BYTES | MAJOR_TEXT, Length::Indefinite) => {
                while self.peek()? != BREAK {
                    let chunk = self.head()?;
                    match (chunk.major == head.major, chunk.length) {
                        (true, Length::Definite(len)) => {
                            self.take(len)?;
                        }
                        _ => return Err(CrcError::Malformed("bad string chunk")),
                    }
                }
                self.at += 1;
                Ok(())
            }
            (MAJOR_ARRAY | MAJOR_MAP, Length::Definite(n)) => {
                let items = if head.major == MAJOR_MAP {
                    n.saturating_mul(2)
                } else {
                    n
                };
                for _ in 0..items {
                    self.skip_item(depth + 1)?;
                }
                Ok(())
            }
            (MAJOR_ARRAY | MAJOR_MAP, Length::Indefinite) => {
                while self.peek()? != BREAK {
                    self.skip_item(depth + 1)?;
                }
                self.at += 1;
                Ok(())
            }
            (MAJOR_TAG, _) => self.skip_item(depth + 1),
            _ => Err(CrcError::Malformed("bad CBOR item")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values_of_the_catalogue() {
        // The "check" values of the CRC catalogue for "123456789".
        assert_eq!(fcs16(b"123456789"), 0x906E);
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn garbage_is_refused_not_panicked_on() {
        for octets in [
            &[][..],
            &[0x9F],
            &[0x9F, 0xFF, 0x00],
            &[0x1F],
            &[0x9F, 0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            &[0x9F; 100],
        ] {
            assert!(verify_bundle(octets).is_err(), "{octets:02x?}");
        }
    }
}
