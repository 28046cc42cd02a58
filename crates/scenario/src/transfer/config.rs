//! What a transfer is set up with: the radio and the two stations'
//! channel access ([`TransferConfig`]), their AX.25 stack
//! ([`StackConfig`]), the host and KISS TNC between stack and radio
//! ([`KissPath`]), and what else happens on the channel ([`Background`],
//! [`LinkDrop`], a digipeater) or is timed ([`Clock`]).

use core::time::Duration;

use linklab_channel::{Duplex, ErrorModel, SlotClock, StationConfig, TncConfig};
use linklab_link::{AckPolicy, Config};
use linklab_wire::control::Modulus;

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
/// [module documentation](super), "A link drop").
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

/// Parameters of one simulated transfer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransferConfig {
    /// Radio bit rate, bit/s.
    pub bit_rate: u32,
    /// KISS parameters of both stations. Each station's slot clock gets a
    /// random phase per replication ([`super::replication_stations`]); the phase
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
