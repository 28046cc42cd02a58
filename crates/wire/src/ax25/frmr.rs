//! The information field of FRMR responses (AX.25 v2.0 2.3.4.3.3 and v2.2
//! July 1998 4.3.3.9, fig. 4.5; ISO 13239 5.5.3.4.2). v2.2 revision 4
//! stops sending FRMR but still receives it from older stations.
//!
//! Bits are numbered from 0 in transmission order (bit 0 of the first
//! octet first). Modulo 8, three octets:
//!
//! ```text
//! bits 0-7    rejected control field
//! bit  8      0
//! bits 9-11   V(S)          bit 12  C/R     bits 13-15  V(R)
//! bits 16-20  W X Y Z V     bits 21-23  0
//! ```
//!
//! Modulo 128, five octets:
//!
//! ```text
//! bits 0-15   rejected control field (a U frame's single octet in bits 0-7)
//! bit  16     0             bits 17-23  V(S)
//! bit  24     C/R           bits 25-31  V(R)
//! bits 32-36  W X Y Z V     bits 37-39  0
//! ```
//!
//! C/R is 1 if the rejected frame was a response. V (invalid N(S)) is
//! defined by ISO 13239; AX.25 sends it as 0.

use std::fmt;

use thiserror::Error;

use crate::control::Modulus;

/// Why an FRMR information field cannot be decoded or encoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrmrError {
    /// Not 3 (modulo 8) or 5 (modulo 128) octets.
    #[error("FRMR information field is {len} octets; {modulus} needs {expected}")]
    WrongLength {
        /// Octets present.
        len: usize,
        /// Octets required.
        expected: usize,
        /// The modulus in force.
        modulus: Modulus,
    },
    /// A bit that must be 0 is 1.
    #[error("FRMR information field octet {position} is 0x{octet:02X}; its reserved bits (mask 0x{mask:02X}) must be 0")]
    ReservedBitsSet {
        /// Octet position, counting from 1.
        position: usize,
        /// The octet as received.
        octet: u8,
        /// The bits that must be 0.
        mask: u8,
    },
    /// A rejected control field wider than one octet in modulo 8.
    #[error("rejected control field 0x{value:04X} does not fit in one octet ({modulus})")]
    RejectedControlTooWide {
        /// The value given.
        value: u16,
        /// The modulus in force.
        modulus: Modulus,
    },
    /// V(S) or V(R) not below the modulus.
    #[error("{field} = {value} is out of range for {modulus}")]
    SequenceOutOfRange {
        /// `"V(S)"` or `"V(R)"`.
        field: &'static str,
        /// The value given.
        value: u8,
        /// The modulus in force.
        modulus: Modulus,
    },
}

/// A decoded FRMR information field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FrmrInfo {
    /// Control field of the rejected frame; first octet in the low 8 bits.
    pub rejected_control: u16,
    /// V(S) of the station sending the FRMR.
    pub vs: u8,
    /// V(R) of the station sending the FRMR.
    pub vr: u8,
    /// C/R: the rejected frame was a response.
    pub rejected_was_response: bool,
    /// W: the control field was invalid or not implemented.
    pub w: bool,
    /// X: an information field came with a frame that allows none (W also set).
    pub x: bool,
    /// Y: the information field exceeded the maximum length.
    pub y: bool,
    /// Z: the N(R) received was invalid.
    pub z: bool,
    /// V (ISO 13239): the N(S) received was invalid; 0 in AX.25.
    pub v: bool,
}

const FLAGS_MASK: u8 = 0x1F;

impl FrmrInfo {
    /// A one-line rendering for logs and the monitor format: the rejected
    /// control field as sent under `modulus`, `V(S)=n V(R)=n`, and the
    /// names of the bits that are set (`C/R`, `W`, `X`, `Y`, `Z`, `V`),
    /// e.g. `ctl=0x11 V(S)=2 V(R)=5 W`.
    pub fn display(&self, modulus: Modulus) -> impl fmt::Display + '_ {
        FrmrDisplay {
            frmr: self,
            modulus,
        }
    }

    /// Length of the field: 3 octets in modulo 8, 5 in modulo 128.
    pub const fn encoded_len(modulus: Modulus) -> usize {
        match modulus {
            Modulus::Mod8 => 3,
            Modulus::Mod128 => 5,
        }
    }

    /// Decodes an FRMR information field received under `modulus`.
    pub fn decode(info: &[u8], modulus: Modulus) -> Result<FrmrInfo, FrmrError> {
        let expected = Self::encoded_len(modulus);
        let wrong_len = || FrmrError::WrongLength {
            len: info.len(),
            expected,
            modulus,
        };
        let reserved = |position: usize, octet: u8, mask: u8| {
            if octet & mask == 0 {
                Ok(())
            } else {
                Err(FrmrError::ReservedBitsSet {
                    position,
                    octet,
                    mask,
                })
            }
        };
        let (rejected_control, vs, cr_vr, flags, flags_position) = match (modulus, info) {
            (Modulus::Mod8, &[control, state, flags]) => {
                reserved(2, state, 0x01)?;
                let vs = (state >> 1) & 0x07;
                let cr_vr = ((state >> 5) << 1) | ((state >> 4) & 0x01);
                (u16::from(control), vs, cr_vr, flags, 3)
            }
            (Modulus::Mod128, &[c0, c1, vs, cr_vr, flags]) => {
                reserved(3, vs, 0x01)?;
                (u16::from_le_bytes([c0, c1]), vs >> 1, cr_vr, flags, 5)
            }
            _ => return Err(wrong_len()),
        };
        reserved(flags_position, flags, !FLAGS_MASK)?;
        let bit = |n: u8| flags & (1 << n) != 0;
        Ok(FrmrInfo {
            rejected_control,
            vs,
            vr: cr_vr >> 1,
            rejected_was_response: cr_vr & 0x01 != 0,
            w: bit(0),
            x: bit(1),
            y: bit(2),
            z: bit(3),
            v: bit(4),
        })
    }

    /// Encodes the field for `modulus`, checking V(S), V(R) and the width of
    /// the rejected control field.
    pub fn encode(&self, modulus: Modulus) -> Result<Vec<u8>, FrmrError> {
        for (field, value) in [("V(S)", self.vs), ("V(R)", self.vr)] {
            if value >= modulus.value() {
                return Err(FrmrError::SequenceOutOfRange {
                    field,
                    value,
                    modulus,
                });
            }
        }
        let flags = u8::from(self.w)
            | (u8::from(self.x) << 1)
            | (u8::from(self.y) << 2)
            | (u8::from(self.z) << 3)
            | (u8::from(self.v) << 4);
        let cr = u8::from(self.rejected_was_response);
        let [c0, c1] = self.rejected_control.to_le_bytes();
        Ok(match modulus {
            Modulus::Mod8 => {
                if c1 != 0 {
                    return Err(FrmrError::RejectedControlTooWide {
                        value: self.rejected_control,
                        modulus,
                    });
                }
                vec![c0, (self.vr << 5) | (cr << 4) | (self.vs << 1), flags]
            }
            Modulus::Mod128 => vec![c0, c1, self.vs << 1, (self.vr << 1) | cr, flags],
        })
    }
}

/// See [`FrmrInfo::display`].
struct FrmrDisplay<'a> {
    frmr: &'a FrmrInfo,
    modulus: Modulus,
}

impl fmt::Display for FrmrDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let frmr = self.frmr;
        let [c0, c1] = frmr.rejected_control.to_le_bytes();
        match self.modulus {
            Modulus::Mod8 => write!(f, "ctl=0x{c0:02X}")?,
            Modulus::Mod128 => write!(f, "ctl=0x{c0:02X}{c1:02X}")?,
        }
        write!(f, " V(S)={} V(R)={}", frmr.vs, frmr.vr)?;
        let flags = [
            (frmr.rejected_was_response, "C/R"),
            (frmr.w, "W"),
            (frmr.x, "X"),
            (frmr.y, "Y"),
            (frmr.z, "Z"),
            (frmr.v, "V"),
        ];
        for (set, name) in flags {
            if set {
                write!(f, " {name}")?;
            }
        }
        Ok(())
    }
}
