//! How the link engine's frames go on the wire: AX.25 frames with callsign
//! address fields (AX.25 v2.2 3.12, 6.1.2) or HDLC/LAPB frames with a
//! one-octet address (ISO/IEC 13239 clause 4; ITU-T X.25 2.4.2).
//!
//! The engine ([`Link`](crate::Link)) works on [`Pdu`]s: whether the frame
//! is a command or a response, its control field, PID and information. A
//! [`Framing`] turns them into frames and back, and decides which received
//! frames belong to the link.

use linklab_wire::ax25::{self, same_station, Address, AddressField, CommandResponse, Pid};
use linklab_wire::control::{Control, Modulus, Unnumbered};
use linklab_wire::lapb::{self, LinkProcedure, Station};

/// One frame as the link engine sees it, independent of addressing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdu {
    /// True for a command, false for a response (AX.25 v2.2 6.1.2; ISO/IEC
    /// 13239 5.5: in NRM and ARM the primary sends only commands and a
    /// secondary only responses, so a [`Framing`] may override this).
    pub command: bool,
    /// The control field.
    pub control: Control,
    /// The modulus of I and S control fields.
    pub modulus: Modulus,
    /// The protocol identifier of I and UI frames (AX.25 only; HDLC frames
    /// have none and report [`Pid::NoLayer3`]).
    pub pid: Option<Pid>,
    /// The information field.
    pub info: Vec<u8>,
}

impl Pdu {
    /// The P/F bit.
    pub fn pf(&self) -> bool {
        self.control.pf()
    }

    /// Sets the P/F bit.
    pub fn set_pf(&mut self, value: bool) {
        match &mut self.control {
            Control::I { pf, .. } | Control::S { pf, .. } | Control::U { pf, .. } => *pf = value,
        }
    }

    /// True for I and S frames, the ones that carry N(R).
    pub fn is_numbered(&self) -> bool {
        !matches!(self.control, Control::U { .. })
    }
}

/// Addressing and encoding of one link's frames.
pub trait Framing {
    /// The frame type on the wire.
    type Frame;

    /// True for AX.25: XID negotiation (AX.25 v2.2 6.3.2), segmentation
    /// (6.6) and the SABME-to-SABM fallback (fig. C4.6) apply.
    const AX25: bool;

    /// The frame for `pdu`, or `None` if it cannot be built (a bug).
    fn encode(&self, pdu: Pdu) -> Option<Self::Frame>;

    /// The PDU in `frame`, or `None` if the frame is not for this link.
    fn decode(&self, frame: &Self::Frame) -> Option<Pdu>;

    /// How many times the round trip is longer than a direct one (T1 is
    /// scaled by it: 1 + 2 x digipeaters for AX.25).
    fn t1_scale(&self) -> u32 {
        1
    }
}

/// AX.25 addressing between a local and a remote station through
/// digipeaters (AX.25 v2.2 3.12, 6.1.2).
#[derive(Debug, Clone)]
pub struct Ax25Framing {
    pub(crate) local: Address,
    pub(crate) remote: Address,
    addr_command: AddressField,
    addr_response: AddressField,
    digipeaters: usize,
}

impl Ax25Framing {
    /// The addressing from `local` to `remote` through `via`; fails with
    /// the number of digipeaters if there are more than 8 (3.12.5).
    pub fn new(local: Address, remote: Address, via: &[Address]) -> Result<Ax25Framing, usize> {
        let mut path = via.to_vec();
        for digi in &mut path {
            digi.set_c_or_h(false);
        }
        let too_many = |_| via.len();
        let addr_command =
            AddressField::new(remote, local, &path, CommandResponse::Command).map_err(too_many)?;
        let addr_response =
            AddressField::new(remote, local, &path, CommandResponse::Response).map_err(too_many)?;
        Ok(Ax25Framing {
            local,
            remote,
            addr_command,
            addr_response,
            digipeaters: via.len(),
        })
    }
}

impl Framing for Ax25Framing {
    type Frame = ax25::Frame;
    const AX25: bool = true;

    fn encode(&self, pdu: Pdu) -> Option<ax25::Frame> {
        let address = if pdu.command {
            self.addr_command.clone()
        } else {
            self.addr_response.clone()
        };
        let frame = ax25::Frame::new(address, pdu.modulus, pdu.control, pdu.pid, pdu.info);
        debug_assert!(frame.is_ok(), "{frame:?}");
        frame.ok()
    }

    fn decode(&self, frame: &ax25::Frame) -> Option<Pdu> {
        if !same_station(frame.dest(), &self.local) || !same_station(frame.source(), &self.remote) {
            return None;
        }
        let control = frame.control();
        // Stations before v2.0 set both C bits equal (6.1.2): take the
        // frame type's usual role.
        let command = match frame.command_response() {
            CommandResponse::Command => true,
            CommandResponse::Response => false,
            _ => matches!(
                control,
                Control::I { .. }
                    | Control::U {
                        kind: Unnumbered::Sabm | Unnumbered::Sabme | Unnumbered::Disc,
                        ..
                    }
            ),
        };
        Some(Pdu {
            command,
            control,
            modulus: frame.modulus(),
            pid: frame.pid(),
            info: frame.info().to_vec(),
        })
    }

    fn t1_scale(&self) -> u32 {
        1 + 2 * self.digipeaters as u32
    }
}

/// Who is who on an HDLC link with one-octet addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HdlcAddressing {
    /// LAPB in ABM (ITU-T X.25 2.4.2): commands carry the receiver's
    /// address, responses the sender's; the DTE is A (or C), the DCE B (or
    /// D).
    Lapb {
        /// This station's side of the interface.
        role: lapb::Role,
        /// Single link (A/B) or a link of a multilink procedure (C/D).
        procedure: LinkProcedure,
    },
    /// NRM or ARM (ISO/IEC 13239 clause 4 and 5.5): every frame carries the
    /// secondary's address; the primary sends commands, the secondary
    /// responses.
    Unbalanced {
        /// This station's part, which must match
        /// [`Config::role`](crate::Config::role).
        station: Station,
        /// The secondary station's address.
        secondary: lapb::Address,
    },
}

/// HDLC/LAPB framing with a one-octet address ([`linklab_wire::lapb`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HdlcFraming {
    pub(crate) addressing: HdlcAddressing,
}

impl HdlcFraming {
    /// Framing for `addressing`.
    pub fn new(addressing: HdlcAddressing) -> HdlcFraming {
        HdlcFraming { addressing }
    }

    /// The addressing.
    pub fn addressing(&self) -> HdlcAddressing {
        self.addressing
    }
}

impl Framing for HdlcFraming {
    type Frame = lapb::Frame;
    const AX25: bool = false;

    fn encode(&self, pdu: Pdu) -> Option<lapb::Frame> {
        let address = match self.addressing {
            HdlcAddressing::Lapb { role, procedure } => {
                let cr = if pdu.command {
                    lapb::CommandResponse::Command
                } else {
                    lapb::CommandResponse::Response
                };
                lapb::lapb_address(role, cr, procedure)
            }
            HdlcAddressing::Unbalanced { secondary, .. } => secondary,
        };
        let frame = lapb::Frame::new(address, pdu.modulus, pdu.control, pdu.info);
        debug_assert!(frame.is_ok(), "{frame:?}");
        frame.ok()
    }

    fn decode(&self, frame: &lapb::Frame) -> Option<Pdu> {
        let mut control = frame.control();
        let command = match self.addressing {
            HdlcAddressing::Lapb { role, procedure } => {
                lapb::lapb_command_response(role, frame.address(), procedure)
                    .ok()?
                    .is_command()
            }
            HdlcAddressing::Unbalanced { station, secondary } => {
                if frame.address() != secondary {
                    return None;
                }
                // A secondary receives only commands, the primary only
                // responses (ISO/IEC 13239 5.5). The code shared by DM and
                // SARM means SARM as a command (5.5.3).
                let command = station == Station::Secondary;
                if let (true, Control::U { kind, pf }) = (command, control) {
                    control = Control::U {
                        kind: kind.as_command(),
                        pf,
                    };
                }
                command
            }
        };
        let pid = matches!(
            control,
            Control::I { .. }
                | Control::U {
                    kind: Unnumbered::Ui,
                    ..
                }
        )
        .then_some(Pid::NoLayer3);
        Some(Pdu {
            command,
            control,
            modulus: frame.modulus(),
            pid,
            info: frame.info().to_vec(),
        })
    }
}
