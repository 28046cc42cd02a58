//! Parameter negotiation with XID: the management data link state machine
//! (AX.25 v2.2 6.3.2, 4.3.3.7, Appendix C5, figs. C5.1-C5.8).
//!
//! The station that sent SABME and got UA sends an XID command (C5.3); the
//! peer answers with the values it agrees to and both apply them. The rules
//! (6.3.2, figs. C5.3-C5.8):
//!
//! - Classes of Procedures: half duplex (this engine does not do full
//!   duplex: "reverts to half-duplex if either TNC cannot support
//!   full-duplex").
//! - HDLC Optional Functions: "the lesser of the selection offered",
//!   ranked REJ < SREJ < SREJ multiframe. Dire Wolf's reading (xid.c) is
//!   followed where the text is ambiguous: a command offers a menu (REJ
//!   always, SREJ and multi-SREJ as configured); a response names the one
//!   chosen. Segmenter/reassembler (bit 22) only if both offer it. The
//!   modulus is the one the mode-setting command (SABM/SABME) chose; XID
//!   cannot change it on a running link (Dire Wolf: "disaster if [we]
//!   aren't agreeing on this").
//! - I Field Length Receive (N1) and Window Size Receive (k) are
//!   notifications (6.3.2): each station tells what it accepts; each sends
//!   at most the lesser of its own value and the peer's.
//! - Acknowledge Timer (T1) and Retries (N2): "the greater of the values
//!   offered in the XID command and XID response frames".
//! - An absent parameter keeps the current value (4.3.3.7: "an omitted
//!   parameter field assumes the currently negotiated value").
//! - Values no station can mean are not taken (the hostile-peer suite of
//!   `tests/hostile_peers.rs`): an I field under [`MIN_N1`] octets, which
//!   could not carry even a segment, is ignored as a zero is; N2 is held
//!   to [`MAX_N2`], as T1 is to `Config::t1_max`, so that a peer cannot
//!   make a dead link take hours to be given up on.
//!
//! Errata followed: the SDL of fig. C5.2 returns to Ready after resending
//! the XID command on TM201 expiry; it must stay in Negotiating. RC counts
//! tries from 1 so that N2 = 10 means 10 XID commands (as for DISC). An XID
//! command is answered in any state (4.3.3.7 "a station receiving an XID
//! command returns an XID response"; fig. C5.2's "requeue" while
//! negotiating is replaced by answering at once, which also resolves two
//! stations' crossing commands, as gensio's accepting side sends XID too).

use core::time::Duration;

use linklab_wire::ax25::{
    ClassesOfProcedures, CommandResponse, FrmrInfo, HdlcOptionalFunction, HdlcOptionalFunctions,
    XidNumber, XidParams,
};
use linklab_wire::control::{Modulus, Unnumbered};

use super::{Link, State};
use crate::config::RecoveryMode;
use crate::event::{Event, LinkError, LinkParams, Negotiation, Version};
use crate::framing::Framing;
use crate::timer::Timer;
use linklab_core::Instant;

/// The control field of XID without the P/F bit (4.3.3, fig. 4.4).
const XID_CONTROL: u16 = 0xAF;
/// The P/F bit of a U frame's control field.
const PF_BIT: u16 = 0x10;
/// I Field Length Receive and Window Size Receive the peer is assumed to
/// accept without XID: the v2.0 defaults of 6.3.2 (256 octets, 7 frames).
const V2_0_DEFAULT_N1: usize = 256;
const V2_0_DEFAULT_K: u8 = 7;
/// The v2.2 defaults of 6.3.2 (256 octets, 32 frames).
const V2_2_DEFAULT_N1: usize = 256;
const V2_2_DEFAULT_K: u8 = 32;

/// The reject mode a set of optional functions selects: the highest bit
/// present (Dire Wolf's xid.c reads a menu the same way). None of REJ,
/// SREJ or multi-SREJ set is not allowed (4.3.3.7); read as REJ.
fn recovery_of(functions: HdlcOptionalFunctions) -> RecoveryMode {
    if functions.contains(HdlcOptionalFunction::MultiSrej) {
        RecoveryMode::MultiSrej
    } else if functions.contains(HdlcOptionalFunction::Srej) {
        RecoveryMode::Srej
    } else {
        RecoveryMode::Rej
    }
}

/// The least I field length taken from a peer's XID, in octets: below it
/// the value is ignored (16 octets, the least PACLEN the Linux kernel's
/// AX.25 accepted).
const MIN_N1: usize = 16;

/// The most retries taken from a peer's XID (31, the Linux kernel's limit
/// for N2).
const MAX_N2: u32 = 31;

/// A numeric parameter's value, if present and not zero, capped at `max`.
fn number(n: Option<XidNumber>, max: u32) -> Option<u32> {
    n.map(XidNumber::value)
        .filter(|&v| v > 0)
        .map(|v| v.min(max))
}

impl<F: Framing> Link<F> {
    /// The optional functions we send: the mandatory ones (4.3.3.7), the
    /// link's modulus, the segmenter if `segmenter`, and the reject
    /// functions: as a command the menu up to `recovery`, as a response the
    /// one chosen.
    fn optional_functions(
        modulus: Modulus,
        recovery: RecoveryMode,
        segmenter: bool,
        command: bool,
    ) -> HdlcOptionalFunctions {
        let modulo = match modulus {
            Modulus::Mod8 => HdlcOptionalFunction::Modulo8,
            Modulus::Mod128 => HdlcOptionalFunction::Modulo128,
        };
        let mut f = HdlcOptionalFunctions::AX25_MANDATORY.with(modulo);
        if segmenter {
            f = f.with(HdlcOptionalFunction::Segmenter);
        }
        let rej = command || recovery == RecoveryMode::Rej;
        if rej {
            f = f.with(HdlcOptionalFunction::Rej);
        }
        if recovery >= RecoveryMode::Srej {
            f = f.with(HdlcOptionalFunction::Srej);
        }
        if recovery == RecoveryMode::MultiSrej {
            f = f.with(HdlcOptionalFunction::MultiSrej);
        }
        f
    }

    /// An XID information field for `params` on a link of `modulus`: what
    /// we receive (N1 in bits, k) and the T1/N2 offered or agreed.
    fn xid_info(modulus: Modulus, params: &LinkParams, command: bool) -> Vec<u8> {
        let xid = XidParams {
            classes_of_procedures: Some(ClassesOfProcedures::ax25(false)),
            hdlc_optional_functions: Some(Self::optional_functions(
                modulus,
                params.recovery,
                params.segmenter,
                command,
            )),
            i_field_length_rx: Some(XidNumber::new(
                u32::try_from(params.n1_rx * 8).unwrap_or(u32::MAX),
            )),
            window_size_rx: Some(XidNumber::new(u32::from(params.k_rx))),
            ack_timer: Some(XidNumber::new(
                u32::try_from(params.t1.as_millis()).unwrap_or(u32::MAX),
            )),
            retries: Some(XidNumber::new(u32::from(params.n2))),
            ..XidParams::default()
        };
        let info = xid.encode();
        debug_assert!(info.is_ok(), "{info:?}");
        info.unwrap_or_default()
    }

    /// What we offer in an XID command: the configured values (the SDL's
    /// "initiate ... negotiation" subroutines, figs. C5.3-C5.8).
    fn offer(&self) -> LinkParams {
        let v2_2 = self.version == Version::V2_2;
        LinkParams {
            recovery: if v2_2 {
                self.config.recovery
            } else {
                RecoveryMode::Rej
            },
            segmenter: v2_2,
            n1_tx: self.config.n1,
            n1_rx: self.config.n1,
            k_tx: self.config.window(self.modulus),
            k_rx: self.config.window(self.modulus),
            t1: self.config.t1,
            n2: self.config.n2,
        }
    }

    /// "MDL-NEGOTIATE request" (fig. C5.1): XID command with P = 1, start
    /// TM201, enter Negotiating. RC counts tries.
    pub(super) fn start_negotiation(&mut self, now: Instant) {
        self.negotiating = true;
        self.mdl_rc = 1;
        self.send_xid_command(now);
    }

    fn send_xid_command(&mut self, now: Instant) {
        let info = Self::xid_info(self.modulus, &self.offer(), true);
        self.send_u(Unnumbered::Xid, CommandResponse::Command, true, info);
        self.start_pausable(Timer::Tm201, now, self.t1v);
    }

    /// Leaves Negotiating without a result (link reset or release).
    pub(super) fn end_negotiation(&mut self, now: Instant) {
        self.negotiating = false;
        self.timers.stop(Timer::Tm201, now);
    }

    /// TM201 expiry (fig. C5.2): resend the XID command, or after N2 tries
    /// give up (MDL-ERROR C) and go on with the v2.2 defaults for what the
    /// peer accepts.
    pub(super) fn tm201_expiry(&mut self, now: Instant) {
        if !self.negotiating {
            return;
        }
        if self.mdl_rc >= self.n2 {
            self.end_negotiation(now);
            return self.fall_back(Negotiation::NoAnswer);
        }
        self.mdl_rc += 1;
        self.send_xid_command(now);
    }

    /// FRMR or DM answering our XID command (fig. C5.2, "XID rejected"):
    /// the peer does not negotiate.
    pub(super) fn xid_refused(&mut self, now: Instant) {
        self.end_negotiation(now);
        self.fall_back(Negotiation::Refused);
    }

    /// True if an FRMR's rejected control field is an XID, or the FRMR
    /// does not say what it rejects.
    pub(super) fn frmr_rejects_xid(&self, info: &[u8]) -> bool {
        FrmrInfo::decode(info, self.modulus)
            .map_or(true, |frmr| frmr.rejected_control & !PF_BIT == XID_CONTROL)
    }

    /// Default parameters for a peer that did not negotiate: REJ and no
    /// segmenter if it refused XID (fig. C5.2: "set segmenter off, set
    /// version 2.0 defaults"), no segmenter if it never answered (4.3.3.7:
    /// the default is "no segmenter/reassembler"); N1 and k no more than
    /// the defaults of 6.3.2.
    fn fall_back(&mut self, outcome: Negotiation) {
        let (n1, k) = match outcome {
            Negotiation::Refused => {
                self.recovery = RecoveryMode::Rej;
                (V2_0_DEFAULT_N1, V2_0_DEFAULT_K)
            }
            _ => (V2_2_DEFAULT_N1, V2_2_DEFAULT_K),
        };
        self.segmenter = false;
        self.n1_tx = self.n1_tx.min(n1);
        self.k = self.k.min(k);
        self.event(Event::Negotiated {
            outcome,
            params: self.params(),
        });
    }

    /// XID frame received (figs. C5.1, C5.2).
    pub(super) fn on_xid(&mut self, now: Instant, info: &[u8], pf: bool, command: bool) {
        let xid = if info.is_empty() {
            // No information field: nothing offered, current values kept.
            Ok(XidParams::default())
        } else {
            XidParams::decode(info)
        };
        match (command, pf) {
            (true, false) => self.event(Event::Error(LinkError::XidWithoutPoll)),
            (true, true) => match xid {
                Ok(xid) => self.answer_xid(&xid),
                Err(error) => self.event(Event::Error(LinkError::BadXid(error))),
            },
            (false, _) if !self.negotiating => {
                self.event(Event::Error(LinkError::UnexpectedXidResponse))
            }
            (false, false) => self.event(Event::Error(LinkError::XidWithoutFinal)),
            (false, true) => {
                self.end_negotiation(now);
                match xid {
                    Ok(xid) => self.complete_negotiation(&xid),
                    Err(error) => {
                        self.event(Event::Error(LinkError::BadXid(error)));
                        self.fall_back(Negotiation::NoAnswer);
                    }
                }
            }
        }
    }

    /// The values agreed from the peer's XID `xid` and our configuration,
    /// starting from `current` for absent parameters. `as_responder`: the
    /// peer offered a menu and T1/N2 are the greater of both offers; as
    /// the initiator the response's choice and T1/N2 are taken as sent
    /// ("both TNCs set up based on the values used in the XID response").
    fn agree(
        &self,
        xid: &XidParams,
        current: LinkParams,
        modulus: Modulus,
        as_responder: bool,
    ) -> LinkParams {
        let v2_2 = modulus == Modulus::Mod128;
        let mut params = current;
        if let Some(functions) = xid.hdlc_optional_functions {
            let own = if v2_2 {
                self.config.recovery
            } else {
                RecoveryMode::Rej
            };
            params.recovery = recovery_of(functions).min(own);
            params.segmenter = v2_2 && functions.contains(HdlcOptionalFunction::Segmenter);
        }
        if let Some(bits) = number(xid.i_field_length_rx, u32::MAX) {
            let n1 = usize::try_from(bits / 8).unwrap_or(usize::MAX);
            if n1 >= MIN_N1 {
                params.n1_tx = self.config.n1.min(n1);
            }
        }
        if let Some(k) = number(xid.window_size_rx, 127) {
            params.k_tx = self.config.window(modulus).min(k as u8);
        }
        if let Some(ms) = number(xid.ack_timer, u32::MAX) {
            let t1 = Duration::from_millis(u64::from(ms));
            params.t1 = if as_responder {
                t1.max(self.config.t1)
            } else {
                t1
            };
        }
        if let Some(n2) = number(xid.retries, MAX_N2) {
            let n2 = n2 as u8;
            params.n2 = if as_responder {
                n2.max(self.config.n2)
            } else {
                n2
            };
        }
        params.n1_rx = self.config.n1;
        params.k_rx = self.config.window(modulus);
        params
    }

    /// XID command with P = 1 (fig. C5.1): answer with the agreed values
    /// and F = 1, and apply them. While disconnected they are kept for a
    /// v2.2 link the peer may set up next.
    fn answer_xid(&mut self, xid: &XidParams) {
        let connected = matches!(self.state, State::Connected | State::TimerRecovery);
        let (current, modulus) = if connected {
            (self.params(), self.modulus)
        } else {
            (self.offer_for_v2_2(), Modulus::Mod128)
        };
        let agreed = self.agree(xid, current, modulus, true);
        let info = Self::xid_info(modulus, &agreed, false);
        self.send_u(Unnumbered::Xid, CommandResponse::Response, true, info);
        match self.state {
            State::Connected | State::TimerRecovery => {
                self.apply(agreed);
                self.event(Event::Negotiated {
                    outcome: Negotiation::Answered,
                    params: self.params(),
                });
            }
            State::Disconnected => self.agreed_before_connect = Some(agreed),
            _ => {}
        }
    }

    /// Our values for a v2.2 link, when answering XID before one exists.
    fn offer_for_v2_2(&self) -> LinkParams {
        LinkParams {
            recovery: self.config.recovery,
            segmenter: true,
            n1_tx: self.config.n1,
            n1_rx: self.config.n1,
            k_tx: self.config.window_mod128,
            k_rx: self.config.window_mod128,
            t1: self.config.t1,
            n2: self.config.n2,
        }
    }

    /// XID response with F = 1 to our command (fig. C5.2): apply the
    /// values it carries (MDL-NEGOTIATE confirm).
    fn complete_negotiation(&mut self, xid: &XidParams) {
        let agreed = self.agree(xid, self.params(), self.modulus, false);
        self.apply(agreed);
        self.event(Event::Negotiated {
            outcome: Negotiation::Agreed,
            params: self.params(),
        });
    }

    /// Puts agreed values in force. T1V restarts from the agreed T1
    /// (scaled for digipeaters, within the configured bounds), as Dire
    /// Wolf sets its T1V from the XID value.
    fn apply(&mut self, params: LinkParams) {
        self.recovery = params.recovery;
        self.segmenter = params.segmenter;
        self.n1_tx = params.n1_tx;
        self.k = params.k_tx;
        self.n2 = params.n2;
        // A round trip already measured (the SABM(E)/UA exchange) says more
        // about this link than the peer's initial T1 does: the agreed value
        // becomes the initial one only for a later re-establishment.
        if params.t1 != self.t1_base {
            self.t1_base = params.t1;
            if !(self.srt_measured && self.config.srt_first_sample) {
                self.reset_t1v();
                self.t1v = self.t1v.clamp(self.config.t1_min, self.config.t1_max);
            }
        }
    }

    /// After accepting SABM(E) while disconnected: put in force what an
    /// earlier XID exchange agreed, if the link is v2.2.
    pub(super) fn apply_agreed_before_connect(&mut self, version: Version) {
        if let Some(agreed) = self.agreed_before_connect.take() {
            if version == Version::V2_2 {
                self.apply(agreed);
                self.event(Event::Negotiated {
                    outcome: Negotiation::Answered,
                    params: self.params(),
                });
            }
        }
    }
}
