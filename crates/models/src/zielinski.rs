//! Zieliński's analytic model of AX.25 effective throughput on a perfect
//! channel between two stations ("Effective throughput of AX.25 protocol",
//! Bull. Pol. Ac.: Tech. 61(3), 2013, section 2.1, equations 1-5).
//!
//! ```text
//! (1) T_CS  = 256 T_102 / (2 (p + 1))            mean p-persistent CSMA wait
//! (2) T_p   = T_CS + 2 T_103 + k T_I + T_2 + T_RR  half-duplex cycle
//! (3) T_I   = 63/62 (160 + 8 N1) / R_wl
//! (4) T_RR  = 63/62 160 / R_wl
//! (5) T_TNC = 2 * 10 N1 / R_w                     serial fill and drain
//! ```
//!
//! On a full-duplex link the acknowledgements travel on their own channel
//! and the sender never stops, so a cycle is one I frame, `T_p = T_I`, and
//! the window does not matter.
//!
//! Throughput is the data of a cycle over its duration, `8 k N1 / T_p`. For
//! a transfer of a given size ([`Params::size_octets`]) the model adds up the
//! cycles the message needs, with the last frame and the last window as
//! short as the data left for them, plus `T_TNC` when a serial link is given:
//! the TNC must collect N1 characters before its first frame and the far TNC
//! must deliver the last N1 after it (section 2.2).

use crate::airtime::frame_airtime;

/// Whether acknowledgements share the channel with the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Duplex {
    /// One channel, both directions take turns (Fig. 1).
    #[default]
    Half,
    /// Acknowledgements on a separate channel (Fig. 2).
    Full,
}

/// Model parameters. [`Default`] is the 1200 bit/s configuration with
/// N1 = 256, T_102 = 10 ms, p = 63, T_103 = 300 ms and immediate
/// acknowledgement (T_2 = 0), the "AX.25 imm" curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Radio link rate R_wl, bit/s.
    pub bitrate_bps: f64,
    /// Information field capacity of an I frame, N1 octets.
    pub n1: u32,
    /// CSMA slot time T_102, s.
    pub t102_s: f64,
    /// KISS-style persistence 0-255: a station transmits in a free slot with
    /// probability (p + 1) / 256.
    pub persist: u8,
    /// Transmitter start-up delay T_103 (TXDELAY), s.
    pub t103_s: f64,
    /// Acknowledgement delay T_2 the receiver waits before its RR, s
    /// (0 for a receiver that answers at once, "AX.25 imm").
    pub t2_s: f64,
    /// Half or full duplex.
    pub duplex: Duplex,
    /// Host-to-TNC serial rate R_w, bit/s, when the TNC delay of eq. 5 is to
    /// be counted (only with a transfer size).
    pub serial_bps: Option<f64>,
    /// Size of a transfer, octets, when the model is to time a whole
    /// message rather than a steady-state cycle.
    pub size_octets: Option<u64>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            bitrate_bps: 1200.0,
            n1: 256,
            t102_s: 0.010,
            persist: 63,
            t103_s: 0.300,
            t2_s: 0.0,
            duplex: Duplex::Half,
            serial_bps: None,
            size_octets: None,
        }
    }
}

/// The model's answer for one window size.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Row {
    /// Window size k.
    pub window: u32,
    /// Duration of one steady-state transmission cycle T_p, s.
    pub cycle_s: f64,
    /// Effective throughput, bit/s: per cycle, or over the whole transfer
    /// when a size is given.
    pub throughput_bps: f64,
    /// Time for the whole transfer (with T_TNC when a serial rate is given),
    /// s; present only when a size is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer_s: Option<f64>,
}

/// Eq. 1: mean CSMA wait for slot time `t102_s` and persistence `persist`.
pub fn t_cs(t102_s: f64, persist: u8) -> f64 {
    256.0 * t102_s / (2.0 * (f64::from(persist) + 1.0))
}

/// Eq. 5: delay the host serial links add to a transfer through TNCs.
pub fn t_tnc(n1: u32, serial_bps: f64) -> f64 {
    2.0 * 10.0 * f64::from(n1) / serial_bps
}

impl Params {
    /// Eq. 3: air time of an I frame with `info_octets` of data.
    fn t_i(&self, info_octets: f64) -> f64 {
        frame_airtime(info_octets, self.bitrate_bps)
    }

    /// Eq. 4: air time of an RR frame.
    pub fn t_rr(&self) -> f64 {
        frame_airtime(0.0, self.bitrate_bps)
    }

    /// Fixed part of a half-duplex cycle: everything in eq. 2 but the I frames.
    fn cycle_overhead(&self) -> f64 {
        t_cs(self.t102_s, self.persist) + 2.0 * self.t103_s + self.t2_s + self.t_rr()
    }

    /// Eq. 2 (half duplex) or `T_p = T_I` (full duplex) for window `k`,
    /// with full frames of N1 octets.
    pub fn cycle(&self, k: u32) -> f64 {
        let t_i = self.t_i(f64::from(self.n1));
        match self.duplex {
            Duplex::Half => self.cycle_overhead() + f64::from(k) * t_i,
            Duplex::Full => t_i,
        }
    }

    /// Time to send `size` octets with window `k`, plus eq. 5 when a serial
    /// rate is set.
    pub fn transfer_time(&self, k: u32, size: u64) -> f64 {
        let n1 = u64::from(self.n1.max(1));
        let full_frames = size / n1;
        let last = size % n1;
        let data_air = full_frames as f64 * self.t_i(n1 as f64)
            + if last > 0 { self.t_i(last as f64) } else { 0.0 };
        let frames = full_frames + u64::from(last > 0);
        let cycles = match self.duplex {
            Duplex::Half => frames.div_ceil(u64::from(k.max(1))),
            Duplex::Full => 0,
        };
        let serial = self.serial_bps.map_or(0.0, |r| t_tnc(self.n1, r));
        data_air + cycles as f64 * self.cycle_overhead() + serial
    }

    /// The model's row for window `k`.
    pub fn row(&self, k: u32) -> Row {
        let cycle_s = self.cycle(k);
        let frames_per_cycle = match self.duplex {
            Duplex::Half => f64::from(k),
            Duplex::Full => 1.0,
        };
        match self.size_octets {
            None => Row {
                window: k,
                cycle_s,
                throughput_bps: 8.0 * frames_per_cycle * f64::from(self.n1) / cycle_s,
                transfer_s: None,
            },
            Some(size) => {
                let transfer_s = self.transfer_time(k, size);
                Row {
                    window: k,
                    cycle_s,
                    throughput_bps: 8.0 * size as f64 / transfer_s,
                    transfer_s: Some(transfer_s),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csma_wait_follows_eq_1() {
        // p = 255 transmits in the first slot with certainty: half a slot on average.
        assert!((t_cs(0.010, 255) - 0.005).abs() < 1e-12);
        assert!((t_cs(0.010, 63) - 0.020).abs() < 1e-12);
    }

    #[test]
    fn full_duplex_ignores_the_window() {
        let p = Params {
            duplex: Duplex::Full,
            bitrate_bps: 9600.0,
            ..Params::default()
        };
        assert_eq!(p.row(1).throughput_bps, p.row(7).throughput_bps);
        // 8 N1 / T_I = 2048 / (63/62 * 2208 / 9600)
        assert!((p.row(3).throughput_bps - 2048.0 * 9600.0 * 62.0 / 63.0 / 2208.0).abs() < 1e-9);
    }

    #[test]
    fn a_steady_transfer_approaches_the_cycle_throughput() {
        let cycle = Params::default().row(4);
        let long = Params {
            size_octets: Some(4 * 256 * 1000),
            ..Params::default()
        }
        .row(4);
        assert!((long.throughput_bps - cycle.throughput_bps).abs() < 1e-9 * cycle.throughput_bps);
    }

    #[test]
    fn serial_link_adds_eq_5_once() {
        let base = Params {
            size_octets: Some(8192),
            ..Params::default()
        };
        let with_tnc = Params {
            serial_bps: Some(9600.0),
            ..base
        };
        let extra = with_tnc.row(7).transfer_s.unwrap() - base.row(7).transfer_s.unwrap();
        assert!((extra - 2.0 * 2560.0 / 9600.0).abs() < 1e-9);
    }

    #[test]
    fn t2_lowers_throughput_by_lengthening_the_cycle() {
        let imm = Params::default().row(3);
        let t2 = Params {
            t2_s: 1.0,
            ..Params::default()
        }
        .row(3);
        assert!((t2.cycle_s - imm.cycle_s - 1.0).abs() < 1e-12);
        assert!(t2.throughput_bps < imm.throughput_bps);
    }
}
