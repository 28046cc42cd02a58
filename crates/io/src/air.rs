//! When our frames leave the air: the KISS port's transmit clock.
//!
//! A host stack behind a KISS TNC hands frames over long before they are
//! sent: the TNC waits for the channel (p-persistence), keys up (TXDELAY)
//! and sends everything queued before them. If T1 ran from the hand-over,
//! a window of long frames at 1200 bit/s would outlive any short T1. Dire
//! Wolf's own engine freezes T1 while its transmitter is keyed; behind
//! KISS we learn when a frame has gone in one of two ways:
//!
//! - **ACKMODE** (G8BPQ's multi-drop KISS, command 0x0C): the host sends a
//!   frame with two sequence octets and the TNC answers them once the
//!   frame has been sent. Many TNCs and soundcard modems answer it (and
//!   `linklab channel` does); others, Dire Wolf 1.6 among them, drop the
//!   frame as an unknown command. In [`AckMode::Auto`] the question rides
//!   with the first frame there is to send: a station identification
//!   (`CALL>ID` UI frame with the callsign, as TNCs send every ten
//!   minutes) with ACKMODE, followed by the frame itself as plain data.
//!   An answer turns ACKMODE on; none within the time the two should have
//!   taken plus [`PROBE_GRACE`] turns it off. Nothing the link sends is
//!   ever lost or repeated by the question (a repeated SABM would reset
//!   a link the first one set up).
//! - **An estimate** otherwise: the frame leaves the air after the frames
//!   queued before it, each at the port's bit rate, plus the expected
//!   channel-access wait and TXDELAY when the transmitter had to key up.
//!
//! [`AirClock::busy`] is true while a frame of ours has not left the air;
//! the station turns it into the links' channel-busy hint
//! (`DataLink::set_channel_busy`), which holds T1 still. T1 then counts
//! from the moment the last frame left the air, so it can be short (what
//! the link's round trip needs) and still never expire on frames waiting
//! in the TNC, and the round trip it measures is the link's own.

use core::time::Duration;
use std::collections::VecDeque;

use linklab_core::Instant;
use linklab_wire::ax25::{Address, AddressField, Frame, Pid};
use linklab_wire::kiss::{self, Command, Port};

use crate::params::KissParams;

/// How long past its expected end of transmission a probing ACKMODE frame
/// may go unanswered before the TNC is taken not to answer ACKMODE.
pub const PROBE_GRACE: Duration = Duration::from_secs(1);

/// How long past its expected end of transmission an ACKMODE frame may go
/// unanswered before the clock stops waiting for it (a TNC that lost it,
/// or restarted): it is then taken as sent, so T1 cannot be held for ever.
pub const ANSWER_LIMIT: Duration = Duration::from_secs(30);

/// Whether frames go to the TNC with ACKMODE (KISS command 0x0C).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AckMode {
    /// Ask with the first frame; use ACKMODE if the TNC answers it,
    /// otherwise send that frame again as data and estimate from then on.
    #[default]
    Auto,
    /// Every frame with ACKMODE (the TNC is known to answer it).
    On,
    /// Never: plain data frames, the end of transmission estimated.
    Off,
}

impl core::str::FromStr for AckMode {
    type Err = String;

    /// `auto`, `on` or `off`.
    fn from_str(text: &str) -> Result<AckMode, String> {
        match text {
            "auto" => Ok(AckMode::Auto),
            "on" => Ok(AckMode::On),
            "off" => Ok(AckMode::Off),
            other => Err(format!("{other:?}: write \"auto\", \"on\" or \"off\"")),
        }
    }
}

/// What the clock knows of the port's transmitter, for the estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AirSettings {
    /// ACKMODE use.
    pub ackmode: AckMode,
    /// The radio's bit rate on the air, bit/s.
    pub bit_rate: u32,
    /// TXDELAY: keying up before the first frame of a transmission.
    pub txdelay: Duration,
    /// Persistence P (0-255): the expected channel-access wait is
    /// SLOTTIME x (256 / (P + 1) - 1) slots on an idle channel.
    pub persistence: u8,
    /// SLOTTIME.
    pub slot_time: Duration,
}

impl Default for AirSettings {
    /// A 1200 bit/s AFSK radio port with the KISS defaults most TNCs and
    /// Dire Wolf use (TXDELAY 300 ms, P 63, SLOTTIME 100 ms), ACKMODE
    /// asked for.
    fn default() -> AirSettings {
        AirSettings {
            ackmode: AckMode::Auto,
            bit_rate: 1200,
            txdelay: Duration::from_millis(300),
            persistence: 63,
            slot_time: Duration::from_millis(100),
        }
    }
}

impl AirSettings {
    /// The settings of a KISS port: the KISS parameters sent to the TNC
    /// where given, this type's defaults for the rest, and 1200 bit/s
    /// unless the bit rate is known.
    pub fn for_port(ackmode: AckMode, bit_rate: Option<u32>, kiss: &KissParams) -> AirSettings {
        let default = AirSettings::default();
        AirSettings {
            ackmode,
            bit_rate: bit_rate.unwrap_or(default.bit_rate),
            txdelay: kiss.txdelay.unwrap_or(default.txdelay),
            persistence: kiss.persistence.unwrap_or(default.persistence),
            slot_time: kiss.slot_time.unwrap_or(default.slot_time),
        }
    }

    /// Time on the air of an AX.25 frame of `octets` (address field to
    /// information field): opening flag, the octets and FCS, with bit
    /// stuffing's expected one bit in 62 for random data.
    pub fn frame_time(&self, octets: usize) -> Duration {
        linklab_link::frame_air_time(self.bit_rate, octets)
    }

    /// The expected wait before keying up on an idle channel, plus TXDELAY.
    fn key_up(&self) -> Duration {
        let slots = 256 / (u32::from(self.persistence) + 1) - 1;
        self.slot_time * slots + self.txdelay
    }
}

/// ACKMODE's state on this connection to the TNC.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answering {
    /// Not known yet: the next frame asks.
    Unknown,
    /// Asked with `seq`; no answer by `deadline` means no.
    Asking { seq: u16, deadline: Instant },
    /// The TNC answers.
    Yes,
    /// It does not (or ACKMODE is off).
    No,
}

/// The transmit clock of one KISS port (see the module's description).
#[derive(Debug, Clone)]
pub struct AirClock {
    settings: AirSettings,
    port: Port,
    answering: Answering,
    next_seq: u16,
    /// ACKMODE frames not yet answered: sequence and the time after which
    /// the answer is no longer waited for.
    unanswered: VecDeque<(u16, Instant)>,
    /// The estimated end of transmission of the last frame handed over.
    on_air_until: Option<Instant>,
    /// Frames handed over while that estimate runs: when, and each one's
    /// time on the air (for [`AirClock::heard`]).
    handed: VecDeque<(Instant, Duration)>,
    /// When the last frame was heard.
    last_heard: Option<Instant>,
    /// When the peer's transmission that frame came in began: the start
    /// of its first frame (frames each heard within their own air time
    /// and a quarter of the one before are one transmission).
    heard_since: Option<Instant>,
    /// The same for the last frame sent as plain data, which no answer
    /// will confirm.
    data_until: Option<Instant>,
    /// KISS octets for the TNC.
    out: Vec<u8>,
    /// Frames whose ACKMODE answer never came ([`ANSWER_LIMIT`]).
    pub answers_missed: u64,
}

impl AirClock {
    /// A clock for KISS port `port` of a TNC just connected.
    pub fn new(settings: AirSettings, port: Port) -> AirClock {
        let answering = match settings.ackmode {
            AckMode::Auto => Answering::Unknown,
            AckMode::On => Answering::Yes,
            AckMode::Off => Answering::No,
        };
        AirClock {
            settings,
            port,
            answering,
            next_seq: 0,
            unanswered: VecDeque::new(),
            on_air_until: None,
            handed: VecDeque::new(),
            last_heard: None,
            heard_since: None,
            data_until: None,
            out: Vec::new(),
            answers_missed: 0,
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &AirSettings {
        &self.settings
    }

    /// True if the TNC answers ACKMODE, false if it does not, `None` while
    /// that is not known.
    pub fn ackmode(&self) -> Option<bool> {
        match self.answering {
            Answering::Yes => Some(true),
            Answering::No => Some(false),
            Answering::Unknown | Answering::Asking { .. } => None,
        }
    }

    /// Hands the AX.25 frame `frame` to the TNC at `now` (its KISS octets
    /// are collected by [`AirClock::take_octets`]).
    pub fn transmit(&mut self, now: Instant, frame: Vec<u8>) {
        if self.answering == Answering::Unknown {
            self.ask(now, &frame);
        }
        let ends = self.estimate(now, frame.len());
        let command = match self.answering {
            Answering::Yes => {
                let seq = self.take_seq();
                self.unanswered.push_back((seq, ends + ANSWER_LIMIT));
                Command::AckMode { seq, data: frame }
            }
            // Until the question is answered, plain data.
            Answering::No | Answering::Unknown | Answering::Asking { .. } => {
                self.data_until = Some(ends);
                Command::Data(frame)
            }
        };
        self.push(command);
    }

    /// Asks whether the TNC answers ACKMODE with an identification from
    /// the station that sends `frame` (its source address): `CALL>ID`, a
    /// UI frame whose information field is the callsign. A frame whose
    /// address field does not decode (a KISS client's) asks nothing.
    fn ask(&mut self, now: Instant, frame: &[u8]) {
        let Ok((field, _)) = AddressField::decode(frame) else {
            return;
        };
        let mut source = *field.source();
        source.set_c_or_h(false);
        let id = "ID".parse::<Address>().ok().and_then(|id| {
            Frame::ui(
                id,
                source,
                &[],
                Pid::NoLayer3,
                source.to_string().into_bytes(),
            )
            .ok()
        });
        let Some(id) = id else {
            return;
        };
        let data = id.encode();
        let ends = self.estimate(now, data.len());
        let seq = self.take_seq();
        self.answering = Answering::Asking {
            seq,
            deadline: ends + PROBE_GRACE,
        };
        self.push(Command::AckMode { seq, data });
    }

    /// A KISS ACKMODE answer from the TNC: frame `seq` has been sent.
    pub fn answered(&mut self, now: Instant, seq: u16) {
        if let Answering::Asking { seq: asked, .. } = self.answering {
            if asked == seq {
                self.answering = Answering::Yes;
                // The frame is on the air: the estimate of what followed
                // it runs from now.
                self.on_air_until = self.on_air_until.map(|t| t.max(now));
                return;
            }
        }
        // A late answer to the question, after the frame went again as
        // data: the TNC does answer after all.
        if self.answering == Answering::No && self.settings.ackmode == AckMode::Auto {
            self.answering = Answering::Yes;
        }
        if let Some(i) = self.unanswered.iter().position(|&(s, _)| s == seq) {
            // Answers come in order; any still before it were lost.
            self.unanswered.drain(..=i);
        }
    }

    /// A frame of `octets` (address field to information field) was
    /// heard from the channel at `now`. A half-duplex radio does not
    /// receive while it transmits, so ours were not on the air while the
    /// peer's transmission that brought this frame was. Frames handed over
    /// at least a TXDELAY (the least time from hand-over to the first bit)
    /// before that transmission began have left the air by now: the
    /// estimate ends here if it ran longer (a radio faster than
    /// `--bitrate` says, or a shorter TXDELAY). Frames handed over later
    /// cannot have been keyed up before it began and still wait for the
    /// channel: they leave the air after a new key-up from now, and the
    /// estimate grows to say so. (An answer of several frames, whose first
    /// we answered at once, otherwise had the clock take our answer as
    /// sent while the peer was still sending, and T1 ran out with it
    /// waiting in the TNC.) Frames heard closer together than half the air
    /// time of the later one did not come over the radio this clock models
    /// (a KISS hub, or a radio faster than `--bitrate` says): then the
    /// estimate is only ever cut, so that a peer that never stops talking
    /// cannot hold T1 for good. Frames sent with ACKMODE keep waiting for
    /// their answers.
    pub fn heard(&mut self, now: Instant, octets: usize) {
        let air = self.settings.frame_time(octets);
        let too_soon = self.last_heard.is_some_and(|t| now < t + air / 2);
        let same = self.last_heard.is_some_and(|t| now <= t + air * 5 / 4);
        let began = match self.heard_since {
            Some(began) if same => began,
            _ => Instant::from_micros(now.as_micros().saturating_sub(air.as_micros() as u64)),
        };
        self.last_heard = Some(now);
        self.heard_since = Some(began);
        if too_soon {
            self.handed.clear();
        }
        let txdelay = self.settings.txdelay;
        self.handed.retain(|&(at, _)| at + txdelay > began);
        if self.handed.is_empty() {
            if self.data_until.is_some_and(|t| t > now) {
                self.data_until = Some(now);
            }
            if self.on_air_until.is_some_and(|t| t > now) {
                self.on_air_until = Some(now);
            }
            return;
        }
        let waiting: Duration = self.handed.iter().map(|&(_, air)| air).sum();
        let ends = now + self.settings.key_up() + waiting;
        self.on_air_until = Some(ends);
        if self.data_until.is_some() {
            self.data_until = Some(ends);
        }
    }

    /// True while a frame handed over has not left the air: ACKMODE
    /// answers outstanding, or the estimate not yet reached.
    pub fn busy(&self, now: Instant) -> bool {
        let data = self.data_until.is_some_and(|t| t > now);
        match self.answering {
            Answering::Yes => !self.unanswered.is_empty() || data,
            Answering::Unknown | Answering::Asking { .. } | Answering::No => data,
        }
    }

    /// When [`AirClock::handle_timeout`] must next be called: the end of
    /// the estimate, the question's deadline, or an answer's limit.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let asking = match self.answering {
            Answering::Asking { deadline, .. } => Some(deadline),
            _ => None,
        };
        [
            asking,
            self.data_until,
            self.unanswered.front().map(|&(_, t)| t),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Runs what is due at `now`: an unanswered question means the TNC
    /// does not answer ACKMODE; answers waited for too long are given up;
    /// a passed estimate is forgotten.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Answering::Asking { deadline, .. } = self.answering {
            if deadline <= now {
                self.answering = Answering::No;
            }
        }
        while self.unanswered.front().is_some_and(|&(_, t)| t <= now) {
            self.unanswered.pop_front();
            self.answers_missed += 1;
        }
        if self.on_air_until.is_some_and(|t| t <= now) {
            self.on_air_until = None;
            self.handed.clear();
        }
        if self.data_until.is_some_and(|t| t <= now) {
            self.data_until = None;
        }
    }

    /// The KISS octets for the TNC, taken.
    pub fn take_octets(&mut self) -> Vec<u8> {
        core::mem::take(&mut self.out)
    }

    /// Extends the estimate by a frame of `octets` handed over at `now`;
    /// returns when it should have left the air.
    fn estimate(&mut self, now: Instant, octets: usize) -> Instant {
        let start = match self.on_air_until {
            Some(t) if t > now => t,
            _ => {
                // A new transmission: what was handed over before is gone.
                self.handed.clear();
                now + self.settings.key_up()
            }
        };
        let air = self.settings.frame_time(octets);
        let ends = start + air;
        self.on_air_until = Some(ends);
        self.handed.push_back((now, air));
        ends
    }

    fn take_seq(&mut self) -> u16 {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        seq
    }

    fn push(&mut self, command: Command) {
        kiss::encode_into(
            &kiss::Frame {
                port: self.port,
                command,
            },
            &mut self.out,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn settings(ackmode: AckMode) -> AirSettings {
        AirSettings {
            ackmode,
            bit_rate: 1200,
            txdelay: 300 * MS,
            persistence: 255,
            slot_time: 100 * MS,
        }
    }

    fn decoded(octets: &[u8]) -> Vec<Command> {
        let mut decoder = kiss::Decoder::new(4096);
        decoder.push(octets);
        core::iter::from_fn(|| decoder.next())
            .map(|f| f.expect("KISS").command)
            .collect()
    }

    #[test]
    fn without_ackmode_a_window_is_on_the_air_for_its_estimated_time() {
        let mut clock = AirClock::new(settings(AckMode::Off), Port::default());
        let t0 = Instant::ZERO;
        for _ in 0..4 {
            clock.transmit(t0, vec![0; 256]);
        }
        // TXDELAY, then 4 x 259 octets at 1200 bit/s with stuffing.
        let one = settings(AckMode::Off).frame_time(256);
        let before_end = t0 + 299 * MS + one * 4;
        let end = before_end + MS;
        assert!(clock.busy(t0));
        assert_eq!(clock.poll_timeout(), Some(end));
        assert!(clock.busy(before_end));
        assert!(!clock.busy(end));
        assert!(decoded(&clock.take_octets())
            .iter()
            .all(|c| matches!(c, Command::Data(_))));
        clock.handle_timeout(end);
        assert_eq!(clock.poll_timeout(), None);
    }

    /// A UI frame from N0CALL-1 with `n` octets of information.
    fn frame(n: usize) -> Vec<u8> {
        Frame::ui(
            "QST".parse().unwrap(),
            "N0CALL-1".parse().unwrap(),
            &[],
            Pid::NoLayer3,
            vec![0x55; n],
        )
        .unwrap()
        .encode()
    }

    #[test]
    fn the_question_rides_with_the_first_frame_and_an_answer_turns_ackmode_on() {
        let mut clock = AirClock::new(settings(AckMode::Auto), Port::default());
        let t0 = Instant::ZERO;
        clock.transmit(t0, frame(20));
        let sent = decoded(&clock.take_octets());
        // The identification with ACKMODE, then the frame as plain data.
        let [Command::AckMode { seq, data }, Command::Data(first)] = sent.as_slice() else {
            panic!("{sent:?}");
        };
        let id = Frame::decode(data, linklab_wire::control::Modulus::Mod8).unwrap();
        assert_eq!(id.address().dest().to_string(), "ID");
        assert_eq!(id.info(), b"N0CALL-1");
        assert_eq!(first, &frame(20));
        assert_eq!(clock.ackmode(), None);
        clock.answered(t0 + 500 * MS, *seq);
        assert_eq!(clock.ackmode(), Some(true));
        // From now on frames go with ACKMODE, and busy means "answers
        // outstanding" (the first frame's estimate aside).
        let later = t0 + 60 * MS * 1000;
        clock.transmit(later, frame(20));
        let sent = decoded(&clock.take_octets());
        let [Command::AckMode { seq, .. }] = sent.as_slice() else {
            panic!("{sent:?}");
        };
        assert!(clock.busy(later + 50 * MS * 1000));
        clock.answered(later + 51 * MS * 1000, *seq);
        assert!(!clock.busy(later + 51 * MS * 1000));
    }

    #[test]
    fn an_unanswered_question_leaves_plain_data_and_repeats_nothing() {
        let mut clock = AirClock::new(settings(AckMode::Auto), Port::default());
        let t0 = Instant::ZERO;
        clock.transmit(t0, frame(20));
        clock.take_octets();
        // First the estimated end of both frames, then the question's
        // deadline: PROBE_GRACE after the identification's end.
        let ends = clock.poll_timeout().expect("the estimate");
        clock.handle_timeout(ends);
        assert!(!clock.busy(ends));
        assert_eq!(clock.ackmode(), None);
        let deadline = clock.poll_timeout().expect("the question's deadline");
        assert!(deadline > ends && deadline < ends + PROBE_GRACE);
        clock.handle_timeout(deadline);
        assert_eq!(clock.ackmode(), Some(false));
        assert!(clock.take_octets().is_empty(), "nothing sent again");
        clock.transmit(deadline, frame(20));
        assert!(matches!(
            decoded(&clock.take_octets()).as_slice(),
            [Command::Data(_)]
        ));
    }

    #[test]
    fn a_frame_heard_ends_the_estimate_not_the_wait_for_answers() {
        // A radio faster than the estimate: the peer's answer is heard
        // while the estimate still has our frames on the air.
        let mut clock = AirClock::new(settings(AckMode::Off), Port::default());
        let t0 = Instant::ZERO;
        clock.transmit(t0, frame(256));
        let heard_at = t0 + 900 * MS;
        assert!(clock.busy(heard_at));
        clock.heard(heard_at, 17);
        assert!(!clock.busy(heard_at));
        // ACKMODE answers are exact: a frame heard changes nothing there.
        let mut clock = AirClock::new(settings(AckMode::On), Port::default());
        clock.transmit(t0, frame(256));
        clock.heard(heard_at, 17);
        assert!(clock.busy(heard_at));
    }

    #[test]
    fn frames_handed_over_while_the_peer_sends_wait_for_its_last_frame() {
        // The peer answers with three RRs in one transmission (answers to
        // polls that waited in its TNC); we send a window on the first.
        // The second and third were on the air after the window was
        // handed over, so the window is still in our TNC when they end:
        // it leaves the air a key-up and its own time after the last.
        let air = settings(AckMode::Off);
        let mut clock = AirClock::new(air, Port::default());
        let rr = air.frame_time(17);
        let first = Instant::ZERO + 5000 * MS;
        clock.heard(first, 17);
        for _ in 0..4 {
            clock.transmit(first, frame(256));
        }
        let last = first + rr * 2;
        clock.heard(first + rr, 17);
        clock.heard(last, 17);
        let span = air.key_up() + air.frame_time(frame(256).len()) * 4;
        let ends = last + span;
        assert_eq!(clock.poll_timeout(), Some(ends));
        assert!(clock.busy(last + (span - MS)));
        assert!(!clock.busy(ends));
        // An answer of eight frames (over Dire Wolf, answers to polls
        // that waited in its TNC), a frame handed over on the second:
        // still waiting when the eighth ends, though that one began more
        // than a TXDELAY after the hand-over.
        let mut clock = AirClock::new(air, Port::default());
        clock.heard(first, 17);
        clock.heard(first + rr, 17);
        clock.transmit(first + rr, frame(256));
        for i in 2..8 {
            clock.heard(first + rr * i, 17);
        }
        let eighth = first + rr * 7;
        assert!(clock.busy(eighth + air.key_up()), "{clock:?}");
        // Frames heard faster than the bit rate allows (a KISS hub: the
        // peer answers each frame at once) only ever cut the estimate.
        let mut clock = AirClock::new(air, Port::default());
        clock.heard(first, 17);
        clock.transmit(first, frame(256));
        let next = first + MS;
        clock.heard(next, 17);
        assert!(!clock.busy(next));
        // A frame heard later than a TXDELAY and its own time after the
        // hand-over ends the estimate, as before.
        let later = first + air.txdelay + rr + MS;
        let mut clock = AirClock::new(air, Port::default());
        clock.transmit(first, frame(256));
        clock.heard(later, 17);
        assert!(!clock.busy(later));
    }

    #[test]
    fn a_frame_that_does_not_decode_asks_nothing() {
        let mut clock = AirClock::new(settings(AckMode::Auto), Port::default());
        clock.transmit(Instant::ZERO, vec![1; 20]);
        assert!(matches!(
            decoded(&clock.take_octets()).as_slice(),
            [Command::Data(_)]
        ));
        assert_eq!(clock.ackmode(), None, "asked with the next frame");
    }

    #[test]
    fn a_lost_answer_does_not_hold_the_port_busy_for_ever() {
        let mut clock = AirClock::new(settings(AckMode::On), Port::default());
        let t0 = Instant::ZERO;
        clock.transmit(t0, vec![1; 20]);
        clock.transmit(t0, vec![2; 20]);
        let limit = clock.poll_timeout().expect("answer limit");
        assert!(clock.busy(t0 + 30 * MS * 1000));
        clock.handle_timeout(limit);
        // Answers come in order: the second frame's answer also covers the
        // first.
        clock.answered(limit, 1);
        assert!(!clock.busy(limit));
        assert_eq!(clock.answers_missed, 1);
    }
}
