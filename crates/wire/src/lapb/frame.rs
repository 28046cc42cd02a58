//! Whole HDLC/LAPB frames without flags and FCS (X.25 2.2; ISO 13239
//! clause 4).
//!
//! ```text
//! | Address 1 | Control 1-2 | Information 0-N |
//! ```

use super::address::Address;
use super::error::LapbError;
use crate::ax25::FrmrInfo;
use crate::control::{Control, Modulus, Supervisory, Unnumbered};

/// An HDLC or LAPB frame with a one-octet address: address, control and
/// information fields (X.25 2.2; ISO 13239 clause 4).
///
/// Only I, UI, XID, TEST and FRMR frames carry an information field
/// (X.25 2.3.4; ISO 13239 5.5); the constructors and [`Frame::decode`]
/// refuse one on any other frame, so [`Frame::encode`] cannot fail. The
/// [`Modulus`] is the one the frame was decoded with or built for; it
/// matters only for I and S frames.
///
/// Some U codes mean one thing as a command and another as a response
/// (ISO 13239 5.5.3): decoding gives the balanced-mode meaning (DM for the
/// SARM code, DISC for the RD code). A primary-side decoder in NRM/ARM
/// that knows it received a command applies
/// [`Unnumbered::as_command`]. Such frames re-encode to the same octets.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame {
    address: Address,
    modulus: Modulus,
    control: Control,
    info: Vec<u8>,
}

/// Refuses an information field on a frame that allows none.
fn check_info(control: &Control, info: &[u8]) -> Result<(), LapbError> {
    if info.is_empty() || control.allows_info() {
        Ok(())
    } else {
        Err(LapbError::InfoNotAllowed {
            frame: control.name(),
            len: info.len(),
        })
    }
}

impl Frame {
    /// A frame from its parts. Fails if a sequence number is out of range
    /// for `modulus` or if `info` is not empty on a frame that allows none.
    pub fn new(
        address: Address,
        modulus: Modulus,
        control: Control,
        info: Vec<u8>,
    ) -> Result<Frame, LapbError> {
        control.validate(modulus)?;
        check_info(&control, &info)?;
        Ok(Frame {
            address,
            modulus,
            control,
            info,
        })
    }

    /// An I frame (X.25 2.3.4.1; ISO 13239 5.5.1).
    pub fn i(
        address: Address,
        modulus: Modulus,
        ns: u8,
        nr: u8,
        p: bool,
        info: Vec<u8>,
    ) -> Result<Frame, LapbError> {
        Frame::new(address, modulus, Control::I { ns, nr, pf: p }, info)
    }

    /// An S frame: RR, RNR, REJ or SREJ (X.25 2.3.4.2-2.3.4.4; ISO 13239
    /// 5.5.2).
    pub fn s(
        address: Address,
        modulus: Modulus,
        kind: Supervisory,
        nr: u8,
        pf: bool,
    ) -> Result<Frame, LapbError> {
        Frame::new(address, modulus, Control::S { kind, nr, pf }, Vec::new())
    }

    /// A U frame (X.25 2.3.4.5-2.3.4.9; ISO 13239 5.5.3); `info` must be
    /// empty except for UI, XID, TEST and FRMR.
    pub fn u(
        address: Address,
        modulus: Modulus,
        kind: Unnumbered,
        pf: bool,
        info: Vec<u8>,
    ) -> Result<Frame, LapbError> {
        Frame::new(address, modulus, Control::U { kind, pf }, info)
    }

    /// An FRMR response with its information field (X.25 2.3.4.9): 3
    /// octets in modulo 8, 5 in modulo 128.
    pub fn frmr(
        address: Address,
        modulus: Modulus,
        f: bool,
        info: &FrmrInfo,
    ) -> Result<Frame, LapbError> {
        let info = info.encode(modulus)?;
        Frame::u(address, modulus, Unnumbered::Frmr, f, info)
    }

    /// Decodes a frame (no flags, no FCS) whose I and S control fields use
    /// `modulus`. The information field of an FRMR is kept as received;
    /// [`Frame::frmr_info`] decodes it.
    pub fn decode(bytes: &[u8], modulus: Modulus) -> Result<Frame, LapbError> {
        let (&address, rest) = bytes.split_first().ok_or(LapbError::Empty)?;
        let control = Control::decode(rest, modulus)?;
        let info = rest.get(control.len(modulus)..).unwrap_or_default();
        check_info(&control, info)?;
        Ok(Frame {
            address: Address(address),
            modulus,
            control,
            info: info.to_vec(),
        })
    }

    /// Appends the encoded frame (no flags, no FCS) to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.reserve(self.encoded_len());
        out.push(self.address.octet());
        self.control.encode_unchecked(self.modulus, out);
        out.extend_from_slice(&self.info);
    }

    /// The encoded frame (no flags, no FCS).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.encode_into(&mut out);
        out
    }

    /// Length of the encoded frame in octets.
    pub fn encoded_len(&self) -> usize {
        1 + self.control.len(self.modulus) + self.info.len()
    }

    /// The address field.
    pub fn address(&self) -> Address {
        self.address
    }

    /// Replaces the address field.
    pub fn set_address(&mut self, address: Address) {
        self.address = address;
    }

    /// The modulus of the I/S control field.
    pub fn modulus(&self) -> Modulus {
        self.modulus
    }

    /// The control field.
    pub fn control(&self) -> Control {
        self.control
    }

    /// The information field (empty if none).
    pub fn info(&self) -> &[u8] {
        &self.info
    }

    /// Consumes the frame and returns its information field.
    pub fn into_info(self) -> Vec<u8> {
        self.info
    }

    /// Decodes the information field of an FRMR response (X.25 2.3.4.9).
    pub fn frmr_info(&self) -> Result<FrmrInfo, LapbError> {
        match self.control {
            Control::U {
                kind: Unnumbered::Frmr,
                ..
            } => Ok(FrmrInfo::decode(&self.info, self.modulus)?),
            other => Err(LapbError::NotFrmr {
                frame: other.name(),
            }),
        }
    }
}
