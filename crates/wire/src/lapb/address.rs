//! The single-octet address field and the rules that tell commands from
//! responses.
//!
//! LAPB (X.25 2.4.2) uses two addresses per link. Commands carry the
//! address of the station that receives them, responses the address of the
//! station that sends them. The DTE's address is A and the DCE's is B
//! (single link procedure), or C and D on the links of a multilink
//! procedure:
//!
//! ```text
//!                     single link     multilink
//! DCE -> DTE command  A  0x03         C  0x0F
//! DCE -> DTE response B  0x01         D  0x07
//! DTE -> DCE command  B  0x01         D  0x07
//! DTE -> DCE response A  0x03         C  0x0F
//! ```
//!
//! X.25 states the rule as this table; "a station's address" is an
//! equivalent reading of it.
//!
//! In the unbalanced procedures of ISO 13239 (NRM, ARM) the address is
//! always a secondary station's: the primary's frames are commands (to
//! that secondary) and a secondary's frames are responses (from it).
//!
//! Addresses are written as octets with bit 1 of X.25 (the first bit sent)
//! as the low-order bit, so A = `11000000` in X.25's notation is 0x03.

use std::fmt;

use super::error::LapbError;

/// The one-octet address field (X.25 2.2.2; ISO 13239 clause 4).
///
/// Any value is valid on the wire. In NRM and ARM it is a secondary
/// station's address, or one of the special addresses
/// [`Address::ALL_STATIONS`] and [`Address::NO_STATION`]; in LAPB it is
/// one of [`Address::A`], [`Address::B`], [`Address::C`], [`Address::D`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Address(pub u8);

impl Address {
    /// LAPB address A, `11000000` = 0x03, the DTE's address on a single
    /// link: DCE commands and DTE responses carry it (X.25 2.4.2).
    pub const A: Address = Address(0x03);
    /// LAPB address B, `10000000` = 0x01, the DCE's address on a single
    /// link: DTE commands and DCE responses carry it (X.25 2.4.2).
    pub const B: Address = Address(0x01);
    /// LAPB address C, `11110000` = 0x0F, the DTE's address on each link of
    /// a multilink procedure; it takes the place of A (X.25 2.4.2).
    pub const C: Address = Address(0x0F);
    /// LAPB address D, `11100000` = 0x07, the DCE's address on each link of
    /// a multilink procedure; it takes the place of B (X.25 2.4.2).
    pub const D: Address = Address(0x07);
    /// The all-station (broadcast) address, all ones (ISO 13239 clause 4):
    /// a command to every secondary.
    pub const ALL_STATIONS: Address = Address(0xFF);
    /// The no-station address, all zeros (ISO 13239 clause 4): never
    /// assigned to a station, used for testing.
    pub const NO_STATION: Address = Address(0x00);

    /// The address as sent.
    pub const fn octet(self) -> u8 {
        self.0
    }

    /// The LAPB letter of this address, `"A"`, `"B"`, `"C"` or `"D"`
    /// (X.25 2.4.2), if it is one of them.
    pub const fn lapb_name(self) -> Option<&'static str> {
        match self {
            Address::A => Some("A"),
            Address::B => Some("B"),
            Address::C => Some("C"),
            Address::D => Some("D"),
            _ => None,
        }
    }
}

impl From<u8> for Address {
    fn from(octet: u8) -> Address {
        Address(octet)
    }
}

impl From<Address> for u8 {
    fn from(address: Address) -> u8 {
        address.0
    }
}

impl fmt::Display for Address {
    /// The octet in hexadecimal, with its LAPB letter if any: `0x03 (A)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.lapb_name() {
            Some(name) => write!(f, "0x{:02X} ({name})", self.0),
            None => write!(f, "0x{:02X}", self.0),
        }
    }
}

/// Whether a frame is a command or a response (X.25 2.3.4; ISO 13239 5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandResponse {
    /// A command frame.
    Command,
    /// A response frame.
    Response,
}

impl CommandResponse {
    /// True for [`CommandResponse::Command`].
    pub const fn is_command(self) -> bool {
        matches!(self, CommandResponse::Command)
    }
}

/// The side of the DTE/DCE interface a LAPB station is on (X.25 2.4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Data terminal equipment.
    Dte,
    /// Data circuit-terminating equipment (the network side).
    Dce,
}

impl Role {
    /// The station at the other end of the link.
    pub const fn peer(self) -> Role {
        match self {
            Role::Dte => Role::Dce,
            Role::Dce => Role::Dte,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Dte => "DTE",
            Role::Dce => "DCE",
        })
    }
}

/// Whether a LAPB link stands alone or is one link of a multilink
/// procedure; the two use different addresses (X.25 2.4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkProcedure {
    /// Single link procedure (SLP) on its own: addresses A and B.
    SingleLink,
    /// A single link of the multilink procedure (MLP): addresses C and D.
    Multilink,
}

impl LinkProcedure {
    /// The address of the station with `role`: A or C for the DTE, B or D
    /// for the DCE (X.25 2.4.2).
    pub const fn station_address(self, role: Role) -> Address {
        match (self, role) {
            (LinkProcedure::SingleLink, Role::Dte) => Address::A,
            (LinkProcedure::SingleLink, Role::Dce) => Address::B,
            (LinkProcedure::Multilink, Role::Dte) => Address::C,
            (LinkProcedure::Multilink, Role::Dce) => Address::D,
        }
    }
}

impl fmt::Display for LinkProcedure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LinkProcedure::SingleLink => "single-link",
            LinkProcedure::Multilink => "multilink",
        })
    }
}

/// The address a LAPB station with role `sender` puts on a command or a
/// response (X.25 2.4.2): a command carries the receiver's address, a
/// response the sender's own.
pub const fn lapb_address(
    sender: Role,
    frame: CommandResponse,
    procedure: LinkProcedure,
) -> Address {
    match frame {
        CommandResponse::Command => procedure.station_address(sender.peer()),
        CommandResponse::Response => procedure.station_address(sender),
    }
}

/// Tells whether a frame received by a LAPB station with role `receiver`
/// is a command (it carries the receiver's own address) or a response (it
/// carries the peer's address), X.25 2.4.2. Any other address is an
/// [`LapbError::UnexpectedAddress`]; X.25 discards such frames.
pub fn lapb_command_response(
    receiver: Role,
    address: Address,
    procedure: LinkProcedure,
) -> Result<CommandResponse, LapbError> {
    let own = procedure.station_address(receiver);
    let peer = procedure.station_address(receiver.peer());
    if address == own {
        Ok(CommandResponse::Command)
    } else if address == peer {
        Ok(CommandResponse::Response)
    } else {
        Err(LapbError::UnexpectedAddress {
            address,
            receiver,
            procedure,
            own,
            peer,
        })
    }
}

/// A station's part in an unbalanced procedure, NRM or ARM (ISO 13239
/// clause 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Station {
    /// The primary station, which controls the link and sends commands.
    Primary,
    /// A secondary station, which answers with responses.
    Secondary,
}

/// Whether a frame sent by `sender` in NRM or ARM is a command or a
/// response: the primary sends only commands and secondaries only
/// responses (ISO 13239 clause 6). Either way the address field holds the
/// secondary's address.
pub const fn unbalanced_command_response(sender: Station) -> CommandResponse {
    match sender {
        Station::Primary => CommandResponse::Command,
        Station::Secondary => CommandResponse::Response,
    }
}
