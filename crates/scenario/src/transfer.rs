//! One message over a half-duplex radio link: two AX.25 [`DataLink`]
//! engines as stations on a [`RadioChannel`], driven in virtual time by
//! [`linklab_sim::drive`] from the wake-ups in an [`EventQueue`] (Ronan,
//! Long and Walsh, section III.B, Table I and section IV).
//!
//! # The set-up
//! Station 0 (the sender) connects to station 1 (the receiver) with SABM
//! (AX.25 v2.0, modulo 8, window k, N1 = 255, no XID). Once the link is up
//! and the channel has been quiet for a second, the message is offered to
//! the sender at once, cut into information fields of N1 octets (7182
//! octets: 28 full fields and one of 42).
//!
//! # Two ways to attach an engine to the radio
//! - **Directly** ([`TransferConfig::path`] `None`): the engine is the
//!   TNC, as the model of section III.B idealises it. Frames go straight to
//!   the channel; `ChannelBusy` drives `set_channel_busy` (T1 pauses while
//!   the channel is busy) and `TransmitterKeyed` drives `transmitter_keyed`
//!   (a pending acknowledgement rides in the transmission).
//! - **Host and KISS TNC** ([`KissPath`]), as in the experiment of section
//!   IV: the engine runs in the host (the Linux AX.25 stack), every frame
//!   it emits waits [`HostConfig::latency`] in the host, crosses the serial
//!   link and the TNC's processor ([`Tnc`]) and only then reaches the
//!   channel; a received frame takes the reverse path and the host latency
//!   again before the engine sees it. KISS carries no carrier-detect or
//!   key-up indication to the host, so the engine gets neither hint.
//!
//! # Above the engines
//! An application offers the message and consumes what arrives: by
//! default ([`run_transfer`]) the message cut into information fields of
//! N1 octets, the sender done when its engine has every I frame
//! acknowledged; for the measured tables of Ronan et al. the real bundle
//! agent over the AX.25 convergence layer (`ronan::measured`), the sender
//! done when its CL has the bundle acknowledged.
//!
//! # Acknowledgement
//! The sender sets P on the last I frame of a window
//! (`poll_on_last_i_frame`, AX.25 v2.2 6.4.11), and the receiver answers
//! P = 1 at once with RR F = 1 (6.4.2.1). Unpolled I frames are
//! acknowledged as [`StackConfig::ack_policy`] says: never on their own in
//! the model's set-up ([`AckPolicy::OnPollImmediately`]), after T2 in the
//! Linux stack ([`StackConfig::linux`]).
//!
//! # Through a digipeater
//! With [`TransferConfig::digipeater`] the two stations do not hear each
//! other; a third station between them, N0DIGI, repeats every frame
//! addressed through it (`linklab_wire::ax25::digipeat`, AX.25 v2.2
//! 3.12.5), as a TNC with DIGIPEAT ON does, from its own transmit queue
//! on the same channel. Both ends address their frames via N0DIGI and
//! take a frame only once it has been repeated, so every frame is on the
//! air twice. The span then ends with the digipeater's transmission that
//! carried the last acknowledgement.
//!
//! # A link drop
//! [`TransferConfig::link_drop`] takes the two stations out of each
//! other's range in the middle of the message ([`LinkDrop`]): nothing
//! either sends reaches the other until the sender's engine has given
//! the link up (N2 T1 expiries, AX.25 v2.2 C4.3 error I or T); a while
//! later they are in range again and the sender sets the link up anew,
//! as a DTN node with the contact back dials its neighbour. What the
//! application does with the data the failed link held is its own: the
//! bundle agent over the AX.25 CL resumes the bundle from what its peer
//! acknowledged (reactive fragmentation).
//!
//! # What is timed: the paper's `T_message`
//! The span runs from the moment the whole message is offered to the
//! sender's engine to the moment the receiver's transmitter drops after
//! the transmission carrying the frame that acknowledged the last I frame
//! (end of its TXTAIL): the model charges each window
//! `T_txdelay + frames + T_txtail + p T_slot` for the data and
//! `T_ack = T_txdelay + RR + T_txtail + p T_slot` for its acknowledgement.
//! Within the span the idle channel time divided by the number of key-ups
//! is the mean wait per transmission ([`TransferOutcome::mean_access_wait`];
//! with a TNC it includes the host and TNC turnaround).

use core::time::Duration;
use linklab_core::{earliest, Engine, Instant, Streams};
use std::collections::VecDeque;

use linklab_channel::{
    Duplex, ErrorModel, Medium, MediumEvent, RadioChannel, RadioConfig, RadioStats, SlotClock,
    StationConfig, StationId, Tnc, TncConfig,
};
use linklab_link::{AckPolicy, Config, DataLink, Event, NewLinkError, State};
use linklab_sim::{drive, DriveError, EventId, EventQueue, World};
use linklab_wire::ax25::{Address, AddressError, Frame, ADDRESS_LEN};
use linklab_wire::control::Modulus;
use thiserror::Error;

/// The AX.25 stack's timers and acknowledgement behaviour, and how it
/// sits on the radio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackConfig {
    /// T1, or its initial value when [`StackConfig::t1_adaptive`].
    pub t1: Duration,
    /// T1 follows the measured round trip (AX.25 v2.2 6.7.1.1, SRT), as
    /// linklab, Dire Wolf and the Linux kernel do; fixed otherwise.
    pub t1_adaptive: bool,
    /// Bounds of the adaptive T1 (`Config::t1_min`, `Config::t1_max`).
    pub t1_min: Duration,
    /// See [`StackConfig::t1_min`].
    pub t1_max: Duration,
    /// SRT starts from the first round trip measured (RFC 6298 2.2,
    /// `Config::srt_first_sample`), not from half the initial T1.
    pub srt_first_sample: bool,
    /// T2, the delayed-acknowledgement timer (used by
    /// [`AckPolicy::AfterT2`]).
    pub t2: Duration,
    /// When unpolled I frames are acknowledged.
    pub ack_policy: AckPolicy,
    /// The sender sets P on the last I frame of a window (AX.25 v2.2
    /// 6.4.11; the Linux kernel's `ax25_kick` does), so the receiver
    /// answers at once whatever its policy.
    pub poll_last: bool,
    /// With [`StackConfig::poll_last`], new I frames wait while a poll is
    /// unanswered, so every burst ends with P (`Config::poll_holds_new_frames`,
    /// LinBPQ's rule); otherwise P goes only on the frame that fills the
    /// window.
    pub poll_holds_new_frames: bool,
    /// A receiver in REJ exception asks again when the sender's go-back
    /// shows the frame lost again (`Config::reject_again_after_go_back`).
    pub reject_again_after_go_back: bool,
    /// T1 is held from the moment a frame is handed to the TNC (or, on
    /// the radio directly, to the modem's queue) until every frame handed
    /// over has left the air: behind a KISS TNC ([`KissPath`]) as
    /// linklab's KISS ports do (their transmit clock, from KISS ACKMODE
    /// answers or an estimate); on the radio directly as Dire Wolf does,
    /// which takes new I frames off its queue, and starts T1, only once
    /// it has the channel (LM-SEIZE confirm). `false`: behind a KISS TNC
    /// T1 runs from the hand-over, as the Linux kernel's stack does; on
    /// the radio directly it runs during the channel-access wait. (On
    /// the radio directly the channel's busy hint, carrier and own
    /// transmitter, holds T1 either way.)
    pub t1_held_until_sent: bool,
    /// On the radio directly: a pending acknowledgement asks for the
    /// channel as soon as it clears (LM-SEIZE request, AX.25 v2.2 C4.2),
    /// and the RR goes in that transmission, as Dire Wolf's engine does
    /// (it has no T2). Use with [`AckPolicy::OnPollImmediately`], which
    /// leaves the acknowledgement pending without a T2.
    pub ack_at_seize: bool,
}

impl StackConfig {
    /// The model's ideal stations: exactly one RR per window, in answer to
    /// the poll on its last frame; T1 10 s, fixed (never reached).
    pub fn model() -> Self {
        StackConfig {
            t1: Duration::from_secs(10),
            t1_adaptive: false,
            t2: Duration::from_secs(1),
            ack_policy: AckPolicy::OnPollImmediately,
            poll_last: true,
            ..StackConfig::sdl()
        }
    }

    /// The Linux kernel AX.25 stack with T1 `t1`: T2 3 s
    /// (`AX25_DEF_T2`), started by the first unacknowledged I frame and
    /// not restarted by later ones; P on the last I frame of a window
    /// (`ax25_kick`) and a poll answered at once. (The kernel's
    /// default T1 is 10 s, `AX25_DEF_T1`; Ronan et al. raised it for
    /// windows of 4 and more, section V.A. T1 is kept fixed at `t1`, as
    /// the reproduction of their tables was fitted.) Behind a KISS TNC
    /// its T1 runs from the hand-over to the TNC.
    pub fn linux(t1: Duration) -> Self {
        StackConfig {
            t1,
            t1_adaptive: false,
            t2: Duration::from_secs(3),
            ack_policy: AckPolicy::AfterT2,
            poll_last: true,
            ..StackConfig::sdl()
        }
    }

    /// Dire Wolf's engine (ax25_link.c, Dire Wolf 1.6) with FRACK `frack`,
    /// on its own modem (put it on the radio directly, no [`KissPath`]):
    /// T1 started when it has the channel and paused while the channel is
    /// busy, its own PTT or another station's carrier (DCD); no P on I
    /// frames; no T2, a pending
    /// acknowledgement seizes the channel ([`StackConfig::ack_at_seize`]);
    /// T1 adaptive from T1V = FRACK, SRT = FRACK / 2 moving an eighth per
    /// sample, SRT at least 1 s so T1V at least 2 s, growing a quarter
    /// second per retry; above 2 FRACK Dire Wolf starts T1V again from
    /// FRACK, which the engine's ceiling `t1_max` = 2 FRACK stands in for.
    pub fn direwolf(frack: Duration) -> Self {
        StackConfig {
            t1: frack,
            t1_adaptive: true,
            t1_min: Duration::from_secs(2).min(frack),
            t1_max: frack * 2,
            ack_policy: AckPolicy::OnPollImmediately,
            poll_last: false,
            t1_held_until_sent: true,
            ack_at_seize: true,
            ..StackConfig::sdl()
        }
    }

    /// The stack `linklab send`/`listen` run behind a KISS TNC
    /// (`linklab_io::LinkSettings::config` and the KISS port's transmit
    /// clock): initial T1 `t1`, adaptive from the first round trip
    /// measured, at least 1 s unless `t1` is shorter; T2 `t2` and
    /// `ack_policy`; with `poll_last`, P on the last frame of every burst;
    /// T1 held until our frames have left the air.
    pub fn linklab(t1: Duration, t2: Duration, ack_policy: AckPolicy, poll_last: bool) -> Self {
        let sdl = StackConfig::sdl();
        StackConfig {
            t1,
            t1_adaptive: true,
            t1_min: sdl.t1_min.min(t1),
            srt_first_sample: true,
            t2,
            ack_policy,
            poll_last,
            poll_holds_new_frames: true,
            reject_again_after_go_back: true,
            t1_held_until_sent: true,
            ..sdl
        }
    }

    /// The engine's defaults (`Config::default()`, the SDL's): T1 3 s
    /// adaptive from SRT = T1 / 2, T2 1 s after the first unacknowledged
    /// frame, no P on I frames, T1 from the hand-over.
    fn sdl() -> Self {
        let c = Config::default();
        StackConfig {
            t1: c.t1,
            t1_adaptive: c.t1_adaptive,
            t1_min: c.t1_min,
            t1_max: c.t1_max,
            srt_first_sample: c.srt_first_sample,
            t2: c.t2,
            ack_policy: c.ack_policy,
            poll_last: c.poll_on_last_i_frame,
            poll_holds_new_frames: c.poll_holds_new_frames,
            reject_again_after_go_back: c.reject_again_after_go_back,
            t1_held_until_sent: false,
            ack_at_seize: false,
        }
    }
}

/// The host side of a station: delays between the AX.25 stack and the
/// serial port, in each direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostConfig {
    /// From the stack emitting a frame to its first octet leaving on the
    /// serial port, and from a frame's last octet arriving on the serial
    /// port to the stack acting on it (interrupt latency, tty and KISS
    /// driver, scheduling of the kernel and of the application).
    pub latency: Duration,
}

/// A host and a KISS TNC between each engine and the radio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KissPath {
    /// The host side, both stations.
    pub host: HostConfig,
    /// The TNC (serial link, processor, transmit buffer), both stations.
    pub tnc: TncConfig,
    /// How long after the other station's carrier drops the TNC still
    /// holds its frames back: the receiving radio's squelch tail, its
    /// receive-to-transmit switch and the modem's carrier-detect release.
    /// Frames that reach the TNC's transmitter meanwhile wait and leave
    /// together in the next key-up.
    pub carrier_hold: Duration,
}

/// Other stations sharing the channel: each sends UI frames of
/// `frame_octets` at Poisson times, together taking `load` of the
/// channel's time, from the moment the message is offered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Background {
    /// Stations besides the two ends.
    pub stations: u8,
    /// Their frames' share of the channel's time (air time of the frames
    /// alone, without TXDELAY), 0 to 1.
    pub load: f64,
    /// Information octets of each of their frames.
    pub frame_octets: usize,
    /// Their channel access (KISS parameters).
    pub station: StationConfig,
}

/// The two stations out of each other's range mid-transfer (see the
/// module documentation, "A link drop").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkDrop {
    /// The stations stop hearing each other when the sender's I frame
    /// number `after_frames` since the offer (retransmissions counted)
    /// ends on the air.
    pub after_frames: u64,
    /// They hear each other again this long after the sender's link
    /// failed, and the sender sets it up at once.
    pub back_after: Duration,
}

/// What starts and stops a transfer's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// The model's `T_message` (Ronan et al. section III.B): from the
    /// message offered, a second after the link is up and the channel
    /// quiet, to the end of the transmission carrying the last
    /// acknowledgement (its TXTAIL included).
    #[default]
    Offer,
    /// The whole session as a monitoring radio hears it: from the key-up
    /// of the first SABM to the end of the transmission carrying the UA
    /// that answers the sender's DISC. The message is offered as soon as
    /// the link and the application are up, and the sender releases the
    /// link as soon as it knows the message is through.
    Session,
}

/// A transmission whose end is waited for: the one that brought the
/// sender the last acknowledgement, or the final UA (the receiver's, or
/// the digipeater's repeating it).
#[derive(Debug, Clone, Copy, Default)]
struct Awaited {
    /// Its tag: the transmitting station and its key-up count then.
    tag: Option<Tag>,
    /// When it ended.
    end: Option<Instant>,
}

/// A transmission: its station (the top octet) and that station's key-up
/// count when it was keyed; what [`Station`] carries beside each frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tag(u64);

impl Tag {
    fn new(station: usize, count: u64) -> Tag {
        Tag(((station as u64) << 56) | (count & ((1 << 56) - 1)))
    }

    fn station(self) -> usize {
        (self.0 >> 56) as usize
    }

    fn count(self) -> u64 {
        self.0 & ((1 << 56) - 1)
    }
}

impl Awaited {
    /// The frame just handed over came in transmission `tag`, which may
    /// already have ended (`unkeys`: each station's unkey times by count).
    fn mark(&mut self, tag: Tag, unkeys: &[Vec<Instant>]) {
        if self.tag.is_none() {
            self.tag = Some(tag);
            self.end = usize::try_from(tag.count())
                .ok()
                .and_then(|t| t.checked_sub(1))
                .and_then(|t| unkeys.get(tag.station())?.get(t).copied());
        }
    }

    /// Transmission `tag` ended at `at`.
    fn unkeyed(&mut self, tag: Tag, at: Instant) {
        if self.end.is_none() && self.tag == Some(tag) {
            self.end = Some(at);
        }
    }
}

/// Where a run is with its [`LinkDrop`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DropState {
    /// The stations are in range; the drop comes after this many more of
    /// the sender's frames.
    Before { frames_left: u64 },
    /// Out of range, waiting for the sender's link to fail.
    Out,
    /// The sender's link failed; the stations are back in range at the
    /// wake-up [`Wake::BackInRange`].
    Failed,
    /// Back in range: the drop is over.
    Over,
}

/// The digipeater's address.
fn digipeater_address() -> Address {
    "N0DIGI".parse().expect("a valid callsign")
}

/// The address of background station `i`: N0BG-i.
fn background_address(i: usize) -> Address {
    Address::new(
        "N0BG".parse().expect("a valid callsign"),
        u8::try_from(i % 16).unwrap_or(0),
    )
    .expect("an SSID below 16")
}

/// Parameters of one simulated transfer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransferConfig {
    /// Radio bit rate, bit/s.
    pub bit_rate: u32,
    /// KISS parameters of both stations. Each station's slot clock gets a
    /// random phase per replication ([`replication_stations`]); the phase
    /// given here is ignored.
    pub station: StationConfig,
    /// When the two stations' p-persistence draws fall (the digipeater and
    /// background stations keep the free-running slot clock).
    pub slot_clock: SlotClock,
    /// Sequence-number modulus: 8 (SABM) or 128 (SABME).
    pub modulus: Modulus,
    /// Window k (AX.25 `maxframe`): 1-7 modulo 8, 1-127 modulo 128.
    pub window: u8,
    /// N1: octets per information field.
    pub n1: usize,
    /// Message length, octets.
    pub message_octets: usize,
    /// One shared frequency (half duplex) or one per station.
    pub duplex: Duplex,
    /// Bit errors on the channel, judged at each receiver.
    pub errors: ErrorModel,
    /// Other stations' traffic on the channel.
    pub background: Option<Background>,
    /// The two stations out of range for a while mid-transfer.
    pub link_drop: Option<LinkDrop>,
    /// A digipeater between the two stations, which then do not hear each
    /// other: its channel access (KISS parameters; its slot phase is
    /// drawn per replication).
    pub digipeater: Option<StationConfig>,
    /// What the transfer time spans.
    pub clock: Clock,
    /// The stations' AX.25 timers and acknowledgement behaviour.
    pub stack: StackConfig,
    /// Host and TNC between engine and radio; `None` puts the engines on
    /// the radio directly.
    pub path: Option<KissPath>,
}

impl TransferConfig {
    /// Ronan's Table I at `bit_rate` with window `window`: slot 20 ms,
    /// TXDELAY 150 ms, TXTAIL 20 ms, p = 0.25 (KISS P = 63), N1 = 255,
    /// 7182 octets; the model's ideal stations on the radio directly.
    pub fn ronan_table_1(bit_rate: u32, window: u8) -> Self {
        TransferConfig {
            bit_rate,
            station: StationConfig::ronan_table_1(),
            slot_clock: SlotClock::FreeRunning,
            modulus: Modulus::Mod8,
            window,
            n1: 255,
            message_octets: 7182,
            duplex: Duplex::Half,
            errors: ErrorModel::Perfect,
            background: None,
            link_drop: None,
            digipeater: None,
            clock: Clock::Offer,
            stack: StackConfig::model(),
            path: None,
        }
    }
}

impl TransferConfig {
    /// The data-link configuration both engines run: AX.25 v2.2 defaults
    /// (`Config::default()`) with the modulus, window, N1 and
    /// [`TransferConfig::stack`]'s timers and acknowledgement rules; no
    /// XID.
    pub fn link_config(&self) -> Config {
        let stack = &self.stack;
        Config {
            modulus: self.modulus,
            window_mod8: match self.modulus {
                Modulus::Mod8 => self.window,
                Modulus::Mod128 => Config::default().window_mod8,
            },
            window_mod128: match self.modulus {
                Modulus::Mod8 => Config::default().window_mod128,
                Modulus::Mod128 => self.window,
            },
            n1: self.n1,
            xid: false,
            t1: stack.t1,
            t1_adaptive: stack.t1_adaptive,
            t1_min: stack.t1_min,
            t1_max: stack.t1_max,
            srt_first_sample: stack.srt_first_sample,
            t2: stack.t2,
            poll_on_last_i_frame: stack.poll_last,
            poll_holds_new_frames: stack.poll_holds_new_frames,
            reject_again_after_go_back: stack.reject_again_after_go_back,
            ack_policy: stack.ack_policy,
            ..Config::default()
        }
    }
}

/// What one transfer measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferOutcome {
    /// The paper's `T_message`: message offered to end of the last
    /// acknowledgement's TXTAIL (see the module documentation).
    pub transfer: Duration,
    /// Key-ups in that span (data transmissions plus acknowledgements).
    pub transmissions: u64,
    /// Total time a transmitter was keyed in that span.
    pub keyed: Duration,
    /// Frames the sender put on the air in the span (I frames only when
    /// nothing was lost).
    pub sender_frames: u64,
    /// Frames the receiver put on the air in the span (its RRs).
    pub receiver_frames: u64,
    /// Mean wait for an acknowledgement as the sender's T1 sees it (Linux
    /// `ax25_kick` and `ax25_frames_acked`): from T1's start (an I frame
    /// sent with nothing outstanding, or an acknowledgement that left
    /// frames outstanding) to the next acknowledgement of new frames.
    pub ack_wait: Duration,
    /// The longest such wait.
    pub ack_wait_max: Duration,
    /// T1 expiries at the sender (polls or retransmissions it caused).
    pub t1_expiries: u64,
    /// What the digipeater did over the whole run, when there is one.
    pub digipeater: Option<Relayed>,
    /// The channel's counters over the whole run, connection included.
    pub radio: RadioStats,
}

impl TransferOutcome {
    /// Mean wait per transmission in the span: idle time over key-ups
    /// (the model's `p T_slot`; with a TNC it includes the host and TNC
    /// turnaround).
    pub fn mean_access_wait(&self) -> Duration {
        let idle = self.transfer.saturating_sub(self.keyed);
        match u32::try_from(self.transmissions) {
            Ok(n) if n > 0 => idle / n,
            _ => Duration::ZERO,
        }
    }
}

/// A digipeater's frames over a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Relayed {
    /// Frames it repeated.
    pub repeated: u64,
    /// Frames that reached it damaged (collisions, bit errors, or its own
    /// transmitter keyed), so were not repeated.
    pub lost: u64,
}

/// Why a transfer could not be simulated.
#[derive(Debug, Error)]
pub enum TransferError {
    /// The engine configuration was refused.
    #[error("data link configuration refused: {0}")]
    Link(#[from] NewLinkError),
    /// A station address did not parse.
    #[error("bad station address: {0}")]
    Address(#[from] AddressError),
    /// The engine refused the message.
    #[error("the sender refused the message: {0}")]
    Send(#[from] linklab_link::SendError),
    /// Nothing left to do before the transfer finished.
    #[error("the simulation ran dry at {:.3} s in phase \"{phase}\"", *at_us as f64 / 1e6)]
    Stalled {
        /// Which part of the run.
        phase: &'static str,
        /// Virtual time, microseconds.
        at_us: u64,
    },
    /// The transfer had not finished at [`HORIZON`], a simulated day: on
    /// this link it takes longer than anyone would wait, or never ends
    /// (a frame longer on the air than T1, retried for ever).
    #[error("the transfer had not finished after a simulated day (24 h), in phase \"{phase}\"")]
    Unfinished {
        /// Which part of the run.
        phase: &'static str,
    },
    /// The components kept asking for attention without time passing.
    #[error("the simulation stopped advancing at {:.3} s in phase \"{phase}\"", *at_us as f64 / 1e6)]
    Livelock {
        /// Which part of the run.
        phase: &'static str,
        /// Virtual time, microseconds.
        at_us: u64,
    },
    /// A confidence interval needs at least two replications.
    #[error("{replications} replication(s): at least 2 are needed for a confidence interval")]
    TooFewReplications {
        /// Replications asked for.
        replications: u64,
    },
    /// The application above the engines failed.
    #[error("the application failed: {0}")]
    Application(String),
    /// The sender's link failed (N2 T1 expiries, AX.25 v2.2 C4.3 error
    /// I or T) or was reset, and the data it held went with it: the
    /// transfer was cut, as it would be on the air.
    #[error("the link failed and the transfer was cut: {reason}")]
    LinkFailed {
        /// What the engine reported, and how much had arrived.
        reason: String,
    },
    /// The receiver delivered something other than the message.
    #[error("the receiver delivered {got} octets that differ from the {sent} sent")]
    Corrupted {
        /// Octets delivered.
        got: usize,
        /// Octets sent.
        sent: usize,
    },
}

/// What the event queue wakes up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    Radio,
    Engine(usize),
    Tnc(usize),
    Host(usize),
    /// Offer the message to the sender.
    Offer,
    /// A background station's next frame.
    Background(usize),
    /// The end of a link drop: the stations are in range again.
    BackInRange,
}

pub(crate) const SENDER: usize = 0;
pub(crate) const RECEIVER: usize = 1;
/// The digipeater's station on the channel, when there is one; other
/// stations follow.
const DIGIPEATER: usize = 2;
/// Virtual-time limit of one run: far beyond any transfer here.
const HORIZON: Instant = Instant::from_micros(24 * 3_600_000_000);
/// Order of the pending wake-ups in [`Bench::wakes`].
const WAKES: [Wake; 7] = [
    Wake::Radio,
    Wake::Engine(SENDER),
    Wake::Engine(RECEIVER),
    Wake::Tnc(SENDER),
    Wake::Tnc(RECEIVER),
    Wake::Host(SENDER),
    Wake::Host(RECEIVER),
];

/// Which part of a run [`Bench`] is in, and so what ends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Until the link is up, the application ready and the channel quiet.
    Connect,
    /// Until the last acknowledgement's transmission has ended.
    Transfer,
    /// Until the UA answering the sender's DISC has been sent
    /// ([`Clock::Session`]).
    Release,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Connect => "connect",
            Phase::Transfer => "transfer",
            Phase::Release => "release",
        }
    }
}

/// A received frame on its way to an engine, tagged with the number of
/// the transmission that carried it.
pub type Tagged = (Vec<u8>, u64);

/// One station's host and TNC (see [`KissPath`]): what lies between the
/// software that emits and consumes frames (an AX.25 engine here, an IP
/// host over AX.25 in [`crate::ronan::tcpip`]) and the radio. Frames are
/// tagged with a number the caller chooses (the transmission that carried
/// a received frame, in [`run_transfer`]).
pub struct Station {
    tnc: Tnc,
    latency: Duration,
    /// Frames the engine emitted, leaving the host at the given time.
    outgoing: VecDeque<(Instant, Vec<u8>)>,
    /// Transmission tags of frames inside the TNC's receive path (its
    /// receive path is first in, first out).
    in_tnc: VecDeque<u64>,
    /// Frames out of the TNC, reaching the engine at the given time.
    incoming: VecDeque<(Instant, Tagged)>,
    /// See [`KissPath::carrier_hold`].
    carrier_hold: Duration,
    /// The other station is keyed.
    other_keyed: bool,
    /// End of the hold after the other station's last transmission.
    clear_at: Instant,
    /// Frames out of the TNC's processor waiting for the hold to end.
    held: VecDeque<Vec<u8>>,
}

impl Station {
    /// A host and TNC set up as `path` says, idle.
    pub fn new(path: &KissPath) -> Station {
        Station {
            tnc: Tnc::new(path.tnc),
            latency: path.host.latency,
            outgoing: VecDeque::new(),
            in_tnc: VecDeque::new(),
            incoming: VecDeque::new(),
            carrier_hold: path.carrier_hold,
            other_keyed: false,
            clear_at: Instant::ZERO,
            held: VecDeque::new(),
        }
    }

    /// The host's stack emitted `frame` at `now`: it reaches the serial
    /// port after the host latency.
    pub fn send(&mut self, now: Instant, frame: Vec<u8>) {
        self.outgoing.push_back((now + self.latency, frame));
    }

    /// The radio delivered `frame` (tagged `tag`) to this station's TNC.
    pub fn receive(&mut self, now: Instant, frame: Vec<u8>, tag: u64) {
        self.in_tnc.push_back(tag);
        self.tnc.handle_radio_frame(now, frame);
    }

    /// A received frame that has crossed the TNC and the host by `now`.
    pub fn poll_delivery(&mut self, now: Instant) -> Option<Tagged> {
        pop_due(&mut self.incoming, now)
    }

    /// Moves frames due at `now` along the path: host to TNC, TNC to the
    /// radio (as `id`, once the carrier hold allows), TNC to host; `true`
    /// when anything moved.
    pub fn shuttle(&mut self, now: Instant, id: StationId, radio: &mut RadioChannel) -> bool {
        let mut busy = false;
        while let Some(frame) = pop_due(&mut self.outgoing, now) {
            self.tnc.host_send(now, frame);
            busy = true;
        }
        self.tnc.handle_timeout(now);
        while let Some(frame) = self.tnc.poll_transmit(now) {
            self.held.push_back(frame);
            busy = true;
        }
        if self.may_transmit(now) {
            while let Some(frame) = self.held.pop_front() {
                radio.transmit(now, id, frame);
            }
        }
        while let Some(frame) = self.tnc.poll_host_delivery() {
            let tag = self.in_tnc.pop_front().unwrap_or_default();
            self.incoming.push_back((now + self.latency, (frame, tag)));
            busy = true;
        }
        busy
    }

    /// The other station keyed up.
    pub fn other_keyed(&mut self) {
        self.other_keyed = true;
    }

    /// The other station's transmission ended at `at`: the carrier hold
    /// runs from there.
    pub fn other_unkeyed(&mut self, at: Instant) {
        self.other_keyed = false;
        self.clear_at = at + self.carrier_hold;
    }

    /// A transmission this station does not hear ended (the stations went
    /// out of range while it was on): no carrier is left to hold for.
    pub fn other_out_of_range(&mut self) {
        self.other_keyed = false;
    }

    /// This station's radio sent a frame of `octets` (the TNC frees its
    /// buffer).
    pub fn frame_sent(&mut self, now: Instant, octets: usize) {
        self.tnc.handle_frame_sent(now, octets);
    }

    /// When the TNC's processor or the host's delay lines next need
    /// attention.
    pub fn next_wake(&self) -> Option<Instant> {
        earliest([self.tnc.poll_timeout(), self.poll_timeout()])
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let next_out = self.outgoing.front().map(|(t, _)| *t);
        let next_in = self.incoming.front().map(|(t, _)| *t);
        let release = (!self.held.is_empty() && !self.other_keyed).then_some(self.clear_at);
        next_out.into_iter().chain(next_in).chain(release).min()
    }

    /// The held frames may go to the radio at `now`.
    fn may_transmit(&self, now: Instant) -> bool {
        !self.other_keyed && now >= self.clear_at
    }
}

/// The software above the two engines: it offers the message, consumes
/// what the engines deliver, may answer with data of its own, and says
/// when the sender knows the message is through.
pub(crate) trait Application {
    /// The message is offered to the sender at `now`.
    fn offer(&mut self, now: Instant) -> Result<(), TransferError>;
    /// Engine `station` raised `event` at `now`.
    fn handle_event(&mut self, now: Instant, station: usize, event: Event);
    /// The next data unit (one DL-DATA request) station `station` sends.
    fn poll_send(&mut self, now: Instant, station: usize) -> Option<Vec<u8>>;
    /// Whether the set-up above the connected link is done.
    fn ready(&self) -> bool;
    /// Whether the sender knows the message has arrived (`sender` is its
    /// engine).
    fn complete(&self, sender: &DataLink) -> bool;
    /// Whether the receiver got the message intact.
    fn verify(&self) -> Result<(), TransferError>;
}

/// The message cut into information fields of N1 octets and given to the
/// sender's engine; the receiver says nothing of its own. The sender
/// knows it is through when its engine has every I frame acknowledged.
struct RawMessage {
    message: Vec<u8>,
    n1: usize,
    to_send: VecDeque<Vec<u8>>,
    received: Vec<u8>,
    /// The first link failure or reset the sender reported.
    failure: Option<String>,
}

impl RawMessage {
    fn new(message: Vec<u8>, n1: usize) -> RawMessage {
        RawMessage {
            message,
            n1: n1.max(1),
            to_send: VecDeque::new(),
            received: Vec::new(),
            failure: None,
        }
    }
}

impl Application for RawMessage {
    fn offer(&mut self, _now: Instant) -> Result<(), TransferError> {
        self.to_send = self.message.chunks(self.n1).map(<[u8]>::to_vec).collect();
        Ok(())
    }

    fn handle_event(&mut self, _now: Instant, station: usize, event: Event) {
        match (station, event) {
            (RECEIVER, Event::Data { data, .. }) => self.received.extend_from_slice(&data),
            (SENDER, Event::LinkFailure { reason, .. }) => {
                self.failure.get_or_insert(format!("{reason:?}"));
            }
            (SENDER, Event::Disconnected { reason, .. }) => {
                self.failure.get_or_insert(format!("{reason:?}"));
            }
            _ => {}
        }
    }

    fn poll_send(&mut self, _now: Instant, station: usize) -> Option<Vec<u8>> {
        match station {
            SENDER => self.to_send.pop_front(),
            _ => None,
        }
    }

    fn ready(&self) -> bool {
        true
    }

    fn complete(&self, sender: &DataLink) -> bool {
        self.to_send.is_empty() && sender.unacked() == 0 && sender.queued() == 0
    }

    fn verify(&self) -> Result<(), TransferError> {
        if self.received == self.message {
            Ok(())
        } else if let Some(reason) = &self.failure {
            Err(TransferError::LinkFailed {
                reason: format!(
                    "{reason}, {} of {} octets delivered",
                    self.received.len(),
                    self.message.len()
                ),
            })
        } else {
            Err(TransferError::Corrupted {
                got: self.received.len(),
                sent: self.message.len(),
            })
        }
    }
}

struct Bench<'a> {
    queue: EventQueue<Wake>,
    radio: RadioChannel,
    links: [DataLink; 2],
    stations: Option<[Station; 2]>,
    /// Other stations on the channel, with each one's arrival stream.
    background: Option<(Background, Vec<linklab_core::Stream>)>,
    /// The link drop, if any, and where the run is with it.
    link_drop: Option<(LinkDrop, DropState)>,
    /// The longest frame the sender sends without an information field:
    /// an S frame modulo 128 (its address field with the path, two
    /// control octets). Every longer frame it sends is an I frame.
    longest_without_information: usize,
    /// Pending wake-up of each component, in [`WAKES`] order.
    wakes: [Option<(Instant, EventId)>; 7],
    /// What offers the message, consumes what arrives and says when the
    /// sender knows it is through.
    app: &'a mut dyn Application,
    /// The part of the run under way.
    phase: Phase,
    /// The application failed or its engine refused a data unit: the
    /// current phase ends with this error.
    refused: Option<TransferError>,
    /// Key-ups so far of the two ends and the digipeater (the tag of each
    /// one's current transmission).
    keyups: [u64; 3],
    /// Unkey times of the two ends and the digipeater, by key-up count.
    unkeys: [Vec<Instant>; 3],
    /// The digipeater's call, when there is one.
    digipeater: Option<Address>,
    /// What it repeated and lost.
    relayed: Relayed,
    /// Measurement, once the message is offered.
    offered: Option<Instant>,
    /// The transmission that carried the last acknowledgement.
    final_ack: Awaited,
    /// The transmission that carried the UA answering the sender's DISC.
    final_ua: Awaited,
    /// What the clock spans.
    clock: Clock,
    /// The first key-up of the run (the SABM's).
    first_keyup: Option<Instant>,
    /// Key-up and unkey times of every transmission after the offer.
    keyings: Vec<(usize, Instant, Option<Instant>)>,
    frames_sent: Vec<(usize, Instant)>,
    /// When the sender's T1 (as Linux runs it) last started.
    t1_started: Option<Instant>,
    ack_waits: Vec<Duration>,
    t1_expiries: u64,
    /// The sender's engine handled a timeout with frames outstanding.
    t1_pending: bool,
    /// Frames each end handed to its TNC or modem that have not yet left
    /// the air, counted when [`StackConfig::t1_held_until_sent`].
    unsent: [usize; 2],
    /// Whether each end's T1 is held now (what `set_channel_busy` was
    /// last told), when [`StackConfig::t1_held_until_sent`].
    held: [bool; 2],
    /// See [`StackConfig::t1_held_until_sent`].
    t1_held_until_sent: bool,
    /// See [`StackConfig::ack_at_seize`].
    ack_at_seize: bool,
    /// The channel as each end sees it (on the radio directly): busy.
    channel_busy: [bool; 2],
}

/// The first entry of a delay line if it is due at `now`.
fn pop_due<T>(line: &mut VecDeque<(Instant, T)>, now: Instant) -> Option<T> {
    if line.front().is_some_and(|(t, _)| *t <= now) {
        line.pop_front().map(|(_, x)| x)
    } else {
        None
    }
}

impl<'a> Bench<'a> {
    fn new(
        config: &TransferConfig,
        streams: &Streams,
        app: &'a mut dyn Application,
    ) -> Result<Bench<'a>, TransferError> {
        let mut radio_stations = replication_stations(config, streams).to_vec();
        let digipeater = config.digipeater;
        if let Some(digi) = digipeater {
            let slot = u64::try_from(digi.slot_time.as_micros().max(1)).unwrap_or(1);
            radio_stations.push(StationConfig {
                slot_phase: Duration::from_micros(
                    streams.stream("digipeater/slot-phase").below(slot),
                ),
                ..digi
            });
        }
        let background = config.background.filter(|b| b.stations > 0 && b.load > 0.0);
        if let Some(b) = background {
            let mut phases = streams.stream("background/slot-phase");
            let slot = u64::try_from(b.station.slot_time.as_micros().max(1)).unwrap_or(1);
            radio_stations.extend((0..b.stations).map(|_| StationConfig {
                slot_phase: Duration::from_micros(phases.below(slot)),
                ..b.station
            }));
        }
        let mut radio = RadioChannel::new(
            RadioConfig {
                duplex: config.duplex,
                errors: config.errors,
                ..RadioConfig::new(config.bit_rate)
            },
            &radio_stations,
            streams,
            "radio",
        );
        for end in [SENDER, RECEIVER] {
            radio.set_slot_clock(StationId(end), config.slot_clock);
        }
        let link = config.link_config();
        if digipeater.is_some() {
            radio.set_hears(StationId(SENDER), StationId(RECEIVER), false);
            radio.set_hears(StationId(RECEIVER), StationId(SENDER), false);
        }
        let via: Vec<Address> = digipeater
            .map(|_| digipeater_address())
            .into_iter()
            .collect();
        let a: Address = "N0SEND".parse()?;
        let b: Address = "N0RECV".parse()?;
        let mut receiver = DataLink::new(link.clone(), b, a, &via)?;
        receiver.set_accept_incoming(true);
        let stations = config
            .path
            .map(|path| [Station::new(&path), Station::new(&path)]);
        Ok(Bench {
            queue: EventQueue::new(),
            radio,
            links: [DataLink::new(link, a, b, &via)?, receiver],
            stations,
            wakes: [None; 7],
            app,
            phase: Phase::Connect,
            refused: None,
            keyups: [0; 3],
            unkeys: Default::default(),
            digipeater: digipeater.map(|_| digipeater_address()),
            relayed: Relayed::default(),
            offered: None,
            final_ack: Awaited::default(),
            final_ua: Awaited::default(),
            clock: config.clock,
            first_keyup: None,
            keyings: Vec::new(),
            frames_sent: Vec::new(),
            t1_started: None,
            ack_waits: Vec::new(),
            t1_expiries: 0,
            t1_pending: false,
            unsent: [0; 2],
            held: [false; 2],
            t1_held_until_sent: config.stack.t1_held_until_sent,
            ack_at_seize: config.stack.ack_at_seize && config.path.is_none(),
            channel_busy: [false; 2],
            longest_without_information: ADDRESS_LEN * (2 + via.len()) + 2,
            link_drop: config.link_drop.map(|d| {
                (
                    d,
                    DropState::Before {
                        frames_left: d.after_frames,
                    },
                )
            }),
            background: background.map(|b| {
                let arrivals = (0..b.stations)
                    .map(|i| streams.stream(&format!("background/{i}")))
                    .collect();
                (b, arrivals)
            }),
        })
    }

    /// Runs `phase` from now until it ends; [`HORIZON`] is far beyond any
    /// transfer here, so a wake-up past it counts as running dry.
    fn run_phase(&mut self, phase: Phase) -> Result<(), TransferError> {
        self.phase = phase;
        let start = self.queue.now();
        drive(self, start, HORIZON).map_err(|e| match e {
            DriveError::Stalled { at } => TransferError::Stalled {
                phase: phase.name(),
                at_us: at.as_micros(),
            },
            DriveError::Horizon { .. } => TransferError::Unfinished {
                phase: phase.name(),
            },
            DriveError::Livelock { at } => TransferError::Livelock {
                phase: phase.name(),
                at_us: at.as_micros(),
            },
        })?;
        self.refused.take().map_or(Ok(()), Err)
    }

    /// [`Bench::run_phase`], but a sender whose link went down and stayed
    /// down (N2 expiries) leaves nothing to happen: the transfer was cut
    /// ([`TransferError::LinkFailed`]), not stalled.
    fn run_phase_or_cut(&mut self, phase: Phase) -> Result<(), TransferError> {
        self.run_phase(phase)
            .map_err(|error| match (&error, self.links[SENDER].state()) {
                (TransferError::Stalled { .. }, State::Disconnected) => TransferError::LinkFailed {
                    reason: format!("the sender's link is down ({error})"),
                },
                _ => error,
            })
    }

    /// Moves frames and hints between engines, hosts, TNCs and channel
    /// until all is quiet at `now`, then re-arms the wake-ups.
    fn settle_components(&mut self, now: Instant) {
        loop {
            let mut busy = false;
            for i in [SENDER, RECEIVER] {
                while let Some(data) = self.app.poll_send(now, i) {
                    busy = true;
                    if let Err(error) = self.links[i].send(data) {
                        self.refused.get_or_insert(error.into());
                    }
                }
                while let Some(frame) = self.links[i].poll_transmit(now) {
                    busy = true;
                    if i == SENDER && std::mem::take(&mut self.t1_pending) {
                        self.t1_expiries += 1;
                    }
                    if i == SENDER && self.offered.is_some() && self.t1_started.is_none() {
                        self.t1_started = Some(now);
                    }
                    match self.stations.as_mut() {
                        None => self.radio.transmit(now, StationId(i), frame.encode()),
                        Some(s) => s[i].send(now, frame.encode()),
                    }
                    self.handed_over(now, i);
                }
            }
            if let Some(stations) = self.stations.as_mut() {
                for (i, s) in stations.iter_mut().enumerate() {
                    busy |= s.shuttle(now, StationId(i), &mut self.radio);
                }
            }
            while let Some(event) = self.radio.poll_event() {
                self.on_medium_event(now, event);
                busy = true;
            }
            while let Some(delivery) = self.radio.poll_delivery() {
                busy = true;
                let to = delivery.to.0;
                if !delivery.is_intact() {
                    if to == DIGIPEATER && self.digipeater.is_some() {
                        self.relayed.lost += 1;
                    }
                    continue;
                }
                if to == DIGIPEATER {
                    self.repeat(now, &delivery.frame);
                }
                if to > RECEIVER {
                    continue;
                }
                let from = delivery.from.0;
                let tag = Tag::new(from, self.keyups.get(from).copied().unwrap_or(0));
                match self.stations.as_mut() {
                    None => self.hand_to_engine(delivery.at, to, &delivery.frame, tag),
                    Some(s) => s[to].receive(now, delivery.frame, tag.0),
                }
            }
            let arrived: Vec<(usize, Tagged)> = match self.stations.as_mut() {
                None => Vec::new(),
                Some(stations) => stations
                    .iter_mut()
                    .enumerate()
                    .flat_map(|(i, s)| {
                        std::iter::from_fn(move || s.poll_delivery(now).map(|f| (i, f)))
                    })
                    .collect(),
            };
            for (i, (frame, tag)) in arrived {
                busy = true;
                self.hand_to_engine(now, i, &frame, Tag(tag));
            }
            for i in [SENDER, RECEIVER] {
                busy |= self.events_to_app(now, i);
            }
            if !busy {
                break;
            }
        }
        self.follow_link_drop(now);
        self.rearm(now);
    }

    /// A link drop under way: once the sender's link has failed, the
    /// stations come back in range after [`LinkDrop::back_after`].
    fn follow_link_drop(&mut self, now: Instant) {
        let Some((drop, state)) = self.link_drop.as_mut() else {
            return;
        };
        if *state == DropState::Out && self.links[SENDER].state() == State::Disconnected {
            *state = DropState::Failed;
            if self
                .queue
                .schedule(now + drop.back_after, Wake::BackInRange)
                .is_err()
            {
                let stalled = self.stalled("link drop");
                self.refused.get_or_insert(stalled);
            }
        }
    }

    /// The two ends hear each other (`true`) or not; through a
    /// digipeater, each end and the digipeater.
    fn set_in_range(&mut self, in_range: bool) {
        let far = match self.digipeater {
            Some(_) => DIGIPEATER,
            None => RECEIVER,
        };
        for (a, b) in [
            (SENDER, far),
            (far, SENDER),
            (RECEIVER, far),
            (far, RECEIVER),
        ] {
            if a != b {
                self.radio.set_hears(StationId(a), StationId(b), in_range);
            }
        }
    }

    /// The digipeater got `frame` intact: it sends it again if its path
    /// names the digipeater next.
    fn repeat(&mut self, now: Instant, frame: &[u8]) {
        if let Some(again) = self
            .digipeater
            .and_then(|call| linklab_wire::ax25::digipeat(frame, &call))
        {
            self.radio.transmit(now, StationId(DIGIPEATER), again);
            self.relayed.repeated += 1;
        }
    }

    /// Hands an intact frame (carried by transmission `tag` of the other
    /// station) to engine `to`, and notes the end of the transfer.
    fn hand_to_engine(&mut self, now: Instant, to: usize, body: &[u8], tag: Tag) {
        let link = &mut self.links[to];
        let Ok(frame) = Frame::decode(body, link.modulus()) else {
            return;
        };
        // Other stations' traffic reaches the host too; the stack keeps
        // what is addressed to it.
        let (to_us, ours) = (frame.dest(), link.local());
        if to_us.callsign() != ours.callsign() || to_us.ssid() != ours.ssid() {
            return;
        }
        // Not ours until every digipeater of its path has repeated it
        // (AX.25 v2.2 3.12.5).
        if !frame.digipeaters().iter().all(Address::c_or_h) {
            return;
        }
        let outstanding = link.unacked();
        link.handle_frame(now, &frame);
        if !self.channel_busy[to] {
            self.seize_for_acknowledgement(now, to);
        }
        // The application sees at once what this frame brought.
        self.events_to_app(now, to);
        if to != SENDER || self.offered.is_none() {
            return;
        }
        let sender = &self.links[SENDER];
        if sender.unacked() < outstanding {
            if let Some(started) = self.t1_started.take() {
                self.ack_waits.push(now.saturating_duration_since(started));
            }
            if sender.unacked() > 0 {
                self.t1_started = Some(now);
            }
        }
        if self.phase == Phase::Release && sender.state() == State::Disconnected {
            self.final_ua.mark(tag, &self.unkeys);
        } else if self.app.complete(sender) {
            self.final_ack.mark(tag, &self.unkeys);
        }
    }

    /// Hands engine `i`'s events to the application; `true` if there were
    /// any.
    fn events_to_app(&mut self, now: Instant, i: usize) -> bool {
        let mut any = false;
        while let Some(event) = self.links[i].poll_event() {
            any = true;
            self.app.handle_event(now, i, event);
        }
        any
    }

    fn on_medium_event(&mut self, now: Instant, event: MediumEvent) {
        let direct = self.stations.is_none();
        match event {
            MediumEvent::ChannelBusy { station, busy, at } => {
                if direct && station.0 <= RECEIVER {
                    self.channel_busy[station.0] = busy;
                    if self.t1_held_until_sent {
                        self.hold_t1(at, station.0);
                    } else {
                        self.links[station.0].set_channel_busy(at, busy);
                    }
                    if !busy {
                        self.seize_for_acknowledgement(at, station.0);
                    }
                }
            }
            MediumEvent::TransmitterKeyed { station, at } => {
                self.first_keyup.get_or_insert(at);
                if let (true, Some(link)) = (direct, self.links.get_mut(station.0)) {
                    link.transmitter_keyed(at);
                }
                for (i, s) in self.stations.iter_mut().flatten().enumerate() {
                    if i != station.0 && self.radio.hears(StationId(i), station) {
                        s.other_keyed();
                    }
                }
                if let Some(n) = self.keyups.get_mut(station.0) {
                    *n += 1;
                }
                if self.offered.is_some() && station.0 <= RECEIVER {
                    self.keyings.push((station.0, at, None));
                }
            }
            MediumEvent::FrameSent {
                station,
                octets,
                at,
            } => {
                if let Some(s) = self.stations.as_mut().and_then(|s| s.get_mut(station.0)) {
                    s.frame_sent(now, octets);
                }
                self.left_the_air(at, station.0);
                if self.offered.is_some() {
                    self.frames_sent.push((station.0, at));
                    if station.0 == SENDER && octets > self.longest_without_information {
                        self.count_towards_drop();
                    }
                }
            }
            MediumEvent::TransmissionEnded { station, at } => {
                for (i, s) in self.stations.iter_mut().flatten().enumerate() {
                    if i == station.0 {
                        continue;
                    }
                    if self.radio.hears(StationId(i), station) {
                        s.other_unkeyed(at);
                    } else {
                        s.other_out_of_range();
                    }
                }
                if let Some(k) = self
                    .keyings
                    .iter_mut()
                    .rev()
                    .find(|(s, _, end)| *s == station.0 && end.is_none())
                {
                    k.2 = Some(at);
                }
                if let Some(unkeys) = self.unkeys.get_mut(station.0) {
                    unkeys.push(at);
                    let tag = Tag::new(station.0, unkeys.len() as u64);
                    self.final_ack.unkeyed(tag, at);
                    self.final_ua.unkeyed(tag, at);
                }
            }
            MediumEvent::TransmissionStarted { .. } => {}
        }
    }

    /// With [`StackConfig::ack_at_seize`], end `i`'s pending
    /// acknowledgement asks for the channel, clear at `now` (LM-SEIZE
    /// request): the RR is emitted now and waits for the channel's CSMA
    /// like any frame. (The transmitter hint sends a pending
    /// acknowledgement at once and does nothing otherwise.)
    fn seize_for_acknowledgement(&mut self, now: Instant, i: usize) {
        if self.ack_at_seize {
            self.links[i].transmitter_keyed(now);
        }
    }

    /// End `i` handed a frame to its host and TNC, or to its modem, at
    /// `now`: with [`StackConfig::t1_held_until_sent`], its T1 is held
    /// until the frame has left the air.
    fn handed_over(&mut self, now: Instant, i: usize) {
        if self.t1_held_until_sent {
            self.unsent[i] += 1;
            self.hold_t1(now, i);
        }
    }

    /// A frame of end `i` left the air at `at`: once all it handed over
    /// have (and, on the radio directly, the channel is clear), its T1
    /// runs again.
    fn left_the_air(&mut self, at: Instant, i: usize) {
        if self.t1_held_until_sent && i <= RECEIVER && self.unsent[i] > 0 {
            self.unsent[i] -= 1;
            self.hold_t1(at, i);
        }
    }

    /// Holds end `i`'s T1 while it has frames not yet sent or, on the
    /// radio directly, while the channel is busy; lets it run otherwise.
    fn hold_t1(&mut self, at: Instant, i: usize) {
        let hold = self.unsent[i] > 0 || self.channel_busy[i];
        if hold != self.held[i] {
            self.held[i] = hold;
            self.links[i].set_channel_busy(at, hold);
        }
    }

    /// One more of the sender's frames on the air: the drop starts when
    /// its count is reached.
    fn count_towards_drop(&mut self) {
        let Some((_, state)) = self.link_drop.as_mut() else {
            return;
        };
        if let DropState::Before { frames_left } = state {
            if *frames_left <= 1 {
                *state = DropState::Out;
                self.set_in_range(false);
            } else {
                *frames_left -= 1;
            }
        }
    }

    /// Keeps exactly one pending wake-up per component, at its
    /// `poll_timeout`.
    fn rearm(&mut self, now: Instant) {
        let station = |i: usize, f: fn(&Station) -> Option<Instant>| {
            self.stations.as_ref().and_then(|s| f(&s[i]))
        };
        let wanted = [
            self.radio.poll_timeout(),
            self.links[SENDER].poll_timeout(),
            self.links[RECEIVER].poll_timeout(),
            station(SENDER, |s| s.tnc.poll_timeout()),
            station(RECEIVER, |s| s.tnc.poll_timeout()),
            station(SENDER, Station::poll_timeout),
            station(RECEIVER, Station::poll_timeout),
        ];
        for (slot, (want, wake)) in wanted.into_iter().zip(WAKES).enumerate() {
            let want = want.map(|t| t.max(now));
            if self.wakes[slot].map(|(t, _)| t) == want {
                continue;
            }
            if let Some((_, id)) = self.wakes[slot].take() {
                self.queue.cancel(id);
            }
            if let Some(at) = want {
                let id = self
                    .queue
                    .schedule_after(at.saturating_duration_since(now), wake);
                self.wakes[slot] = Some((at, id));
            }
        }
    }

    /// Schedules background station `i`'s next frame: exponential gaps
    /// with the mean that gives each station its share of the load.
    fn schedule_background(&mut self, now: Instant, i: usize) {
        let Some((b, arrivals)) = self.background.as_mut() else {
            return;
        };
        let bits = linklab_channel::airtime::hdlc_bits(&vec![0x55; b.frame_octets + 16]);
        let air = bits as f64 / f64::from(self.radio.config().bit_rate.max(1));
        let mean_gap = air * f64::from(b.stations) / b.load.clamp(1e-6, 1.0);
        let gap = arrivals[i].exponential(mean_gap);
        let _ = self
            .queue
            .schedule(now + Duration::from_secs_f64(gap), Wake::Background(i));
    }

    fn quiet(&self) -> bool {
        self.radio.poll_timeout().is_none()
            && self.stations.as_ref().is_none_or(|s| {
                s.iter()
                    .all(|s| s.tnc.poll_timeout().is_none() && s.poll_timeout().is_none())
            })
    }

    fn stalled(&self, phase: &'static str) -> TransferError {
        TransferError::Stalled {
            phase,
            at_us: self.queue.now().as_micros(),
        }
    }
}

/// The wake-ups are the events of the queue, one per component at its
/// `poll_timeout` ([`Bench::rearm`]); each wakes only its own component.
impl World for Bench<'_> {
    fn settle(&mut self, now: Instant) {
        self.settle_components(now);
        self.t1_pending = false;
    }

    fn done(&self) -> bool {
        self.refused.is_some()
            || match self.phase {
                Phase::Connect => match self.clock {
                    Clock::Offer => {
                        self.links
                            .iter()
                            .all(|l| l.state() == State::Connected && l.unacked() == 0)
                            && self.app.ready()
                            && self.quiet()
                    }
                    Clock::Session => {
                        self.links.iter().all(|l| l.state() == State::Connected) && self.app.ready()
                    }
                },
                Phase::Transfer => self.final_ack.end.is_some(),
                Phase::Release => self.final_ua.end.is_some(),
            }
    }

    fn next_wake(&mut self, _now: Instant) -> Option<Instant> {
        self.queue.peek_time()
    }

    /// Pops the event due at `to` and hands it to its component.
    fn advance(&mut self, to: Instant) {
        let Some((now, wake)) = self.queue.pop_until(to) else {
            return;
        };
        if let Some(slot) = WAKES.iter().position(|w| *w == wake) {
            self.wakes[slot] = None;
        }
        match wake {
            Wake::Radio => self.radio.handle_timeout(now),
            Wake::Engine(i) => {
                self.links[i].handle_timeout(now);
                // The sender receives no I frames, so neither T2 nor (with
                // frames outstanding) T3 runs there: a timer that makes it
                // transmit while frames are outstanding is T1.
                if i == SENDER && self.links[i].unacked() > 0 && self.offered.is_some() {
                    self.t1_pending = true;
                }
            }
            Wake::Tnc(i) => {
                if let Some(stations) = self.stations.as_mut() {
                    stations[i].tnc.handle_timeout(now);
                }
            }
            Wake::Host(_) => {}
            Wake::Offer => {
                match self.app.offer(now) {
                    Ok(()) => self.offered = Some(now),
                    Err(error) => {
                        self.refused.get_or_insert(error);
                    }
                }
                let stations = self.background.as_ref().map_or(0, |(b, _)| b.stations);
                for i in 0..usize::from(stations) {
                    self.schedule_background(now, i);
                }
            }
            Wake::Background(i) => {
                if let Some((b, _)) = &self.background {
                    let first = RECEIVER + 1 + usize::from(self.digipeater.is_some());
                    let from = background_address(i);
                    if let Ok(frame) = Frame::ui(
                        "QST".parse().expect("a valid callsign"),
                        from,
                        &[],
                        linklab_wire::ax25::Pid::NoLayer3,
                        vec![0x55; b.frame_octets],
                    ) {
                        self.radio
                            .transmit(now, StationId(first + i), frame.encode());
                    }
                }
                self.schedule_background(now, i);
            }
            Wake::BackInRange => {
                self.set_in_range(true);
                if let Some((_, state)) = self.link_drop.as_mut() {
                    *state = DropState::Over;
                }
                // AX.25: combined, always honoured.
                let _ = self.links[SENDER].connect(now);
            }
        }
    }
}

/// The two stations' KISS parameters for a transfer of `config` with the
/// random streams `streams`: `config.station` with each station's slot
/// phase drawn, sender first, from the stream `slot-phase`, uniform in
/// whole microseconds below the slot time. [`run_transfer`] puts exactly
/// these on its [`RadioChannel`] (named `radio`, so station i draws its
/// persistence numbers from `radio/{i}/csma`); a real-time emulation of
/// the same channel with the same streams uses them to reproduce a
/// replication.
pub fn replication_stations(config: &TransferConfig, streams: &Streams) -> [StationConfig; 2] {
    let mut phases = streams.stream("slot-phase");
    let slot = config.station.slot_time.as_micros().max(1);
    let mut station = || StationConfig {
        slot_phase: Duration::from_micros(phases.below(u64::try_from(slot).unwrap_or(u64::MAX))),
        ..config.station
    };
    [station(), station()]
}

/// Simulates one transfer with the random streams `streams` (payload
/// octets, slot-clock phases, persistence draws). Deterministic for given
/// streams.
pub fn run_transfer(
    config: &TransferConfig,
    streams: &Streams,
) -> Result<TransferOutcome, TransferError> {
    let mut app = RawMessage::new(message(config, streams), config.n1);
    run_transfer_with(config, streams, &mut app)
}

/// The message of `config`: its octets drawn from the stream `payload`.
pub(crate) fn message(config: &TransferConfig, streams: &Streams) -> Vec<u8> {
    let mut payload = streams.stream("payload");
    (0..config.message_octets)
        .map(|_| payload.below(256) as u8)
        .collect()
}

/// [`run_transfer`] with `app` above the engines instead of the message
/// cut into information fields.
pub(crate) fn run_transfer_with(
    config: &TransferConfig,
    streams: &Streams,
    app: &mut dyn Application,
) -> Result<TransferOutcome, TransferError> {
    let mut bench = Bench::new(config, streams, app)?;

    // Link set-up, then (the model's clock) a quiet channel.
    let _ = bench.links[SENDER].connect(Instant::ZERO); // AX.25: combined, always honoured
    bench.run_phase_or_cut(Phase::Connect)?;
    let settle = match config.clock {
        Clock::Offer => Duration::from_secs(1),
        Clock::Session => Duration::ZERO,
    };
    let offer = bench.queue.now() + settle;
    bench
        .queue
        .schedule(offer, Wake::Offer)
        .map_err(|_| bench.stalled("offer"))?;

    bench.run_phase_or_cut(Phase::Transfer)?;
    if config.clock == Clock::Session {
        let now = bench.queue.now();
        let _ = bench.links[SENDER].disconnect(now); // connected: always honoured
        bench.run_phase(Phase::Release)?;
    }
    bench.app.verify()?;
    let (Some(start), Some(end)) = (bench.offered, bench.final_ack.end) else {
        return Err(bench.stalled("transfer"));
    };
    let span = match config.clock {
        Clock::Offer => Some((start, end)),
        Clock::Session => bench.first_keyup.zip(bench.final_ua.end),
    };
    let Some((clock_start, clock_end)) = span else {
        return Err(bench.stalled("release"));
    };
    let in_span: Vec<_> = bench.keyings.iter().filter(|(_, k, _)| *k < end).collect();
    let keyed = in_span
        .iter()
        .map(|(_, k, u)| u.unwrap_or(end).min(end).saturating_duration_since(*k))
        .sum();
    let frames = |station| {
        bench
            .frames_sent
            .iter()
            .filter(|(s, at)| *s == station && *at <= end)
            .count() as u64
    };
    let waits = &bench.ack_waits;
    let ack_wait = match u32::try_from(waits.len()) {
        Ok(n) if n > 0 => waits.iter().sum::<Duration>() / n,
        _ => Duration::ZERO,
    };
    Ok(TransferOutcome {
        transfer: clock_end.saturating_duration_since(clock_start),
        transmissions: in_span.len() as u64,
        keyed,
        sender_frames: frames(SENDER),
        receiver_frames: frames(RECEIVER),
        ack_wait,
        ack_wait_max: waits.iter().copied().max().unwrap_or_default(),
        t1_expiries: bench.t1_expiries,
        digipeater: bench.digipeater.map(|_| bench.relayed),
        radio: bench.radio.stats().clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transfer_is_repeatable_and_acknowledged_once_per_window() {
        let config = TransferConfig::ronan_table_1(9600, 4);
        let streams = Streams::new(7).replication(0);
        let a = run_transfer(&config, &streams).expect("transfer completes");
        let b = run_transfer(&config, &streams).expect("transfer completes");
        assert_eq!(a, b);
        assert_eq!(a.sender_frames, 29);
        assert_eq!(a.receiver_frames, 8);
        assert_eq!(a.transmissions, 16);
        assert_eq!(a.radio.collisions, 0);
        assert_eq!(a.t1_expiries, 0);
        assert!(a.keyed < a.transfer);
    }

    #[test]
    fn through_a_digipeater_every_frame_is_on_the_air_twice() {
        let direct = TransferConfig::ronan_table_1(9600, 4);
        let via = TransferConfig {
            digipeater: Some(StationConfig::ronan_table_1()),
            ..direct
        };
        let streams = Streams::new(7).replication(0);
        let a = run_transfer(&direct, &streams).expect("transfer completes");
        let b = run_transfer(&via, &streams).expect("transfer completes");
        // The ends do not hear each other: nothing collides, nothing is
        // retransmitted, and the digipeater sends what they send.
        assert_eq!(b.radio.collisions, 0);
        assert_eq!(b.t1_expiries, 0);
        assert_eq!(
            (b.sender_frames, b.receiver_frames),
            (a.sender_frames, a.receiver_frames)
        );
        assert_eq!(b.radio.frames_sent, 2 * a.radio.frames_sent);
        assert_eq!(
            b.digipeater,
            Some(Relayed {
                repeated: a.radio.frames_sent,
                lost: 0
            })
        );
        // Each window and each acknowledgement crosses the channel twice,
        // with a TXDELAY more each time.
        let ratio = b.transfer.as_secs_f64() / a.transfer.as_secs_f64();
        assert!((1.8..2.2).contains(&ratio), "{ratio}");
    }

    #[test]
    fn the_session_clock_adds_the_link_s_set_up_and_release() {
        let offer = TransferConfig::ronan_table_1(9600, 4);
        let session = TransferConfig {
            clock: Clock::Session,
            ..offer
        };
        let streams = Streams::new(7).replication(0);
        let a = run_transfer(&offer, &streams).expect("transfer completes");
        let b = run_transfer(&session, &streams).expect("transfer completes");
        // Four more transmissions, SABM, UA, DISC and UA, each a TXDELAY,
        // one frame of 15 octets and a TXTAIL, and a channel access.
        let one = Duration::from_millis(150 + 20) + Duration::from_micros(15 * 8 * 104);
        let extra = b.transfer.saturating_sub(a.transfer);
        assert!(
            extra > 4 * one && extra < 4 * one + 4 * Duration::from_millis(200),
            "{extra:?}"
        );
        // The message itself goes the same way.
        assert_eq!(b.sender_frames, a.sender_frames);
        assert_eq!(b.receiver_frames, a.receiver_frames);
    }

    #[test]
    fn replication_stations_draw_the_slot_phases_from_the_replication_s_streams() {
        let config = TransferConfig::ronan_table_1(9600, 7);
        let master = Streams::new(0x4c49_4e4b);
        let streams = master.replication(3);
        let stations = replication_stations(&config, &streams);

        // Sender first, then receiver, from the stream `slot-phase`, below
        // the 20 ms slot; everything else is Table I.
        let mut phases = streams.stream("slot-phase");
        for station in stations {
            assert_eq!(
                station.slot_phase,
                Duration::from_micros(phases.below(20_000))
            );
            assert_eq!(
                StationConfig {
                    slot_phase: Duration::ZERO,
                    ..station
                },
                StationConfig::ronan_table_1()
            );
        }
        assert_ne!(stations[0].slot_phase, stations[1].slot_phase);

        // The same streams give the same stations (as Bench::new draws
        // them); another replication or another master seed does not.
        assert_eq!(replication_stations(&config, &streams), stations);
        assert_eq!(
            replication_stations(&config, &Streams::new(streams.master_seed())),
            stations
        );
        assert_ne!(
            replication_stations(&config, &master.replication(4)),
            stations
        );
        assert_ne!(
            replication_stations(&config, &Streams::new(1).replication(3)),
            stations
        );
        // The window and bit rate do not enter the draw.
        assert_eq!(
            replication_stations(&TransferConfig::ronan_table_1(1200, 1), &streams),
            stations
        );
    }

    /// 16 KiB at 1200 bit/s, window 4, N1 256, Dire Wolf's TXDELAY and
    /// TXTAIL and the KISS defaults P 63, SLOTTIME 100 ms; `stack` on the
    /// radio directly, or behind a host and KISS TNC with `kiss`.
    fn at_1200(stack: StackConfig, kiss: bool) -> TransferConfig {
        TransferConfig {
            bit_rate: 1200,
            station: StationConfig {
                persistence: 63,
                slot_time: Duration::from_millis(100),
                txdelay: Duration::from_millis(300),
                txtail: Duration::from_millis(100),
                slot_phase: Duration::ZERO,
            },
            window: 4,
            n1: 256,
            message_octets: 16_384,
            stack,
            path: kiss.then_some(KissPath {
                host: HostConfig {
                    latency: Duration::from_millis(10),
                },
                tnc: TncConfig {
                    serial_rate: 9600,
                    per_frame: Duration::from_millis(10),
                    per_octet: Duration::ZERO,
                    tx_buffer_octets: 8192,
                },
                carrier_hold: Duration::from_millis(50),
            }),
            ..TransferConfig::ronan_table_1(1200, 4)
        }
    }

    #[test]
    fn dire_wolf_s_engine_on_its_modem_keeps_frack_3_s_through_long_windows() {
        // Four 256-octet frames take 7.4 s on the air, FRACK is 3 s: T1
        // paused while the channel is busy never expires, and the
        // receiver, which has no T2, answers each window once, when it
        // gets the channel.
        let config = at_1200(StackConfig::direwolf(Duration::from_secs(3)), false);
        for r in 0..5 {
            let o = run_transfer(&config, &Streams::new(11).replication(r))
                .expect("transfer completes");
            eprintln!(
                "{r}: {:?} exp {} s {} r {} coll {}",
                o.transfer, o.t1_expiries, o.sender_frames, o.receiver_frames, o.radio.collisions
            );
            assert_eq!(o.t1_expiries, 0, "replication {r}");
            assert_eq!(o.sender_frames, 64, "replication {r}");
            assert_eq!(o.receiver_frames, 16, "replication {r}");
        }
    }

    #[test]
    fn linklab_behind_a_kiss_tnc_holds_t1_until_its_frames_have_left_the_air() {
        // The same windows with an initial T1 of 3 s behind a KISS TNC:
        // linklab's stack (T1 held until its frames are sent) completes
        // every run; the Linux kernel's (T1 from the hand-over) times out
        // every window, or gives the link up.
        let linklab = |t2| {
            StackConfig::linklab(
                Duration::from_secs(3),
                Duration::from_secs(t2),
                AckPolicy::WindowOrT2,
                true,
            )
        };
        let linux = StackConfig {
            t1_adaptive: true,
            ..StackConfig::linux(Duration::from_secs(3))
        };
        let (mut linklab_expiries, mut slow_t2_expiries) = (0, 0);
        for r in 0..4 {
            let streams = Streams::new(11).replication(r);
            // send's T2, 1 s, is shorter than a 256-octet frame's 1.9 s on
            // the air: the receiver acknowledges every frame, and the RRs
            // of one transmission give T1 short samples.
            let o = run_transfer(&at_1200(linklab(1), true), &streams).expect("completes");
            linklab_expiries += o.t1_expiries;
            let o = run_transfer(&at_1200(linklab(2), true), &streams).expect("completes");
            assert_eq!(o.receiver_frames, 16 + o.t1_expiries, "{o:?}");
            slow_t2_expiries += o.t1_expiries;
            match run_transfer(&at_1200(linux, true), &streams) {
                Ok(o) => assert!(o.t1_expiries >= 16, "{o:?}"),
                Err(e) => assert!(matches!(e, TransferError::LinkFailed { .. }), "{e}"),
            }
        }
        assert!(slow_t2_expiries <= 2, "{slow_t2_expiries}");
        assert!(linklab_expiries < 16, "{linklab_expiries}");
    }

    #[test]
    fn the_papers_stacks_keep_the_engine_s_defaults() {
        // Model and Linux stacks: only what they set differs from
        // Config::default(), as before the linklab and Dire Wolf knobs.
        let c = TransferConfig::ronan_table_1(1200, 4).link_config();
        let d = Config::default();
        assert_eq!(
            (
                c.t1_min,
                c.t1_max,
                c.srt_first_sample,
                c.poll_holds_new_frames,
                c.reject_again_after_go_back
            ),
            (
                d.t1_min,
                d.t1_max,
                d.srt_first_sample,
                d.poll_holds_new_frames,
                d.reject_again_after_go_back
            )
        );
    }

    #[test]
    fn a_bad_window_is_refused_with_the_engine_s_message() {
        let config = TransferConfig {
            window: 8,
            ..TransferConfig::ronan_table_1(1200, 1)
        };
        let err = run_transfer(&config, &Streams::new(1)).unwrap_err();
        assert!(err.to_string().contains("window k = 8"), "{err}");
    }
}
