//! The information field of XID frames: parameter negotiation
//! (AX.25 v2.2 4.3.3.7, fig. 4.5 and 4.6; ISO 8885 / ISO 13239 5.5.3.5).
//!
//! ```text
//! FI 0x82 | GI 0x80 | GL (2 octets, high first) | PI PL PV | PI PL PV | ...
//! ```
//!
//! Parameters appear in ascending PI order, each at most once. Bit-field
//! parameters (type E: Classes of Procedures, HDLC Optional Functions) number
//! their bits from 0 in transmission order: bit n is bit `n % 8` of PV octet
//! `n / 8`. Numeric parameters (type B) are unsigned, high-order octet first.
//!
//! Errata: fig. 4.6 of v2.2 (all revisions) shows the Classes of Procedures
//! PV as `22 00` (revision 4) or `00 20` (1998); neither sets bit 0
//! (Balanced ABM), which the text says "is always a 1". The value meaning
//! "balanced ABM, half duplex" is `21 00`, as Dire Wolf's xid.c also concludes.
//! The numbering of fig. 4.5 used here (bit 0 = Balanced ABM, bit 7 =
//! Extended Address, ...) agrees with the example's HDLC Optional Functions
//! octets `82 A8 22` and with Dire Wolf.

use thiserror::Error;

/// Format Identifier of the general-purpose XID information field.
pub const FORMAT_INDICATOR: u8 = 0x82;
/// Group Identifier of the parameter-negotiation group.
pub const GROUP_IDENTIFIER: u8 = 0x80;

/// PI of Classes of Procedures.
pub const PI_CLASSES_OF_PROCEDURES: u8 = 2;
/// PI of HDLC Optional Functions.
pub const PI_HDLC_OPTIONAL_FUNCTIONS: u8 = 3;
/// PI of I Field Length Transmit (bits).
pub const PI_I_FIELD_LENGTH_TX: u8 = 5;
/// PI of I Field Length Receive (bits).
pub const PI_I_FIELD_LENGTH_RX: u8 = 6;
/// PI of Window Size Transmit (frames).
pub const PI_WINDOW_SIZE_TX: u8 = 7;
/// PI of Window Size Receive (frames).
pub const PI_WINDOW_SIZE_RX: u8 = 8;
/// PI of Acknowledge Timer T1 (milliseconds).
pub const PI_ACK_TIMER: u8 = 9;
/// PI of Retries N2.
pub const PI_RETRIES: u8 = 10;

/// Name of a parameter for messages.
fn parameter_name(pi: u8) -> &'static str {
    match pi {
        PI_CLASSES_OF_PROCEDURES => "Classes of Procedures",
        PI_HDLC_OPTIONAL_FUNCTIONS => "HDLC Optional Functions",
        PI_I_FIELD_LENGTH_TX => "I Field Length Transmit",
        PI_I_FIELD_LENGTH_RX => "I Field Length Receive",
        PI_WINDOW_SIZE_TX => "Window Size Transmit",
        PI_WINDOW_SIZE_RX => "Window Size Receive",
        PI_ACK_TIMER => "Acknowledge Timer",
        PI_RETRIES => "Retries",
        _ => "unknown",
    }
}

/// Why an XID information field cannot be decoded or encoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum XidError {
    /// Fewer than the four octets of FI, GI and GL.
    #[error("XID information field is {len} octets; format indicator, group identifier and group length need 4")]
    TooShort {
        /// Octets present.
        len: usize,
    },
    /// FI is not 0x82.
    #[error("XID format indicator is 0x{0:02X}; only 0x82 (general purpose) is defined")]
    BadFormatIndicator(u8),
    /// GI is not 0x80.
    #[error("XID group identifier is 0x{0:02X}; only 0x80 (parameter negotiation) is defined")]
    BadGroupIdentifier(u8),
    /// GL does not match the octets after it.
    #[error("XID group length is {group_len} octets but {available} octets follow it")]
    GroupLengthMismatch {
        /// The group length field.
        group_len: usize,
        /// Octets actually following the group length.
        available: usize,
    },
    /// A parameter runs past the end of the group.
    #[error("XID parameter {pi} ({name}) is truncated: needs {needed} more octets, {available} remain in the group")]
    ParameterTruncated {
        /// The parameter identifier.
        pi: u8,
        /// Its name.
        name: &'static str,
        /// Octets it needs after its PI (PL and PV).
        needed: usize,
        /// Octets left in the group after its PI.
        available: usize,
    },
    /// A parameter out of ascending order or repeated.
    #[error("XID parameter {pi} follows parameter {previous}; parameters must be in ascending order, each at most once")]
    ParameterOrder {
        /// The out-of-order parameter.
        pi: u8,
        /// The parameter before it.
        previous: u8,
    },
    /// A known parameter with a value length this module cannot represent.
    #[error("XID parameter {pi} ({name}) has a {len}-octet value; expected {expected}")]
    BadParameterLength {
        /// The parameter identifier.
        pi: u8,
        /// Its name.
        name: &'static str,
        /// The PL received.
        len: usize,
        /// What is accepted.
        expected: &'static str,
    },
    /// An entry of [`XidParams::unknown`] uses a PI this module decodes itself.
    #[error("XID parameter {pi} ({name}) cannot be given as an unknown parameter")]
    KnownParameterAsUnknown {
        /// The parameter identifier.
        pi: u8,
        /// Its name.
        name: &'static str,
    },
    /// Two entries of [`XidParams::unknown`] with the same PI.
    #[error("XID parameter {pi} is given twice")]
    DuplicateParameter {
        /// The parameter identifier.
        pi: u8,
    },
    /// A parameter value longer than a PL octet can count.
    #[error("XID parameter {pi} value is {len} octets; at most 255 allowed")]
    ParameterTooLong {
        /// The parameter identifier.
        pi: u8,
        /// Its length.
        len: usize,
    },
    /// The parameters need more than 65535 octets.
    #[error("XID parameter group is {len} octets; at most 65535 allowed")]
    GroupTooLong {
        /// The group's length.
        len: usize,
    },
    /// A numeric value that does not fit the octets asked for.
    #[error("XID value {value} does not fit in {octets} octets (1-4 allowed)")]
    NumberDoesNotFit {
        /// The value.
        value: u32,
        /// The requested width.
        octets: u8,
    },
}

/// One class of procedures, a bit of the Classes of Procedures parameter
/// (PI 2; AX.25 v2.2 fig. 4.5). The discriminant is the bit number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProcedureClass {
    /// Bit 0: balanced asynchronous balanced mode (ABM); always 1 in AX.25.
    BalancedAbm = 0,
    /// Bit 1: unbalanced NRM, primary.
    NrmPrimary = 1,
    /// Bit 2: unbalanced NRM, secondary.
    NrmSecondary = 2,
    /// Bit 3: unbalanced ARM, primary.
    ArmPrimary = 3,
    /// Bit 4: unbalanced ARM, secondary.
    ArmSecondary = 4,
    /// Bit 5: half duplex.
    HalfDuplex = 5,
    /// Bit 6: full duplex.
    FullDuplex = 6,
}

/// The Classes of Procedures parameter value (PI 2, PL 2; AX.25 v2.2
/// 4.3.3.7, fig. 4.5). Unassigned bits are kept as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ClassesOfProcedures {
    bits: u16,
}

impl ClassesOfProcedures {
    /// The value from its 16 bits (bit n = fig. 4.5 bit n).
    pub const fn from_bits(bits: u16) -> Self {
        ClassesOfProcedures { bits }
    }

    /// The 16 bits.
    pub const fn bits(self) -> u16 {
        self.bits
    }

    /// The AX.25 value: Balanced ABM and half or full duplex (4.3.3.7).
    pub fn ax25(full_duplex: bool) -> Self {
        let duplex = if full_duplex {
            ProcedureClass::FullDuplex
        } else {
            ProcedureClass::HalfDuplex
        };
        Self::default()
            .with(ProcedureClass::BalancedAbm)
            .with(duplex)
    }

    /// True if `class` is set.
    pub const fn contains(self, class: ProcedureClass) -> bool {
        self.bits & (1 << class as u16) != 0
    }

    /// This value with `class` set.
    pub const fn with(self, class: ProcedureClass) -> Self {
        Self::from_bits(self.bits | (1 << class as u16))
    }

    /// This value with `class` clear.
    pub const fn without(self, class: ProcedureClass) -> Self {
        Self::from_bits(self.bits & !(1 << class as u16))
    }
}

/// One HDLC optional function, a bit of the HDLC Optional Functions parameter
/// (PI 3; AX.25 v2.2 fig. 4.5; ISO 8885 numbering in the doc). The
/// discriminant is the bit number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HdlcOptionalFunction {
    /// Bit 1 (ISO 2): REJ command/response.
    Rej = 1,
    /// Bit 2 (ISO 3A): SREJ command/response.
    Srej = 2,
    /// Bit 3 (ISO 4): UI command/response.
    Ui = 3,
    /// Bit 4 (ISO 5): SIM command / RIM response.
    SimRim = 4,
    /// Bit 5 (ISO 6): UP command.
    Up = 5,
    /// Bit 6 (ISO 7A): basic address.
    BasicAddress = 6,
    /// Bit 7 (ISO 7B): extended address; always 1 in AX.25.
    ExtendedAddress = 7,
    /// Bit 8 (ISO 8): delete I response.
    DeleteIResponse = 8,
    /// Bit 9 (ISO 9): delete I command.
    DeleteICommand = 9,
    /// Bit 10 (ISO 10A): modulo 8.
    Modulo8 = 10,
    /// Bit 11 (ISO 10B): modulo 128.
    Modulo128 = 11,
    /// Bit 12 (ISO 11): RSET command.
    Rset = 12,
    /// Bit 13 (ISO 12): TEST command/response; always 1 in AX.25.
    Test = 13,
    /// Bit 14 (ISO 13): RD response.
    Rd = 14,
    /// Bit 15 (ISO 14A): 16-bit FCS; always 1 in AX.25.
    Fcs16 = 15,
    /// Bit 16 (ISO 14B): 32-bit FCS.
    Fcs32 = 16,
    /// Bit 17 (ISO 15A): synchronous transmission; always 1 in AX.25.
    SynchronousTx = 17,
    /// Bit 18 (ISO 15B): start/stop transmission.
    StartStopTx = 18,
    /// Bit 19 (ISO 15C): start/stop basic flow control.
    StartStopFlowControl = 19,
    /// Bit 20 (ISO 15D): start/stop octet transparency.
    StartStopTransparency = 20,
    /// Bit 21 (ISO 3B): SREJ multiframe (multi-SREJ).
    MultiSrej = 21,
    /// Bit 22 (AX.25 16): segmenter/reassembler.
    Segmenter = 22,
}

/// The HDLC Optional Functions parameter value (PI 3, PL 3; AX.25 v2.2
/// 4.3.3.7, fig. 4.5): 24 bits; unassigned bits are kept as received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct HdlcOptionalFunctions {
    bits: u32,
}

impl HdlcOptionalFunctions {
    /// The functions every AX.25 v2.2 station sets: extended address, TEST,
    /// 16-bit FCS and synchronous transmit (bits 7, 13, 15, 17).
    pub const AX25_MANDATORY: HdlcOptionalFunctions = HdlcOptionalFunctions {
        bits: (1 << 7) | (1 << 13) | (1 << 15) | (1 << 17),
    };

    /// The value from its bits (bit n = fig. 4.5 bit n); `None` if a bit
    /// above 23 is set.
    pub const fn from_bits(bits: u32) -> Option<Self> {
        if bits >> 24 == 0 {
            Some(HdlcOptionalFunctions { bits })
        } else {
            None
        }
    }

    /// The 24 bits.
    pub const fn bits(self) -> u32 {
        self.bits
    }

    /// True if `function` is set.
    pub const fn contains(self, function: HdlcOptionalFunction) -> bool {
        self.bits & (1 << function as u32) != 0
    }

    /// This value with `function` set.
    pub const fn with(self, function: HdlcOptionalFunction) -> Self {
        HdlcOptionalFunctions {
            bits: self.bits | (1 << function as u32),
        }
    }

    /// This value with `function` clear.
    pub const fn without(self, function: HdlcOptionalFunction) -> Self {
        HdlcOptionalFunctions {
            bits: self.bits & !(1 << function as u32),
        }
    }
}

/// A numeric (type B) parameter value and the number of octets it is sent
/// in, 1-4, high-order octet first (AX.25 v2.2 4.3.3.7). The width is kept so
/// that a decoded value re-encodes exactly (Dire Wolf sends T1 and N1 in two
/// octets even when one would do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct XidNumber {
    value: u32,
    octets: u8,
}

impl XidNumber {
    /// `value` in the fewest octets (at least 1).
    pub const fn new(value: u32) -> Self {
        let octets = if value >> 24 != 0 {
            4
        } else if value >> 16 != 0 {
            3
        } else if value >> 8 != 0 {
            2
        } else {
            1
        };
        XidNumber { value, octets }
    }

    /// `value` in exactly `octets` octets (1-4).
    pub fn with_octets(value: u32, octets: u8) -> Result<Self, XidError> {
        let fits = match octets {
            1..=3 => value >> (8 * u32::from(octets)) == 0,
            4 => true,
            _ => false,
        };
        if fits {
            Ok(XidNumber { value, octets })
        } else {
            Err(XidError::NumberDoesNotFit { value, octets })
        }
    }

    /// The value.
    pub const fn value(self) -> u32 {
        self.value
    }

    /// Its width on the wire in octets.
    pub const fn octets(self) -> u8 {
        self.octets
    }

    fn decode(pv: &[u8]) -> u32 {
        pv.iter().fold(0, |acc, &b| (acc << 8) | u32::from(b))
    }

    fn encode_into(self, out: &mut Vec<u8>) {
        let bytes = self.value.to_be_bytes();
        let skip = 4 - usize::from(self.octets);
        out.extend_from_slice(bytes.get(skip..).unwrap_or_default());
    }
}

/// A parameter this module does not interpret, kept for exact re-encoding
/// ("a parameter field containing an unrecognized PI is ignored", 4.3.3.7).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct XidParameter {
    /// The parameter identifier.
    pub pi: u8,
    /// The parameter value (at most 255 octets).
    pub pv: Vec<u8>,
}

/// The parameters of an XID information field (AX.25 v2.2 4.3.3.7,
/// fig. 4.5). `None` means the parameter is absent ("current values are
/// retained").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct XidParams {
    /// PI 2: balanced mode, half or full duplex.
    pub classes_of_procedures: Option<ClassesOfProcedures>,
    /// PI 3: REJ/SREJ, modulo 8/128 and the rest.
    pub hdlc_optional_functions: Option<HdlcOptionalFunctions>,
    /// PI 5: maximum I field length transmitted, in **bits** (N1 × 8).
    pub i_field_length_tx: Option<XidNumber>,
    /// PI 6: maximum I field length received, in **bits** (N1 × 8).
    pub i_field_length_rx: Option<XidNumber>,
    /// PI 7: window size k transmitted, in frames.
    pub window_size_tx: Option<XidNumber>,
    /// PI 8: window size k received, in frames.
    pub window_size_rx: Option<XidNumber>,
    /// PI 9: acknowledge timer T1, in milliseconds.
    pub ack_timer: Option<XidNumber>,
    /// PI 10: retries N2.
    pub retries: Option<XidNumber>,
    /// Parameters with any other PI, in ascending PI order.
    pub unknown: Vec<XidParameter>,
}

/// The value of one parameter during encoding.
enum Value<'a> {
    Bits(u32, usize),
    Number(XidNumber),
    Raw(&'a [u8]),
}

impl XidParams {
    /// Decodes an XID information field. An empty info field (allowed in
    /// XID frames) is not a parameter field; callers check for it first.
    pub fn decode(info: &[u8]) -> Result<XidParams, XidError> {
        let [fi, gi, gl_hi, gl_lo, group @ ..] = info else {
            return Err(XidError::TooShort { len: info.len() });
        };
        if *fi != FORMAT_INDICATOR {
            return Err(XidError::BadFormatIndicator(*fi));
        }
        if *gi != GROUP_IDENTIFIER {
            return Err(XidError::BadGroupIdentifier(*gi));
        }
        let group_len = usize::from(u16::from_be_bytes([*gl_hi, *gl_lo]));
        if group_len != group.len() {
            return Err(XidError::GroupLengthMismatch {
                group_len,
                available: group.len(),
            });
        }
        let mut params = XidParams::default();
        let mut previous: Option<u8> = None;
        let mut rest = group;
        while let Some((&pi, after_pi)) = rest.split_first() {
            let name = parameter_name(pi);
            let truncated = |needed: usize| XidError::ParameterTruncated {
                pi,
                name,
                needed,
                available: after_pi.len(),
            };
            let (&pl, after_pl) = after_pi.split_first().ok_or_else(|| truncated(1))?;
            let pl = usize::from(pl);
            let pv = after_pl.get(..pl).ok_or_else(|| truncated(pl + 1))?;
            rest = after_pl.get(pl..).unwrap_or_default();
            if let Some(previous) = previous.filter(|&p| p >= pi) {
                return Err(XidError::ParameterOrder { pi, previous });
            }
            previous = Some(pi);
            params.set_decoded(pi, pv)?;
        }
        Ok(params)
    }

    fn set_decoded(&mut self, pi: u8, pv: &[u8]) -> Result<(), XidError> {
        let bad_len = |expected: &'static str| XidError::BadParameterLength {
            pi,
            name: parameter_name(pi),
            len: pv.len(),
            expected,
        };
        let bits = || {
            pv.iter()
                .rev()
                .fold(0u32, |acc, &b| (acc << 8) | u32::from(b))
        };
        let number = || match pv.len() {
            1..=4 => Ok(XidNumber {
                value: XidNumber::decode(pv),
                octets: pv.len() as u8,
            }),
            _ => Err(bad_len("1 to 4")),
        };
        match pi {
            PI_CLASSES_OF_PROCEDURES => {
                if pv.len() != 2 {
                    return Err(bad_len("2"));
                }
                self.classes_of_procedures = Some(ClassesOfProcedures::from_bits(bits() as u16));
            }
            PI_HDLC_OPTIONAL_FUNCTIONS => {
                if pv.len() != 3 {
                    return Err(bad_len("3"));
                }
                self.hdlc_optional_functions = Some(HdlcOptionalFunctions { bits: bits() });
            }
            PI_I_FIELD_LENGTH_TX => self.i_field_length_tx = Some(number()?),
            PI_I_FIELD_LENGTH_RX => self.i_field_length_rx = Some(number()?),
            PI_WINDOW_SIZE_TX => self.window_size_tx = Some(number()?),
            PI_WINDOW_SIZE_RX => self.window_size_rx = Some(number()?),
            PI_ACK_TIMER => self.ack_timer = Some(number()?),
            PI_RETRIES => self.retries = Some(number()?),
            _ => self.unknown.push(XidParameter {
                pi,
                pv: pv.to_vec(),
            }),
        }
        Ok(())
    }

    /// All present parameters with their PIs, known ones first.
    fn values(&self) -> Vec<(u8, Value<'_>)> {
        let numbers = [
            (PI_I_FIELD_LENGTH_TX, self.i_field_length_tx),
            (PI_I_FIELD_LENGTH_RX, self.i_field_length_rx),
            (PI_WINDOW_SIZE_TX, self.window_size_tx),
            (PI_WINDOW_SIZE_RX, self.window_size_rx),
            (PI_ACK_TIMER, self.ack_timer),
            (PI_RETRIES, self.retries),
        ];
        let classes = self
            .classes_of_procedures
            .map(|c| (PI_CLASSES_OF_PROCEDURES, Value::Bits(u32::from(c.bits), 2)));
        let functions = self
            .hdlc_optional_functions
            .map(|f| (PI_HDLC_OPTIONAL_FUNCTIONS, Value::Bits(f.bits, 3)));
        classes
            .into_iter()
            .chain(functions)
            .chain(
                numbers
                    .into_iter()
                    .filter_map(|(pi, n)| n.map(|n| (pi, Value::Number(n)))),
            )
            .chain(self.unknown.iter().map(|p| (p.pi, Value::Raw(&p.pv))))
            .collect()
    }

    /// Appends the encoded information field (FI, GI, GL, parameters in
    /// ascending PI order) to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), XidError> {
        for p in &self.unknown {
            if parameter_name(p.pi) != "unknown" {
                return Err(XidError::KnownParameterAsUnknown {
                    pi: p.pi,
                    name: parameter_name(p.pi),
                });
            }
            if p.pv.len() > 255 {
                return Err(XidError::ParameterTooLong {
                    pi: p.pi,
                    len: p.pv.len(),
                });
            }
        }
        let mut values = self.values();
        values.sort_by_key(|(pi, _)| *pi);
        let duplicate = values.windows(2).find_map(|pair| match pair {
            [(a, _), (b, _)] if a == b => Some(*a),
            _ => None,
        });
        if let Some(pi) = duplicate {
            return Err(XidError::DuplicateParameter { pi });
        }
        let mut group = Vec::new();
        for (pi, value) in values {
            group.push(pi);
            match value {
                Value::Bits(bits, len) => {
                    group.push(len as u8);
                    group.extend_from_slice(bits.to_le_bytes().get(..len).unwrap_or_default());
                }
                Value::Number(n) => {
                    group.push(n.octets);
                    n.encode_into(&mut group);
                }
                Value::Raw(pv) => {
                    group.push(pv.len() as u8);
                    group.extend_from_slice(pv);
                }
            }
        }
        let group_len =
            u16::try_from(group.len()).map_err(|_| XidError::GroupTooLong { len: group.len() })?;
        out.push(FORMAT_INDICATOR);
        out.push(GROUP_IDENTIFIER);
        out.extend_from_slice(&group_len.to_be_bytes());
        out.extend_from_slice(&group);
        Ok(())
    }

    /// The encoded information field.
    pub fn encode(&self) -> Result<Vec<u8>, XidError> {
        let mut out = Vec::new();
        self.encode_into(&mut out)?;
        Ok(out)
    }
}
