//! A firmware TNC in virtual time: the real AX.25 engine
//! ([`DataLink`]) running inside a controller whose processor, serial port
//! and buffer delay everything the engine takes in and gives out
//! (Zieliński 2013, section 2.2 and Fig. 3).
//!
//! # Paths through the TNC
//! - **Host to radio.** The host writes the file over the serial link at
//!   R_w, 10 bits per character (eq. 5), N1 characters at a time (the
//!   TNC packetises at PACLEN = N1). A block crosses the serial link only
//!   when the transmit buffer has room for it ([`FirmwareCosts::buffer_octets`]:
//!   data held from the moment it is written until the peer acknowledges
//!   it), then the processor packetises it (`frame_cycles +
//!   N1 · serial_octet_cycles`) and hands it to the engine. Every frame
//!   the engine emits is built by the processor (`frame_cycles +
//!   length · radio_octet_cycles`) before it reaches the HDLC controller,
//!   which sends it in the current transmission if the transmitter is
//!   still keyed, or after a new channel access otherwise.
//! - **Radio to host.** A received frame waits for the processor
//!   (`frame_cycles + length · radio_octet_cycles + info ·
//!   serial_octet_cycles`, the last term for moving the data towards the
//!   host) before the engine sees it; its data then crosses the serial
//!   link to the host.
//!
//! One processor does all of it, in arrival order, so a TNC busy building
//! frames answers late, and one busy receiving builds late: the number of
//! frames ready when the transmitter keys (the real window size) and the
//! turnaround come out of these costs.
//!
//! # Acknowledgements
//! The engine answers P = 1 at once (AX.25 6.4.2.1) and never
//! acknowledges unpolled frames on its own (`AckPolicy::OnPollImmediately`);
//! the firmware decides when it does ([`RecipientAck`]): when the
//! sender's carrier drops and every received frame is processed, or T2
//! after the last I frame, and at once when seven frames are
//! unacknowledged if the firmware does that. It then seizes the
//! transmitter for the acknowledgement, which it tells the engine with
//! [`DataLink::transmitter_keyed`] (the engine sends its pending RR).

use core::time::Duration;
use linklab_core::{earliest, Engine, Instant};
use std::collections::VecDeque;

use linklab_channel::firmware::{Cpu, FirmwareCosts, Priority};
use linklab_channel::profile::{FirmwarePolicy, RecipientAck, TncProfile, TransmitStart};
use linklab_channel::{MediumEvent, SERIAL_BITS_PER_OCTET};
use linklab_link::{AckPolicy, Config, DataLink, Event, NewLinkError, RecoveryMode};
use linklab_wire::ax25::{Address, Frame};
use linklab_wire::control::{Control, Modulus};

/// Largest number of unacknowledged I frames on a modulo-8 link.
const FULL_WINDOW: u8 = 7;

/// What the processor works on.
#[derive(Debug)]
enum Job {
    /// Packetise a block of host data for the engine.
    Packetise(Vec<u8>),
    /// Serve the HDLC controller's interrupts while it sends a frame.
    Transmit,
    /// Process a frame from the HDLC controller.
    Process(Frame),
}

/// The link parameters both TNCs are set to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkSetup {
    /// Window k (MAXFRAME), 1-7.
    pub window: u8,
    /// N1 (PACLEN), octets.
    pub n1: usize,
    /// Host serial rate R_w, bit/s.
    pub serial_bps: u32,
    /// FRACK: the fixed T1.
    pub t1: Duration,
}

/// One firmware TNC with its host.
#[derive(Debug)]
pub(crate) struct FirmwareTnc {
    setup: LinkSetup,
    costs: FirmwareCosts,
    policy: FirmwarePolicy,
    pub(crate) engine: DataLink,
    cpu: Cpu<Job>,
    /// Host data not yet written to the TNC, in N1 blocks.
    host_blocks: VecDeque<Vec<u8>>,
    serial_in: Option<(Vec<u8>, Instant)>,
    /// Blocks in the serial receive buffer, waiting for frame buffer space.
    arrived: VecDeque<Vec<u8>>,
    /// Octets being packetised.
    packetising: usize,
    /// Sizes of the blocks the engine holds (queued or unacknowledged),
    /// oldest first.
    in_engine: VecDeque<usize>,
    serial_out_queue: VecDeque<Vec<u8>>,
    serial_out: Option<(Vec<u8>, Instant)>,
    /// Data delivered to the host.
    pub(crate) delivered: usize,
    /// When the last of it arrived.
    pub(crate) last_delivery: Option<Instant>,
    to_radio: VecDeque<Vec<u8>>,
    /// For each frame handed to the radio and not yet sent: is it an I
    /// frame?
    on_air: VecDeque<bool>,
    last_nr_sent: u8,
    t2_expiry: Option<Instant>,
    /// Received frames waiting for the processor.
    processing: usize,
    /// T2 ran out: acknowledge at the next chance to transmit.
    t2_expired: bool,
    channel_busy: bool,
    keyed: bool,
    burst: u32,
    /// I frames per transmission of this TNC (its real window sizes).
    pub(crate) bursts: Vec<u32>,
}

impl FirmwareTnc {
    /// A TNC of `profile` for the station `local`, talking to `remote`.
    pub(crate) fn new(
        profile: &TncProfile,
        setup: LinkSetup,
        local: Address,
        remote: Address,
    ) -> Result<Self, NewLinkError> {
        let policy = profile.firmware.policy;
        let config = Config {
            modulus: Modulus::Mod8,
            window_mod8: setup.window,
            n1: setup.n1,
            xid: false,
            t1: setup.t1,
            t1_adaptive: false,
            recovery: RecoveryMode::Rej,
            poll_on_last_i_frame: policy.poll_on_last_i_frame,
            ack_policy: AckPolicy::OnPollImmediately,
            ..Config::default()
        };
        let mut engine = DataLink::new(config, local, remote, &[])?;
        engine.set_accept_incoming(true);
        Ok(FirmwareTnc {
            setup,
            costs: profile.firmware.costs,
            policy,
            engine,
            cpu: Cpu::new(profile.hardware.clock_hz),
            host_blocks: VecDeque::new(),
            serial_in: None,
            arrived: VecDeque::new(),
            packetising: 0,
            in_engine: VecDeque::new(),
            serial_out_queue: VecDeque::new(),
            serial_out: None,
            delivered: 0,
            last_delivery: None,
            to_radio: VecDeque::new(),
            on_air: VecDeque::new(),
            last_nr_sent: 0,
            t2_expiry: None,
            processing: 0,
            t2_expired: false,
            channel_busy: false,
            keyed: false,
            burst: 0,
            bursts: Vec::new(),
        })
    }

    /// Time for `octets` characters on the serial link.
    fn serial_time(&self, octets: usize) -> Duration {
        let bits = octets as u64 * SERIAL_BITS_PER_OCTET;
        let micros = bits * 1_000_000 / u64::from(self.setup.serial_bps.max(1));
        Duration::from_micros(micros)
    }

    /// The host starts writing `data` to the TNC.
    pub(crate) fn host_write(&mut self, now: Instant, data: &[u8]) {
        self.host_blocks
            .extend(data.chunks(self.setup.n1.max(1)).map(<[u8]>::to_vec));
        self.pump(now);
    }

    /// A frame received intact by the HDLC controller.
    pub(crate) fn radio_frame(&mut self, now: Instant, frame: Frame) {
        let cost =
            self.costs.frame_cycles + frame.encoded_len() as u64 * self.costs.radio_octet_cycles;
        self.processing += 1;
        self.cpu
            .submit(now, Job::Process(frame), cost, Priority::Frame);
    }

    /// What the radio reported about this station.
    pub(crate) fn medium_event(&mut self, event: MediumEvent) {
        match event {
            MediumEvent::ChannelBusy { busy, at, .. } => {
                self.channel_busy = busy;
                self.engine.set_channel_busy(at, busy);
                self.pump(at);
            }
            MediumEvent::TransmitterKeyed { at, .. } => {
                self.keyed = true;
                self.burst = 0;
                self.pump(at);
            }
            MediumEvent::FrameSent { at, .. } => {
                if self.on_air.pop_front() == Some(true) {
                    self.burst += 1;
                }
                self.pump(at);
            }
            MediumEvent::TransmissionEnded { at, .. } => {
                self.keyed = false;
                if self.burst > 0 {
                    self.bursts.push(self.burst);
                }
                self.pump(at);
            }
            MediumEvent::TransmissionStarted { .. } => {}
        }
    }

    /// The next frame for the HDLC controller.
    pub(crate) fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        let frame = self.to_radio.pop_front()?;
        let is_i = Frame::decode(&frame, Modulus::Mod8)
            .is_ok_and(|f| matches!(f.control(), Control::I { .. }));
        self.on_air.push_back(is_i);
        Some(frame)
    }

    /// When the TNC next needs [`handle_timeout`](Self::handle_timeout).
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        earliest([
            self.cpu.poll_timeout(),
            self.serial_in.as_ref().map(|(_, t)| *t),
            self.serial_out.as_ref().map(|(_, t)| *t),
            self.engine.poll_timeout(),
            self.t2_expiry,
        ])
    }

    /// Advances the TNC to `now`.
    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        if self.engine.poll_timeout().is_some_and(|t| t <= now) {
            self.engine.handle_timeout(now);
        }
        self.cpu.handle_timeout(now);
        while let Some(job) = self.cpu.poll_done() {
            match job {
                Job::Packetise(block) => {
                    self.packetising -= block.len();
                    self.in_engine.push_back(block.len());
                    // The engine takes any block of at most N1 octets
                    // while connected; the testbed writes only then.
                    let _ = self.engine.send(block);
                }
                Job::Transmit => {}
                Job::Process(frame) => {
                    self.processing -= 1;
                    let vr = self.engine.sequence_variables().2;
                    self.engine.handle_frame(now, &frame);
                    let advanced = self.engine.sequence_variables().2 != vr;
                    if advanced {
                        if let RecipientAck::AfterT2 { t2 } = self.policy.recipient_ack {
                            self.t2_expiry = Some(now + t2);
                        }
                    }
                }
            }
        }
        if let Some((block, _)) = self.serial_in.take_if(|(_, end)| *end <= now) {
            self.arrived.push_back(block);
        }
        if let Some((data, _)) = self.serial_out.take_if(|(_, end)| *end <= now) {
            self.delivered += data.len();
            self.last_delivery = Some(now);
        }
        if self.t2_expiry.is_some_and(|t| t <= now) {
            self.t2_expiry = None;
            self.t2_expired = true;
        }
        self.pump(now);
    }

    /// Unacknowledged I frames received: V(R) minus the last N(R) sent.
    fn owed(&self) -> u8 {
        let vr = self.engine.sequence_variables().2;
        vr.wrapping_sub(self.last_nr_sent) % 8
    }

    /// Whether the firmware acknowledges now, given that it may transmit.
    fn ack_due(&self) -> bool {
        let owed = self.owed();
        owed > 0
            && (self.t2_expired
                || (self.policy.ack_full_window && owed >= FULL_WINDOW)
                || self.policy.recipient_ack == RecipientAck::OnChannelClear)
    }

    /// Whether the firmware would start a transmission with the frames it
    /// has ([`TransmitStart`]).
    fn window_ready(&self) -> bool {
        match self.policy.transmit_start {
            TransmitStart::FirstFrame => true,
            TransmitStart::FullWindow => {
                let room = usize::from(self.setup.window).saturating_sub(self.engine.unacked());
                self.packetising == 0 || self.engine.queued() >= room
            }
        }
    }

    /// Moves everything that can move at `now`.
    fn pump(&mut self, now: Instant) {
        loop {
            let mut moved = false;
            // The main loop starts a transmission when it has nothing
            // else to do and the channel is clear; while the transmitter
            // is keyed the HDLC controller is fed one frame ahead.
            let idle = !self.channel_busy
                && !self.keyed
                && self.processing == 0
                && self.on_air.is_empty()
                && self.to_radio.is_empty()
                && self.window_ready();
            let feeding = self.keyed && self.on_air.len() + self.to_radio.len() <= 1;
            if idle && self.ack_due() {
                // Seize the transmitter for the acknowledgement: the
                // engine sends its pending RR.
                self.t2_expired = false;
                self.t2_expiry = None;
                self.engine.transmitter_keyed(now);
            }
            if let Some(frame) = (idle || feeding)
                .then(|| self.engine.poll_transmit(now))
                .flatten()
            {
                if let Control::I { nr, .. } | Control::S { nr, .. } = frame.control() {
                    self.last_nr_sent = nr;
                }
                let bytes = frame.encode();
                let cost = bytes.len() as u64 * self.costs.radio_octet_cycles;
                self.cpu.submit(now, Job::Transmit, cost, Priority::Frame);
                self.to_radio.push_back(bytes);
                moved = true;
            }
            while let Some(event) = self.engine.poll_event() {
                if let Event::Data { data, .. } = event {
                    self.serial_out_queue.push_back(data);
                }
            }
            let held = self.engine.queued() + self.engine.unacked();
            while self.in_engine.len() > held {
                self.in_engine.pop_front();
            }
            if self.serial_out.is_none() {
                if let Some(data) = self.serial_out_queue.pop_front() {
                    let end = now + self.serial_time(data.len());
                    self.serial_out = Some((data, end));
                }
            }
            self.start_serial_in(now);
            if !moved {
                break;
            }
        }
    }

    /// Keeps the serial link from the host busy, and packetises arrived
    /// blocks while the frame buffer has room for them (a block larger
    /// than the whole buffer goes when the buffer is empty).
    fn start_serial_in(&mut self, now: Instant) {
        if self.serial_in.is_none() {
            if let Some(block) = self.host_blocks.pop_front() {
                let end = now + self.serial_time(block.len());
                self.serial_in = Some((block, end));
            }
        }
        while let Some(len) = self.arrived.front().map(Vec::len) {
            let held = self.packetising + self.in_engine.iter().sum::<usize>();
            if held > 0 && held + len > self.costs.buffer_octets {
                break;
            }
            let Some(block) = self.arrived.pop_front() else {
                break;
            };
            self.packetising += len;
            let cost = self.costs.frame_cycles + len as u64 * self.costs.serial_octet_cycles;
            self.cpu
                .submit(now, Job::Packetise(block), cost, Priority::Task);
        }
    }

    /// Whether everything written has been handed to the engine and
    /// acknowledged.
    pub(crate) fn all_acknowledged(&self) -> bool {
        self.host_blocks.is_empty()
            && self.serial_in.is_none()
            && self.arrived.is_empty()
            && self.packetising == 0
            && self.engine.queued() == 0
            && self.engine.unacked() == 0
    }

    /// Whether the processor and serial links are idle.
    pub(crate) fn idle(&self) -> bool {
        self.cpu.pending() == 0
            && self.serial_in.is_none()
            && self.serial_out.is_none()
            && self.to_radio.is_empty()
    }
}
