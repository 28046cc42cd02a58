//! Whole AX.25 frames without flags and FCS, as carried by KISS
//! (AX.25 v2.2 3, fig. 3.1a/3.1b).
//!
//! ```text
//! | Address 14-70 | Control 1-2 | PID 1 (I, UI only) | Info 0-N |
//! ```

use thiserror::Error;

use super::address::{Address, AddressError, AddressField, CommandResponse};
use super::pid::Pid;
use super::srej::{MultiSrejInfo, SrejInfoError};
use crate::control::{Control, ControlError, Modulus, Supervisory, Unnumbered};

/// Why octets are not a valid AX.25 frame, or frame parts do not fit together.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrameError {
    /// The address field is bad.
    #[error(transparent)]
    Address(#[from] AddressError),
    /// The control field is bad.
    #[error(transparent)]
    Control(#[from] ControlError),
    /// An I or UI frame ends right after its control field.
    #[error("{frame} frame ends after the control field; the PID octet is missing")]
    MissingPid {
        /// The frame's name.
        frame: &'static str,
    },
    /// A PID given for a frame type that has none.
    #[error("{frame} frames have no PID field; only I and UI frames do")]
    PidNotAllowed {
        /// The frame's name.
        frame: &'static str,
    },
    /// An information field on a frame type that may not carry one.
    #[error("{frame} frame carries {len} octets of information; only I, UI, XID, TEST and FRMR frames may")]
    InfoNotAllowed {
        /// The frame's name.
        frame: &'static str,
        /// Octets found after the control field.
        len: usize,
    },
    /// An SREJ whose information field is not a multi-SREJ list of N(R)s.
    #[error(transparent)]
    SrejInfo(#[from] SrejInfoError),
}

/// An AX.25 frame: address field, control field, PID and information field
/// (AX.25 v2.2 3; PID only in I and UI frames, 3.4; information only in I,
/// UI, XID, TEST and FRMR frames, 3.5, and in an SREJ as the further N(R)s
/// of a multi-SREJ, 4.3.2.4, see [`MultiSrejInfo`]).
///
/// A `Frame` is always valid: constructors check the combination, so
/// [`Frame::encode`] cannot fail. The [`Modulus`] is the one the frame was
/// decoded with or built for; it matters only for I and S frames.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame {
    address: AddressField,
    modulus: Modulus,
    control: Control,
    pid: Option<Pid>,
    info: Vec<u8>,
}

/// True for frames that carry a PID (3.4).
fn has_pid(control: &Control) -> bool {
    matches!(
        control,
        Control::I { .. }
            | Control::U {
                kind: Unnumbered::Ui,
                ..
            }
    )
}

impl Frame {
    /// A frame from its parts. Fails if a sequence number is out of range
    /// for `modulus`, if `pid` is missing on an I/UI frame or present on
    /// another, or if `info` is not empty on a frame that allows none.
    pub fn new(
        address: AddressField,
        modulus: Modulus,
        control: Control,
        pid: Option<Pid>,
        info: Vec<u8>,
    ) -> Result<Frame, FrameError> {
        control.validate(modulus)?;
        let frame = control.name();
        match (has_pid(&control), pid) {
            (true, None) => return Err(FrameError::MissingPid { frame }),
            (false, Some(_)) => return Err(FrameError::PidNotAllowed { frame }),
            _ => {}
        }
        if let Control::S {
            kind: Supervisory::Srej,
            ..
        } = control
        {
            MultiSrejInfo::decode(&info, modulus)?;
        } else if !info.is_empty() && !control.allows_info() {
            return Err(FrameError::InfoNotAllowed {
                frame,
                len: info.len(),
            });
        }
        Ok(Frame {
            address,
            modulus,
            control,
            pid,
            info,
        })
    }

    /// A UI command frame with P = 0, as used by APRS and beacons
    /// (4.3.3.6); modulus 8.
    pub fn ui(
        dest: Address,
        source: Address,
        via: &[Address],
        pid: Pid,
        info: Vec<u8>,
    ) -> Result<Frame, FrameError> {
        let address = AddressField::new(dest, source, via, CommandResponse::Command)?;
        let control = Control::U {
            kind: Unnumbered::Ui,
            pf: false,
        };
        Frame::new(address, Modulus::Mod8, control, Some(pid), info)
    }

    /// An I frame (4.3.1). The address field's C bits are used as given
    /// (I frames are commands in AX.25).
    pub fn i(
        address: AddressField,
        modulus: Modulus,
        ns: u8,
        nr: u8,
        pf: bool,
        pid: Pid,
        info: Vec<u8>,
    ) -> Result<Frame, FrameError> {
        Frame::new(address, modulus, Control::I { ns, nr, pf }, Some(pid), info)
    }

    /// An S frame: RR, RNR, REJ or SREJ (4.3.2), without information field.
    pub fn s(
        address: AddressField,
        modulus: Modulus,
        kind: Supervisory,
        nr: u8,
        pf: bool,
    ) -> Result<Frame, FrameError> {
        Frame::new(
            address,
            modulus,
            Control::S { kind, nr, pf },
            None,
            Vec::new(),
        )
    }

    /// An SREJ response asking for the I frames `nr` and then those of
    /// `further` (a multi-SREJ, 4.3.2.4, if `further` is not empty). Fails
    /// if a sequence number is out of range for `modulus`, or on a span in
    /// modulo 8.
    pub fn srej(
        address: AddressField,
        modulus: Modulus,
        nr: u8,
        pf: bool,
        further: &MultiSrejInfo,
    ) -> Result<Frame, FrameError> {
        let info = further.encode(modulus)?;
        let kind = Supervisory::Srej;
        Frame::new(address, modulus, Control::S { kind, nr, pf }, None, info)
    }

    /// The further N(R)s of a multi-SREJ (4.3.2.4): `Some` for an SREJ
    /// (empty if it asks for one frame only), `None` for other frames.
    pub fn multi_srej(&self) -> Option<MultiSrejInfo> {
        match self.control {
            Control::S {
                kind: Supervisory::Srej,
                ..
            } => MultiSrejInfo::decode(&self.info, self.modulus).ok(),
            _ => None,
        }
    }

    /// A U frame other than UI (4.3.3); `info` must be empty except for XID,
    /// TEST and FRMR. Build UI frames with [`Frame::ui`] or [`Frame::new`].
    pub fn u(
        address: AddressField,
        modulus: Modulus,
        kind: Unnumbered,
        pf: bool,
        info: Vec<u8>,
    ) -> Result<Frame, FrameError> {
        Frame::new(address, modulus, Control::U { kind, pf }, None, info)
    }

    /// Decodes a frame (no flags, no FCS) whose I and S control fields use
    /// `modulus`.
    pub fn decode(bytes: &[u8], modulus: Modulus) -> Result<Frame, FrameError> {
        let (address, used) = AddressField::decode(bytes)?;
        let rest = bytes.get(used..).unwrap_or_default();
        let control = Control::decode(rest, modulus)?;
        let rest = rest.get(control.len(modulus)..).unwrap_or_default();
        let (pid, info) = if has_pid(&control) {
            let (&pid, info) = rest.split_first().ok_or(FrameError::MissingPid {
                frame: control.name(),
            })?;
            (Some(Pid::from(pid)), info)
        } else {
            (None, rest)
        };
        Frame::new(address, modulus, control, pid, info.to_vec())
    }

    /// Appends the encoded frame (no flags, no FCS) to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        self.address.encode_into(out);
        self.control.encode_unchecked(self.modulus, out);
        if let Some(pid) = self.pid {
            out.push(u8::from(pid));
        }
        out.extend_from_slice(&self.info);
    }

    /// The encoded frame (no flags, no FCS).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// Length of the encoded frame in octets.
    pub fn encoded_len(&self) -> usize {
        self.address.encoded_len()
            + self.control.len(self.modulus)
            + usize::from(self.pid.is_some())
            + self.info.len()
    }

    /// The address field.
    pub fn address(&self) -> &AddressField {
        &self.address
    }

    /// The address field, mutable (addresses, C and H bits).
    pub fn address_mut(&mut self) -> &mut AddressField {
        &mut self.address
    }

    /// The destination address.
    pub fn dest(&self) -> &Address {
        self.address.dest()
    }

    /// The source address.
    pub fn source(&self) -> &Address {
        self.address.source()
    }

    /// The digipeaters, in path order, with their H bits.
    pub fn digipeaters(&self) -> &[Address] {
        self.address.digipeaters()
    }

    /// Command, response or previous-version (6.1.2).
    pub fn command_response(&self) -> CommandResponse {
        self.address.command_response()
    }

    /// True if the C bits mark a v2 command (destination 1, source 0).
    pub fn is_command(&self) -> bool {
        self.command_response() == CommandResponse::Command
    }

    /// True if the C bits mark a v2 response (destination 0, source 1).
    pub fn is_response(&self) -> bool {
        self.command_response() == CommandResponse::Response
    }

    /// The modulus of the I/S control field.
    pub fn modulus(&self) -> Modulus {
        self.modulus
    }

    /// The control field.
    pub fn control(&self) -> Control {
        self.control
    }

    /// The PID, present in I and UI frames only.
    pub fn pid(&self) -> Option<Pid> {
        self.pid
    }

    /// The information field (empty if none).
    pub fn info(&self) -> &[u8] {
        &self.info
    }

    /// Consumes the frame and returns its information field.
    pub fn into_info(self) -> Vec<u8> {
        self.info
    }
}
