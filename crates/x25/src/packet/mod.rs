//! X.25 packet formats (ITU-T X.25 (10/96) clause 5): every packet starts
//! with the general format identifier (GFI) and the logical channel
//! identifier (5.1.1, 5.1.2), then the packet type identifier (5.1.3,
//! Table 5-2). Modulo 8 and modulo 128 are decoded; the GFI's extension
//! code (modulo 32 768) is refused. Decoding never panics; a refused
//! packet's error carries the diagnostic code of Annex E that names it.

mod address;
pub mod cause;
mod facility;

pub use address::{AddressBlock, AddressEncodeError, AddressError, AddressFormat, DteAddress};
pub use facility::{
    Facility, FacilityEncodeError, FastSelect, PACKET_SIZE, REVERSE_CHARGING_FAST_SELECT,
    THROUGHPUT_CLASS, WINDOW_SIZE,
};

use core::fmt;

use linklab_wire::control::Modulus;
use thiserror::Error;

/// A logical channel identifier: the 4-bit logical channel group number
/// and the 8-bit logical channel number as one 12-bit value (5.1.2,
/// 3.1). LCI 0 carries restart and diagnostic packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Lci(u16);

impl Lci {
    /// LCI 0, of restart and diagnostic packets (5.5, 5.6).
    pub const ZERO: Lci = Lci(0);

    /// The LCI `value` (taken modulo 4096).
    pub const fn new(value: u16) -> Lci {
        Lci(value & 0x0FFF)
    }

    /// The LCI from its group and channel number (group taken modulo 16).
    pub const fn from_parts(group: u8, channel: u8) -> Lci {
        Lci(((group & 0x0F) as u16) << 8 | channel as u16)
    }

    /// The 12-bit value.
    pub const fn value(self) -> u16 {
        self.0
    }

    /// The logical channel group number (bits 4-1 of octet 1).
    pub const fn group(self) -> u8 {
        (self.0 >> 8) as u8
    }

    /// The logical channel number (octet 2).
    pub const fn channel(self) -> u8 {
        (self.0 & 0xFF) as u8
    }
}

impl fmt::Display for Lci {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LCN {}/{}", self.group(), self.channel())
    }
}

/// The fields after the packet type of a call set-up packet (5.2.1):
/// address block, facilities and call (or called, or clear) user data.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct CallFields {
    /// Called and calling DTE addresses, and their format (the A bit).
    pub address: AddressBlock,
    /// The facilities, in order (5.2.2, clause 7).
    pub facilities: Vec<Facility>,
    /// User data: call user data (at most 16 octets, 128 with fast
    /// select, 5.2.3.1.4), e.g. 0xCC for IP (RFC 1356 3.1); the decoder
    /// does not enforce the limit.
    pub user_data: Vec<u8>,
}

/// A data packet's fields (5.3.1, figures 5-11 and 5-12).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DataFields {
    /// Qualifier bit (bit 8 of the GFI, 4.3.3).
    pub q: bool,
    /// Delivery confirmation bit (bit 7 of the GFI, 4.3.4).
    pub d: bool,
    /// More data bit: a complete packet sequence continues (4.3.5).
    pub m: bool,
    /// P(S), the packet send sequence number.
    pub ps: u8,
    /// P(R), the packet receive sequence number.
    pub pr: u8,
    /// The user data field.
    pub user_data: Vec<u8>,
}

/// What a packet is, after its header (Table 5-2). Names are the
/// DTE-to-DCE ones; each packet type is the same octet in the other
/// direction, named in the variant's doc.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Body {
    /// CALL REQUEST / INCOMING CALL (0x0B, 5.2.3.1).
    CallRequest {
        /// D bit: the D-bit procedure is requested (4.3.4).
        d: bool,
        /// Addresses, facilities, call user data.
        fields: CallFields,
    },
    /// CALL ACCEPTED / CALL CONNECTED (0x0F, 5.2.3.2); `None` is the
    /// three-octet basic format.
    CallAccepted {
        /// D bit: the D-bit procedure is agreed.
        d: bool,
        /// The extended format's fields.
        fields: Option<CallFields>,
    },
    /// CLEAR REQUEST / CLEAR INDICATION (0x13, 5.2.3.3).
    ClearRequest {
        /// Clearing cause (Table 5-5; 0 or 0x80-0xFF from a DTE).
        cause: u8,
        /// Diagnostic code (Annex E), optional in the basic format.
        diagnostic: Option<u8>,
        /// The extended format's fields (need a diagnostic code before
        /// them).
        fields: Option<CallFields>,
    },
    /// CLEAR CONFIRMATION (0x17, 5.2.3.4), with the optional extended
    /// format's address block and facilities.
    ClearConfirmation {
        /// The extended format's fields.
        fields: Option<CallFields>,
    },
    /// DATA (5.3.1).
    Data(DataFields),
    /// INTERRUPT (0x23, 5.3.2): 1-32 octets of interrupt user data.
    Interrupt {
        /// Interrupt user data.
        user_data: Vec<u8>,
    },
    /// INTERRUPT CONFIRMATION (0x27, 5.3.3).
    InterruptConfirmation,
    /// RR, receive ready (5.4.1): P(R).
    ReceiveReady {
        /// P(R).
        pr: u8,
    },
    /// RNR, receive not ready (5.4.2): P(R).
    ReceiveNotReady {
        /// P(R).
        pr: u8,
    },
    /// REJ, reject (5.7.1): P(R).
    Reject {
        /// P(R).
        pr: u8,
    },
    /// RESET REQUEST / RESET INDICATION (0x1B, 5.4.3).
    ResetRequest {
        /// Resetting cause (Table 5-6).
        cause: u8,
        /// Diagnostic code (Annex E).
        diagnostic: Option<u8>,
    },
    /// RESET CONFIRMATION (0x1F, 5.4.4).
    ResetConfirmation,
    /// RESTART REQUEST / RESTART INDICATION (0xFB, 5.5.1), on LCI 0.
    RestartRequest {
        /// Restarting cause (Table 5-7).
        cause: u8,
        /// Diagnostic code (Annex E).
        diagnostic: Option<u8>,
    },
    /// RESTART CONFIRMATION (0xFF, 5.5.2), on LCI 0.
    RestartConfirmation,
    /// DIAGNOSTIC (0xF1, 5.6), on LCI 0.
    Diagnostic {
        /// Diagnostic code (Annex E).
        code: u8,
        /// Diagnostic explanation: the start of the erroneous packet.
        explanation: Vec<u8>,
    },
}

/// An X.25 packet.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Packet {
    /// Sequence numbering of the GFI (5.1.1): modulo 8 or 128.
    pub modulus: Modulus,
    /// The logical channel identifier.
    pub lci: Lci,
    /// The packet type and its fields.
    pub body: Body,
}

/// Why octets are not an X.25 packet. [`DecodeError::diagnostic`] gives
/// the Annex E code.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The packet ends inside a field.
    #[error("packet too short: it ends inside the {what}")]
    TooShort {
        /// The field cut.
        what: &'static str,
    },
    /// Octets follow the last field of a packet type that has none.
    #[error("packet too long: {extra} octets after the end of a {kind} packet")]
    TooLong {
        /// The packet type.
        kind: &'static str,
        /// Octets left over.
        extra: usize,
    },
    /// GFI bits 6-5 are 00, or 11 (modulo 32 768, not supported), or a
    /// Q/A or D bit is set in a packet type that has none (5.1.1).
    #[error("invalid general format identifier 0x{gfi:X} for this packet type")]
    InvalidGfi {
        /// The four GFI bits.
        gfi: u8,
    },
    /// Table 5-2 has no such packet type identifier.
    #[error("unidentifiable packet type identifier 0x{0:02X}")]
    UnknownType(u8),
    /// Restart and diagnostic packets travel on LCI 0 (5.5, 5.6).
    #[error("{kind} packet on {lci}; it must use logical channel 0")]
    NonZeroLci {
        /// The packet type.
        kind: &'static str,
        /// The LCI it came on.
        lci: Lci,
    },
    /// A basic-format called address semi-octet is not BCD.
    #[error("invalid called DTE address (a semi-octet is not a BCD digit)")]
    InvalidCalledAddress,
    /// A basic-format calling address semi-octet is not BCD.
    #[error("invalid calling DTE address (a semi-octet is not a BCD digit)")]
    InvalidCallingAddress,
    /// A facility runs past the facility field.
    #[error("facility 0x{code:02X} runs past the end of the facility field")]
    FacilityLength {
        /// The facility code.
        code: u8,
    },
}

impl DecodeError {
    /// The diagnostic code of X.25 Annex E for this error.
    pub fn diagnostic(&self) -> u8 {
        use cause::diagnostic as d;
        match self {
            DecodeError::TooShort { .. } => d::PACKET_TOO_SHORT,
            DecodeError::TooLong { .. } => d::PACKET_TOO_LONG,
            DecodeError::InvalidGfi { .. } => d::INVALID_GFI,
            DecodeError::UnknownType(_) => d::UNIDENTIFIABLE_PACKET,
            DecodeError::NonZeroLci { .. } => d::RESTART_WITH_NONZERO_LCI,
            DecodeError::InvalidCalledAddress => d::INVALID_CALLED_ADDRESS,
            DecodeError::InvalidCallingAddress => d::INVALID_CALLING_ADDRESS,
            DecodeError::FacilityLength { .. } => d::INVALID_FACILITY_LENGTH,
        }
    }
}

/// Why a packet cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// A sequence number is not below the modulus.
    #[error("{field} = {value} does not fit modulo {modulus}")]
    Sequence {
        /// P(S) or P(R).
        field: &'static str,
        /// The value.
        value: u8,
        /// 8 or 128.
        modulus: u8,
    },
    /// The address block cannot be coded.
    #[error(transparent)]
    Address(#[from] AddressEncodeError),
    /// The facilities cannot be coded.
    #[error(transparent)]
    Facilities(#[from] FacilityEncodeError),
    /// Extended-format clear fields come after a diagnostic code (5.2.3.3).
    #[error("a clear packet with an address block needs a diagnostic code before it")]
    FieldsWithoutDiagnostic,
    /// Restart and diagnostic packets travel on LCI 0.
    #[error("restart and diagnostic packets must use logical channel 0")]
    NonZeroLci,
}

mod kind {
    pub const CALL_REQUEST: u8 = 0x0B;
    pub const CALL_ACCEPTED: u8 = 0x0F;
    pub const CLEAR_REQUEST: u8 = 0x13;
    pub const CLEAR_CONFIRMATION: u8 = 0x17;
    pub const INTERRUPT: u8 = 0x23;
    pub const INTERRUPT_CONFIRMATION: u8 = 0x27;
    pub const RESET_REQUEST: u8 = 0x1B;
    pub const RESET_CONFIRMATION: u8 = 0x1F;
    pub const RESTART_REQUEST: u8 = 0xFB;
    pub const RESTART_CONFIRMATION: u8 = 0xFF;
    pub const DIAGNOSTIC: u8 = 0xF1;
    pub const RR: u8 = 0x01;
    pub const RNR: u8 = 0x05;
    pub const REJ: u8 = 0x09;
}

impl Body {
    /// The packet type's name as X.25 gives it for the DTE-to-DCE
    /// direction, e.g. "CALL REQUEST".
    pub fn name(&self) -> &'static str {
        match self {
            Body::CallRequest { .. } => "CALL REQUEST",
            Body::CallAccepted { .. } => "CALL ACCEPTED",
            Body::ClearRequest { .. } => "CLEAR REQUEST",
            Body::ClearConfirmation { .. } => "CLEAR CONFIRMATION",
            Body::Data(_) => "DATA",
            Body::Interrupt { .. } => "INTERRUPT",
            Body::InterruptConfirmation => "INTERRUPT CONFIRMATION",
            Body::ReceiveReady { .. } => "RR",
            Body::ReceiveNotReady { .. } => "RNR",
            Body::Reject { .. } => "REJ",
            Body::ResetRequest { .. } => "RESET REQUEST",
            Body::ResetConfirmation => "RESET CONFIRMATION",
            Body::RestartRequest { .. } => "RESTART REQUEST",
            Body::RestartConfirmation => "RESTART CONFIRMATION",
            Body::Diagnostic { .. } => "DIAGNOSTIC",
        }
    }
}

/// The optional call fields after octet 3 (or after cause and diagnostic)
/// of packets whose extended format has them: `None` if no octets
/// remain.
fn optional_fields(rest: &[u8], format: AddressFormat) -> Result<Option<CallFields>, DecodeError> {
    if rest.is_empty() {
        return Ok(None);
    }
    call_fields(rest, format).map(Some)
}

fn call_fields(rest: &[u8], format: AddressFormat) -> Result<CallFields, DecodeError> {
    let (address, used) = AddressBlock::decode(rest, format)?;
    let rest = &rest[used..];
    let (facilities, used) = facility::decode(rest)?;
    Ok(CallFields {
        address,
        facilities,
        user_data: rest[used..].to_vec(),
    })
}

fn no_more(rest: &[u8], kind: &'static str) -> Result<(), DecodeError> {
    match rest.len() {
        0 => Ok(()),
        extra => Err(DecodeError::TooLong { kind, extra }),
    }
}

/// Cause and optional diagnostic octets (5.2.3.3, 5.4.3, 5.5.1).
fn cause_diagnostic(rest: &[u8]) -> Result<(u8, Option<u8>, &[u8]), DecodeError> {
    match rest {
        [] => Err(DecodeError::TooShort {
            what: "cause field",
        }),
        [cause] => Ok((*cause, None, &[])),
        [cause, diagnostic, rest @ ..] => Ok((*cause, Some(*diagnostic), rest)),
    }
}

impl Packet {
    /// Decodes a packet (the information field of an LAPB I frame).
    pub fn decode(octets: &[u8]) -> Result<Packet, DecodeError> {
        let [first, second, rest @ ..] = octets else {
            return Err(DecodeError::TooShort {
                what: "packet header",
            });
        };
        let gfi = first >> 4;
        let modulus = match gfi & 0b11 {
            0b01 => Modulus::Mod8,
            0b10 => Modulus::Mod128,
            _ => return Err(DecodeError::InvalidGfi { gfi }),
        };
        let lci = Lci::from_parts(first & 0x0F, *second);
        let (&kind, rest) = rest.split_first().ok_or(DecodeError::TooShort {
            what: "packet type identifier",
        })?;
        let bit8 = gfi & 0b1000 != 0;
        let bit7 = gfi & 0b0100 != 0;
        let format = if bit8 {
            AddressFormat::TypeOfAddress
        } else {
            AddressFormat::Basic
        };
        // Checks that the GFI has no Q/A bit (`a`) or D bit (`d`) where the
        // packet type does not use it.
        let plain = |a: bool, d: bool| {
            if (bit8 && !a) || (bit7 && !d) {
                Err(DecodeError::InvalidGfi { gfi })
            } else {
                Ok(())
            }
        };
        let mod128 = modulus == Modulus::Mod128;
        let body = if kind & 1 == 0 {
            plain(true, true)?;
            Body::Data(if mod128 {
                let (&second, user_data) = rest.split_first().ok_or(DecodeError::TooShort {
                    what: "modulo-128 P(R) octet",
                })?;
                DataFields {
                    q: bit8,
                    d: bit7,
                    m: second & 1 == 1,
                    ps: kind >> 1,
                    pr: second >> 1,
                    user_data: user_data.to_vec(),
                }
            } else {
                DataFields {
                    q: bit8,
                    d: bit7,
                    m: kind & 0x10 != 0,
                    ps: (kind >> 1) & 0x07,
                    pr: kind >> 5,
                    user_data: rest.to_vec(),
                }
            })
        } else if (kind & 0x1F) == kind::RR
            || (kind & 0x1F) == kind::RNR
            || (kind & 0x1F) == kind::REJ
        {
            plain(false, false)?;
            let (code, pr, rest) = if mod128 {
                let (&second, rest) = rest.split_first().ok_or(DecodeError::TooShort {
                    what: "modulo-128 P(R) octet",
                })?;
                if kind & 0xE0 != 0 || second & 1 != 0 {
                    return Err(DecodeError::UnknownType(kind));
                }
                (kind, second >> 1, rest)
            } else {
                (kind & 0x1F, kind >> 5, rest)
            };
            let body = match code {
                kind::RR => Body::ReceiveReady { pr },
                kind::RNR => Body::ReceiveNotReady { pr },
                _ => Body::Reject { pr },
            };
            no_more(rest, body.name())?;
            body
        } else {
            let body = match kind {
                kind::CALL_REQUEST => {
                    plain(true, true)?;
                    Body::CallRequest {
                        d: bit7,
                        fields: call_fields(rest, format)?,
                    }
                }
                kind::CALL_ACCEPTED => {
                    plain(true, true)?;
                    let fields = optional_fields(rest, format)?;
                    if fields.is_none() && bit8 {
                        return Err(DecodeError::InvalidGfi { gfi });
                    }
                    Body::CallAccepted { d: bit7, fields }
                }
                kind::CLEAR_REQUEST => {
                    plain(true, false)?;
                    let (cause, diagnostic, rest) = cause_diagnostic(rest)?;
                    let fields = optional_fields(rest, format)?;
                    if fields.is_none() && bit8 {
                        return Err(DecodeError::InvalidGfi { gfi });
                    }
                    Body::ClearRequest {
                        cause,
                        diagnostic,
                        fields,
                    }
                }
                kind::CLEAR_CONFIRMATION => {
                    plain(true, false)?;
                    let fields = optional_fields(rest, format)?;
                    if fields.is_none() && bit8 {
                        return Err(DecodeError::InvalidGfi { gfi });
                    }
                    Body::ClearConfirmation { fields }
                }
                kind::INTERRUPT => {
                    plain(false, false)?;
                    Body::Interrupt {
                        user_data: rest.to_vec(),
                    }
                }
                kind::INTERRUPT_CONFIRMATION => Body::InterruptConfirmation,
                kind::RESET_REQUEST => {
                    plain(false, false)?;
                    let (cause, diagnostic, rest) = cause_diagnostic(rest)?;
                    no_more(rest, "RESET REQUEST")?;
                    Body::ResetRequest { cause, diagnostic }
                }
                kind::RESET_CONFIRMATION => Body::ResetConfirmation,
                kind::RESTART_REQUEST => {
                    plain(false, false)?;
                    let (cause, diagnostic, rest) = cause_diagnostic(rest)?;
                    no_more(rest, "RESTART REQUEST")?;
                    Body::RestartRequest { cause, diagnostic }
                }
                kind::RESTART_CONFIRMATION => Body::RestartConfirmation,
                kind::DIAGNOSTIC => {
                    plain(false, false)?;
                    let (&code, explanation) = rest.split_first().ok_or(DecodeError::TooShort {
                        what: "diagnostic code",
                    })?;
                    Body::Diagnostic {
                        code,
                        explanation: explanation.to_vec(),
                    }
                }
                other => return Err(DecodeError::UnknownType(other)),
            };
            if matches!(
                body,
                Body::InterruptConfirmation | Body::ResetConfirmation | Body::RestartConfirmation
            ) {
                plain(false, false)?;
                no_more(rest, body.name())?;
            }
            body
        };
        if matches!(
            body,
            Body::RestartRequest { .. } | Body::RestartConfirmation | Body::Diagnostic { .. }
        ) && lci != Lci::ZERO
        {
            return Err(DecodeError::NonZeroLci {
                kind: body.name(),
                lci,
            });
        }
        Ok(Packet { modulus, lci, body })
    }

    /// Encodes the packet.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::with_capacity(8);
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Appends the encoded packet to `out` (which is left as it was on
    /// error).
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        let start = out.len();
        let result = self.encode_inner(out);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    fn encode_inner(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        let m = self.modulus.value();
        let check = |field: &'static str, value: u8| {
            if value < m {
                Ok(value)
            } else {
                Err(EncodeError::Sequence {
                    field,
                    value,
                    modulus: m,
                })
            }
        };
        let mod_bits: u8 = match self.modulus {
            Modulus::Mod8 => 0b01,
            Modulus::Mod128 => 0b10,
        };
        let a_bit = |fields: Option<&CallFields>| {
            fields.is_some_and(|f| f.address.format == AddressFormat::TypeOfAddress)
        };
        let (bit8, bit7) = match &self.body {
            Body::CallRequest { d, fields } => (a_bit(Some(fields)), *d),
            Body::CallAccepted { d, fields } => (a_bit(fields.as_ref()), *d),
            Body::ClearRequest { fields, .. } | Body::ClearConfirmation { fields } => {
                (a_bit(fields.as_ref()), false)
            }
            Body::Data(data) => (data.q, data.d),
            _ => (false, false),
        };
        if matches!(
            self.body,
            Body::RestartRequest { .. } | Body::RestartConfirmation | Body::Diagnostic { .. }
        ) && self.lci != Lci::ZERO
        {
            return Err(EncodeError::NonZeroLci);
        }
        let gfi = u8::from(bit8) << 3 | u8::from(bit7) << 2 | mod_bits;
        out.extend([gfi << 4 | self.lci.group(), self.lci.channel()]);
        let put_fields = |fields: &CallFields, out: &mut Vec<u8>| -> Result<(), EncodeError> {
            fields.address.encode(out)?;
            facility::encode(&fields.facilities, out)?;
            out.extend_from_slice(&fields.user_data);
            Ok(())
        };
        let flow = |code: u8, pr: u8, out: &mut Vec<u8>| -> Result<(), EncodeError> {
            let pr = check("P(R)", pr)?;
            match self.modulus {
                Modulus::Mod8 => out.push(pr << 5 | code),
                Modulus::Mod128 => out.extend([code, pr << 1]),
            }
            Ok(())
        };
        match &self.body {
            Body::CallRequest { fields, .. } => {
                out.push(kind::CALL_REQUEST);
                put_fields(fields, out)?;
            }
            Body::CallAccepted { fields, .. } => {
                out.push(kind::CALL_ACCEPTED);
                if let Some(fields) = fields {
                    put_fields(fields, out)?;
                }
            }
            Body::ClearRequest {
                cause,
                diagnostic,
                fields,
            } => {
                out.extend([kind::CLEAR_REQUEST, *cause]);
                match (diagnostic, fields) {
                    (None, Some(_)) => return Err(EncodeError::FieldsWithoutDiagnostic),
                    (Some(diagnostic), _) => out.push(*diagnostic),
                    (None, None) => {}
                }
                if let Some(fields) = fields {
                    put_fields(fields, out)?;
                }
            }
            Body::ClearConfirmation { fields } => {
                out.push(kind::CLEAR_CONFIRMATION);
                if let Some(fields) = fields {
                    put_fields(fields, out)?;
                }
            }
            Body::Data(data) => {
                let ps = check("P(S)", data.ps)?;
                let pr = check("P(R)", data.pr)?;
                match self.modulus {
                    Modulus::Mod8 => out.push(pr << 5 | u8::from(data.m) << 4 | ps << 1),
                    Modulus::Mod128 => out.extend([ps << 1, pr << 1 | u8::from(data.m)]),
                }
                out.extend_from_slice(&data.user_data);
            }
            Body::Interrupt { user_data } => {
                out.push(kind::INTERRUPT);
                out.extend_from_slice(user_data);
            }
            Body::InterruptConfirmation => out.push(kind::INTERRUPT_CONFIRMATION),
            Body::ReceiveReady { pr } => flow(kind::RR, *pr, out)?,
            Body::ReceiveNotReady { pr } => flow(kind::RNR, *pr, out)?,
            Body::Reject { pr } => flow(kind::REJ, *pr, out)?,
            Body::ResetRequest { cause, diagnostic } => {
                out.extend([kind::RESET_REQUEST, *cause]);
                out.extend(*diagnostic);
            }
            Body::ResetConfirmation => out.push(kind::RESET_CONFIRMATION),
            Body::RestartRequest { cause, diagnostic } => {
                out.extend([kind::RESTART_REQUEST, *cause]);
                out.extend(*diagnostic);
            }
            Body::RestartConfirmation => out.push(kind::RESTART_CONFIRMATION),
            Body::Diagnostic { code, explanation } => {
                out.extend([kind::DIAGNOSTIC, *code]);
                out.extend_from_slice(explanation);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(packet: &Packet, octets: &[u8]) {
        assert_eq!(packet.encode().unwrap(), octets, "{packet:?}");
        assert_eq!(&Packet::decode(octets).unwrap(), packet);
    }

    #[test]
    fn call_request_with_facilities_and_ip_user_data() {
        let packet = Packet {
            modulus: Modulus::Mod8,
            lci: Lci::from_parts(0, 1),
            body: Body::CallRequest {
                d: false,
                fields: CallFields {
                    address: AddressBlock {
                        format: AddressFormat::Basic,
                        called: DteAddress::new("1234").unwrap(),
                        calling: DteAddress::new("567").unwrap(),
                    },
                    facilities: vec![Facility::PacketSize {
                        from_called: 8,
                        from_calling: 8,
                    }],
                    user_data: vec![0xCC],
                },
            },
        };
        round_trip(
            &packet,
            &[
                0x10, 0x01, 0x0B, 0x34, 0x12, 0x34, 0x56, 0x70, 0x03, 0x42, 8, 8, 0xCC,
            ],
        );
    }

    #[test]
    fn data_packets_modulo_8_and_128() {
        let data = DataFields {
            q: true,
            d: true,
            m: true,
            ps: 5,
            pr: 3,
            user_data: vec![1, 2],
        };
        let mod8 = Packet {
            modulus: Modulus::Mod8,
            lci: Lci::new(0x123),
            body: Body::Data(data.clone()),
        };
        round_trip(&mod8, &[0xD1, 0x23, 0b0111_1010, 1, 2]);
        let mod128 = Packet {
            modulus: Modulus::Mod128,
            lci: Lci::new(0x123),
            body: Body::Data(DataFields {
                ps: 100,
                pr: 127,
                ..data
            }),
        };
        round_trip(&mod128, &[0xE1, 0x23, 200, 0xFF, 1, 2]);
    }

    #[test]
    fn flow_control_and_restart_packets() {
        let p = |modulus, body| Packet {
            modulus,
            lci: Lci::ZERO,
            body,
        };
        round_trip(
            &p(Modulus::Mod8, Body::ReceiveReady { pr: 7 }),
            &[0x10, 0, 0xE1],
        );
        round_trip(
            &p(Modulus::Mod8, Body::ReceiveNotReady { pr: 2 }),
            &[0x10, 0, 0x45],
        );
        round_trip(
            &p(Modulus::Mod128, Body::Reject { pr: 90 }),
            &[0x20, 0, 0x09, 180],
        );
        round_trip(
            &p(
                Modulus::Mod8,
                Body::RestartRequest {
                    cause: 0,
                    diagnostic: Some(0),
                },
            ),
            &[0x10, 0, 0xFB, 0, 0],
        );
        round_trip(
            &p(Modulus::Mod8, Body::RestartConfirmation),
            &[0x10, 0, 0xFF],
        );
    }

    #[test]
    fn errors_name_their_annex_e_diagnostic() {
        let cases: [(&[u8], u8); 6] = [
            (&[0x10, 0x00], 38),
            (&[0x30, 0x00, 0x01], 40),
            (&[0x10, 0x00, 0x03], 33),
            (&[0x10, 0x01, 0xFF], 41),
            (&[0x10, 0x01, 0x1F, 0x00], 39),
            (&[0x10, 0x01, 0x0B, 0x01, 0xF0, 0x00], 67),
        ];
        for (octets, diagnostic) in cases {
            let err = Packet::decode(octets).unwrap_err();
            assert_eq!(err.diagnostic(), diagnostic, "{octets:02X?}: {err}");
        }
    }
}
