//! A user's link as `advise` takes it: the channel, the two ends, the
//! workload and the limits of the equipment. Read from JSON (`--link
//! FILE`, as `linklab probe` writes it) or built from the command line.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use linklab_channel::profile::{profile, TncProfile};
use linklab_channel::{ErrorModel, GilbertElliott};

use crate::settings::Settings;

/// Everything `advise` needs to know about a link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// The radio channel.
    pub channel: Channel,
    /// What is at each end between the AX.25 stack and the radio.
    pub ends: Ends,
    /// What the link carries.
    #[serde(default)]
    pub workload: Workload,
    /// What the equipment allows.
    #[serde(default)]
    pub limits: Limits,
    /// The settings in use now, to compare the advice with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<Settings>,
    /// What `linklab probe` measured, when it wrote this link: kept for
    /// the reader, not used by the advice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<crate::probe::Fit>,
}

/// One frequency shared by both directions, or one for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Duplex {
    /// Both stations on one frequency, taking turns (packet radio).
    #[default]
    Half,
    /// Each station on its own frequency (a satellite or a duplex
    /// repeater pair): acknowledgements travel while data is sent.
    Full,
}

/// The radio channel between the two stations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Channel {
    /// Radio bit rate, bit/s.
    pub bit_rate: u32,
    /// Half or full duplex.
    #[serde(default)]
    pub duplex: Duplex,
    /// Stations on the channel (the two ends included): the others send
    /// UI frames of 128 octets at random (KISS P 63, SLOTTIME 100 ms, the
    /// radios' TXDELAY and TXTAIL), together for `load` of the time.
    #[serde(default = "two")]
    pub stations: u32,
    /// The other stations' share of the channel's time (their frames'
    /// air time), 0 to 0.9.
    #[serde(default)]
    pub load: f64,
    /// Independent bit-error probability (0 for a clean link).
    #[serde(default)]
    pub ber: f64,
    /// Fades instead: Gilbert-Elliott bursts of errors (radio links).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fades: Option<Fades>,
    /// The transmitter's key-up delay TXDELAY the radios need, ms: a
    /// property of the radios, not searched (its cost is shown).
    #[serde(default = "txdelay_ms")]
    pub txdelay_ms: f64,
    /// How long the transmitter stays keyed after the last frame, ms.
    #[serde(default = "txtail_ms")]
    pub txtail_ms: f64,
}

/// A two-state (Gilbert-Elliott) error process: fades as bursts of bit
/// errors, the channel's `ErrorModel::GilbertElliott`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fades {
    /// P(Good → Bad) per bit time.
    pub p_good_to_bad: f64,
    /// P(Bad → Good) per bit time.
    pub p_bad_to_good: f64,
    /// Bit-error probability in Good.
    pub ber_good: f64,
    /// Bit-error probability in Bad.
    pub ber_bad: f64,
}

impl Channel {
    /// The channel's bit-error process.
    pub fn error_model(&self) -> ErrorModel {
        match (self.fades, self.ber) {
            (Some(f), _) => ErrorModel::GilbertElliott(GilbertElliott {
                p_good_to_bad: f.p_good_to_bad,
                p_bad_to_good: f.p_bad_to_good,
                ber_good: f.ber_good,
                ber_bad: f.ber_bad,
            }),
            (None, ber) if ber > 0.0 => ErrorModel::Independent { ber },
            (None, _) => ErrorModel::Perfect,
        }
    }
}

fn two() -> u32 {
    2
}

/// Dire Wolf's default TXDELAY (30 × 10 ms).
fn txdelay_ms() -> f64 {
    300.0
}

/// Dire Wolf's default TXTAIL (10 × 10 ms).
fn txtail_ms() -> f64 {
    100.0
}

/// What lies between each station's AX.25 stack and its radio (both
/// ends alike).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Ends {
    /// The AX.25 stack in a host (linklab, the Linux kernel, Dire Wolf's
    /// own) and a KISS TNC behind a serial link (Ronan et al., section
    /// IV): the host's latency, the serial link and the TNC's processor
    /// delay every frame both ways.
    Kiss(KissEnds),
    /// Firmware TNCs in terminal mode, the AX.25 stack inside the TNC
    /// (Zieliński 2013): named profiles, e.g. `tnc2-mfj`, `tnc3`.
    Tnc {
        /// The sending TNC's profile.
        sender: String,
        /// The receiving TNC's profile.
        recipient: String,
    },
    /// A full-duplex point-to-point line, HDLC at both ends with no
    /// channel access (Bux et al. 1982): a terrestrial or satellite line
    /// with its processing and propagation delay.
    Line {
        /// Processing plus propagation delay t_p, ms (Bux et al.: 50 ms
        /// terrestrial, 350 ms satellite).
        t_p_ms: f64,
    },
}

/// A host and a KISS TNC at each end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KissEnds {
    /// Fastest serial rate host and TNC support, bit/s (searched up to
    /// it).
    #[serde(default = "serial_bps")]
    pub serial_bps: u32,
    /// From the stack emitting a frame to its first octet on the serial
    /// port, and back, ms.
    #[serde(default = "host_latency_ms")]
    pub host_latency_ms: f64,
    /// TNC processing time per frame, ms.
    #[serde(default = "tnc_per_frame_ms")]
    pub tnc_per_frame_ms: f64,
    /// TNC processing time per octet, µs.
    #[serde(default)]
    pub tnc_per_octet_us: f64,
    /// TNC transmit buffer, octets.
    #[serde(default = "tnc_buffer_octets")]
    pub tnc_buffer_octets: usize,
    /// How long after the other station's carrier drops a TNC holds its
    /// frames back (squelch tail, receive-to-transmit switch), ms.
    #[serde(default = "carrier_hold_ms")]
    pub carrier_hold_ms: f64,
    /// The AX.25 implementation at both ends, the one advised: linklab
    /// (default), the Linux kernel's, or Dire Wolf's engine on its own
    /// modem (which then stands in for host and TNC).
    #[serde(default)]
    pub stack: crate::settings::Stack,
}

fn serial_bps() -> u32 {
    9600
}

fn host_latency_ms() -> f64 {
    10.0
}

fn tnc_per_frame_ms() -> f64 {
    10.0
}

fn tnc_buffer_octets() -> usize {
    8192
}

fn carrier_hold_ms() -> f64 {
    50.0
}

impl Default for KissEnds {
    fn default() -> Self {
        KissEnds {
            serial_bps: serial_bps(),
            host_latency_ms: host_latency_ms(),
            tnc_per_frame_ms: tnc_per_frame_ms(),
            tnc_per_octet_us: 0.0,
            tnc_buffer_octets: tnc_buffer_octets(),
            carrier_hold_ms: carrier_hold_ms(),
            stack: crate::settings::Stack::default(),
        }
    }
}

/// What the link carries, as fast as it can.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// Message length, octets: a file sent one way over a radio link; on
    /// a line, the data each saturated direction carries per
    /// measurement.
    pub message_octets: usize,
    /// Both stations send at once (lines only): Bux et al.'s two-way
    /// flow.
    #[serde(default)]
    pub both_ways: bool,
    /// The message travels as one BPv7 bundle over the AX.25
    /// convergence layer, as Ronan et al. sent it (KISS ends only): the
    /// layer's `ack_window` is searched too.
    #[serde(default)]
    pub bundle: bool,
}

impl Default for Workload {
    /// A 16 KiB file, one way.
    fn default() -> Self {
        Workload {
            message_octets: 16384,
            both_ways: false,
            bundle: false,
        }
    }
}

/// The sequence-number modulus the two stacks can agree on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Modulo {
    /// Modulo 8 (SABM): windows 1-7. Every AX.25 implementation.
    #[default]
    #[serde(rename = "8")]
    Eight,
    /// Modulo 128 (SABME, AX.25 v2.2): windows up to 127.
    #[serde(rename = "128")]
    OneTwentyEight,
}

/// What the equipment allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// The largest modulus both ends support.
    #[serde(default)]
    pub modulo: Modulo,
    /// The largest N1 (PACLEN) both ends accept, octets.
    #[serde(default = "n1_max")]
    pub n1_max: usize,
}

fn n1_max() -> usize {
    256
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            modulo: Modulo::Eight,
            n1_max: n1_max(),
        }
    }
}

/// A link `advise` cannot work on, and why.
#[derive(Debug, Error, PartialEq)]
pub enum LinkError {
    /// A value out of its range.
    #[error("{field}: {problem}")]
    Field {
        /// The field, as in the JSON file.
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// Fewer than two stations, or too many.
    #[error("channel.stations: {0} is not 2-16 (the two ends and up to 14 others)")]
    Stations(u32),
    /// An unknown TNC profile.
    #[error("{0}")]
    Profile(String),
}

impl Link {
    /// The AX.25 implementation advised: the KISS ends' stack; linklab's
    /// engine elsewhere (firmware TNCs and lines run their own rules).
    pub fn stack(&self) -> crate::settings::Stack {
        match &self.ends {
            Ends::Kiss(k) => k.stack,
            _ => crate::settings::Stack::Linklab,
        }
    }

    /// Refuses a link that cannot be simulated, naming the field.
    pub fn validate(&self) -> Result<(), LinkError> {
        let bad = |field, problem: String| Err(LinkError::Field { field, problem });
        let c = &self.channel;
        if c.bit_rate == 0 || c.bit_rate > 10_000_000 {
            return bad(
                "channel.bit_rate",
                format!("{} is not 1-10000000 bit/s", c.bit_rate),
            );
        }
        if !(2..=16).contains(&c.stations) {
            return Err(LinkError::Stations(c.stations));
        }
        if c.stations > 2 {
            if !matches!(self.ends, Ends::Kiss(_)) || c.duplex != Duplex::Half {
                return bad(
                    "channel.stations",
                    "other stations are simulated on half-duplex channels with KISS ends".into(),
                );
            }
            if !(c.load.is_finite() && c.load > 0.0 && c.load <= 0.9) {
                return bad(
                    "channel.load",
                    format!(
                        "{} is not the others' share of the time, above 0 and at most 0.9",
                        c.load
                    ),
                );
            }
        } else if c.load != 0.0 {
            return bad(
                "channel.load",
                "a load needs stations beyond the two ends".into(),
            );
        }
        if !(c.ber.is_finite() && (0.0..1e-2).contains(&c.ber)) {
            return bad(
                "channel.ber",
                format!("{} is not a bit-error probability from 0 to 0.01", c.ber),
            );
        }
        if let Some(f) = c.fades {
            if c.ber > 0.0 {
                return bad("channel.fades", "give ber or fades, not both".into());
            }
            if self.is_line() {
                return bad(
                    "channel.fades",
                    "a line takes independent errors (Bux et al.'s p_bit)".into(),
                );
            }
            for (field, v) in [
                ("channel.fades.p_good_to_bad", f.p_good_to_bad),
                ("channel.fades.p_bad_to_good", f.p_bad_to_good),
                ("channel.fades.ber_good", f.ber_good),
                ("channel.fades.ber_bad", f.ber_bad),
            ] {
                if !(v.is_finite() && (0.0..=0.5).contains(&v)) {
                    return bad(field, format!("{v} is not a probability from 0 to 0.5"));
                }
            }
        }
        for (field, v) in [
            ("channel.txdelay_ms", c.txdelay_ms),
            ("channel.txtail_ms", c.txtail_ms),
        ] {
            if !(v.is_finite() && (0.0..=2550.0).contains(&v)) {
                return bad(field, format!("{v} is not 0-2550 ms"));
            }
        }
        if self.workload.message_octets == 0 || self.workload.message_octets > 1 << 20 {
            return bad(
                "workload.message_octets",
                format!("{} is not 1-1048576", self.workload.message_octets),
            );
        }
        if !(1..=2048).contains(&self.limits.n1_max) {
            return bad(
                "limits.n1_max",
                format!("{} is not 1-2048 octets", self.limits.n1_max),
            );
        }
        match &self.ends {
            Ends::Kiss(k) => {
                if !(300..=1_000_000).contains(&k.serial_bps) {
                    return bad(
                        "ends.serial_bps",
                        format!("{} is not 300-1000000 bit/s", k.serial_bps),
                    );
                }
                for (field, v) in [
                    ("ends.host_latency_ms", k.host_latency_ms),
                    ("ends.tnc_per_frame_ms", k.tnc_per_frame_ms),
                    ("ends.tnc_per_octet_us", k.tnc_per_octet_us),
                    ("ends.carrier_hold_ms", k.carrier_hold_ms),
                ] {
                    if !(v.is_finite() && (0.0..=10_000.0).contains(&v)) {
                        return bad(field, format!("{v} is not 0-10000"));
                    }
                }
                if k.tnc_buffer_octets < 64 {
                    return bad(
                        "ends.tnc_buffer_octets",
                        format!("{} is less than one frame (64 octets)", k.tnc_buffer_octets),
                    );
                }
            }
            Ends::Line { t_p_ms } => {
                if !(t_p_ms.is_finite() && (0.0..=10_000.0).contains(t_p_ms)) {
                    return bad("ends.t_p_ms", format!("{t_p_ms} is not 0-10000 ms"));
                }
            }
            Ends::Tnc { .. } => {
                let (s, r) = self.profiles()?.expect("TNC ends");
                for p in [s, r] {
                    if c.bit_rate > p.hardware.radio_max_bps {
                        return bad(
                            "channel.bit_rate",
                            format!(
                                "the {} modem goes up to {} bit/s",
                                p.hardware.model, p.hardware.radio_max_bps
                            ),
                        );
                    }
                }
                if self.limits.modulo != Modulo::Eight {
                    return bad(
                        "limits.modulo",
                        "the firmware TNC profiles are modulo 8 only".into(),
                    );
                }
            }
        }
        if self.workload.bundle && !matches!(self.ends, Ends::Kiss(_)) {
            return bad(
                "workload.bundle",
                "bundles over the AX.25 convergence layer are simulated on KISS ends only".into(),
            );
        }
        if self.workload.bundle && self.limits.n1_max < 16 {
            return bad(
                "limits.n1_max",
                "the convergence layer needs I frames of at least 16 octets".into(),
            );
        }
        if self.workload.both_ways && !self.is_line() {
            return bad(
                "workload.both_ways",
                "two-way flow is simulated on lines only (ends.kind \"line\")".into(),
            );
        }
        if let Some(current) = &self.current {
            current.validate(self).map_err(|problem| LinkError::Field {
                field: "current",
                problem,
            })?;
        }
        Ok(())
    }

    /// Whether the ends are a full-duplex line rather than radios.
    pub fn is_line(&self) -> bool {
        matches!(self.ends, Ends::Line { .. })
    }

    /// The sender's and recipient's profiles for firmware TNC ends.
    pub fn profiles(&self) -> Result<Option<(TncProfile, TncProfile)>, LinkError> {
        match &self.ends {
            Ends::Kiss(_) | Ends::Line { .. } => Ok(None),
            Ends::Tnc { sender, recipient } => {
                let get = |n: &str| profile(n).map_err(|e| LinkError::Profile(e.to_string()));
                Ok(Some((get(sender)?, get(recipient)?)))
            }
        }
    }

    /// The fastest host serial rate: the KISS ends' own, or the slower of
    /// the two TNCs' highest (Zieliński Table 2).
    pub fn serial_max_bps(&self) -> u32 {
        match (&self.ends, self.profiles()) {
            (Ends::Kiss(k), _) => k.serial_bps,
            // No serial link: the HDLC station is the line's end.
            (Ends::Line { .. }, _) => self.channel.bit_rate.max(300),
            (Ends::Tnc { .. }, Ok(Some((s, r)))) => {
                s.hardware.serial_max_bps.min(r.hardware.serial_max_bps)
            }
            _ => 9600,
        }
    }

    /// The largest window the modulus allows.
    pub fn window_max(&self) -> u8 {
        match self.limits.modulo {
            Modulo::Eight => 7,
            Modulo::OneTwentyEight => 127,
        }
    }
}
