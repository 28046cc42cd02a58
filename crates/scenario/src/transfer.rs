//! One message over a half-duplex radio link: two AX.25 [`DataLink`]
//! engines as stations on a [`RadioChannel`], driven by the sim
//! [`EventQueue`] in virtual time (Ronan, Long and Walsh, section III.B and
//! Table I).
//!
//! # The set-up
//! Station 0 (the sender) connects to station 1 (the receiver) with SABM
//! (AX.25 v2.0, modulo 8, window k, N1 = 255, no XID). Once the link is up
//! and the channel has been quiet for a second, the message is offered to
//! the sender at once, cut into information fields of N1 octets (7182
//! octets: 28 full fields and one of 42).
//!
//! # Acknowledgement: one RR per window, at once
//! The model lets every window of up to k I frames draw exactly one
//! acknowledgement, sent as soon as the window has arrived. The engines do
//! the same with checkpointing: the sender sets P on the last I frame of a
//! window (`poll_on_last_i_frame`, AX.25 v2.2 6.4.11 / 4.4.5.2), and the
//! receiver answers that P = 1 at once with RR F = 1 (6.4.2.1) while it
//! never acknowledges unpolled I frames on its own
//! ([`AckPolicy::OnPollImmediately`]), so no T2 expiry adds an RR in the
//! middle of a long window.
//!
//! # The wiring
//! Frames from `poll_transmit` are encoded and handed to the channel; each
//! intact delivery is decoded and given to the other engine's
//! `handle_frame` (damaged ones are dropped, as an FCS check would);
//! `ChannelBusy` drives `set_channel_busy` (T1 pauses while the channel is
//! busy), `TransmitterKeyed` drives `transmitter_keyed` (a pending
//! acknowledgement rides in the transmission), and every component's
//! `poll_timeout` is kept as one pending wake-up in the event queue.
//!
//! # What is timed: the paper's `T_message`
//! The model charges each window `T_txdelay + frames + T_txtail + p T_slot`
//! for the data and `T_ack = T_txdelay + RR + T_txtail + p T_slot` for its
//! acknowledgement: one channel-access wait before every transmission and
//! the transmitter tail after it. The matching span in the simulation runs
//! from the moment the whole message is offered to the sender (its first
//! channel-access wait begins) to the moment the receiver's transmitter
//! drops after the RR that acknowledges the last I frame (end of that
//! transmission's TXTAIL). Inside that span the channel is either keyed by
//! one station or idle while the next station waits for access, so the
//! idle time divided by the number of transmissions is the mean access
//! wait that the model calls `p T_slot` ([`TransferOutcome::mean_access_wait`]).

use core::time::Duration;

use linklab_channel::{
    Medium, MediumEvent, RadioChannel, RadioConfig, RadioStats, StationConfig, StationId,
};
use linklab_link::{AckPolicy, Config, DataLink, Event, Instant, NewLinkError, State};
use linklab_sim::{EventId, EventQueue, Streams};
use linklab_wire::ax25::{Address, AddressError, Frame};
use linklab_wire::control::Modulus;
use thiserror::Error;

/// Parameters of one simulated transfer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransferConfig {
    /// Radio bit rate, bit/s.
    pub bit_rate: u32,
    /// KISS parameters of both stations. Each station's slot clock gets a
    /// random phase per replication; the phase given here is ignored.
    pub station: StationConfig,
    /// Window k (AX.25 `maxframe`), 1-7.
    pub window: u8,
    /// N1: octets per information field.
    pub n1: usize,
    /// Message length, octets.
    pub message_octets: usize,
}

impl TransferConfig {
    /// Ronan's Table I at `bit_rate` with window `window`: slot 20 ms,
    /// TXDELAY 150 ms, TXTAIL 20 ms, p = 0.25 (KISS P = 63), N1 = 255,
    /// 7182 octets.
    pub fn ronan_table_1(bit_rate: u32, window: u8) -> Self {
        TransferConfig {
            bit_rate,
            station: StationConfig::ronan_table_1(),
            window,
            n1: 255,
            message_octets: 7182,
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
    /// The channel's counters over the whole run, connection included.
    pub radio: RadioStats,
}

impl TransferOutcome {
    /// Mean wait for channel access per transmission in the span: idle
    /// time over key-ups (the model's `p T_slot`).
    pub fn mean_access_wait(&self) -> Duration {
        let idle = self.transfer.saturating_sub(self.keyed);
        match u32::try_from(self.transmissions) {
            Ok(n) if n > 0 => idle / n,
            _ => Duration::ZERO,
        }
    }
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
    #[error("the simulation ran dry at {at_us} us in phase \"{phase}\"")]
    Stalled {
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
    /// Offer the message to the sender.
    Offer,
}

const SENDER: usize = 0;
const RECEIVER: usize = 1;
/// Virtual-time limit of one run: far beyond any transfer here.
const HORIZON: Instant = Instant::from_micros(3_600_000_000);

struct Bench {
    queue: EventQueue<Wake>,
    radio: RadioChannel,
    links: [DataLink; 2],
    /// Pending wake-up of the radio (0) and the engines (1, 2).
    wakes: [Option<(Instant, EventId)>; 3],
    received: Vec<u8>,
    /// Measurement, once the message is offered.
    offered: Option<Instant>,
    acked: bool,
    end: Option<Instant>,
    keyed_at: [Option<Instant>; 2],
    transmissions: u64,
    keyed: Duration,
    frames_sent: [u64; 2],
}

impl Bench {
    fn new(config: &TransferConfig, streams: &Streams) -> Result<Bench, TransferError> {
        let mut phases = streams.stream("slot-phase");
        let slot = config.station.slot_time.as_micros().max(1);
        let mut station = || StationConfig {
            slot_phase: Duration::from_micros(
                phases.below(u64::try_from(slot).unwrap_or(u64::MAX)),
            ),
            ..config.station
        };
        let stations = [station(), station()];
        let radio = RadioChannel::new(
            RadioConfig::new(config.bit_rate),
            &stations,
            streams,
            "radio",
        );
        let link = Config {
            modulus: Modulus::Mod8,
            window_mod8: config.window,
            n1: config.n1,
            xid: false,
            t1: Duration::from_secs(10),
            t1_adaptive: false,
            poll_on_last_i_frame: true,
            ack_policy: AckPolicy::OnPollImmediately,
            ..Config::default()
        };
        let a: Address = "N0SEND".parse()?;
        let b: Address = "N0RECV".parse()?;
        let mut receiver = DataLink::new(link.clone(), b, a, &[])?;
        receiver.set_accept_incoming(true);
        Ok(Bench {
            queue: EventQueue::new(),
            radio,
            links: [DataLink::new(link, a, b, &[])?, receiver],
            wakes: [None; 3],
            received: Vec::new(),
            offered: None,
            acked: false,
            end: None,
            keyed_at: [None; 2],
            transmissions: 0,
            keyed: Duration::ZERO,
            frames_sent: [0; 2],
        })
    }

    /// Pops one event and handles it with everything it sets off; `false`
    /// when nothing is left before the horizon.
    fn step(&mut self, message: &[u8]) -> Result<bool, TransferError> {
        let Some((now, wake)) = self.queue.pop_until(HORIZON) else {
            return Ok(false);
        };
        match wake {
            Wake::Radio => {
                self.wakes[0] = None;
                self.radio.handle_timeout(now);
            }
            Wake::Engine(i) => {
                self.wakes[i + 1] = None;
                self.links[i].handle_timeout(now);
            }
            Wake::Offer => {
                for chunk in message.chunks(self.links[SENDER].config().n1) {
                    self.links[SENDER].send(chunk.to_vec())?;
                }
                self.offered = Some(now);
            }
        }
        self.settle(now);
        Ok(true)
    }

    /// Moves frames and hints between engines and channel until all is
    /// quiet at `now`, then re-arms the wake-ups.
    fn settle(&mut self, now: Instant) {
        loop {
            let mut busy = false;
            for i in [SENDER, RECEIVER] {
                while let Some(frame) = self.links[i].poll_transmit(now) {
                    self.radio.transmit(now, StationId(i), frame.encode());
                    busy = true;
                }
            }
            while let Some(event) = self.radio.poll_event() {
                self.on_medium_event(event);
                busy = true;
            }
            while let Some(delivery) = self.radio.poll_delivery() {
                busy = true;
                let to = delivery.to.0;
                let Some(link) = self.links.get_mut(to) else {
                    continue;
                };
                if !delivery.is_intact() {
                    continue;
                }
                if let Ok(frame) = Frame::decode(&delivery.frame, link.modulus()) {
                    link.handle_frame(delivery.at, &frame);
                }
                if to == SENDER
                    && self.offered.is_some()
                    && self.links[SENDER].unacked() == 0
                    && self.links[SENDER].queued() == 0
                {
                    self.acked = true;
                }
            }
            for i in [SENDER, RECEIVER] {
                while let Some(event) = self.links[i].poll_event() {
                    if let (RECEIVER, Event::Data { data, .. }) = (i, event) {
                        self.received.extend_from_slice(&data);
                    }
                }
            }
            if !busy {
                break;
            }
        }
        self.rearm(now);
    }

    fn on_medium_event(&mut self, event: MediumEvent) {
        match event {
            MediumEvent::ChannelBusy { station, busy, at } => {
                if let Some(link) = self.links.get_mut(station.0) {
                    link.set_channel_busy(at, busy);
                }
            }
            MediumEvent::TransmitterKeyed { station, at } => {
                if let Some(link) = self.links.get_mut(station.0) {
                    link.transmitter_keyed(at);
                }
                if self.offered.is_some() && self.end.is_none() {
                    self.transmissions += 1;
                    if let Some(k) = self.keyed_at.get_mut(station.0) {
                        *k = Some(at);
                    }
                }
            }
            MediumEvent::FrameSent { station, .. } => {
                if self.offered.is_some() && self.end.is_none() {
                    if let Some(n) = self.frames_sent.get_mut(station.0) {
                        *n += 1;
                    }
                }
            }
            MediumEvent::TransmissionEnded { station, at } => {
                if let Some(since) = self.keyed_at.get_mut(station.0).and_then(Option::take) {
                    self.keyed += at.saturating_duration_since(since);
                }
                if self.acked && station.0 == RECEIVER && self.end.is_none() {
                    self.end = Some(at);
                }
            }
            MediumEvent::TransmissionStarted { .. } => {}
        }
    }

    /// Keeps exactly one pending wake-up per component, at its
    /// `poll_timeout`.
    fn rearm(&mut self, now: Instant) {
        let wanted = [
            self.radio.poll_timeout(),
            self.links[SENDER].poll_timeout(),
            self.links[RECEIVER].poll_timeout(),
        ];
        for (slot, (want, wake)) in wanted
            .into_iter()
            .zip([Wake::Radio, Wake::Engine(SENDER), Wake::Engine(RECEIVER)])
            .enumerate()
        {
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

    fn stalled(&self, phase: &'static str) -> TransferError {
        TransferError::Stalled {
            phase,
            at_us: self.queue.now().as_micros(),
        }
    }
}

/// Simulates one transfer with the random streams `streams` (payload
/// octets, slot-clock phases, persistence draws). Deterministic for given
/// streams.
pub fn run_transfer(
    config: &TransferConfig,
    streams: &Streams,
) -> Result<TransferOutcome, TransferError> {
    let mut payload = streams.stream("payload");
    let message: Vec<u8> = (0..config.message_octets)
        .map(|_| payload.below(256) as u8)
        .collect();
    let mut bench = Bench::new(config, streams)?;

    // Link set-up, then a quiet channel.
    bench.links[SENDER].connect(Instant::ZERO);
    bench.settle(Instant::ZERO);
    while !(bench.links[SENDER].state() == State::Connected
        && bench.links[RECEIVER].state() == State::Connected
        && bench.radio.poll_timeout().is_none())
    {
        if !bench.step(&message)? {
            return Err(bench.stalled("connect"));
        }
    }
    let offer = bench.queue.now() + Duration::from_secs(1);
    bench
        .queue
        .schedule(offer, Wake::Offer)
        .map_err(|_| bench.stalled("offer"))?;

    while bench.end.is_none() {
        if !bench.step(&message)? {
            return Err(bench.stalled("transfer"));
        }
    }
    if bench.received != message {
        return Err(TransferError::Corrupted {
            got: bench.received.len(),
            sent: message.len(),
        });
    }
    let (Some(start), Some(end)) = (bench.offered, bench.end) else {
        return Err(bench.stalled("transfer"));
    };
    Ok(TransferOutcome {
        transfer: end.saturating_duration_since(start),
        transmissions: bench.transmissions,
        keyed: bench.keyed,
        sender_frames: bench.frames_sent[SENDER],
        receiver_frames: bench.frames_sent[RECEIVER],
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
        assert!(a.keyed < a.transfer);
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
