//! The address block of call set-up and clearing packets (X.25 (10/96)
//! 5.2.1, figures 5-3 and 5-4; 5.1.1 for the A bit): called and calling
//! DTE addresses in semi-octets, either in the non-TOA/NPI format (two
//! four-bit lengths in one octet, BCD digits) or, when the A bit of the
//! general format identifier is 1, in the TOA/NPI format (one length octet
//! per address, the first two semi-octets of each address being its type
//! of address and numbering plan identification).

use core::fmt;

use super::DecodeError;

/// How the address block is coded: the A bit of the general format
/// identifier of call set-up and clearing packets (5.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AddressFormat {
    /// A = 0: non-TOA/NPI format, lengths of at most 15 BCD digits.
    #[default]
    Basic,
    /// A = 1: TOA/NPI format; the semi-octets are kept as received.
    TypeOfAddress,
}

/// A DTE address: its semi-octets in order (5.2.1.1). In the basic
/// format every semi-octet is a BCD digit 0-9; in the TOA/NPI format the
/// first two are the type of address and numbering plan identification.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DteAddress(Vec<u8>);

/// A DTE address given as text had a character other than a digit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("DTE address {text:?} has {bad:?} at position {at}; only the digits 0-9 are allowed")]
pub struct AddressError {
    /// The text given.
    pub text: String,
    /// The offending character.
    pub bad: char,
    /// Its index in characters.
    pub at: usize,
}

impl DteAddress {
    /// The empty address (length 0: the network or the peer supplies it).
    pub const fn empty() -> DteAddress {
        DteAddress(Vec::new())
    }

    /// An address from decimal digits, e.g. `"23421"`.
    pub fn new(digits: &str) -> Result<DteAddress, AddressError> {
        digits
            .chars()
            .enumerate()
            .map(|(at, c)| {
                c.to_digit(10)
                    .and_then(|d| u8::try_from(d).ok())
                    .ok_or_else(|| AddressError {
                        text: digits.to_owned(),
                        bad: c,
                        at,
                    })
            })
            .collect::<Result<Vec<u8>, _>>()
            .map(DteAddress)
    }

    /// An address from raw semi-octets (each taken modulo 16).
    pub fn from_semi_octets(semi_octets: &[u8]) -> DteAddress {
        DteAddress(semi_octets.iter().map(|s| s & 0x0F).collect())
    }

    /// The semi-octets.
    pub fn semi_octets(&self) -> &[u8] {
        &self.0
    }

    /// Number of semi-octets (the address length field, 5.2.1.2).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for the empty address.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn is_bcd(&self) -> bool {
        self.0.iter().all(|&d| d <= 9)
    }
}

impl fmt::Display for DteAddress {
    /// Digits as decimal, other semi-octets as hexadecimal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|d| write!(f, "{d:X}"))
    }
}

/// The called and calling DTE addresses of a call set-up or clearing
/// packet (5.2.1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct AddressBlock {
    /// The format (the A bit).
    pub format: AddressFormat,
    /// The called DTE address.
    pub called: DteAddress,
    /// The calling DTE address.
    pub calling: DteAddress,
}

/// Why an address block cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressEncodeError {
    /// Basic format lengths are four bits (5.2.1.2).
    #[error("{len} semi-octets in a basic-format address; at most 15 fit its length field")]
    TooLongForBasic {
        /// Semi-octets given.
        len: usize,
    },
    /// TOA/NPI lengths are one octet.
    #[error("{len} semi-octets in a TOA/NPI address; at most 255 fit its length field")]
    TooLong {
        /// Semi-octets given.
        len: usize,
    },
    /// Basic format addresses are BCD.
    #[error("basic-format address {address} has a semi-octet that is not a BCD digit")]
    NotBcd {
        /// The address.
        address: DteAddress,
    },
}

impl AddressBlock {
    /// Decodes an address block at the start of `octets`; returns it and
    /// the octets it took.
    pub(crate) fn decode(
        octets: &[u8],
        format: AddressFormat,
    ) -> Result<(AddressBlock, usize), DecodeError> {
        let (called_len, calling_len, header) = match format {
            AddressFormat::Basic => {
                let lengths = *octets.first().ok_or(DecodeError::TooShort {
                    what: "address length octet",
                })?;
                (usize::from(lengths & 0x0F), usize::from(lengths >> 4), 1)
            }
            AddressFormat::TypeOfAddress => match octets {
                [called, calling, ..] => (usize::from(*called), usize::from(*calling), 2),
                _ => {
                    return Err(DecodeError::TooShort {
                        what: "TOA/NPI address length octets",
                    })
                }
            },
        };
        let total = called_len + calling_len;
        let len = header + total.div_ceil(2);
        let digits = octets.get(header..len).ok_or(DecodeError::TooShort {
            what: "address digits",
        })?;
        let semi = |i: usize| {
            let octet = digits[i / 2];
            if i.is_multiple_of(2) {
                octet >> 4
            } else {
                octet & 0x0F
            }
        };
        let called = DteAddress((0..called_len).map(semi).collect());
        let calling = DteAddress((called_len..total).map(semi).collect());
        if format == AddressFormat::Basic {
            if !called.is_bcd() {
                return Err(DecodeError::InvalidCalledAddress);
            }
            if !calling.is_bcd() {
                return Err(DecodeError::InvalidCallingAddress);
            }
        }
        Ok((
            AddressBlock {
                format,
                called,
                calling,
            },
            len,
        ))
    }

    /// Appends the address block to `out`.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) -> Result<(), AddressEncodeError> {
        for address in [&self.called, &self.calling] {
            match self.format {
                AddressFormat::Basic if address.len() > 15 => {
                    return Err(AddressEncodeError::TooLongForBasic { len: address.len() })
                }
                AddressFormat::Basic if !address.is_bcd() => {
                    return Err(AddressEncodeError::NotBcd {
                        address: address.clone(),
                    })
                }
                AddressFormat::TypeOfAddress if address.len() > 255 => {
                    return Err(AddressEncodeError::TooLong { len: address.len() })
                }
                _ => {}
            }
        }
        // Lengths are checked above, so the conversions cannot fail.
        let called_len = u8::try_from(self.called.len()).unwrap_or(u8::MAX);
        let calling_len = u8::try_from(self.calling.len()).unwrap_or(u8::MAX);
        match self.format {
            AddressFormat::Basic => out.push(calling_len << 4 | called_len),
            AddressFormat::TypeOfAddress => out.extend([called_len, calling_len]),
        }
        let mut semis = self.called.0.iter().chain(&self.calling.0);
        while let Some(high) = semis.next() {
            let low = semis.next().copied().unwrap_or(0);
            out.push(high << 4 | (low & 0x0F));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_block_packs_called_then_calling_in_bcd() {
        let block = AddressBlock {
            format: AddressFormat::Basic,
            called: DteAddress::new("123").unwrap(),
            calling: DteAddress::new("45").unwrap(),
        };
        let mut out = Vec::new();
        block.encode(&mut out).unwrap();
        assert_eq!(out, [0x23, 0x12, 0x34, 0x50]);
        assert_eq!(
            AddressBlock::decode(&out, AddressFormat::Basic).unwrap(),
            (block, 4)
        );
    }

    #[test]
    fn non_digits_are_refused_with_position() {
        let err = DteAddress::new("12a").unwrap_err();
        assert_eq!((err.bad, err.at), ('a', 2));
        assert_eq!(DteAddress::new("0917").unwrap().to_string(), "0917");
    }

    #[test]
    fn basic_format_rejects_non_bcd_semi_octets() {
        assert_eq!(
            AddressBlock::decode(&[0x01, 0xA0], AddressFormat::Basic),
            Err(DecodeError::InvalidCalledAddress)
        );
    }
}
