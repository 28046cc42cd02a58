//! The facility field (X.25 (10/96) 5.2.2; coding in clause 7). Each
//! facility is a code octet whose bits 8 and 7 give its class (7.1): A
//! (one parameter octet), B (two), C (three) or D (a length octet, then
//! that many). The facilities this crate acts on are decoded; every
//! other one, the facility markers (code 0x00) included, is kept raw.

use super::DecodeError;

/// Fast select request (clause 7.2, bits 8 and 7 of the 0x01 parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FastSelect {
    /// 00: fast select not requested.
    #[default]
    NotRequested,
    /// 10: fast select with no restriction on the response.
    Unrestricted,
    /// 11: fast select with restriction on the response.
    Restricted,
}

/// One facility of a facility field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Facility {
    /// Code 0x01: reverse charging (bit 1) and fast select (bits 8, 7)
    /// (clause 7.2). A parameter with other bits set, or bits 8-7
    /// equal to 01, is kept as [`Facility::Other`].
    ReverseChargingFastSelect {
        /// Reverse charging requested.
        reverse_charging: bool,
        /// Fast select.
        fast_select: FastSelect,
    },
    /// Code 0x02: throughput class negotiation (clause 7.2); classes 3-13
    /// (75 bit/s to 192 kbit/s) as the four-bit codes.
    ThroughputClass {
        /// Bits 4-1: for transmission from the calling DTE.
        from_calling: u8,
        /// Bits 8-5: for transmission from the called DTE.
        from_called: u8,
    },
    /// Code 0x42: packet size negotiation (clause 7.2); each value is the
    /// base-2 logarithm of the maximum user data field length, 4-12
    /// (16-4096 octets).
    PacketSize {
        /// For transmission from the called DTE.
        from_called: u8,
        /// For transmission from the calling DTE.
        from_calling: u8,
    },
    /// Code 0x43: window size negotiation (clause 7.2): 1-7 modulo 8, 1-127
    /// modulo 128.
    WindowSize {
        /// For transmission from the called DTE.
        from_called: u8,
        /// For transmission from the calling DTE.
        from_calling: u8,
    },
    /// Any other facility, kept as received.
    Other {
        /// The facility code.
        code: u8,
        /// Its parameter octets (class D: without the length octet).
        parameters: Vec<u8>,
    },
}

/// Code of the packet size facility.
pub const PACKET_SIZE: u8 = 0x42;
/// Code of the window size facility.
pub const WINDOW_SIZE: u8 = 0x43;
/// Code of the throughput class facility.
pub const THROUGHPUT_CLASS: u8 = 0x02;
/// Code of the reverse charging and fast select facility.
pub const REVERSE_CHARGING_FAST_SELECT: u8 = 0x01;

/// Why a facility field cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FacilityEncodeError {
    /// The facility length field is one octet (5.2.2.1).
    #[error("the facilities take {len} octets; the facility length field allows 255")]
    FieldTooLong {
        /// Octets the facilities take.
        len: usize,
    },
    /// A raw facility's parameters do not fit its class (7.1).
    #[error("facility 0x{code:02X} has {len} parameter octets; its class allows {allowed}")]
    Parameters {
        /// The code.
        code: u8,
        /// Parameter octets given.
        len: usize,
        /// What the class allows.
        allowed: &'static str,
    },
}

impl Facility {
    /// The facility code.
    pub fn code(&self) -> u8 {
        match self {
            Facility::ReverseChargingFastSelect { .. } => REVERSE_CHARGING_FAST_SELECT,
            Facility::ThroughputClass { .. } => THROUGHPUT_CLASS,
            Facility::PacketSize { .. } => PACKET_SIZE,
            Facility::WindowSize { .. } => WINDOW_SIZE,
            Facility::Other { code, .. } => *code,
        }
    }

    fn from_raw(code: u8, parameters: &[u8]) -> Facility {
        match (code, parameters) {
            (REVERSE_CHARGING_FAST_SELECT, &[p]) if p & 0x3E == 0 && p >> 6 != 0b01 => {
                Facility::ReverseChargingFastSelect {
                    reverse_charging: p & 1 == 1,
                    fast_select: match p >> 6 {
                        0b10 => FastSelect::Unrestricted,
                        0b11 => FastSelect::Restricted,
                        _ => FastSelect::NotRequested,
                    },
                }
            }
            (THROUGHPUT_CLASS, &[p]) => Facility::ThroughputClass {
                from_calling: p & 0x0F,
                from_called: p >> 4,
            },
            (PACKET_SIZE, &[called, calling]) => Facility::PacketSize {
                from_called: called,
                from_calling: calling,
            },
            (WINDOW_SIZE, &[called, calling]) => Facility::WindowSize {
                from_called: called,
                from_calling: calling,
            },
            _ => Facility::Other {
                code,
                parameters: parameters.to_vec(),
            },
        }
    }

    fn parameters(&self) -> Vec<u8> {
        match self {
            Facility::ReverseChargingFastSelect {
                reverse_charging,
                fast_select,
            } => {
                let fs = match fast_select {
                    FastSelect::NotRequested => 0,
                    FastSelect::Unrestricted => 0x80,
                    FastSelect::Restricted => 0xC0,
                };
                vec![fs | u8::from(*reverse_charging)]
            }
            Facility::ThroughputClass {
                from_calling,
                from_called,
            } => vec![from_called << 4 | (from_calling & 0x0F)],
            Facility::PacketSize {
                from_called,
                from_calling,
            }
            | Facility::WindowSize {
                from_called,
                from_calling,
            } => vec![*from_called, *from_calling],
            Facility::Other { parameters, .. } => parameters.clone(),
        }
    }
}

/// The number of parameter octets of class A, B and C codes (7.1), or
/// `None` for class D.
fn fixed_len(code: u8) -> Option<usize> {
    match code >> 6 {
        0 => Some(1),
        1 => Some(2),
        2 => Some(3),
        _ => None,
    }
}

/// Decodes a facility length octet and the facilities at the start of
/// `octets`; returns them and the octets taken.
pub(crate) fn decode(octets: &[u8]) -> Result<(Vec<Facility>, usize), DecodeError> {
    let len = usize::from(*octets.first().ok_or(DecodeError::TooShort {
        what: "facility length octet",
    })?);
    let mut field = octets.get(1..1 + len).ok_or(DecodeError::TooShort {
        what: "facility field",
    })?;
    let mut facilities = Vec::new();
    while let Some((&code, rest)) = field.split_first() {
        let (params, rest) = match fixed_len(code) {
            Some(n) => (rest.get(..n), rest.get(n..)),
            None => match rest.split_first() {
                Some((&n, rest)) => (rest.get(..usize::from(n)), rest.get(usize::from(n)..)),
                None => (None, None),
            },
        };
        let (Some(params), Some(rest)) = (params, rest) else {
            return Err(DecodeError::FacilityLength { code });
        };
        facilities.push(Facility::from_raw(code, params));
        field = rest;
    }
    Ok((facilities, 1 + len))
}

/// Appends the facility length octet and the facilities to `out`.
pub(crate) fn encode(
    facilities: &[Facility],
    out: &mut Vec<u8>,
) -> Result<(), FacilityEncodeError> {
    let mut field = Vec::new();
    for facility in facilities {
        let code = facility.code();
        let parameters = facility.parameters();
        match fixed_len(code) {
            Some(n) if parameters.len() != n => {
                return Err(FacilityEncodeError::Parameters {
                    code,
                    len: parameters.len(),
                    allowed: ["exactly 1", "exactly 2", "exactly 3"][n - 1],
                })
            }
            Some(_) => field.push(code),
            None => {
                let n = u8::try_from(parameters.len()).map_err(|_| {
                    FacilityEncodeError::Parameters {
                        code,
                        len: parameters.len(),
                        allowed: "at most 255",
                    }
                })?;
                field.extend([code, n]);
            }
        }
        field.extend(parameters);
    }
    let len = u8::try_from(field.len())
        .map_err(|_| FacilityEncodeError::FieldTooLong { len: field.len() })?;
    out.push(len);
    out.extend(field);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_facilities_code_as_clause_7() {
        let facilities = vec![
            Facility::PacketSize {
                from_called: 7,
                from_calling: 8,
            },
            Facility::WindowSize {
                from_called: 2,
                from_calling: 3,
            },
            Facility::ThroughputClass {
                from_calling: 0x0A,
                from_called: 0x09,
            },
            Facility::ReverseChargingFastSelect {
                reverse_charging: true,
                fast_select: FastSelect::Unrestricted,
            },
            Facility::Other {
                code: 0xC6,
                parameters: vec![1, 2, 3],
            },
        ];
        let mut out = Vec::new();
        encode(&facilities, &mut out).unwrap();
        assert_eq!(
            out,
            [15, 0x42, 7, 8, 0x43, 2, 3, 0x02, 0x9A, 0x01, 0x81, 0xC6, 3, 1, 2, 3]
        );
        assert_eq!(decode(&out).unwrap(), (facilities, 16));
    }

    #[test]
    fn truncated_facility_names_its_code() {
        assert_eq!(
            decode(&[2, 0x42, 7]),
            Err(DecodeError::FacilityLength { code: 0x42 })
        );
    }
}
