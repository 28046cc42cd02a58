//! Link parameters (AX.25 v2.2 6.7, 6.3.2) and the policy knobs that the
//! measured TNC firmwares differ in.

use core::time::Duration;

use linklab_wire::control::Modulus;
use thiserror::Error;

/// How a receiver asks for the retransmission of lost I frames
/// (AX.25 v2.2 4.4.3, 4.4.4, 6.4.4). Ordered as XID negotiation ranks them
/// (6.3.2: "reverts to the lesser of the selection offered"):
/// `Rej < Srej < MultiSrej`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecoveryMode {
    /// Implicit reject (REJ): go back N (4.4.3, 6.4.4.1).
    Rej,
    /// Selective reject (SREJ): the receiver keeps out-of-sequence frames
    /// and asks for each missing one (4.4.4, 6.4.4.2). Used on v2.2
    /// (modulo-128) links only; v2.0 links always use REJ (6.3.2 defaults).
    Srej,
    /// Selective reject with the "SREJ multiframe" option (HDLC optional
    /// function 3B, bit 21 of the XID HDLC Optional Functions field, fig.
    /// 4.5) offered in XID, as Dire Wolf 1.5+ does. Until XID agrees on it
    /// the link uses [`Srej`]; once agreed, one SREJ response asks for all
    /// the I frames found missing at once, the further N(R)s in its
    /// information field (4.3.2.4, `linklab_wire::ax25::MultiSrejInfo`).
    /// Multi-SREJs received are acted on in any SREJ mode.
    ///
    /// [`Srej`]: RecoveryMode::Srej
    MultiSrej,
}

/// When a receiver acknowledges in-sequence I frames that did not ask for
/// a response (AX.25 v2.2 6.4.2.1, 6.7.1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AckPolicy {
    /// Spec default: answer P = 1 at once, otherwise wait T2 so that one
    /// RR acknowledges several frames (6.7.1.2), unless an I frame carries
    /// the acknowledgement first.
    AfterT2,
    /// Send an RR at the next transmit opportunity after every in-sequence
    /// I frame (no T2 delay).
    Immediately,
    /// Acknowledge only when polled (P = 1) or piggybacked on an I frame;
    /// the sender's checkpointing (P on the last I frame, or T1 expiry and
    /// enquiry) drives acknowledgements, as in some TNC firmwares.
    OnPollImmediately,
    /// Acknowledge at once when P = 1, or when the in-sequence I frames
    /// not yet acknowledged fill the receive window k, or when the peer's
    /// burst has as many frames as its longest unbroken burst so far (its
    /// own send window, learnt: `datalink/peer_bursts.rs`); in either case
    /// no further frame can arrive before the sender hears an
    /// acknowledgement. Otherwise T2 gathers acknowledgements only while
    /// frames keep arriving: every in-sequence I frame restarts it, so it
    /// expires T2 after the last frame of a burst.
    ///
    /// The spec's T2 (6.4.2.1, 6.7.1.2; fig. C4.4c "start T2" only when
    /// acknowledge pending was clear) runs from the first unacknowledged
    /// frame, so a receiver with a fast link holds every window's
    /// acknowledgement for a whole T2 even though the window is already
    /// complete; with P = 0 on every I frame (the spec default, no
    /// checkpointing) that is one window per T2. Dire Wolf (ax25_link.c)
    /// has no T2 at all: a pending acknowledgement asks for the channel
    /// (LM-SEIZE) and the RR goes once it has the channel, that is once
    /// the peer's transmission has ended. This policy gives that on a
    /// KISS port, which does not report the channel's state: a window
    /// that is full, ours or the peer's, is answered at once, and T2 after
    /// the last frame heard stands in for "the peer's transmission has
    /// ended".
    WindowOrT2,
}

/// How the T1 value grows while T1 keeps expiring (the "select T1 value"
/// subroutine, AX.25 v2.2 fig. C4.7b).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum T1Backoff {
    /// T1V = 2 SRT whatever the retry count.
    Constant,
    /// Revision 4: T1V = 2 SRT + RC x `step` (0.25 s in the SDL).
    Linear {
        /// Added per retry.
        step: Duration,
    },
    /// The 1998 SDL: T1V = 2^(RC+1) SRT.
    Exponential,
}

/// A station's part in the procedure (ISO/IEC 13239 clause 6; Bux,
/// Kümmerle and Truong 1982, Appendix A1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// A combined station of a balanced link (ABM): sends commands and
    /// responses; AX.25 and LAPB.
    Combined,
    /// The primary station of an unbalanced link (NRM, ARM): sends
    /// commands only; sets the link up, releases it and is in charge of
    /// time-out recovery.
    Primary,
    /// A secondary station of an unbalanced link (NRM, ARM): sends
    /// responses only; in NRM only when polled.
    Secondary,
}

/// The HDLC mode of operation (ISO/IEC 13239 clause 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Asynchronous balanced mode: two combined stations (SABM/SABME;
    /// AX.25 connected mode, LAPB).
    Abm,
    /// Normal response mode (SNRM/SNRME): the secondary transmits only
    /// after a command with P = 1 and ends its transmission with F = 1.
    Nrm,
    /// Asynchronous response mode (SARM/SARME): the secondary transmits
    /// without being polled; the primary keeps set-up, release and
    /// time-out recovery (Bux et al. 1982, Appendix A2).
    Arm,
}

/// When an NRM primary sets P = 1 (Bux et al. 1982, Appendix A1.2; at most
/// one P = 1 outstanding either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PollPolicy {
    /// "Poll the secondary as often as possible": P = 1 on the first I or
    /// S frame sent while no poll is outstanding, and a new poll as soon as
    /// the F = 1 arrives while either side has data or unacknowledged
    /// frames; an idle link is polled every [`Config::poll_interval`].
    AsOftenAsPossible,
    /// As [`PollPolicy::AsOftenAsPossible`], but a poll that falls due
    /// goes at once as an RR (RNR) command with P = 1, ahead of any I
    /// frame, instead of riding on the next I frame: the secondary's next
    /// transmit opportunity starts a supervisory frame, not an I frame,
    /// after the F = 1 arrives (Bux et al. 3.2: the interval from the
    /// secondary's F to the next P is then about 2 t_p).
    SupervisoryAtOnce,
    /// P = 1 on the last I frame of a burst (queue empty or window
    /// closed); an RR with P = 1 after an F = 1 that left frames
    /// unacknowledged, and every [`Config::poll_interval`] otherwise.
    OnLastIFrame,
}

/// What an NRM primary does while k I frames of its own are unacknowledged
/// (Bux et al. 1982, 3.1.3). After a failed REJ recovery (the REJ or the
/// frame sent again lost) the primary's window fills, but only the
/// secondary's F = 1 lets its checkpoint recover, and a secondary with
/// much to send may go on sending for long before it sets F.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowLimit {
    /// Go on acknowledging received I frames with RR as at any time.
    Acknowledge,
    /// Stop acknowledging (Bux et al.'s choice): the secondary soon
    /// reaches its own window limit and ends its transmission with F = 1.
    Withhold,
    /// Send RNR (the alternative Bux et al. discuss): the secondary stops
    /// sending I frames and ends its transmission with F = 1 at once; the
    /// primary discards I frames while busy and sends RR once an
    /// acknowledgement opens its window. Recovery is fastest, but a
    /// primary often at its window limit starves the direction from the
    /// secondary.
    ReceiverNotReady,
}

/// What sending an I frame does to a running T1 (the time-out of the
/// I frames outstanding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum T1OnIFrame {
    /// Restart T1 on every I frame sent (Dire Wolf's erratum to the
    /// AX.25 SDL, so that a long window does not time out before its last
    /// frame could be acknowledged).
    Restart,
    /// Start T1 only if it is not running; only an acknowledgement of a
    /// new I frame restarts it (Bux, Kümmerle and Truong 1982, Appendix
    /// A1.3, time-out recovery in ABM). After a failed REJ recovery the
    /// time-out then comes T1 after the last new acknowledgement, however
    /// many I frames follow.
    StartIfStopped,
}

/// Parameters of one data link. [`Config::default`] gives the AX.25 v2.2
/// defaults (6.3.2, 6.7); [`Config::validate`] checks ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Modulus to connect with: [`Modulus::Mod128`] sends SABME (a v2.2
    /// link, falling back to SABM and v2.0 if refused), [`Modulus::Mod8`]
    /// sends SABM (v2.0). Incoming SABM and SABME are accepted either way
    /// (subject to [`Config::sabme_handling`]).
    pub modulus: Modulus,
    /// k, the window on modulo-8 links, 1-7 (6.7.2.3; 6.3.2 default 7).
    pub window_mod8: u8,
    /// k, the window on modulo-128 links, 1-127 (6.7.2.3; 6.3.2 default 32).
    /// Like N1, notified in XID: the sending window becomes the lesser of
    /// this and the peer's.
    pub window_mod128: u8,
    /// N1, the largest information field accepted, in octets, 1-2048
    /// (6.7.2.1; default 256), notified to the peer in XID (6.3.2). It is
    /// also the largest sent, unless XID learns that the peer accepts less.
    pub n1: usize,
    /// N2, the most tries of one frame (6.7.2.2; default 10), 1-255.
    pub n2: u8,
    /// Initial T1 ("Acknowledge Timer", 6.3.2 default 3000 ms). The first
    /// T1V is `t1` x (1 + 2 x digipeaters), as TNCs scale FRACK.
    pub t1: Duration,
    /// Adapt T1 to the smoothed round-trip time (SRT) as the SDL's "select
    /// T1 value" does (fig. C4.7b); `false` keeps T1V fixed (FRACK).
    pub t1_adaptive: bool,
    /// Growth of T1 on retries.
    pub t1_backoff: T1Backoff,
    /// How "select T1 value" starts: `true`, SRT is the first round trip
    /// measured (RFC 6298 2.2; the SABM(E)/UA exchange counts), T1V at
    /// least SRT + 4 RTTVAR (its 2.3), and a
    /// combined station that does not poll on the last I frame keeps T1V
    /// at least 2 (SRT + T2), since its frames are acknowledged after the
    /// peer's T2. `false` (default), the SDL's start, SRT = T1V / 2 moving
    /// an eighth per sample (fig. C4.7b), as the Linux kernel's AX.25 did
    /// (its RTT from T1 / 2, nine tenths per sample).
    pub srt_first_sample: bool,
    /// Whether each I frame sent restarts T1. (An NRM primary's T1 times
    /// its poll only, whatever this says: started on P = 1, restarted on
    /// a frame with F = 0, stopped on F = 1.)
    pub t1_on_i_frame: T1OnIFrame,
    /// Lower bound for T1V (Dire Wolf floors SRT at 1 s because of CSMA
    /// delays; here 2 x SRT is clamped to this).
    pub t1_min: Duration,
    /// Upper bound for T1V.
    pub t1_max: Duration,
    /// T2, the response delay timer (6.7.1.2). v2.2 gives no value (the
    /// "T2 <- 3000" of the Set Version boxes is read by Dire Wolf as T1);
    /// it must be well below the peer's T1. Default 1 s.
    pub t2: Duration,
    /// T3, the inactive link timer (6.7.1.3); default 300 s as Dire Wolf.
    pub t3: Duration,
    /// The radio port's bit rate, if known. With
    /// [`AckPolicy::WindowOrT2`] it tells the frames of one transmission
    /// of the peer (each heard one frame's air time after the one before)
    /// from its next transmission (which also waits for the turnarounds);
    /// without it, a silence longer than T2 does.
    pub bit_rate: Option<u32>,
    /// REJ or SREJ for v2.2 links.
    pub recovery: RecoveryMode,
    /// Set P on the last I frame sent when the window closes or the queue
    /// empties (checkpointing). Spec default `false`: polls are sent only
    /// on T1 or T3 expiry (6.4.11, 4.4.5.2).
    pub poll_on_last_i_frame: bool,
    /// With [`Config::poll_on_last_i_frame`] on a combined station, hold
    /// new I frames while a poll is unanswered, as G8BPQ's LinBPQ does:
    /// every burst then ends with P, answered at once, where a frame sent
    /// after the poll would end the transfer without P and wait for the
    /// peer's T2. `false` (default) sends them at once without P, as the
    /// Linux kernel's AX.25 did (P only on the frame that fills the
    /// window).
    pub poll_holds_new_frames: bool,
    /// In REJ exception (6.4.4.1), send REJ again when a frame received
    /// out of sequence during the exception arrives a second time: the
    /// sender went back on our REJ and the frame asked for was lost again.
    /// The SDL sends one REJ per exception and leaves the rest to the
    /// sender's T1, which a sender that does not poll on its I frames
    /// (Dire Wolf, the Linux kernel) waits out on every such loss.
    /// `false` (default) keeps the SDL's rule.
    pub reject_again_after_go_back: bool,
    /// When to acknowledge.
    pub ack_policy: AckPolicy,
    /// After setting up a v2.2 (SABME) link, send an XID command and
    /// negotiate the parameters with the peer (6.3.2, C5.3: "the station
    /// initiating the AX.25 connection will send an XID command after it
    /// receives the UA frame"). XID commands from the peer are answered
    /// whatever this says. Default `true`.
    pub xid: bool,
    /// How this station answers SABME: a v2.2 station accepts it; v2.0
    /// stations answer DM (KPC-3+), FRMR (the v2.0 text) or nothing
    /// (TM-D710), per Dire Wolf's notes in ax25_link.c.
    pub sabme_handling: SabmeHandling,
    /// This station's part: [`Role::Combined`] in ABM, primary or
    /// secondary in NRM and ARM. Default combined.
    pub role: Role,
    /// The mode the primary (or either combined station) sets up. Default
    /// ABM; AX.25 links are always ABM.
    pub mode: Mode,
    /// The NRM primary's polling strategy.
    pub poll_policy: PollPolicy,
    /// What an NRM primary does while its window is full (k I frames
    /// unacknowledged). Default [`WindowLimit::Acknowledge`].
    pub nrm_primary_at_window_limit: WindowLimit,
    /// The primary's idle polling interval in NRM and ARM (it runs in the
    /// place of T3 on a primary). Default 1 s.
    pub poll_interval: Duration,
}

/// A station's answer to SABME (see [`Config::sabme_handling`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SabmeHandling {
    /// v2.2: accept and answer UA.
    Accept,
    /// v2.0 station answering DM.
    Dm,
    /// v2.0 station answering FRMR (control field not implemented).
    Frmr,
    /// v2.0 station ignoring SABME entirely.
    Ignore,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            modulus: Modulus::Mod128,
            window_mod8: 7,
            window_mod128: 32,
            n1: 256,
            n2: 10,
            t1: Duration::from_secs(3),
            t1_adaptive: true,
            t1_backoff: T1Backoff::Linear {
                step: Duration::from_millis(250),
            },
            t1_on_i_frame: T1OnIFrame::Restart,
            srt_first_sample: false,
            t1_min: Duration::from_secs(1),
            t1_max: Duration::from_secs(60),
            t2: Duration::from_secs(1),
            t3: Duration::from_secs(300),
            bit_rate: None,
            recovery: RecoveryMode::Srej,
            poll_on_last_i_frame: false,
            poll_holds_new_frames: false,
            reject_again_after_go_back: false,
            ack_policy: AckPolicy::AfterT2,
            xid: true,
            sabme_handling: SabmeHandling::Accept,
            role: Role::Combined,
            mode: Mode::Abm,
            poll_policy: PollPolicy::AsOftenAsPossible,
            nrm_primary_at_window_limit: WindowLimit::Acknowledge,
            poll_interval: Duration::from_secs(1),
        }
    }
}

/// Why a [`Config`] is not usable.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// k outside 1-7 (modulo 8) or 1-127 (modulo 128).
    #[error("window k = {k} is out of range for {modulus}: 1-{max} allowed")]
    Window {
        /// The value given.
        k: u8,
        /// The modulus it applies to.
        modulus: Modulus,
        /// Largest allowed value.
        max: u8,
    },
    /// SREJ needs the window to be at most half the sequence space.
    #[error("selective reject needs k <= 64 on modulo-128 links so that old and new N(S) cannot be confused; k = {k}")]
    SrejWindow {
        /// The modulo-128 window given.
        k: u8,
    },
    /// N1 outside 1-2048.
    #[error("N1 = {n1} octets is out of range: 1-2048 allowed")]
    N1 {
        /// The value given.
        n1: usize,
    },
    /// N2 of zero.
    #[error("N2 = 0 retries: at least 1 try is needed")]
    N2,
    /// A role that does not fit the mode: combined stations work in ABM
    /// only, primary and secondary stations in NRM and ARM only (ISO/IEC
    /// 13239 clause 6).
    #[error("a {role:?} station cannot work in {mode:?}: ABM needs combined stations, NRM and ARM a primary and a secondary")]
    RoleMode {
        /// The role given.
        role: Role,
        /// The mode given.
        mode: Mode,
    },
    /// A timer of zero length, or T1 bounds inverted.
    #[error("timer {name} = {} ms is invalid: {why}", .value.as_secs_f64() * 1e3)]
    Timer {
        /// Which timer.
        name: &'static str,
        /// The value given.
        value: Duration,
        /// What is wrong.
        why: &'static str,
    },
}

impl Config {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=7).contains(&self.window_mod8) {
            return Err(ConfigError::Window {
                k: self.window_mod8,
                modulus: Modulus::Mod8,
                max: 7,
            });
        }
        if !(1..=127).contains(&self.window_mod128) {
            return Err(ConfigError::Window {
                k: self.window_mod128,
                modulus: Modulus::Mod128,
                max: 127,
            });
        }
        if self.recovery != RecoveryMode::Rej && self.window_mod128 > 64 {
            return Err(ConfigError::SrejWindow {
                k: self.window_mod128,
            });
        }
        if !(1..=2048).contains(&self.n1) {
            return Err(ConfigError::N1 { n1: self.n1 });
        }
        if (self.role == Role::Combined) != (self.mode == Mode::Abm) {
            return Err(ConfigError::RoleMode {
                role: self.role,
                mode: self.mode,
            });
        }
        if self.n2 == 0 {
            return Err(ConfigError::N2);
        }
        let nonzero = [
            ("T1", self.t1),
            ("T1 min", self.t1_min),
            ("T2", self.t2),
            ("T3", self.t3),
            ("poll interval", self.poll_interval),
        ];
        for (name, value) in nonzero {
            if value.is_zero() {
                return Err(ConfigError::Timer {
                    name,
                    value,
                    why: "must be longer than zero",
                });
            }
        }
        if self.t1_max < self.t1_min {
            return Err(ConfigError::Timer {
                name: "T1 max",
                value: self.t1_max,
                why: "must not be shorter than T1 min",
            });
        }
        Ok(())
    }

    /// The window k for a link of `modulus`.
    pub fn window(&self, modulus: Modulus) -> u8 {
        match modulus {
            Modulus::Mod8 => self.window_mod8,
            Modulus::Mod128 => self.window_mod128,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_errors_are_precise() {
        assert_eq!(Config::default().validate(), Ok(()));
        let bad = Config {
            window_mod8: 8,
            ..Config::default()
        };
        assert_eq!(
            bad.validate().unwrap_err().to_string(),
            "window k = 8 is out of range for modulo 8: 1-7 allowed"
        );
        let bad = Config {
            n1: 4096,
            ..Config::default()
        };
        assert_eq!(
            bad.validate().unwrap_err().to_string(),
            "N1 = 4096 octets is out of range: 1-2048 allowed"
        );
        let bad = Config {
            window_mod128: 100,
            ..Config::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(ConfigError::SrejWindow { k: 100 })
        ));
        let bad = Config {
            t2: Duration::ZERO,
            ..Config::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(ConfigError::Timer { name: "T2", .. })
        ));
    }

    #[test]
    fn timer_errors_are_in_milliseconds() {
        let bad = Config {
            t1: Duration::ZERO,
            ..Config::default()
        };
        assert_eq!(
            bad.validate().unwrap_err().to_string(),
            "timer T1 = 0 ms is invalid: must be longer than zero"
        );
        let bad = Config {
            t1_max: Duration::from_micros(500),
            ..Config::default()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("timer T1 max = 0.5 ms is invalid"));
    }
}
