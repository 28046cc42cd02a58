//! The data link state machine (AX.25 v2.2 Appendix C4): state, variables,
//! the public API and the dispatch of received frames.
//!
//! The same state machine runs HDLC/LAPB links ([`HdlcLink`]) in ABM,
//! NRM and ARM: [`Framing`] converts its frames, and the few places where
//! an unbalanced primary or secondary station behaves differently (ISO/IEC
//! 13239 clause 6; Bux, Kümmerle and Truong 1982, Appendix A1, A2) are in
//! `unbalanced.rs`.
//!
//! Like Dire Wolf's ax25_link.c, the SDL is "turned inside out": one
//! function per input, deciding by state. Errata followed are noted where
//! they apply, as "Erratum".

mod checkpoint;
mod establish;
mod i_queue;
mod invalid;
mod negotiate;
mod peer_bursts;
mod recovery;
mod stats;
mod transfer;
mod unbalanced;

use linklab_core::{Engine, Instant};
use std::collections::VecDeque;

use core::time::Duration;
use linklab_wire::ax25::{Address, CommandResponse, Pid};
use linklab_wire::control::{Control, Modulus, Supervisory, Unnumbered};
use thiserror::Error;

use crate::config::{Config, ConfigError, Mode, RecoveryMode, Role};
use crate::event::{Event, LinkParams, Version};
use crate::framing::{Ax25Framing, Framing, HdlcAddressing, HdlcFraming, Pdu};
use crate::segment::{max_segmented_len, Reassembler};
use crate::timer::{Timer, Timers};

use i_queue::IQueue;
pub use invalid::InvalidFrame;
pub use stats::Stats;

/// States of the data link state machine (AX.25 v2.2 C4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// 0: no link.
    Disconnected,
    /// 1: SABM sent, waiting for UA (fig. C4.2).
    AwaitingConnection,
    /// 2: DISC sent, waiting for UA or DM (fig. C4.3).
    AwaitingRelease,
    /// 3: information transfer (fig. C4.4).
    Connected,
    /// 4: T1 expired, enquiry (P = 1) outstanding (fig. C4.5).
    TimerRecovery,
    /// 5: SABME sent, waiting for UA; falls back to SABM (fig. C4.6).
    AwaitingConnection2_2,
}

impl State {
    /// The state in words, for messages to users.
    pub const fn describe(self) -> &'static str {
        match self {
            State::Disconnected => "disconnected",
            State::AwaitingConnection => "waiting for the answer to its connect request",
            State::AwaitingRelease => "being released",
            State::Connected => "connected",
            State::TimerRecovery => "connected, recovering from a time-out",
            State::AwaitingConnection2_2 => {
                "waiting for the answer to its v2.2 (SABME) connect request"
            }
        }
    }
}

/// Why a [`DataLink`] cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NewLinkError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// More than 8 digipeaters (AX.25 v2.2 3.12.5).
    #[error("{count} digipeaters in the path; at most 8 allowed")]
    TooManyDigipeaters {
        /// Digipeaters given.
        count: usize,
    },
    /// The framing does not fit [`Config::mode`]: AX.25 and LAPB are
    /// balanced (ABM), [`HdlcAddressing::Unbalanced`] is for NRM and ARM,
    /// and its station must be [`Config::role`].
    #[error("{framing} framing cannot carry a {role:?} station in {mode:?}")]
    Framing {
        /// The framing given.
        framing: &'static str,
        /// The configured mode.
        mode: Mode,
        /// The configured role.
        role: Role,
    },
}

/// Why a station's role cannot honour a DL-CONNECT or DL-DISCONNECT
/// request ([`Link::connect`], [`Link::disconnect`],
/// [`Link::request_disconnect`]). Nothing was sent.
///
/// Only a primary or combined station sends commands, and so the
/// mode-setting commands (SNRM(E), SARM(E), SABM(E)) and DISC (ISO/IEC
/// 13239 clause 6 and 5.5.3; on AX.25 v2.2 every station is combined and
/// either end sets up and releases, 6.3). A secondary sends responses
/// only: it can ask its primary to release the link with the RD (request
/// disconnect) response (ISO/IEC 13239 5.5.3); RIM, its request for
/// initialization, is not part of this engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum RoleError {
    /// DL-CONNECT on a secondary: the primary sets the link up.
    #[error("a secondary station cannot set the link up: only its primary sends SNRM/SARM")]
    SecondaryCannotSetUp,
    /// DL-DISCONNECT on a secondary: the primary releases the link with
    /// DISC; ask it with [`Link::request_disconnect`] (RD).
    #[error(
        "a secondary station cannot release the link: only its primary sends DISC \
         (a secondary asks for it with RD, request disconnect)"
    )]
    SecondaryCannotRelease,
    /// RD requested of a primary or combined station, which releases the
    /// link itself with [`Link::disconnect`].
    #[error("only a secondary station requests a disconnect (RD); a {role:?} station sends DISC")]
    NotSecondary {
        /// This station's role.
        role: Role,
    },
}

/// Why user data was not queued (DL-DATA request, C4.1).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SendError {
    /// Data can be sent only on an established link.
    #[error("the link is {}, not connected", state.describe())]
    NotConnected {
        /// The state the link is in.
        state: State,
    },
    /// A v2.0 link cannot segment (6.6).
    #[error("{len} octets exceed N1 = {n1} and this v2.0 link cannot segment (v2.2 only)")]
    TooLongForV2_0 {
        /// Octets given.
        len: usize,
        /// N1 in force.
        n1: usize,
    },
    /// The peer did not agree to segmentation in XID (6.3.2, fig. 4.5 bit
    /// 22), so data units longer than N1 cannot be sent.
    #[error("{len} octets exceed N1 = {n1} and the peer did not agree to segmentation (XID)")]
    NoSegmenter {
        /// Octets given.
        len: usize,
        /// N1 in force.
        n1: usize,
    },
    /// A UI frame's information field is limited to N1 (4.3.3.6, 6.7.2.1).
    #[error("{len} octets exceed N1 = {n1}; a UI frame cannot be segmented")]
    UnitDataTooLong {
        /// Octets given.
        len: usize,
        /// N1 in force.
        n1: usize,
    },
    /// More than 128 segments would be needed (6.6, fig. 6.2).
    #[error("{len} octets need more than 128 segments of N1 = {n1}; at most {max} octets")]
    TooLongToSegment {
        /// Octets given.
        len: usize,
        /// N1 in force.
        n1: usize,
        /// Largest data unit that can be segmented.
        max: usize,
    },
}

/// One payload of an I frame: PID and information field.
type Payload = (Pid, Vec<u8>);

/// The AX.25 v2.2 connected-mode data link between a local and a remote
/// station (Appendix C4), sans-IO.
pub type DataLink = Link<Ax25Framing>;

/// An HDLC link with one-octet addresses (ISO/IEC 13239; LAPB, ITU-T X.25
/// clause 2): LAPB in ABM, or NRM or ARM between a primary and a
/// secondary station, as [`Config::mode`] and [`Config::role`] say.
pub type HdlcLink = Link<HdlcFraming>;

/// The data link engine, generic over how its frames are addressed and
/// encoded ([`Framing`]): [`DataLink`] for AX.25, [`HdlcLink`] for HDLC
/// and LAPB.
#[derive(Debug, Clone)]
pub struct Link<F: Framing> {
    config: Config,
    framing: F,
    accept_incoming: bool,
    state: State,
    version: Version,
    modulus: Modulus,
    /// k for sending: the configured window for the link's modulus, or
    /// less if the peer notified a smaller Window Size Receive (6.3.2).
    k: u8,
    /// k for receiving: how far ahead of V(R) out-of-sequence frames are
    /// kept (the configured window, notified in XID).
    k_rx: u8,
    /// The peer's send window as its bursts show it
    /// ([`AckPolicy::WindowOrT2`](crate::AckPolicy::WindowOrT2)).
    peer_bursts: peer_bursts::PeerBursts,
    /// The peer's transmissions, and the one the frame being handled came
    /// in (`None` outside [`Link::handle_frame`] or without the bit rate).
    peer_transmissions: peer_bursts::PeerTransmissions,
    heard_in: Option<u32>,
    /// REJ or SREJ in use: SREJ only on v2.2 links, and as negotiated;
    /// multi-SREJ only if XID agreed on it.
    recovery: RecoveryMode,
    /// Segmenter in use for sending (v2.2, and agreed in XID if done).
    segmenter: bool,
    /// N1 for sending: the configured N1, or less if the peer notified a
    /// smaller I Field Length Receive (6.3.2). N1 for receiving is
    /// [`Config::n1`].
    n1_tx: usize,
    /// N2 in force (negotiated: the greater of both stations', 6.3.2).
    n2: u8,
    /// T1 in force before digipeater scaling (negotiated like N2).
    t1_base: Duration,
    /// The management data link (Appendix C5) is in state 1,
    /// "negotiating": our XID command is outstanding; I frames wait.
    negotiating: bool,
    /// RC of the management data link: XID commands sent.
    mdl_rc: u8,
    /// Parameters agreed by answering an XID command while disconnected,
    /// applied if the peer then sets up a v2.2 link (6.3.2: "parameter
    /// negotiation occurs only before the connection is made").
    agreed_before_connect: Option<LinkParams>,
    /// V(S): next N(S) to send; moves back on retransmission.
    vs: u8,
    /// V(A): oldest unacknowledged N(S).
    va: u8,
    /// V(R): next expected N(S).
    vr: u8,
    /// Next new N(S) (the highest V(S) reached); V(A) <= V(S) <= top.
    top: u8,
    /// RC, the retry count.
    rc: u8,
    /// Answers in a row to our polls from a busy peer (RNR) that
    /// acknowledged nothing while we had frames to send: at N2 the link is
    /// given up on (see [`Link::busy_answer`]).
    busy_answers: u8,
    layer_3_initiated: bool,
    peer_receiver_busy: bool,
    own_receiver_busy: bool,
    /// An NRM primary busy because its window is full
    /// ([`WindowLimit::ReceiverNotReady`](crate::WindowLimit::ReceiverNotReady)).
    window_busy: bool,
    reject_exception: bool,
    /// N(S)s received out of sequence during the REJ exception
    /// ([`Config::reject_again_after_go_back`]).
    out_of_sequence_heard: u128,
    acknowledge_pending: bool,
    /// N(R) of the last I, RR, RNR or REJ frame sent (4.2.4.4): the
    /// in-sequence I frames received since are V(R) - N(R).
    nr_sent: u8,
    /// A command with P = 1 is outstanding.
    poll_outstanding: bool,
    /// Sequence numbers for which an SREJ was sent and not yet satisfied.
    srej_requested: u128,
    /// NRM secondary: a command with P = 1 gave us the transmit
    /// opportunity; it ends with our frame with F = 1.
    polled: bool,
    /// How many of the I frames sent before our last P = 1 (primary) or
    /// F = 1 (secondary) are still unacknowledged: the frames a checkpoint
    /// answers for. A count, not V(S) at the time, so that it cannot be
    /// confused with a later V(S) of the same value once the sequence
    /// numbers wrap.
    checkpoint_unacked: u8,
    /// N(R) of a REJ acted upon since the last checkpoint: checkpoint
    /// retransmission from the same N(R) is inhibited.
    rej_actioned: Option<u8>,
    /// N(R) from which the last go-back retransmission started ("invoke
    /// retransmission"), until V(A) moves (but see
    /// `go_back_from_after_ack`) or T1 expires: a further REJ or F = 1
    /// answer with this N(R) asks for what is already under way and is
    /// not acted on again (see `recovery.rs`).
    go_back_from: Option<u8>,
    /// A frame of that go-back has been handed over and the layer below
    /// has not yet said the channel is free ([`Link::set_channel_busy`]):
    /// once it has, a REJ or F = 1 with the same N(R) reports the go-back
    /// lost again, and is acted on.
    go_back_on_air: bool,
    /// The peer's transmission whose frame started that go-back.
    go_back_heard_in: Option<u32>,
    /// N(S)s resent for an SREJ whose transmission has not yet ended
    /// ([`Link::set_channel_busy`]): an SREJ asking for one of them was
    /// sent before the peer could hear it (see `on_srej`).
    srej_resent_on_air: u128,
    /// N(S) of the I frame that carried our outstanding P = 1, while it is
    /// still the last I frame sent: the answer with F = 1 then reports on
    /// everything we sent (see `checkpoint.rs`).
    polled_frame: Option<u8>,
    /// The frame that carried our P = 1 has not left the air yet (from
    /// its hand-over until [`Link::set_channel_busy`] says the channel is
    /// free): an F = 1 received meanwhile answers an earlier poll.
    poll_on_air: bool,
    /// An enquiry went on T1 expiry while the P = 1 of an I frame was
    /// unanswered; with the answer that ends Timer Recovery, it becomes
    /// [`Self::late_final_expected`] if that frame was received.
    enquiry_crossed_poll: bool,
    /// The answer ending Timer Recovery acknowledged the frame that
    /// carried an earlier P = 1, so the peer received both polls: the next
    /// F = 1 is the answer to the other one, and reports nothing on frames
    /// sent since (see `checkpoint.rs`).
    late_final_expected: bool,
    /// N(S)s resent for an SREJ acted on while our P = 1 was outstanding:
    /// the SREJ with F = 1 that answers that poll does not resend them
    /// again (4.4.4).
    srej_resent_after_poll: u128,
    /// NRM primary: a poll is to be sent at the next opportunity.
    poll_due: bool,
    /// NRM primary: I frames arrived since our last poll.
    got_i: bool,
    /// Secondary: we asked for release with RD.
    rd_sent: bool,
    /// SRT, smoothed round trip time.
    srt: Duration,
    /// SRT holds a measured round trip, not the initial T1V / 2: the
    /// first measurement replaces it whole (as RFC 6298 2.2 does for TCP),
    /// later ones are smoothed into it.
    srt_measured: bool,
    /// RTTVAR, the round trip's mean deviation (RFC 6298 2.3), kept with
    /// [`Config::srt_first_sample`].
    rttvar: Duration,
    /// T1V, the next T1 value.
    t1v: Duration,
    t1_remaining_when_stopped: Option<Duration>,
    t1_expired: bool,
    timers: Timers,
    channel_busy: bool,
    /// I frame queue: data units not yet sent, segmented only when their
    /// first I frame is due, with the N1 in force then (so that data queued
    /// before XID negotiation ends fits what the peer accepts).
    i_queue: IQueue,
    /// Information fields of the data unit being sent.
    segments: IQueue,
    /// Sent, unacknowledged I frames by N(S).
    sent: Vec<Option<Payload>>,
    /// Retransmissions of the frame at V(A) since it became the oldest
    /// unacknowledged one (see [`Link::may_send_again`]).
    oldest_resent: u8,
    /// N(S) asked for by SREJ, to retransmit first.
    resend: VecDeque<u8>,
    /// Out-of-sequence I frames kept for SREJ recovery, by N(S).
    stored: Vec<Option<Payload>>,
    /// Frames to transmit, in order.
    out: VecDeque<Pdu>,
    events: VecDeque<Event>,
    reassembler: Reassembler,
    stats: Stats,
}

impl DataLink {
    /// A disconnected link from `local` to `remote` through the
    /// digipeaters `via` (in path order).
    pub fn new(
        config: Config,
        local: Address,
        remote: Address,
        via: &[Address],
    ) -> Result<DataLink, NewLinkError> {
        config.validate()?;
        if config.mode != Mode::Abm {
            return Err(NewLinkError::Framing {
                framing: "AX.25",
                mode: config.mode,
                role: config.role,
            });
        }
        let framing = Ax25Framing::new(local, remote, via)
            .map_err(|count| NewLinkError::TooManyDigipeaters { count })?;
        Ok(Link::with_framing(config, framing))
    }

    /// The local station.
    pub fn local(&self) -> Address {
        self.framing.local
    }

    /// The remote station.
    pub fn remote(&self) -> Address {
        self.framing.remote
    }
}

impl HdlcLink {
    /// A disconnected HDLC link with `addressing`, which must fit the
    /// configured mode and role: [`HdlcAddressing::Lapb`] for ABM,
    /// [`HdlcAddressing::Unbalanced`] with the configured station for NRM
    /// and ARM.
    pub fn new(config: Config, addressing: HdlcAddressing) -> Result<HdlcLink, NewLinkError> {
        config.validate()?;
        let fits = match addressing {
            HdlcAddressing::Lapb { .. } => config.mode == Mode::Abm,
            HdlcAddressing::Unbalanced { station, .. } => {
                let role = match station {
                    linklab_wire::lapb::Station::Primary => Role::Primary,
                    linklab_wire::lapb::Station::Secondary => Role::Secondary,
                };
                config.mode != Mode::Abm && config.role == role
            }
        };
        if !fits {
            return Err(NewLinkError::Framing {
                framing: match addressing {
                    HdlcAddressing::Lapb { .. } => "LAPB",
                    HdlcAddressing::Unbalanced { .. } => "unbalanced HDLC",
                },
                mode: config.mode,
                role: config.role,
            });
        }
        Ok(Link::with_framing(config, HdlcFraming::new(addressing)))
    }

    /// The addressing.
    pub fn addressing(&self) -> HdlcAddressing {
        self.framing.addressing()
    }
}

impl<F: Framing> Link<F> {
    /// A disconnected link with a validated `config`.
    fn with_framing(config: Config, framing: F) -> Link<F> {
        let modulus = config.modulus;
        let t1v = config.t1 * framing.t1_scale();
        Link {
            k: config.window(modulus),
            k_rx: config.window(modulus),
            peer_bursts: Default::default(),
            peer_transmissions: Default::default(),
            heard_in: None,
            recovery: RecoveryMode::Rej,
            segmenter: F::AX25 && modulus == Modulus::Mod128,
            n1_tx: config.n1,
            n2: config.n2,
            t1_base: config.t1,
            negotiating: false,
            mdl_rc: 0,
            agreed_before_connect: None,
            version: match modulus {
                Modulus::Mod8 => Version::V2_0,
                Modulus::Mod128 => Version::V2_2,
            },
            modulus,
            config,
            framing,
            accept_incoming: false,
            state: State::Disconnected,
            vs: 0,
            va: 0,
            vr: 0,
            top: 0,
            rc: 0,
            busy_answers: 0,
            layer_3_initiated: false,
            peer_receiver_busy: false,
            own_receiver_busy: false,
            window_busy: false,
            reject_exception: false,
            out_of_sequence_heard: 0,
            acknowledge_pending: false,
            nr_sent: 0,
            poll_outstanding: false,
            srej_requested: 0,
            polled: false,
            checkpoint_unacked: 0,
            rej_actioned: None,
            go_back_from: None,
            go_back_on_air: false,
            go_back_heard_in: None,
            srej_resent_on_air: 0,
            polled_frame: None,
            poll_on_air: false,
            enquiry_crossed_poll: false,
            late_final_expected: false,
            srej_resent_after_poll: 0,
            poll_due: false,
            got_i: false,
            rd_sent: false,
            srt: t1v / 2,
            srt_measured: false,
            rttvar: Duration::ZERO,
            t1v,
            t1_remaining_when_stopped: None,
            t1_expired: false,
            timers: Timers::default(),
            channel_busy: false,
            i_queue: IQueue::default(),
            segments: IQueue::default(),
            sent: vec![None; 128],
            oldest_resent: 0,
            resend: VecDeque::new(),
            stored: vec![None; 128],
            out: VecDeque::new(),
            events: VecDeque::new(),
            reassembler: Reassembler::default(),
            stats: Stats::default(),
        }
    }

    /// What the link has done since it was made.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Enters `state` (C4.3), counting the change.
    fn set_state(&mut self, state: State) {
        if state != self.state {
            self.stats.state_changes += 1;
        }
        self.state = state;
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// The version of the link (meaningful once connected).
    pub fn version(&self) -> Version {
        self.version
    }

    /// The modulus of I and S frames on this link: decode received frames
    /// with it.
    pub fn modulus(&self) -> Modulus {
        self.modulus
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The framing (addressing) of this link.
    pub fn framing(&self) -> &F {
        &self.framing
    }

    /// Whether an incoming SABM/SABME is accepted while disconnected
    /// (listening); if not, it is answered with DM (C4.1).
    pub fn set_accept_incoming(&mut self, accept: bool) {
        self.accept_incoming = accept;
    }

    /// Whether the link is listening.
    pub fn accept_incoming(&self) -> bool {
        self.accept_incoming
    }

    /// Number of sent I frames not yet acknowledged.
    pub fn unacked(&self) -> usize {
        usize::from(self.seq_diff(self.top, self.va))
    }

    /// Number of information fields queued and not yet sent once (data
    /// units longer than N1 count as their segments).
    pub fn queued(&self) -> usize {
        self.segments.len() + self.i_queue.fields(self.n1_tx)
    }

    /// Octets of data queued and not yet sent once: the data units
    /// waiting, and the information fields left of the one being
    /// segmented (6.6). What a sender feeding the link from a stream
    /// keeps topped up.
    pub fn queued_octets(&self) -> usize {
        self.segments.octets() + self.i_queue.octets()
    }

    /// The parameters in force: N1, k, T1, N2, REJ/SREJ and segmentation,
    /// as configured and then negotiated with XID (6.3.2).
    pub fn params(&self) -> LinkParams {
        LinkParams {
            recovery: self.recovery,
            segmenter: self.segmenter,
            n1_tx: self.n1_tx,
            n1_rx: self.config.n1,
            k_tx: self.k,
            k_rx: self.k_rx,
            t1: self.t1_base,
            n2: self.n2,
        }
    }

    /// True while our XID command awaits its response (management data
    /// link state 1, Appendix C5); I frames are held until it ends.
    pub fn negotiating(&self) -> bool {
        self.negotiating
    }

    /// The longest data unit [`Link::send`] accepts now: N1, or what
    /// fits in 128 segments if the segmenter is in use (6.6).
    pub fn max_data_len(&self) -> usize {
        if F::AX25 && self.segmenter && self.version == Version::V2_2 {
            max_segmented_len(self.n1_tx).max(self.n1_tx)
        } else {
            self.n1_tx
        }
    }

    /// The current T1 value (T1V).
    pub fn t1v(&self) -> Duration {
        self.t1v
    }

    /// (V(S), V(A), V(R)) for logs and tests.
    pub fn sequence_variables(&self) -> (u8, u8, u8) {
        (self.vs, self.va, self.vr)
    }

    /// Channel hint: the channel is busy with traffic (others' or our
    /// own transmission). T1 is paused while busy, as Dire Wolf does, so
    /// time spent waiting for the channel is not counted against the peer.
    pub fn set_channel_busy(&mut self, now: Instant, busy: bool) {
        self.channel_busy = busy;
        self.poll_on_air &= busy;
        if !busy {
            self.srej_resent_on_air = 0;
            if std::mem::take(&mut self.go_back_on_air) {
                self.go_back_from = None;
            }
        }
        for timer in [Timer::T1, Timer::Tm201] {
            if busy {
                self.timers.pause(timer, now);
            } else {
                self.timers.resume(timer, now);
            }
        }
    }

    /// Channel hint: our transmitter is keyed (the layer below has won the
    /// channel and is sending, or about to send, frames we queued). An
    /// acknowledgement waiting for T2 rides in this same transmission
    /// instead of costing a key-up of its own later, as TNCs do: it is sent
    /// now, as T2's expiry would send it (fig. C4.7, "T2 expiry"). Call
    /// `poll_transmit` afterwards to collect it.
    pub fn transmitter_keyed(&mut self, now: Instant) {
        if self.acknowledge_pending {
            self.timers.stop(Timer::T2, now);
            self.t2_expiry(now);
        }
    }

    /// Own receiver busy (DL-FLOW-OFF / DL-FLOW-ON request, C4.1, 6.4.10):
    /// while busy, received I frames are discarded and answered with RNR;
    /// leaving the busy condition sends RR (4.4.1).
    pub fn set_own_receiver_busy(&mut self, now: Instant, busy: bool) {
        if busy == self.own_receiver_busy {
            return;
        }
        self.own_receiver_busy = busy;
        if matches!(self.state, State::Connected | State::TimerRecovery) {
            let kind = if busy {
                Supervisory::Rnr
            } else {
                Supervisory::Rr
            };
            self.send_s(kind, CommandResponse::Response, false);
            self.acknowledge_pending = false;
            self.timers.stop(Timer::T2, now);
        }
    }

    /// The next frame of a balanced station or an ARM one: queued
    /// frames, then I frames, then a pending acknowledgement.
    fn next_pdu(&mut self, now: Instant) -> Option<Pdu> {
        if let Some(pdu) = self.out.pop_front() {
            return Some(pdu);
        }
        if let Some(pdu) = self.next_i_frame(now) {
            return Some(pdu);
        }
        self.ack_at_transmit_opportunity(now);
        self.out.pop_front()
    }

    /// The next event for the user, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Processes a received frame (LM-DATA indication). Frames not for
    /// this link (AX.25: not between the remote and local stations; HDLC:
    /// another address), and I or S frames decoded with another modulus
    /// than [`Link::modulus`], are ignored (6.4.5).
    pub fn handle_frame(&mut self, now: Instant, frame: &F::Frame) {
        let Some(pdu) = self.framing.decode(frame) else {
            return;
        };
        self.heard_in = self
            .peer_transmissions
            .heard(now, self.config.bit_rate, pdu.info.len());
        self.handle_pdu(now, pdu);
        self.heard_in = None;
    }

    fn handle_pdu(&mut self, now: Instant, pdu: Pdu) {
        if self.config.role != Role::Combined {
            self.unbalanced_received(now, &pdu);
        }
        if pdu.modulus == self.modulus || matches!(pdu.control, Control::U { .. }) {
            self.stats.received(&pdu);
        }
        let command = pdu.command;
        match pdu.control {
            Control::U { kind, pf } => self.handle_unnumbered(now, &pdu, kind, pf, command),
            _ if pdu.modulus != self.modulus => {}
            Control::S { nr, pf, .. } | Control::I { nr, pf, .. } if self.late(nr) => {
                self.stats.late_frames += 1;
                // A poll is answered all the same, with the state now.
                if command && pf {
                    self.enquiry_response(now, true);
                }
            }
            Control::S { kind, nr, pf } => {
                self.handle_supervisory(now, kind, nr, pf, command, &pdu.info)
            }
            Control::I { ns, nr, pf } => self.handle_i(now, pdu, ns, nr, pf, command),
        }
    }

    fn handle_unnumbered(
        &mut self,
        now: Instant,
        pdu: &Pdu,
        kind: Unnumbered,
        pf: bool,
        command: bool,
    ) {
        match (kind, command) {
            (
                Unnumbered::Sabm
                | Unnumbered::Sabme
                | Unnumbered::Snrm
                | Unnumbered::Snrme
                | Unnumbered::Sarm
                | Unnumbered::Sarme,
                true,
            ) => self.on_set_mode(now, kind, pf),
            (Unnumbered::Disc, true) => self.on_disc(now, pf),
            (Unnumbered::Disc, false) => self.on_rd(now),
            (Unnumbered::Ua, false) => self.on_ua(now, pf),
            (Unnumbered::Dm, false) => self.on_dm(now, pf),
            (Unnumbered::Frmr, false) => self.on_frmr(now, &pdu.info),
            (Unnumbered::Xid, _) if F::AX25 => self.on_xid(now, &pdu.info, pf, command),
            (Unnumbered::Ui, _) => self.on_ui(now, pdu, pf, command),
            // TEST is not in the SDL; answer with the same information
            // (Dire Wolf's reading, erratum in ax25_link.c).
            (Unnumbered::Test, true) => {
                let info = pdu.info.clone();
                self.send_u(Unnumbered::Test, CommandResponse::Response, pf, info);
            }
            _ => {}
        }
    }

    fn handle_supervisory(
        &mut self,
        now: Instant,
        kind: Supervisory,
        nr: u8,
        pf: bool,
        command: bool,
        info: &[u8],
    ) {
        match self.state {
            State::Connected | State::TimerRecovery => match kind {
                Supervisory::Rr | Supervisory::Rnr => {
                    self.on_rr_rnr(now, kind == Supervisory::Rnr, nr, pf, command)
                }
                Supervisory::Rej => self.on_rej(now, nr, pf, command),
                Supervisory::Srej => self.on_srej(now, nr, pf, info),
            },
            _ => self.frame_while_not_connected(command, pf, kind != Supervisory::Srej),
        }
    }

    fn handle_i(&mut self, now: Instant, pdu: Pdu, ns: u8, nr: u8, pf: bool, command: bool) {
        match self.state {
            State::Connected | State::TimerRecovery => {
                let payload = (pdu.pid.unwrap_or(Pid::NoLayer3), pdu.info);
                self.on_i(now, payload, ns, nr, pf, command)
            }
            _ => self.frame_while_not_connected(command, pf, true),
        }
    }

    /// I and S frames outside the information transfer states: in
    /// Disconnected every command is answered DM with F = P (6.3.5); in
    /// Awaiting Release, I/RR/RNR/REJ commands with P = 1 get DM F = 1
    /// (fig. C4.3; SREJ excluded per Dire Wolf's erratum: SREJ is a
    /// response only); awaiting connection ignores them (6.3.1).
    fn frame_while_not_connected(&mut self, command: bool, pf: bool, pollable: bool) {
        match self.state {
            State::Disconnected if command => {
                self.send_u(Unnumbered::Dm, CommandResponse::Response, pf, Vec::new())
            }
            State::AwaitingRelease if command && pf && pollable => {
                self.send_u(Unnumbered::Dm, CommandResponse::Response, true, Vec::new())
            }
            _ => {}
        }
    }

    // ---- helpers shared by the submodules ----

    fn m(&self) -> u16 {
        u16::from(self.modulus.value())
    }

    /// (a + n) mod the modulus.
    fn seq_add(&self, a: u8, n: u8) -> u8 {
        ((u16::from(a) + u16::from(n)) % self.m()) as u8
    }

    /// (a - b) mod the modulus.
    fn seq_diff(&self, a: u8, b: u8) -> u8 {
        ((u16::from(a) + self.m() - u16::from(b) % self.m()) % self.m()) as u8
    }

    /// A frame that left the peer before one already taken, on a path
    /// that reorders (AXUDP over the internet): on a modulo-128 link, an
    /// N(R) in the 64 values just below V(A). The SDL's N(R) error
    /// recovery (fig. C4.7a) would reset the link for it, and a frame
    /// held back before the reset could then be taken again as new data
    /// after it; the frame is dropped instead, as stale (whatever it
    /// carried the peer sends again, with a current N(R)), save that a
    /// poll in it is answered. An N(R)
    /// beyond V(S), which no late frame can carry, is still an error; on
    /// a modulo-8 link the two cannot be told apart.
    fn late(&self, nr: u8) -> bool {
        self.modulus == Modulus::Mod128
            && matches!(self.state, State::Connected | State::TimerRecovery)
            && !self.nr_valid(nr)
            && (1..=64).contains(&self.seq_diff(self.va, nr))
    }

    /// V(A) <= N(R) <= V(S), with V(S) the highest sent (6.4.11).
    fn nr_valid(&self, nr: u8) -> bool {
        nr < self.modulus.value() && self.seq_diff(nr, self.va) <= self.seq_diff(self.top, self.va)
    }

    /// A PDU of this link's modulus.
    fn pdu(&self, cr: CommandResponse, control: Control, pid: Option<Pid>, info: Vec<u8>) -> Pdu {
        Pdu {
            command: cr == CommandResponse::Command,
            control,
            modulus: self.modulus,
            pid,
            info,
        }
    }

    /// Queues an S frame with N(R) = V(R).
    fn send_s(&mut self, kind: Supervisory, cr: CommandResponse, pf: bool) {
        self.send_s_nr(kind, cr, pf, self.vr);
    }

    fn send_s_nr(&mut self, kind: Supervisory, cr: CommandResponse, pf: bool, nr: u8) {
        if cr == CommandResponse::Command && pf {
            self.enquiry_crossed_poll |= self.poll_outstanding && self.polled_frame.is_some();
            self.poll_outstanding = true;
        }
        let pdu = self.pdu(cr, Control::S { kind, nr, pf }, None, Vec::new());
        self.out.push_back(pdu);
    }

    fn send_u(&mut self, kind: Unnumbered, cr: CommandResponse, pf: bool, info: Vec<u8>) {
        // An NRM primary's SNRM(E) and DISC with P = 1 are polls too: T1
        // runs while one is unanswered.
        if self.config.role == Role::Primary && cr == CommandResponse::Command && pf {
            self.poll_outstanding = true;
        }
        let pdu = self.pdu(cr, Control::U { kind, pf }, None, info);
        self.out.push_back(pdu);
    }

    fn event(&mut self, event: Event) {
        self.events.push_back(event);
    }

    fn start_t1(&mut self, now: Instant) {
        if !self.t1_may_run() {
            return;
        }
        self.t1_expired = false;
        self.start_pausable(Timer::T1, now, self.t1v);
    }

    /// Starts a timer that the channel's business holds still: frozen at
    /// once while the channel is busy (see `TimerTable::pause`).
    fn start_pausable(&mut self, timer: Timer, now: Instant, span: Duration) {
        if self.channel_busy {
            self.timers.start_paused(timer, span);
        } else {
            self.timers.start(timer, now, span);
        }
    }

    fn stop_t1(&mut self, now: Instant) {
        if !self.t1_may_stop() {
            return;
        }
        if let Some(left) = self.timers.stop(Timer::T1, now) {
            self.t1_remaining_when_stopped = Some(left);
        }
    }

    /// Starts T3, the inactive link timer; on a primary the idle poll
    /// timer; a secondary's T3 is its own supervision (see `unbalanced.rs`).
    fn start_t3(&mut self, now: Instant) {
        match self.config.role {
            Role::Combined => self.timers.start(Timer::T3, now, self.config.t3),
            Role::Primary => self.timers.start(Timer::T3, now, self.config.poll_interval),
            Role::Secondary => {}
        }
    }

    fn stop_t3(&mut self, now: Instant) {
        if self.config.role != Role::Secondary {
            self.timers.stop(Timer::T3, now);
        }
    }

    fn srej_in_use(&self) -> bool {
        self.recovery != RecoveryMode::Rej
    }

    /// True if XID agreed on the "SREJ multiframe" function (fig. 4.5, 3B):
    /// one SREJ may ask for several I frames (4.3.2.4). AX.25 only: the
    /// HDLC framing carries no information field in an SREJ.
    fn multi_srej_in_use(&self) -> bool {
        F::AX25 && self.recovery == RecoveryMode::MultiSrej
    }

    /// True if I frame `ns` is sent and unacknowledged: V(A) <= N(S) < V(S)
    /// with V(S) the highest sent.
    fn outstanding(&self, ns: u8) -> bool {
        self.seq_diff(ns, self.va) < self.seq_diff(self.top, self.va)
    }
}

impl<F: Framing> Engine for Link<F> {
    type Transmit = F::Frame;

    /// The next frame to transmit, if any. Call after every input until
    /// it returns `None`.
    fn poll_transmit(&mut self, now: Instant) -> Option<Self::Transmit> {
        loop {
            let pdu = match (self.config.mode, self.config.role) {
                (Mode::Nrm, Role::Secondary) => self.next_nrm_response(now),
                (Mode::Nrm, Role::Primary) => self.next_nrm_command(now),
                _ => self.next_pdu(now),
            }?;
            let pdu = self.emitting(now, pdu);
            self.stats.sent(&pdu);
            if let Control::I { nr, .. }
            | Control::S {
                kind: Supervisory::Rr | Supervisory::Rnr | Supervisory::Rej,
                nr,
                ..
            } = pdu.control
            {
                self.nr_sent = nr;
            }
            if let Some(frame) = self.framing.encode(pdu) {
                return Some(frame);
            }
        }
    }

    /// When [`Link::handle_timeout`] must next be called.
    fn poll_timeout(&self) -> Option<Instant> {
        self.timers.next_deadline()
    }

    /// Runs the expiry of every timer due at `now`.
    fn handle_timeout(&mut self, now: Instant) {
        while let Some(timer) = self.timers.take_expired(now) {
            match timer {
                Timer::T1 => {
                    self.stats.t1_expiries += 1;
                    self.t1_expiry(now)
                }
                Timer::T2 => self.t2_expiry(now),
                Timer::T3 => self.t3_expiry(now),
                Timer::Tm201 => self.tm201_expiry(now),
            }
        }
    }
}
