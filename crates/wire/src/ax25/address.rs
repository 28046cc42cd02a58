//! AX.25 addresses: callsigns, SSIDs and the address field
//! (AX.25 v2.2 3.12, fig. 3.3-3.8; command/response bits 6.1.2, fig. 6.1).
//!
//! Each address subfield is seven octets: six callsign characters, each
//! shifted left one bit and padded with spaces, then the SSID octet
//!
//! ```text
//!   bit  7     6 5   4 3 2 1   0
//!        C/H   R R   S S I D   X
//! ```
//!
//! where C is the command/response bit (destination and source), H the
//! has-been-repeated bit (digipeaters), R R the reserved bits and X the HDLC
//! address extension bit, 1 only in the last octet of the address field.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Most characters in a callsign (AX.25 v2.2 3.12).
pub const CALLSIGN_MAX_LEN: usize = 6;

/// Octets in one address subfield (AX.25 v2.2 3.12.1).
pub const ADDRESS_LEN: usize = 7;

/// Most digipeater (Layer 2 repeater) subfields in an address field
/// (AX.25 v2.2 3.12.5).
pub const MAX_DIGIPEATERS: usize = 8;

const EXTENSION_BIT: u8 = 0x01;
const C_OR_H_BIT: u8 = 0x80;
const RESERVED_SHIFT: u8 = 5;

/// An amateur radio callsign as carried in an AX.25 address: 1 to 6
/// upper-case letters A-Z and digits 0-9 (AX.25 v2.2 3.12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Callsign {
    chars: [u8; CALLSIGN_MAX_LEN],
    len: u8,
}

/// Why text is not a valid callsign.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CallsignError {
    /// No characters at all.
    #[error("callsign is empty")]
    Empty,
    /// More than six characters.
    #[error("callsign \"{text}\" is {len} characters; at most 6 allowed")]
    TooLong {
        /// The text as given.
        text: String,
        /// Its length in characters.
        len: usize,
    },
    /// A character other than a letter or digit.
    #[error("callsign \"{text}\" has {ch:?} at position {position}; only letters A-Z and digits 0-9 are allowed")]
    BadChar {
        /// The text as given.
        text: String,
        /// The offending character.
        ch: char,
        /// Its position, counting from 1.
        position: usize,
    },
}

impl Callsign {
    /// The callsign as text, e.g. `"N0CALL"`.
    pub fn as_str(&self) -> &str {
        let chars = self.chars.get(..usize::from(self.len)).unwrap_or_default();
        // Only ASCII letters and digits are ever stored.
        std::str::from_utf8(chars).unwrap_or_default()
    }

    /// The six callsign octets of an address subfield: characters shifted
    /// left one bit, space padded, extension bit 0 (AX.25 v2.2 3.12.2).
    fn to_octets(self) -> [u8; CALLSIGN_MAX_LEN] {
        let mut out = [b' ' << 1; CALLSIGN_MAX_LEN];
        for (o, c) in out.iter_mut().zip(self.as_str().bytes()) {
            *o = c << 1;
        }
        out
    }
}

impl FromStr for Callsign {
    type Err = CallsignError;

    /// Parses a callsign, converting lower-case letters to upper case.
    fn from_str(text: &str) -> Result<Callsign, CallsignError> {
        let len = text.chars().count();
        if len == 0 {
            return Err(CallsignError::Empty);
        }
        if len > CALLSIGN_MAX_LEN {
            return Err(CallsignError::TooLong {
                text: text.to_owned(),
                len,
            });
        }
        let mut chars = [0u8; CALLSIGN_MAX_LEN];
        for ((i, ch), slot) in text.chars().enumerate().zip(chars.iter_mut()) {
            let up = ch.to_ascii_uppercase();
            if !(up.is_ascii_uppercase() || up.is_ascii_digit()) {
                return Err(CallsignError::BadChar {
                    text: text.to_owned(),
                    ch,
                    position: i + 1,
                });
            }
            // ASCII, checked above.
            *slot = up as u8;
        }
        Ok(Callsign {
            chars,
            len: len as u8,
        })
    }
}

impl fmt::Display for Callsign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which subfield of the address field an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subfield {
    /// The destination address (octets A1-A7).
    Destination,
    /// The source address (octets A8-A14).
    Source,
    /// Digipeater number n, counting from 1.
    Digipeater(usize),
    /// A subfield given on its own, outside an address field.
    Single,
}

impl Subfield {
    fn at(index: usize) -> Subfield {
        match index {
            0 => Subfield::Destination,
            1 => Subfield::Source,
            n => Subfield::Digipeater(n - 1),
        }
    }
}

impl fmt::Display for Subfield {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subfield::Destination => f.write_str("destination address"),
            Subfield::Source => f.write_str("source address"),
            Subfield::Digipeater(n) => write!(f, "digipeater address {n}"),
            Subfield::Single => f.write_str("address"),
        }
    }
}

/// Why an address, in text or on the wire, is not valid.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AddressError {
    /// The callsign part of a text address is bad.
    #[error(transparent)]
    Callsign(#[from] CallsignError),
    /// The SSID after the `-` is not a decimal number.
    #[error("SSID \"{ssid}\" in \"{text}\" is not a number 0-15")]
    SsidNotNumeric {
        /// The whole address text.
        text: String,
        /// The part after the `-`.
        ssid: String,
    },
    /// The SSID is a number above 15.
    #[error("SSID {ssid} is out of range; it must be 0-15")]
    SsidOutOfRange {
        /// The value given.
        ssid: u32,
    },
    /// Reserved bits given as a value above 3.
    #[error("reserved bits value {value} is out of range; it must be 0-3")]
    ReservedOutOfRange {
        /// The value given.
        value: u8,
    },
    /// A callsign octet on the wire is not a shifted letter, digit or space.
    #[error("{subfield}: callsign octet {position} is 0x{octet:02X}, not an upper-case letter, digit or space shifted left one bit")]
    BadCallsignOctet {
        /// Which subfield.
        subfield: Subfield,
        /// Octet position within the subfield, counting from 1.
        position: usize,
        /// The octet as received.
        octet: u8,
    },
    /// A letter or digit after a padding space, or no character at all.
    #[error("{subfield}: callsign \"{padded}\" is not 1-6 characters followed by space padding")]
    BadCallsignPadding {
        /// Which subfield.
        subfield: Subfield,
        /// The six characters as received (shifted back).
        padded: String,
    },
    /// The field ends before a subfield is complete.
    #[error("address field truncated: {subfield} needs 7 octets but only {available} remain")]
    Truncated {
        /// The incomplete subfield.
        subfield: Subfield,
        /// Octets remaining for it.
        available: usize,
    },
    /// The extension bit ends the field after the destination.
    #[error("address field ends after the destination address; a source address is required")]
    NoSource,
    /// More than eight digipeater subfields.
    #[error("address field has more than 8 digipeater addresses")]
    TooManyDigipeaters,
}

/// Whether `a` and `b` name the same station: the same callsign and SSID,
/// whatever their C/H and reserved bits (AX.25 v2.2 3.12.2-3.12.4: those
/// bits say how a frame travels, not who sends or receives it; a link is
/// the pair of stations, 6.1).
pub fn same_station(a: &Address, b: &Address) -> bool {
    a.callsign() == b.callsign() && a.ssid() == b.ssid()
}

/// One address subfield: callsign, SSID, the C or H bit and the two
/// reserved bits (AX.25 v2.2 3.12.2-3.12.4).
///
/// # Reserved bits
///
/// v2.2 3.12.2 says the R bits "may be used in an agreed-upon manner in
/// individual networks. When not implemented, they are set to one." Real
/// stacks differ: Linux clears bit 6 of the source SSID octet on modulo-128
/// links and uses bit 5 there as a DAMA flag (clear on a DAMA master), and
/// gensio (gensio_ax25_addr.c) writes both bits as 0. Neither use is in v2.2 (which signals
/// modulo 128 with SABME and XID), and Dire Wolf ignores them. So this
/// module gives them no meaning: decoding accepts any value and keeps it,
/// so re-encoding is byte-exact, and [`Address::new`] sets both to 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Address {
    callsign: Callsign,
    ssid: u8,
    c_or_h: bool,
    reserved: u8,
}

impl Address {
    /// An address with the given callsign and SSID (0-15), C/H bit clear
    /// and both reserved bits set to 1 as v2.2 3.12.2 requires.
    pub fn new(callsign: Callsign, ssid: u8) -> Result<Address, AddressError> {
        if ssid > 15 {
            return Err(AddressError::SsidOutOfRange {
                ssid: u32::from(ssid),
            });
        }
        Ok(Address {
            callsign,
            ssid,
            c_or_h: false,
            reserved: 0b11,
        })
    }

    /// The callsign.
    pub fn callsign(&self) -> Callsign {
        self.callsign
    }

    /// The SSID, 0-15.
    pub fn ssid(&self) -> u8 {
        self.ssid
    }

    /// Bit 7 of the SSID octet: the C (command/response) bit in the
    /// destination and source, the H (has-been-repeated) bit in a digipeater
    /// address (3.12.1). [`AddressField`] sets the C bits from a
    /// [`CommandResponse`].
    pub fn c_or_h(&self) -> bool {
        self.c_or_h
    }

    /// Sets bit 7 of the SSID octet (C or H bit).
    pub fn set_c_or_h(&mut self, bit: bool) {
        self.c_or_h = bit;
    }

    /// The two reserved R bits, bits 6-5 of the SSID octet, as a value 0-3
    /// (bit 6 is the high bit). See [`Address`] on their use.
    pub fn reserved(&self) -> u8 {
        self.reserved
    }

    /// Sets the reserved bits to `value` (0-3; bit 1 of `value` goes to bit 6
    /// of the SSID octet).
    pub fn set_reserved(&mut self, value: u8) -> Result<(), AddressError> {
        if value > 3 {
            return Err(AddressError::ReservedOutOfRange { value });
        }
        self.reserved = value;
        Ok(())
    }

    /// Decodes one seven-octet subfield; returns the address and its
    /// extension bit (true if this is the last subfield of the field).
    pub fn decode(octets: &[u8; ADDRESS_LEN]) -> Result<(Address, bool), AddressError> {
        Self::decode_subfield(octets, Subfield::Single)
    }

    fn decode_subfield(
        octets: &[u8; ADDRESS_LEN],
        subfield: Subfield,
    ) -> Result<(Address, bool), AddressError> {
        let mut chars = [0u8; CALLSIGN_MAX_LEN];
        for (i, (slot, &octet)) in chars.iter_mut().zip(octets.iter()).enumerate() {
            let ch = octet >> 1;
            if octet & EXTENSION_BIT != 0
                || !(ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == b' ')
            {
                return Err(AddressError::BadCallsignOctet {
                    subfield,
                    position: i + 1,
                    octet,
                });
            }
            *slot = ch;
        }
        let len = chars
            .iter()
            .position(|&c| c == b' ')
            .unwrap_or(CALLSIGN_MAX_LEN);
        let padding_ok = chars
            .get(len..)
            .is_some_and(|rest| rest.iter().all(|&c| c == b' '));
        if len == 0 || !padding_ok {
            return Err(AddressError::BadCallsignPadding {
                subfield,
                padded: String::from_utf8_lossy(&chars).into_owned(),
            });
        }
        let ssid_octet = octets[ADDRESS_LEN - 1];
        for padding in chars.iter_mut().skip(len) {
            *padding = 0;
        }
        let address = Address {
            callsign: Callsign {
                chars,
                len: len as u8,
            },
            ssid: (ssid_octet >> 1) & 0x0F,
            c_or_h: ssid_octet & C_OR_H_BIT != 0,
            reserved: (ssid_octet >> RESERVED_SHIFT) & 0x03,
        };
        Ok((address, ssid_octet & EXTENSION_BIT != 0))
    }

    /// Encodes the subfield; `last` sets the extension bit.
    pub fn encode(&self, last: bool) -> [u8; ADDRESS_LEN] {
        let mut out = [0u8; ADDRESS_LEN];
        out[..CALLSIGN_MAX_LEN].copy_from_slice(&self.callsign.to_octets());
        out[ADDRESS_LEN - 1] = (if self.c_or_h { C_OR_H_BIT } else { 0 })
            | (self.reserved << RESERVED_SHIFT)
            | (self.ssid << 1)
            | u8::from(last);
        out
    }
}

impl FromStr for Address {
    type Err = AddressError;

    /// Parses `"N0CALL"` or `"N0CALL-7"` (callsign upper-cased; SSID 0-15).
    fn from_str(text: &str) -> Result<Address, AddressError> {
        let (call, ssid) = match text.split_once('-') {
            Some((call, ssid)) => {
                let numeric = !ssid.is_empty() && ssid.bytes().all(|b| b.is_ascii_digit());
                let value = ssid
                    .parse::<u32>()
                    .ok()
                    .filter(|_| numeric)
                    .ok_or_else(|| AddressError::SsidNotNumeric {
                        text: text.to_owned(),
                        ssid: ssid.to_owned(),
                    })?;
                (call, value)
            }
            None => (text, 0),
        };
        let callsign = call.parse::<Callsign>()?;
        let ssid = u8::try_from(ssid)
            .ok()
            .filter(|&s| s <= 15)
            .ok_or(AddressError::SsidOutOfRange { ssid })?;
        Address::new(callsign, ssid)
    }
}

impl fmt::Display for Address {
    /// `CALL` for SSID 0, else `CALL-SSID`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ssid == 0 {
            write!(f, "{}", self.callsign)
        } else {
            write!(f, "{}-{}", self.callsign, self.ssid)
        }
    }
}

/// The command/response state of a frame, from the C bits of the
/// destination and source SSID octets (AX.25 v2.2 6.1.2, fig. 6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandResponse {
    /// Destination C = 1, source C = 0 (v2 command).
    Command,
    /// Destination C = 0, source C = 1 (v2 response).
    Response,
    /// Both C bits 0: a station using a version before 2.0.
    PreviousVersionZeros,
    /// Both C bits 1: a station using a version before 2.0.
    PreviousVersionOnes,
}

impl CommandResponse {
    /// The C bits as (destination, source).
    pub const fn c_bits(self) -> (bool, bool) {
        match self {
            CommandResponse::Command => (true, false),
            CommandResponse::Response => (false, true),
            CommandResponse::PreviousVersionZeros => (false, false),
            CommandResponse::PreviousVersionOnes => (true, true),
        }
    }

    /// The state given by the (destination, source) C bits.
    pub const fn from_c_bits(dest: bool, source: bool) -> CommandResponse {
        match (dest, source) {
            (true, false) => CommandResponse::Command,
            (false, true) => CommandResponse::Response,
            (false, false) => CommandResponse::PreviousVersionZeros,
            (true, true) => CommandResponse::PreviousVersionOnes,
        }
    }
}

/// The whole address field: destination, source and 0-8 digipeaters
/// (AX.25 v2.2 3.12, fig. 3.3 and 3.8).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AddressField {
    dest: Address,
    source: Address,
    digipeaters: Vec<Address>,
}

impl AddressField {
    /// An address field; the C bits of `dest` and `source` are set from `cr`,
    /// the digipeaters (with their H bits) are taken as given.
    pub fn new(
        dest: Address,
        source: Address,
        via: &[Address],
        cr: CommandResponse,
    ) -> Result<AddressField, AddressError> {
        if via.len() > MAX_DIGIPEATERS {
            return Err(AddressError::TooManyDigipeaters);
        }
        let mut field = AddressField {
            dest,
            source,
            digipeaters: via.to_vec(),
        };
        field.set_command_response(cr);
        Ok(field)
    }

    /// Decodes the address field at the start of `bytes`; returns it and the
    /// number of octets it used (14 + 7 per digipeater).
    pub fn decode(bytes: &[u8]) -> Result<(AddressField, usize), AddressError> {
        let mut addresses = Vec::with_capacity(2);
        let mut rest = bytes;
        loop {
            let index = addresses.len();
            if index == MAX_DIGIPEATERS + 2 {
                return Err(AddressError::TooManyDigipeaters);
            }
            let subfield = Subfield::at(index);
            let (octets, tail) =
                rest.split_first_chunk::<ADDRESS_LEN>()
                    .ok_or(AddressError::Truncated {
                        subfield,
                        available: rest.len(),
                    })?;
            let (address, last) = Address::decode_subfield(octets, subfield)?;
            addresses.push(address);
            rest = tail;
            if last {
                break;
            }
        }
        let used = bytes.len() - rest.len();
        let mut iter = addresses.into_iter();
        match (iter.next(), iter.next()) {
            (Some(dest), Some(source)) => Ok((
                AddressField {
                    dest,
                    source,
                    digipeaters: iter.collect(),
                },
                used,
            )),
            _ => Err(AddressError::NoSource),
        }
    }

    /// Appends the encoded field to `out`; the extension bit is set on the
    /// last subfield only.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let count = self.digipeaters.len() + 2;
        let all = [&self.dest, &self.source]
            .into_iter()
            .chain(&self.digipeaters);
        for (i, address) in all.enumerate() {
            out.extend_from_slice(&address.encode(i + 1 == count));
        }
    }

    /// Length of the encoded field in octets.
    pub fn encoded_len(&self) -> usize {
        (self.digipeaters.len() + 2) * ADDRESS_LEN
    }

    /// The destination address.
    pub fn dest(&self) -> &Address {
        &self.dest
    }

    /// The destination address, mutable.
    pub fn dest_mut(&mut self) -> &mut Address {
        &mut self.dest
    }

    /// The source address.
    pub fn source(&self) -> &Address {
        &self.source
    }

    /// The source address, mutable.
    pub fn source_mut(&mut self) -> &mut Address {
        &mut self.source
    }

    /// The digipeaters in path order; [`Address::c_or_h`] is each one's H bit.
    pub fn digipeaters(&self) -> &[Address] {
        &self.digipeaters
    }

    /// The digipeaters, mutable (e.g. to set an H bit when repeating).
    pub fn digipeaters_mut(&mut self) -> &mut [Address] {
        &mut self.digipeaters
    }

    /// Command, response or previous-version, from the two C bits.
    pub fn command_response(&self) -> CommandResponse {
        CommandResponse::from_c_bits(self.dest.c_or_h, self.source.c_or_h)
    }

    /// Sets the C bits of destination and source.
    pub fn set_command_response(&mut self, cr: CommandResponse) {
        let (dest, source) = cr.c_bits();
        self.dest.c_or_h = dest;
        self.source.c_or_h = source;
    }
}
