//! HDLC control fields: the I, S and U formats, modulo 8 and modulo 128.
//!
//! Shared by every protocol of the HDLC family (AX.25, LAPB, HDLC NRM/ARM/ABM).
//! Bits are numbered as in the specifications: bit 0 is the low-order bit of
//! an octet and the first bit sent on the line; in a two-octet (modulo-128)
//! field, bits 0-7 are the first octet and bits 8-15 the second.
//!
//! Modulo 8, one octet (AX.25 v2.2 4.2.1, fig. 4.1a; ISO 13239 5.3.1):
//!
//! ```text
//!            7 6 5   4    3 2 1   0
//! I frame    N(R)    P    N(S)    0
//! S frame    N(R)    P/F  S S 0   1
//! U frame    M M M   P/F  M M 1   1
//! ```
//!
//! Modulo 128, two octets for I and S frames (AX.25 v2.2 4.2.1, fig. 4.1b;
//! ISO 13239 5.3.2); U frames keep their one-octet form:
//!
//! ```text
//!            15..9   8    7 6 5 4 3 2 1   0
//! I frame    N(R)    P    N(S)            0
//! S frame    N(R)    P/F  0 0 0 0 S S 0   1
//! ```

use std::fmt;

use thiserror::Error;

/// Sequence-number modulus of a link: 3-bit or 7-bit N(S)/N(R)
/// (AX.25 v2.2 4.2.2.1; ISO 13239 5.3.1 basic and 5.3.2 extended format).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Modulus {
    /// Modulo 8: sequence numbers 0-7, one-octet control field.
    Mod8,
    /// Modulo 128 ("extended"): sequence numbers 0-127, two-octet I and S
    /// control fields.
    Mod128,
}

impl Modulus {
    /// The modulus as a number: 8 or 128.
    pub const fn value(self) -> u8 {
        match self {
            Modulus::Mod8 => 8,
            Modulus::Mod128 => 128,
        }
    }

    /// Length in octets of an I or S control field under this modulus.
    pub const fn numbered_len(self) -> usize {
        match self {
            Modulus::Mod8 => 1,
            Modulus::Mod128 => 2,
        }
    }
}

impl fmt::Display for Modulus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "modulo {}", self.value())
    }
}

/// Supervisory function, the two S bits (bits 2-3) of an S frame
/// (AX.25 v2.2 4.3.2, fig. 4.3a/4.3b; ISO 13239 5.5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Supervisory {
    /// Receive Ready, S bits 00.
    Rr,
    /// Receive Not Ready, S bits 01 (bit 2 set).
    Rnr,
    /// Reject, S bits 10 (bit 3 set).
    Rej,
    /// Selective Reject, S bits 11.
    Srej,
}

impl Supervisory {
    /// All four supervisory functions.
    pub const ALL: [Supervisory; 4] = [
        Supervisory::Rr,
        Supervisory::Rnr,
        Supervisory::Rej,
        Supervisory::Srej,
    ];

    /// The value of bits 2-3 (already shifted into place) of the control field.
    const fn code(self) -> u8 {
        match self {
            Supervisory::Rr => 0x00,
            Supervisory::Rnr => 0x04,
            Supervisory::Rej => 0x08,
            Supervisory::Srej => 0x0C,
        }
    }

    /// The frame's name in the specifications: `"RR"`, `"RNR"`, `"REJ"`, `"SREJ"`.
    pub const fn name(self) -> &'static str {
        match self {
            Supervisory::Rr => "RR",
            Supervisory::Rnr => "RNR",
            Supervisory::Rej => "REJ",
            Supervisory::Srej => "SREJ",
        }
    }
}

/// Unnumbered command or response, the five M bits of a U frame
/// (AX.25 v2.2 4.3.3, fig. 4.4; ISO 13239 5.5.3).
///
/// Some HDLC code points mean one thing as a command and another as a
/// response (ISO 13239 5.5.3). [`Control::decode`] cannot tell which and
/// returns the balanced-mode (AX.25, LAPB) meaning: code `0x0F` is [`Dm`]
/// and `0x43` is [`Disc`]. A station in an unbalanced mode that received
/// the frame as a command turns `Dm` into [`Sarm`] with
/// [`Unnumbered::as_command`].
///
/// [`Dm`]: Unnumbered::Dm
/// [`Disc`]: Unnumbered::Disc
/// [`Sarm`]: Unnumbered::Sarm
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unnumbered {
    /// Set Asynchronous Balanced Mode, `001P1111` = 0x2F (AX.25 4.3.3.1).
    Sabm,
    /// Set Asynchronous Balanced Mode Extended, `011P1111` = 0x6F (AX.25 4.3.3.2).
    Sabme,
    /// Disconnect, `010P0011` = 0x43 (AX.25 4.3.3.3). As a response this code
    /// is RD, Request Disconnect (ISO 13239).
    Disc,
    /// Disconnected Mode response, `000F1111` = 0x0F (AX.25 4.3.3.5). The same
    /// code sent as a command is [`Unnumbered::Sarm`].
    Dm,
    /// Unnumbered Acknowledge response, `011F0011` = 0x63 (AX.25 4.3.3.4).
    Ua,
    /// Frame Reject response, `100F0111` = 0x87 (AX.25 4.3.3.9; ISO 13239 5.5.3.4.2).
    Frmr,
    /// Unnumbered Information, `000P0011` = 0x03 (AX.25 4.3.3.6).
    Ui,
    /// Exchange Identification, `101P1111` = 0xAF (AX.25 4.3.3.7).
    Xid,
    /// Test, `111P0011` = 0xE3 (AX.25 4.3.3.8).
    Test,
    /// Set Normal Response Mode command, `100P0011` = 0x83 (ISO 13239 5.5.3.3).
    Snrm,
    /// Set Normal Response Mode Extended command, `110P1111` = 0xCF (ISO 13239).
    Snrme,
    /// Set Asynchronous Response Mode command, `000P1111` = 0x0F (ISO 13239);
    /// shares its code with the DM response.
    Sarm,
    /// Set Asynchronous Response Mode Extended command, `010P1111` = 0x4F (ISO 13239).
    Sarme,
}

impl Unnumbered {
    /// Every unnumbered command and response this module knows.
    pub const ALL: [Unnumbered; 13] = [
        Unnumbered::Sabm,
        Unnumbered::Sabme,
        Unnumbered::Disc,
        Unnumbered::Dm,
        Unnumbered::Ua,
        Unnumbered::Frmr,
        Unnumbered::Ui,
        Unnumbered::Xid,
        Unnumbered::Test,
        Unnumbered::Snrm,
        Unnumbered::Snrme,
        Unnumbered::Sarm,
        Unnumbered::Sarme,
    ];

    /// The control octet with the P/F bit (bit 4) clear.
    pub const fn code(self) -> u8 {
        match self {
            Unnumbered::Sabm => 0x2F,
            Unnumbered::Sabme => 0x6F,
            Unnumbered::Disc => 0x43,
            Unnumbered::Dm | Unnumbered::Sarm => 0x0F,
            Unnumbered::Ua => 0x63,
            Unnumbered::Frmr => 0x87,
            Unnumbered::Ui => 0x03,
            Unnumbered::Xid => 0xAF,
            Unnumbered::Test => 0xE3,
            Unnumbered::Snrm => 0x83,
            Unnumbered::Snrme => 0xCF,
            Unnumbered::Sarme => 0x4F,
        }
    }

    /// Decodes a control octet whose P/F bit is ignored; shared code points
    /// get their balanced-mode meaning (see the type's documentation).
    fn from_code(octet: u8) -> Option<Unnumbered> {
        Some(match octet & !PF_BIT {
            0x2F => Unnumbered::Sabm,
            0x6F => Unnumbered::Sabme,
            0x43 => Unnumbered::Disc,
            0x0F => Unnumbered::Dm,
            0x63 => Unnumbered::Ua,
            0x87 => Unnumbered::Frmr,
            0x03 => Unnumbered::Ui,
            0xAF => Unnumbered::Xid,
            0xE3 => Unnumbered::Test,
            0x83 => Unnumbered::Snrm,
            0xCF => Unnumbered::Snrme,
            0x4F => Unnumbered::Sarme,
            _ => return None,
        })
    }

    /// The meaning of this code point when received as a command: DM becomes
    /// SARM (ISO 13239 5.5.3); every other value is returned unchanged.
    pub const fn as_command(self) -> Unnumbered {
        match self {
            Unnumbered::Dm => Unnumbered::Sarm,
            other => other,
        }
    }

    /// The frame's name in the specifications, e.g. `"SABME"`.
    pub const fn name(self) -> &'static str {
        match self {
            Unnumbered::Sabm => "SABM",
            Unnumbered::Sabme => "SABME",
            Unnumbered::Disc => "DISC",
            Unnumbered::Dm => "DM",
            Unnumbered::Ua => "UA",
            Unnumbered::Frmr => "FRMR",
            Unnumbered::Ui => "UI",
            Unnumbered::Xid => "XID",
            Unnumbered::Test => "TEST",
            Unnumbered::Snrm => "SNRM",
            Unnumbered::Snrme => "SNRME",
            Unnumbered::Sarm => "SARM",
            Unnumbered::Sarme => "SARME",
        }
    }
}

/// The P/F bit of a one-octet control field (bit 4).
const PF_BIT: u8 = 0x10;

/// A decoded HDLC control field (AX.25 v2.2 4.2 and 4.3; ISO 13239 5.3-5.5).
///
/// `ns` is N(S), `nr` is N(R), `pf` the Poll/Final bit. Sequence numbers
/// must be below the [`Modulus`] the field is encoded with; [`Control::encode`]
/// checks this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Control {
    /// Information transfer format, bit 0 = 0 (AX.25 4.3.1, fig. 4.2a/4.2b).
    I {
        /// N(S), send sequence number.
        ns: u8,
        /// N(R), receive sequence number.
        nr: u8,
        /// The P bit (F when sent as a response in unbalanced modes).
        pf: bool,
    },
    /// Supervisory format, bits 0-1 = `01` (AX.25 4.3.2, fig. 4.3a/4.3b).
    S {
        /// RR, RNR, REJ or SREJ.
        kind: Supervisory,
        /// N(R), receive sequence number.
        nr: u8,
        /// The P/F bit.
        pf: bool,
    },
    /// Unnumbered format, bits 0-1 = `11` (AX.25 4.3.3, fig. 4.4); always one octet.
    U {
        /// Which command or response.
        kind: Unnumbered,
        /// The P/F bit.
        pf: bool,
    },
}

/// Why a control field could not be decoded or encoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ControlError {
    /// No octet at all where the control field should be.
    #[error("control field missing: the frame ends where the control field should start")]
    Missing,
    /// A modulo-128 I or S frame with only its first octet.
    #[error("modulo-128 {format} frame control field needs 2 octets; only 1 present")]
    TooShort {
        /// `"I"` or `"S"`.
        format: &'static str,
    },
    /// A U-frame control octet that is none of the known commands/responses.
    #[error("unknown U frame control field 0x{octet:02X} (modifier bits {modifier:05b})")]
    UnknownUnnumbered {
        /// The control octet as received.
        octet: u8,
        /// The five M bits, bits 7-5 then 3-2, as drawn in fig. 4.4.
        modifier: u8,
    },
    /// Bits 4-7 of the first octet of a modulo-128 S frame are not zero.
    #[error(
        "modulo-128 {kind} control field 0x{octet:02X} has reserved bits 4-7 set; they must be 0"
    )]
    ReservedSupervisoryBits {
        /// The frame's name, e.g. `"RR"`.
        kind: &'static str,
        /// The first control octet as received.
        octet: u8,
    },
    /// N(S) or N(R) is not below the modulus.
    #[error("{field} = {value} is out of range for {modulus} (0-{max})")]
    SequenceOutOfRange {
        /// `"N(S)"` or `"N(R)"`.
        field: &'static str,
        /// The offending value.
        value: u8,
        /// The modulus in force.
        modulus: Modulus,
        /// Largest allowed value.
        max: u8,
    },
}

impl Control {
    /// Decodes the control field at the start of `bytes` under `modulus`.
    /// Octets after the control field are ignored; [`Control::len`] tells
    /// how many were used.
    pub fn decode(bytes: &[u8], modulus: Modulus) -> Result<Control, ControlError> {
        let first = *bytes.first().ok_or(ControlError::Missing)?;
        if first & 0x03 == 0x03 {
            let kind = Unnumbered::from_code(first).ok_or(ControlError::UnknownUnnumbered {
                octet: first,
                modifier: ((first >> 3) & 0x1C) | ((first >> 2) & 0x03),
            })?;
            return Ok(Control::U {
                kind,
                pf: first & PF_BIT != 0,
            });
        }
        let is_i = first & 0x01 == 0;
        let kind = match (first >> 2) & 0x03 {
            0 => Supervisory::Rr,
            1 => Supervisory::Rnr,
            2 => Supervisory::Rej,
            _ => Supervisory::Srej,
        };
        match modulus {
            Modulus::Mod8 => {
                let nr = first >> 5;
                let pf = first & PF_BIT != 0;
                Ok(if is_i {
                    Control::I {
                        ns: (first >> 1) & 0x07,
                        nr,
                        pf,
                    }
                } else {
                    Control::S { kind, nr, pf }
                })
            }
            Modulus::Mod128 => {
                let format = if is_i { "I" } else { "S" };
                let second = *bytes.get(1).ok_or(ControlError::TooShort { format })?;
                let nr = second >> 1;
                let pf = second & 0x01 != 0;
                if is_i {
                    Ok(Control::I {
                        ns: first >> 1,
                        nr,
                        pf,
                    })
                } else if first & 0xF0 != 0 {
                    Err(ControlError::ReservedSupervisoryBits {
                        kind: kind.name(),
                        octet: first,
                    })
                } else {
                    Ok(Control::S { kind, nr, pf })
                }
            }
        }
    }

    /// Checks that N(S) and N(R) are below the modulus.
    pub fn validate(&self, modulus: Modulus) -> Result<(), ControlError> {
        let check = |field: &'static str, value: u8| {
            if value < modulus.value() {
                Ok(())
            } else {
                Err(ControlError::SequenceOutOfRange {
                    field,
                    value,
                    modulus,
                    max: modulus.value() - 1,
                })
            }
        };
        match *self {
            Control::I { ns, nr, .. } => {
                check("N(S)", ns)?;
                check("N(R)", nr)
            }
            Control::S { nr, .. } => check("N(R)", nr),
            Control::U { .. } => Ok(()),
        }
    }

    /// Length in octets of this control field under `modulus`: 1, or 2 for
    /// I and S frames in modulo 128.
    pub fn len(&self, modulus: Modulus) -> usize {
        match self {
            Control::U { .. } => 1,
            _ => modulus.numbered_len(),
        }
    }

    /// Appends the encoded control field to `out` after checking sequence
    /// number ranges; returns the number of octets written.
    pub fn encode_into(&self, modulus: Modulus, out: &mut Vec<u8>) -> Result<usize, ControlError> {
        self.validate(modulus)?;
        Ok(self.encode_unchecked(modulus, out))
    }

    /// Encodes the control field after checking sequence number ranges.
    pub fn encode(&self, modulus: Modulus) -> Result<Vec<u8>, ControlError> {
        let mut out = Vec::with_capacity(2);
        self.encode_into(modulus, &mut out)?;
        Ok(out)
    }

    /// Encodes a field already [validated](Control::validate) for `modulus`;
    /// out-of-range sequence numbers would be truncated to their field width.
    pub(crate) fn encode_unchecked(&self, modulus: Modulus, out: &mut Vec<u8>) -> usize {
        let pf8 = |pf: bool| if pf { PF_BIT } else { 0 };
        match (*self, modulus) {
            (Control::U { kind, pf }, _) => out.push(kind.code() | pf8(pf)),
            (Control::I { ns, nr, pf }, Modulus::Mod8) => {
                out.push(((nr & 0x07) << 5) | pf8(pf) | ((ns & 0x07) << 1));
            }
            (Control::S { kind, nr, pf }, Modulus::Mod8) => {
                out.push(((nr & 0x07) << 5) | pf8(pf) | kind.code() | 0x01);
            }
            (Control::I { ns, nr, pf }, Modulus::Mod128) => {
                out.push((ns & 0x7F) << 1);
                out.push(((nr & 0x7F) << 1) | u8::from(pf));
            }
            (Control::S { kind, nr, pf }, Modulus::Mod128) => {
                out.push(kind.code() | 0x01);
                out.push(((nr & 0x7F) << 1) | u8::from(pf));
            }
        }
        self.len(modulus)
    }

    /// The P/F bit.
    pub const fn pf(&self) -> bool {
        match *self {
            Control::I { pf, .. } | Control::S { pf, .. } | Control::U { pf, .. } => pf,
        }
    }

    /// N(S), present in I frames only.
    pub const fn ns(&self) -> Option<u8> {
        match *self {
            Control::I { ns, .. } => Some(ns),
            _ => None,
        }
    }

    /// N(R), present in I and S frames.
    pub const fn nr(&self) -> Option<u8> {
        match *self {
            Control::I { nr, .. } | Control::S { nr, .. } => Some(nr),
            Control::U { .. } => None,
        }
    }

    /// The frame's name: `"I"`, or the S/U frame name such as `"RR"` or `"UA"`.
    pub const fn name(&self) -> &'static str {
        match self {
            Control::I { .. } => "I",
            Control::S { kind, .. } => kind.name(),
            Control::U { kind, .. } => kind.name(),
        }
    }

    /// Whether a frame with this control field may carry an information
    /// field: I, UI, XID, TEST and FRMR frames (ISO 13239 5.5; AX.25 v2.2
    /// 3.5 and 4.3). The same rule serves AX.25 and HDLC/LAPB.
    pub const fn allows_info(&self) -> bool {
        matches!(
            self,
            Control::I { .. }
                | Control::U {
                    kind: Unnumbered::Ui | Unnumbered::Xid | Unnumbered::Test | Unnumbered::Frmr,
                    ..
                }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_octet_decodes_mod8_and_reencodes() {
        for octet in 0..=255u8 {
            match Control::decode(&[octet], Modulus::Mod8) {
                Ok(c) => assert_eq!(c.encode(Modulus::Mod8).unwrap(), vec![octet]),
                Err(e) => assert!(matches!(e, ControlError::UnknownUnnumbered { .. }), "{e}"),
            }
        }
    }

    #[test]
    fn sarm_shares_dm_code() {
        let sarm = Control::U {
            kind: Unnumbered::Sarm,
            pf: true,
        };
        assert_eq!(sarm.encode(Modulus::Mod8).unwrap(), vec![0x1F]);
        let back = Control::decode(&[0x1F], Modulus::Mod8).unwrap();
        assert_eq!(
            back,
            Control::U {
                kind: Unnumbered::Dm,
                pf: true
            }
        );
        assert_eq!(Unnumbered::Dm.as_command(), Unnumbered::Sarm);
    }
}
