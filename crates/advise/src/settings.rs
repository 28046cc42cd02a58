//! The settings a user can change, the defaults of the two stacks most
//! stations run (the Linux kernel's AX.25 and Dire Wolf), and how to
//! write them for linklab, Dire Wolf and a TNC.

use core::fmt;

use serde::{Deserialize, Serialize};

use crate::link::Link;

/// When the receiver acknowledges a window of I frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "when", deny_unknown_fields)]
pub enum Ack {
    /// As soon as the sender's transmission ends: the sender sets P on
    /// the last I frame of a window (AX.25 v2.2 6.4.11, as the Linux
    /// kernel's `ax25_kick` does) and the receiver answers a poll at once
    /// (6.4.2.1); Dire Wolf, which has no T2, answers once the channel
    /// clears, and a TAPR firmware as the sender's carrier drops, which
    /// comes to the same.
    AtOnce,
    /// T2 after the first I frame not yet acknowledged (6.7.1.2), the
    /// sender asking nothing: every window waits T2 (Zieliński's "AX.25
    /// T2" curves, TF firmware).
    AfterT2 {
        /// T2, ms.
        t2_ms: u32,
    },
}

impl fmt::Display for Ack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ack::AtOnce => f.write_str("at once"),
            Ack::AfterT2 { t2_ms } => write!(f, "after T2 = {t2_ms} ms"),
        }
    }
}

/// The AX.25 implementation that runs the settings, and so how it sits
/// on the radio (KISS ends; firmware TNCs and lines run their own).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Stack {
    /// linklab's `send`/`listen` behind the KISS TNC: the engine as
    /// `LinkSettings::config` sets it up (T1 adaptive from the first
    /// round trip measured, with `--poll-last` P on the last frame of
    /// every burst) and T1 held until its frames have left the air, as
    /// its KISS port's transmit clock does.
    #[default]
    Linklab,
    /// The Linux kernel's AX.25 behind the KISS TNC (`kissattach`): T1
    /// from the hand-over to the TNC, SRT from T1 / 2, T2 3 s, P on the
    /// frame that fills the window.
    LinuxKernel,
    /// Dire Wolf's own engine (1.6, ax25_link.c) driving its own modem,
    /// no host or KISS link: T1 from channel seize, paused while its
    /// transmitter is keyed or it hears a carrier; no T2, an
    /// acknowledgement goes when it gets the channel.
    DireWolf,
}

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stack::Linklab => "linklab behind the KISS TNC",
            Stack::LinuxKernel => "Linux kernel AX.25 behind the KISS TNC",
            Stack::DireWolf => "Dire Wolf's engine on its own modem",
        })
    }
}

/// The HDLC mode of operation (Bux et al. 1982, section 1). AX.25
/// connected mode is balanced, so radio links are always ABM.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Procedure {
    /// Asynchronous balanced mode: two combined stations, each sending
    /// when it has data.
    #[default]
    Abm,
    /// Normal response mode: a primary polls a secondary, which sends
    /// only when polled.
    Nrm,
}

impl fmt::Display for Procedure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Procedure::Abm => "ABM",
            Procedure::Nrm => "NRM",
        })
    }
}

/// One set of link settings, the same at both ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// ABM or NRM (lines only; radio links are ABM).
    #[serde(default)]
    pub procedure: Procedure,
    /// Window k (MAXFRAME): I frames sent before an acknowledgement. On a
    /// line the window is the modulus less one, as Bux et al. ran it:
    /// 7 or 127.
    pub window: u8,
    /// N1 (PACLEN): octets in an I frame's information field.
    pub n1: usize,
    /// T1 (FRACK), ms: the wait for an acknowledgement before asking
    /// again.
    pub t1_ms: u32,
    /// When the receiver acknowledges.
    pub ack: Ack,
    /// KISS persistence P (PERSIST): transmit in a free slot with
    /// probability (P + 1) / 256.
    pub persistence: u8,
    /// Slot time (SLOTTIME), ms.
    pub slot_ms: u32,
    /// Host-to-TNC serial rate, bit/s.
    pub serial_bps: u32,
    /// The AX.25 convergence layer's `ack_window`, segments between its
    /// acknowledgements (bundle workloads; Ronan et al. section V.B,
    /// default 8).
    #[serde(default = "default_ack_window")]
    pub ack_window: u32,
    /// The implementation that runs them (KISS ends).
    #[serde(default)]
    pub stack: Stack,
}

/// The convergence layer's default `ack_window` (Ronan et al.: 8).
pub fn default_ack_window() -> u32 {
    8
}

impl Settings {
    /// The Linux kernel's AX.25 defaults (include/net/ax25.h): window 2
    /// (`AX25_DEF_WINDOW`), PACLEN 256, T1 10 s (`AX25_DEF_T1`), P on the
    /// last I frame and polls answered at once; `kissattach` sends no
    /// channel-access parameters, so the TNC keeps the KISS spec's
    /// defaults, P = 63 and SLOTTIME 100 ms. Serial at the link's
    /// fastest. Run as the kernel runs them ([`Stack::LinuxKernel`]).
    pub fn linux(link: &Link) -> Settings {
        Settings {
            procedure: Procedure::Abm,
            window: 2,
            n1: 256.min(link.limits.n1_max),
            t1_ms: 10_000,
            ack: Ack::AtOnce,
            persistence: 63,
            slot_ms: 100,
            serial_bps: link.serial_max_bps(),
            ack_window: default_ack_window(),
            stack: Stack::LinuxKernel,
        }
    }

    /// Dire Wolf 1.6's defaults (src/ax25_link.h, src/config.c): PACLEN
    /// 256, FRACK 3 s, RETRY 10, MAXFRAME 4 on a modulo-8 link and
    /// EMAXFRAME 32 where both ends can do SABME (Dire Wolf connects with
    /// SABME first); acknowledgement once it has the channel, PERSIST 63,
    /// SLOTTIME 10 (100 ms). Run as Dire Wolf runs them, its engine on its
    /// own modem ([`Stack::DireWolf`]).
    pub fn direwolf(link: &Link) -> Settings {
        let window = match link.limits.modulo {
            crate::link::Modulo::Eight => 4,
            crate::link::Modulo::OneTwentyEight => 32,
        };
        Settings {
            procedure: Procedure::Abm,
            window,
            n1: 256.min(link.limits.n1_max),
            t1_ms: 3_000,
            ack: Ack::AtOnce,
            persistence: 63,
            slot_ms: 100,
            serial_bps: link.serial_max_bps(),
            ack_window: default_ack_window(),
            stack: Stack::DireWolf,
        }
    }

    /// The Linux kernel's LAPB defaults (include/net/lapb.h: modulo 8,
    /// window 7, T1 5 s, balanced) with the X.25 default packet size of
    /// 128 octets as N1, for a line.
    pub fn linux_lapb(link: &Link) -> Settings {
        Settings {
            procedure: Procedure::Abm,
            window: 7,
            n1: 128.min(link.limits.n1_max),
            t1_ms: 5_000,
            ack: Ack::AtOnce,
            persistence: 255,
            slot_ms: 10,
            serial_bps: link.serial_max_bps(),
            ack_window: default_ack_window(),
            stack: Stack::LinuxKernel,
        }
    }

    /// Why these settings cannot be used on `link`, if they cannot.
    pub fn validate(&self, link: &Link) -> Result<(), String> {
        if link.is_line() {
            if !(self.window == 7 || (self.window == 127 && link.window_max() == 127)) {
                return Err(format!(
                    "window {} on a line: 7 (modulo 8){}",
                    self.window,
                    if link.window_max() == 127 {
                        " or 127 (modulo 128)"
                    } else {
                        ""
                    }
                ));
            }
        } else if self.procedure != Procedure::Abm {
            return Err("NRM is for lines: AX.25 radio links are balanced (ABM)".into());
        }
        let window_max = link.window_max();
        if !(1..=window_max).contains(&self.window) {
            return Err(format!(
                "window {} is not 1-{window_max} (modulo {})",
                self.window,
                if window_max == 7 { 8 } else { 128 }
            ));
        }
        if !(1..=link.n1_limit()).contains(&self.n1) {
            return Err(format!("n1 {} is not 1-{}", self.n1, link.n1_limit()));
        }
        if !(100..=600_000).contains(&self.t1_ms) {
            return Err(format!("t1_ms {} is not 100-600000", self.t1_ms));
        }
        if let Ack::AfterT2 { t2_ms } = self.ack {
            if t2_ms > 60_000 || t2_ms >= self.t1_ms {
                return Err(format!(
                    "t2_ms {t2_ms} must be below T1 ({} ms) and at most 60000",
                    self.t1_ms
                ));
            }
        }
        if self.slot_ms == 0 || self.slot_ms > 2550 {
            return Err(format!("slot_ms {} is not 1-2550", self.slot_ms));
        }
        if !(1..=1024).contains(&self.ack_window) {
            return Err(format!("ack_window {} is not 1-1024", self.ack_window));
        }
        if link.workload.bundle && self.n1 < 16 {
            return Err(format!(
                "n1 {} is below the convergence layer's 16",
                self.n1
            ));
        }
        let serial_max = link.serial_max_bps();
        if !(300..=serial_max).contains(&self.serial_bps) {
            return Err(format!(
                "serial_bps {} is not 300-{serial_max}",
                self.serial_bps
            ));
        }
        Ok(())
    }

    /// The settings as options of `linklab send` / `listen`.
    pub fn linklab_options(&self, link: &Link) -> String {
        let mut s = format!(
            "--window {} --n1 {} --t1-ms {}",
            self.window, self.n1, self.t1_ms
        );
        match self.ack {
            Ack::AtOnce => s.push_str(" --poll-last"),
            Ack::AfterT2 { t2_ms } => s.push_str(&format!(" --ack-policy t2 --t2-ms {t2_ms}")),
        }
        s.push_str(&format!(
            " --txdelay-ms {} --txtail-ms {} --persist {} --slot-ms {}",
            link.channel.txdelay_ms.round(),
            link.channel.txtail_ms.round(),
            self.persistence,
            self.slot_ms
        ));
        if window_needs_mod128(self.window) {
            s.push_str(" --mod128");
        }
        s
    }

    /// The settings as lines of direwolf.conf.
    pub fn direwolf_conf(&self, link: &Link) -> String {
        let window = if window_needs_mod128(self.window) {
            format!("EMAXFRAME {}", self.window)
        } else {
            format!("MAXFRAME {}", self.window)
        };
        format!(
            "PACLEN {}  {window}  FRACK {}  TXDELAY {}  TXTAIL {}  PERSIST {}  SLOTTIME {}",
            self.n1,
            self.t1_ms.div_ceil(1000),
            (link.channel.txdelay_ms / 10.0).round(),
            (link.channel.txtail_ms / 10.0).round(),
            self.persistence,
            self.slot_ms.div_ceil(10)
        )
    }
}

impl fmt::Display for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "k {}, N1 {}, T1 {} ms, ack {}, P {}, slot {} ms, serial {} bit/s",
            self.window,
            self.n1,
            self.t1_ms,
            self.ack,
            self.persistence,
            self.slot_ms,
            self.serial_bps
        )
    }
}

impl Settings {
    /// The settings that apply on `link`: on a line the procedure, the
    /// modulus, N1 and T1; on a radio link all but the procedure.
    pub fn describe(&self, link: &Link) -> String {
        if link.is_line() {
            format!(
                "{}, modulo {} (k {}), N1 {}, T1 {} ms",
                self.procedure,
                if self.window > 7 { 128 } else { 8 },
                self.window,
                self.n1,
                self.t1_ms
            )
        } else {
            let mut text = self.to_string();
            if link.workload.bundle {
                text += &format!(", ack_window {}", self.ack_window);
            }
            if matches!(link.ends, crate::link::Ends::Kiss(_)) && self.stack != Stack::Linklab {
                text += &format!("; {}", self.stack);
            }
            text
        }
    }
}

fn window_needs_mod128(window: u8) -> bool {
    window > 7
}

impl Link {
    /// The largest N1 the link's ends accept: the limit given, and at
    /// most 256 for the firmware TNCs (their PACLEN).
    pub fn n1_limit(&self) -> usize {
        match self.ends {
            crate::link::Ends::Kiss(_) | crate::link::Ends::Line { .. } => self.limits.n1_max,
            crate::link::Ends::Tnc { .. } => self.limits.n1_max.min(256),
        }
    }
}
