//! Link set-up, reset and release (AX.25 v2.2 6.3, 6.5; figs. C4.1-C4.3,
//! C4.6 and the subroutines of fig. C4.7).

use linklab_wire::ax25::{CommandResponse, FrmrInfo};
use linklab_wire::control::{Modulus, Unnumbered};

use super::{Link, RoleError, State};
use crate::config::{Mode, RecoveryMode, Role, SabmeHandling};
use crate::event::{DisconnectReason, Event, FailureReason, LinkError, Version};
use crate::framing::Framing;
use crate::timer::Timer;
use linklab_core::{Instant, TimerKind};

impl<F: Framing> Link<F> {
    /// DL-CONNECT request: sends SABME (modulo 128 configured) or SABM
    /// and waits for UA. On an established link this resets it; while
    /// connecting or releasing, the request changes nothing. An HDLC
    /// primary sends SNRM(E) or SARM(E) as configured.
    ///
    /// A secondary cannot set a link up (ISO/IEC 13239 clause 6): it gets
    /// [`RoleError::SecondaryCannotSetUp`] and nothing is sent.
    pub fn connect(&mut self, now: Instant) -> Result<(), RoleError> {
        if self.config.role == Role::Secondary {
            return Err(RoleError::SecondaryCannotSetUp);
        }
        match self.state {
            State::Disconnected | State::Connected | State::TimerRecovery => {
                let version = match self.config.modulus {
                    Modulus::Mod8 => Version::V2_0,
                    Modulus::Mod128 => Version::V2_2,
                };
                self.discard_queues();
                self.set_version(version);
                self.establish_data_link(now);
                self.layer_3_initiated = true;
                self.set_state(self.awaiting_state());
            }
            // Already connecting, or releasing.
            _ => {}
        }
        Ok(())
    }

    /// DL-DISCONNECT request: sends DISC and waits for UA (fig. C4.4a).
    /// Queued and unacknowledged data are discarded, as the SDL does; wait
    /// for [`Link::unacked`] and [`Link::queued`] to reach zero
    /// first for an orderly release. While connecting, the attempt is
    /// abandoned at once with a DISC (Dire Wolf's erratum: the SDL's
    /// "requeue" would loop). On a link already released or releasing,
    /// the request changes nothing.
    ///
    /// A secondary cannot release the link (only its primary sends DISC,
    /// ISO/IEC 13239 5.5.3): it gets [`RoleError::SecondaryCannotRelease`]
    /// and nothing is sent; it asks with [`Link::request_disconnect`].
    pub fn disconnect(&mut self, now: Instant) -> Result<(), RoleError> {
        if self.config.role == Role::Secondary {
            return Err(RoleError::SecondaryCannotRelease);
        }
        self.release(now);
        Ok(())
    }

    /// A secondary asks its primary to release the link with a request
    /// disconnect (RD) response (ISO/IEC 13239 5.5.3), sent at its next
    /// opportunity, and stays connected until the primary's DISC. Once
    /// asked, or while the link is not established, the request changes
    /// nothing.
    ///
    /// A primary or combined station releases the link itself with
    /// [`Link::disconnect`]: here it gets [`RoleError::NotSecondary`].
    pub fn request_disconnect(&mut self) -> Result<(), RoleError> {
        if self.config.role != Role::Secondary {
            return Err(RoleError::NotSecondary {
                role: self.config.role,
            });
        }
        if matches!(self.state, State::Connected | State::TimerRecovery) && !self.rd_sent {
            self.rd_sent = true;
            self.send_u(
                Unnumbered::Disc,
                CommandResponse::Response,
                false,
                Vec::new(),
            );
        }
        Ok(())
    }

    /// The release of a DL-DISCONNECT request by a primary or combined
    /// station, or of an RD received by a primary.
    fn release(&mut self, now: Instant) {
        match self.state {
            State::AwaitingConnection | State::AwaitingConnection2_2 => {
                self.discard_queues();
                self.send_u(Unnumbered::Disc, CommandResponse::Command, true, Vec::new());
                self.stop_t1(now);
                self.set_state(State::Disconnected);
                self.event(Event::Disconnected {
                    reason: DisconnectReason::Abandoned,
                });
            }
            State::Connected | State::TimerRecovery => {
                self.discard_queues();
                self.clear_exception_conditions();
                self.end_negotiation(now);
                // Erratum (Dire Wolf): RC starts at 1, or N2 = 10 means 11 tries.
                self.rc = 1;
                self.send_u(Unnumbered::Disc, CommandResponse::Command, true, Vec::new());
                self.stop_t3(now);
                self.timers.stop(Timer::T2, now);
                self.start_t1(now);
                self.set_state(State::AwaitingRelease);
            }
            State::Disconnected | State::AwaitingRelease => {}
        }
    }

    /// A mode-setting command received: SABM(E) on a balanced link,
    /// SNRM(E) or SARM(E) by an unbalanced secondary (ISO/IEC 13239
    /// 5.5.3). A command for another mode than the configured one, or to
    /// a primary, is refused with DM.
    pub(super) fn on_set_mode(&mut self, now: Instant, kind: Unnumbered, pf: bool) {
        let (mode, version) = match kind {
            Unnumbered::Sabm => (Mode::Abm, Version::V2_0),
            Unnumbered::Sabme => (Mode::Abm, Version::V2_2),
            Unnumbered::Snrm => (Mode::Nrm, Version::V2_0),
            Unnumbered::Snrme => (Mode::Nrm, Version::V2_2),
            Unnumbered::Sarm => (Mode::Arm, Version::V2_0),
            _ => (Mode::Arm, Version::V2_2),
        };
        if mode != self.config.mode || self.config.role == Role::Primary {
            return self.send_u(Unnumbered::Dm, CommandResponse::Response, pf, Vec::new());
        }
        self.on_sabm(now, version, pf)
    }

    /// RD, request disconnect, received by a primary (ISO/IEC 13239
    /// 5.5.3): release the link with DISC.
    pub(super) fn on_rd(&mut self, now: Instant) {
        if self.config.role == Role::Primary {
            self.release(now);
        }
    }

    /// SABM or SABME received (figs. C4.1-C4.6).
    pub(super) fn on_sabm(&mut self, now: Instant, version: Version, pf: bool) {
        if F::AX25 && version == Version::V2_2 {
            match self.config.sabme_handling {
                SabmeHandling::Accept => {}
                SabmeHandling::Dm => {
                    return self.send_u(Unnumbered::Dm, CommandResponse::Response, pf, Vec::new())
                }
                SabmeHandling::Frmr => {
                    // W: control field not implemented (4.3.3.9).
                    let info = FrmrInfo {
                        rejected_control: u16::from(Unnumbered::Sabme.code() | (u8::from(pf) << 4)),
                        vs: self.vs % 8,
                        vr: self.vr % 8,
                        w: true,
                        ..FrmrInfo::default()
                    };
                    let info = info.encode(Modulus::Mod8).unwrap_or_default();
                    return self.send_u(Unnumbered::Frmr, CommandResponse::Response, pf, info);
                }
                SabmeHandling::Ignore => return,
            }
        }
        match self.state {
            State::Disconnected => {
                if !self.accept_incoming {
                    return self.send_u(Unnumbered::Dm, CommandResponse::Response, pf, Vec::new());
                }
                self.set_version(version);
                self.send_u(Unnumbered::Ua, CommandResponse::Response, pf, Vec::new());
                self.clear_exception_conditions();
                self.reset_variables();
                self.reset_t1v();
                self.event(Event::Connected {
                    version,
                    incoming: true,
                });
                self.enter_connected(now);
                self.apply_agreed_before_connect(version);
            }
            // Collision of SABMs (6.3.6.2): answer UA and keep waiting.
            // Erratum (Dire Wolf): the 2006 SDL shows SABME twice for state 1.
            State::AwaitingConnection if version == self.version => {
                self.send_u(Unnumbered::Ua, CommandResponse::Response, pf, Vec::new())
            }
            State::AwaitingConnection => {
                self.send_u(Unnumbered::Dm, CommandResponse::Response, pf, Vec::new())
            }
            State::AwaitingConnection2_2 => {
                self.send_u(Unnumbered::Ua, CommandResponse::Response, pf, Vec::new());
                if version == Version::V2_0 {
                    // Revision 4, fig. C4.6b: SABM in state 5 sets v2.0.
                    self.set_version(Version::V2_0);
                    self.set_state(State::AwaitingConnection);
                }
            }
            // Erratum (Dire Wolf): the SDL lists SABM only; SABME alike.
            State::AwaitingRelease => {
                self.send_u(Unnumbered::Dm, CommandResponse::Response, pf, Vec::new())
            }
            State::Connected | State::TimerRecovery => {
                // Link reset by the peer (6.5, fig. C4.4b; error F).
                self.event(Event::Error(LinkError::ResetByPeer));
                self.end_negotiation(now);
                self.set_version(version);
                self.send_u(Unnumbered::Ua, CommandResponse::Response, pf, Vec::new());
                let lost = self.unacked() > 0 || self.queued() > 0;
                self.clear_exception_conditions();
                self.discard_queues();
                if lost {
                    self.event(Event::Connected {
                        version,
                        incoming: true,
                    });
                }
                self.reset_variables();
                self.enter_connected(now);
            }
        }
    }

    /// DISC received.
    pub(super) fn on_disc(&mut self, now: Instant, pf: bool) {
        match self.state {
            State::Disconnected | State::AwaitingConnection | State::AwaitingConnection2_2 => {
                self.send_u(Unnumbered::Dm, CommandResponse::Response, pf, Vec::new())
            }
            // DISC collision: answer UA, the peer's UA will complete ours.
            State::AwaitingRelease => {
                self.send_u(Unnumbered::Ua, CommandResponse::Response, pf, Vec::new())
            }
            State::Connected | State::TimerRecovery => {
                self.discard_queues();
                self.send_u(Unnumbered::Ua, CommandResponse::Response, pf, Vec::new());
                let reason = if self.rd_sent {
                    DisconnectReason::LocalRequest
                } else {
                    DisconnectReason::RemoteRequest
                };
                self.enter_disconnected(now);
                self.event(Event::Disconnected { reason });
            }
        }
    }

    /// UA received.
    pub(super) fn on_ua(&mut self, now: Instant, pf: bool) {
        match self.state {
            // Erratum (Dire Wolf): the SDL says errors C and D; C fits.
            State::Disconnected => self.event(Event::Error(LinkError::UnexpectedUa)),
            State::AwaitingConnection | State::AwaitingConnection2_2 => {
                if !pf {
                    return self.event(Event::Error(LinkError::UaWithoutFinal));
                }
                let version = self.version;
                if self.layer_3_initiated {
                    self.event(Event::Connected {
                        version,
                        incoming: false,
                    });
                } else if self.unacked() > 0 || self.queued() > 0 {
                    self.discard_queues();
                    self.event(Event::Connected {
                        version,
                        incoming: false,
                    });
                }
                self.stop_t1(now);
                self.reset_variables();
                // RC = 1: the set-mode command went once, so this UA
                // answers it and the round trip is a sample (Karn's rule);
                // after a retry it is not (RC > 1, select T1 value keeps
                // SRT). The SDL takes no sample here.
                if self.rc == 1 && self.config.srt_first_sample {
                    self.rc = 0;
                }
                self.select_t1_value();
                self.enter_connected(now);
                // C5.3: "The station initiating the AX.25 connection will
                // send an XID command after it receives the UA frame" (Dire
                // Wolf's erratum: the SDL of fig. C4.6 does not show it).
                self.reset_parameters();
                if F::AX25 && self.version == Version::V2_2 && self.config.xid {
                    self.start_negotiation(now);
                }
            }
            State::AwaitingRelease => {
                if !pf {
                    return self.event(Event::Error(LinkError::UaWithoutFinal));
                }
                self.enter_disconnected(now);
                self.event(Event::Disconnected {
                    reason: DisconnectReason::LocalRequest,
                });
            }
            // Error C, and nothing else: the SDL re-establishes the link
            // (fig. C4.4b), but a UA carries no sequence numbers and in
            // states 3 and 4 can only be a late or repeated answer to our
            // own SABM(E): on a path that repeats frames (AXUDP) each
            // repeat became a reset, the reset's UA was repeated in turn,
            // and the link never left the cycle. The Linux kernel's
            // AX.25 ignored it the same way.
            State::Connected | State::TimerRecovery => {
                self.event(Event::Error(LinkError::UnexpectedUa));
            }
        }
    }

    /// DM received.
    pub(super) fn on_dm(&mut self, now: Instant, pf: bool) {
        match self.state {
            State::Disconnected => {}
            State::AwaitingConnection => {
                if pf {
                    self.discard_queues();
                    self.enter_disconnected(now);
                    self.event(Event::Disconnected {
                        reason: DisconnectReason::Refused,
                    });
                }
            }
            // Erratum (Dire Wolf): DM to SABME means a v2.0 station (the
            // KPC-3+ answers so), like FRMR: fall back to SABM.
            State::AwaitingConnection2_2 => self.fall_back_to_v2_0(now),
            State::AwaitingRelease => {
                if pf {
                    self.enter_disconnected(now);
                    self.event(Event::Disconnected {
                        reason: DisconnectReason::LocalRequest,
                    });
                }
            }
            // The peer refuses our XID (brief: DM, like FRMR, means it
            // does not negotiate): keep the link.
            State::Connected | State::TimerRecovery if pf && self.negotiating => {
                self.xid_refused(now)
            }
            State::Connected | State::TimerRecovery => {
                self.event(Event::Error(LinkError::DmWhileConnected));
                self.discard_queues();
                self.enter_disconnected(now);
                self.event(Event::Disconnected {
                    reason: DisconnectReason::RemoteDm,
                });
            }
        }
    }

    /// FRMR received. v2.2 stations never send FRMR (revision 4 replaced
    /// it by re-establishment), so it comes from a v2.0 station.
    pub(super) fn on_frmr(&mut self, now: Instant, info: &[u8]) {
        match self.state {
            State::AwaitingConnection2_2 => self.fall_back_to_v2_0(now),
            State::Connected | State::TimerRecovery
                if self.negotiating && self.frmr_rejects_xid(info) =>
            {
                self.xid_refused(now)
            }
            State::Connected | State::TimerRecovery => {
                let info = FrmrInfo::decode(info, self.modulus).ok();
                self.event(Event::Error(LinkError::Frmr(info)));
                self.reestablish(now);
            }
            _ => {}
        }
    }

    /// T1 expiry in the set-up and release states (figs. C4.2, C4.3, C4.6b).
    pub(super) fn t1_expiry_unconnected(&mut self, now: Instant) {
        match self.state {
            State::AwaitingConnection | State::AwaitingConnection2_2 if self.rc >= self.n2 => {
                if self.state == State::AwaitingConnection2_2 {
                    // No answer to N2 SABMEs: the peer may be a v2.0 station
                    // that ignores SABME (Dire Wolf's TM-D710 workaround).
                    // The SDL (error G) would give up here.
                    return self.fall_back_to_v2_0(now);
                }
                self.discard_queues();
                self.enter_disconnected(now);
                self.event(Event::LinkFailure {
                    reason: FailureReason::ConnectTimeout,
                });
            }
            State::AwaitingConnection | State::AwaitingConnection2_2 => {
                self.rc += 1;
                let kind = self.set_mode_command();
                self.send_u(kind, CommandResponse::Command, true, Vec::new());
                self.select_t1_value();
                self.start_t1(now);
            }
            State::AwaitingRelease if self.rc >= self.n2 => {
                self.enter_disconnected(now);
                self.event(Event::Disconnected {
                    reason: DisconnectReason::ReleaseTimeout,
                });
            }
            State::AwaitingRelease => {
                self.rc += 1;
                self.send_u(Unnumbered::Disc, CommandResponse::Command, true, Vec::new());
                self.select_t1_value();
                self.start_t1(now);
            }
            _ => {}
        }
    }

    /// Gives up on v2.2 and sends SABM (fig. C4.6b FRMR branch; Dire
    /// Wolf's erratum: force v2.0 parameters).
    fn fall_back_to_v2_0(&mut self, now: Instant) {
        self.reset_t1v();
        self.set_version(Version::V2_0);
        self.establish_data_link(now);
        self.layer_3_initiated = true;
        self.set_state(State::AwaitingConnection);
    }

    /// "N(R) error recovery" and the other re-establishments (fig. C4.7a):
    /// send SABM(E) and go to state 1 or, on a v2.2 link, state 5
    /// (revision 4).
    /// A secondary cannot set the link up again: it reports the condition
    /// to its primary with FRMR (ISO/IEC 13239 5.5.3.4.2), which then
    /// resets the link.
    pub(super) fn reestablish(&mut self, now: Instant) {
        if self.config.role == Role::Secondary {
            return self.frame_reject();
        }
        self.establish_data_link(now);
        self.layer_3_initiated = false;
        self.set_state(self.awaiting_state());
    }

    /// "Establish data link" (fig. C4.7a): clear exception conditions,
    /// RC = 1, SABM(E) with P = 1, stop T3, start T1.
    pub(super) fn establish_data_link(&mut self, now: Instant) {
        self.end_negotiation(now);
        self.clear_exception_conditions();
        self.rc = 1;
        let kind = self.set_mode_command();
        self.send_u(kind, CommandResponse::Command, true, Vec::new());
        self.stop_t3(now);
        self.timers.stop(Timer::T2, now);
        self.start_t1(now);
    }

    /// SABM(E), SNRM(E) or SARM(E) for the configured mode and the
    /// version's modulus (ISO/IEC 13239 5.5.3).
    fn set_mode_command(&self) -> Unnumbered {
        match (self.config.mode, self.version) {
            (Mode::Abm, Version::V2_0) => Unnumbered::Sabm,
            (Mode::Abm, Version::V2_2) => Unnumbered::Sabme,
            (Mode::Nrm, Version::V2_0) => Unnumbered::Snrm,
            (Mode::Nrm, Version::V2_2) => Unnumbered::Snrme,
            (Mode::Arm, Version::V2_0) => Unnumbered::Sarm,
            (Mode::Arm, Version::V2_2) => Unnumbered::Sarme,
        }
    }

    /// State 5 (SABME with fallback to SABM) exists for AX.25 only; an
    /// HDLC station takes DM to its extended mode-setting command as a
    /// refusal.
    pub(super) fn awaiting_state(&self) -> State {
        match self.version {
            Version::V2_2 if F::AX25 => State::AwaitingConnection2_2,
            _ => State::AwaitingConnection,
        }
    }

    /// "Set version 2.0 / 2.2" (fig. C4.7b): modulus, k and REJ/SREJ.
    fn set_version(&mut self, version: Version) {
        self.version = version;
        self.modulus = match version {
            Version::V2_0 => Modulus::Mod8,
            Version::V2_2 => Modulus::Mod128,
        };
        self.reset_parameters();
    }

    /// The parameters of a new link before any XID: the configured ones
    /// for the version (6.3.2 defaults: SREJ and segmentation on v2.2 only,
    /// multi-SREJ only once XID agrees on it).
    pub(super) fn reset_parameters(&mut self) {
        self.k = self.config.window(self.modulus);
        self.k_rx = self.k;
        // NRM and ARM here use REJ (Bux et al. 1982, Appendix A1.3).
        // Multi-SREJ is no default (6.3.2): only XID selects it.
        self.recovery = match self.version {
            Version::V2_2 if self.config.mode == Mode::Abm => {
                self.config.recovery.min(RecoveryMode::Srej)
            }
            _ => RecoveryMode::Rej,
        };
        self.segmenter = F::AX25 && self.version == Version::V2_2;
        self.n1_tx = self.config.n1;
        self.n2 = self.config.n2;
        self.t1_base = self.config.t1;
    }

    /// "Clear exception conditions" (fig. C4.7a). Revision 4 also discards
    /// the I queue here; that is done by the callers that report it.
    fn clear_exception_conditions(&mut self) {
        self.peer_receiver_busy = false;
        self.reject_exception = false;
        self.out_of_sequence_heard = 0;
        self.srej_requested = 0;
        self.acknowledge_pending = false;
        self.poll_outstanding = false;
        self.own_receiver_busy = false;
        self.window_busy = false;
        self.rej_actioned = None;
        self.go_back_from = None;
        self.go_back_on_air = false;
        self.go_back_heard_in = None;
        self.srej_resent_on_air = 0;
        self.polled_frame = None;
        self.poll_on_air = false;
        self.enquiry_crossed_poll = false;
        self.late_final_expected = false;
        self.srej_resent_after_poll = 0;
        self.poll_due = false;
        self.got_i = false;
    }

    /// V(S) = V(A) = V(R) = 0 and nothing outstanding or stored. I and S
    /// frames still queued (an NRM secondary's, waiting for its poll, or
    /// any waiting for the channel) carry the old link's N(R) and N(S),
    /// and after a change of modulus its control-field format: they are
    /// dropped. U frames, such as the UA just queued, stay.
    fn reset_variables(&mut self) {
        self.out.retain(|pdu| !pdu.is_numbered());
        self.vs = 0;
        self.va = 0;
        self.vr = 0;
        self.nr_sent = 0;
        self.top = 0;
        self.oldest_resent = 0;
        self.busy_answers = 0;
        self.checkpoint_unacked = 0;
        self.peer_bursts = Default::default();
        self.sent.iter_mut().for_each(|s| *s = None);
        self.stored.iter_mut().for_each(|s| *s = None);
        self.resend.clear();
        self.reassembler.reset();
    }

    /// Discards the I queue and unacknowledged frames.
    pub(super) fn discard_queues(&mut self) {
        self.i_queue.clear();
        self.segments.clear();
        self.sent.iter_mut().for_each(|s| *s = None);
        self.resend.clear();
        self.va = self.top;
        self.vs = self.top;
        self.oldest_resent = 0;
    }

    /// Enters state 3 with T3 running and RC = 0 (Dire Wolf: RC = 0 on
    /// entering state 3, so that "select T1 value" adapts SRT).
    fn enter_connected(&mut self, now: Instant) {
        self.stop_t1(now);
        self.start_t3(now);
        self.rc = 0;
        self.rd_sent = false;
        self.set_state(State::Connected);
        self.unbalanced_connected(now);
    }

    pub(super) fn enter_disconnected(&mut self, now: Instant) {
        for &timer in Timer::ALL {
            self.timers.stop(timer, now);
        }
        self.clear_exception_conditions();
        self.negotiating = false;
        self.rd_sent = false;
        self.set_state(State::Disconnected);
    }

    /// SRT and T1V back to their initial values (fig. C4.6b).
    pub(super) fn reset_t1v(&mut self) {
        self.t1v = self.t1_base * self.framing.t1_scale();
        self.srt = self.t1v / 2;
        self.srt_measured = false;
        self.rttvar = core::time::Duration::ZERO;
        self.t1_remaining_when_stopped = None;
    }
}
