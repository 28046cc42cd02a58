//! One file transfer between two firmware TNCs, as Zieliński measured it
//! (section 3, Fig. 3): host → serial → TNC → wired half-duplex "radio"
//! link → TNC → serial → host, on a perfect channel.
//!
//! The sending TNC connects (SABM, modulo 8, no XID), the link settles,
//! and one second later its host starts writing the file. The transfer
//! time runs from that moment (T_CT in Fig. 3) to the moment the last
//! character reaches the receiving host (T_rc), and the throughput is the
//! file's bits over it, as section 3.2 measured it. Every I frame the
//! sender puts into one keyed transmission counts towards its real window
//! size (Figs. 7-9, 14-15: the paper read them from a monitor log).

use core::time::Duration;

use linklab_channel::profile::TncProfile;
use linklab_channel::{ErrorModel, Medium, RadioChannel, RadioConfig, StationConfig, StationId};
use linklab_core::{earliest, Instant, Streams};
use linklab_link::State;
use linklab_sim::{drive, DriveError, World};
use linklab_wire::ax25::Frame;
use linklab_wire::control::Modulus;

use super::station::{FirmwareTnc, LinkSetup};
use super::ZielinskiError;

/// The channel-access parameters of both TNCs: T_102 = 10 ms, p = 63,
/// T_103 = 400 ms, no TXTAIL (section 2.1; the paper found TXTAIL 0 in
/// every implementation it knew). The same values give the model curves.
pub fn station_config() -> StationConfig {
    StationConfig {
        persistence: 63,
        slot_time: Duration::from_millis(10),
        txdelay: Duration::from_millis(400),
        txtail: Duration::ZERO,
        slot_phase: Duration::ZERO,
    }
}

/// One transfer's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransferSetup {
    /// The sending TNC.
    pub sender: TncProfile,
    /// The receiving TNC.
    pub recipient: TncProfile,
    /// Radio link rate R_wl, bit/s.
    pub radio_bps: u32,
    /// Link parameters (k, N1, R_w, T1) of both TNCs.
    pub link: LinkSetup,
    /// File size, octets.
    pub file_octets: usize,
    /// Channel access of both TNCs ([`station_config`] in the paper's
    /// set-up); each station's slot phase is drawn per run.
    pub station: StationConfig,
    /// Bit errors on the link ([`ErrorModel::Perfect`] in the paper's
    /// wired set-up).
    pub errors: ErrorModel,
}

/// What one transfer measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TransferResult {
    /// From the first character written by the sending host to the last
    /// one delivered to the receiving host.
    pub duration: Duration,
    /// File bits over that time, bit/s.
    pub throughput_bps: f64,
    /// I frames in each of the sender's transmissions.
    pub real_windows: Vec<u32>,
}

const SENDER: usize = 0;
const RECIPIENT: usize = 1;
/// Virtual-time limit: far beyond any transfer simulated here.
const HORIZON: Instant = Instant::from_micros(24 * 3_600_000_000);

/// What a phase of the transfer runs until.
#[derive(Debug, Clone, Copy)]
enum Goal {
    /// Both TNCs connected and idle, the channel quiet.
    Connected,
    /// The recipient delivered this many octets and the sender has every
    /// I frame acknowledged.
    Delivered(usize),
}

struct Testbed {
    radio: RadioChannel,
    tncs: [FirmwareTnc; 2],
    now: Instant,
    goal: Goal,
}

impl World for Testbed {
    fn settle(&mut self, now: Instant) {
        self.exchange(now);
    }

    fn done(&self) -> bool {
        match self.goal {
            Goal::Connected => {
                self.tncs
                    .iter()
                    .all(|t| t.engine.state() == State::Connected && t.idle())
                    && self.radio.poll_timeout().is_none()
            }
            Goal::Delivered(octets) => {
                self.tncs[RECIPIENT].delivered >= octets && self.tncs[SENDER].all_acknowledged()
            }
        }
    }

    fn next_wake(&mut self, _now: Instant) -> Option<Instant> {
        earliest([
            self.radio.poll_timeout(),
            self.tncs[SENDER].poll_timeout(),
            self.tncs[RECIPIENT].poll_timeout(),
        ])
    }

    fn advance(&mut self, to: Instant) {
        self.now = to;
        self.radio.handle_timeout(to);
        for tnc in &mut self.tncs {
            if tnc.poll_timeout().is_some_and(|d| d <= to) {
                tnc.handle_timeout(to);
            }
        }
    }
}

impl Testbed {
    /// Runs until `goal`, from `self.now`.
    fn run_until(&mut self, goal: Goal, phase: &'static str) -> Result<(), ZielinskiError> {
        self.goal = goal;
        let start = self.now;
        match drive(self, start, HORIZON) {
            Ok(at) => {
                self.now = at;
                Ok(())
            }
            Err(
                DriveError::Stalled { at }
                | DriveError::Livelock { at }
                | DriveError::Horizon { at, .. },
            ) => {
                self.now = at;
                Err(self.stalled(phase))
            }
        }
    }

    /// Moves frames and events between TNCs and channel until quiet.
    fn exchange(&mut self, now: Instant) {
        loop {
            let mut moved = false;
            for (i, tnc) in self.tncs.iter_mut().enumerate() {
                while let Some(frame) = tnc.poll_transmit() {
                    self.radio.transmit(now, StationId(i), frame);
                    moved = true;
                }
            }
            // A frame that ends as the carrier drops reaches the TNC's
            // processor before the TNC sees the channel clear.
            while let Some(delivery) = self.radio.poll_delivery() {
                moved = true;
                if !delivery.is_intact() {
                    continue;
                }
                if let (Some(tnc), Ok(frame)) = (
                    self.tncs.get_mut(delivery.to.0),
                    Frame::decode(&delivery.frame, Modulus::Mod8),
                ) {
                    tnc.radio_frame(delivery.at, frame);
                }
            }
            while let Some(event) = self.radio.poll_event() {
                let station = match event {
                    linklab_channel::MediumEvent::ChannelBusy { station, .. }
                    | linklab_channel::MediumEvent::TransmitterKeyed { station, .. }
                    | linklab_channel::MediumEvent::TransmissionStarted { station, .. }
                    | linklab_channel::MediumEvent::FrameSent { station, .. }
                    | linklab_channel::MediumEvent::TransmissionEnded { station, .. } => station,
                };
                if let Some(tnc) = self.tncs.get_mut(station.0) {
                    tnc.medium_event(event);
                }
                moved = true;
            }
            if !moved {
                break;
            }
        }
    }

    fn stalled(&self, phase: &'static str) -> ZielinskiError {
        ZielinskiError::Stalled {
            phase,
            at_us: self.now.as_micros(),
        }
    }
}

/// Simulates one transfer with the random streams `streams` (file
/// contents, slot-clock phases, persistence draws).
pub fn run_transfer(
    setup: &TransferSetup,
    streams: &Streams,
) -> Result<TransferResult, ZielinskiError> {
    let mut payload = streams.stream("payload");
    let file: Vec<u8> = (0..setup.file_octets)
        .map(|_| payload.below(256) as u8)
        .collect();
    let mut phases = streams.stream("slot-phase");
    let base = setup.station;
    let slot = u64::try_from(base.slot_time.as_micros())
        .unwrap_or(1)
        .max(1);
    let mut station = || StationConfig {
        slot_phase: Duration::from_micros(phases.below(slot)),
        ..base
    };
    let stations = [station(), station()];
    let radio = RadioChannel::new(
        RadioConfig {
            errors: setup.errors,
            ..RadioConfig::new(setup.radio_bps)
        },
        &stations,
        streams,
        "radio",
    );
    let a = "N0SEND".parse()?;
    let b = "N0RECV".parse()?;
    let mut testbed = Testbed {
        radio,
        tncs: [
            FirmwareTnc::new(&setup.sender, setup.link, a, b)?,
            FirmwareTnc::new(&setup.recipient, setup.link, b, a)?,
        ],
        now: Instant::ZERO,
        goal: Goal::Connected,
    };

    let _ = testbed.tncs[SENDER].engine.connect(Instant::ZERO); // AX.25: combined, always honoured
    testbed.tncs[SENDER].handle_timeout(Instant::ZERO);
    testbed.run_until(Goal::Connected, "connect")?;
    let start = testbed.now + Duration::from_secs(1);
    testbed.now = start;
    testbed.tncs[SENDER].host_write(start, &file);
    testbed.run_until(Goal::Delivered(file.len()), "transfer")?;
    let end = testbed.tncs[RECIPIENT]
        .last_delivery
        .ok_or_else(|| testbed.stalled("transfer"))?;
    let duration = end - start;
    Ok(TransferResult {
        duration,
        throughput_bps: 8.0 * setup.file_octets as f64 / duration.as_secs_f64(),
        real_windows: std::mem::take(&mut testbed.tncs[SENDER].bursts),
    })
}
