//! Ronan, Long and Walsh's corrected model of the minimum transfer time of a
//! message over a half-duplex AX.25 link ("More experiments with DTN over
//! AX.25 networks", section III.B, Tables I-III).
//!
//! A message of `size` octets is cut into `frames = ceil(size / N1)` I frames.
//! The sender keys up once per window of up to `maxframe` frames, and every
//! window draws one acknowledgement:
//!
//! ```text
//! T_frame   = 63/62 * (8 N1 + 160) / bitrate
//! T_ack     = T_txdelay + 63/62 * 160 / bitrate + T_txtail + p * T_slot
//! windows   = ceil(frames / maxframe)
//! T_message = frames * T_frame + windows * (T_txdelay + T_txtail + p * T_slot + T_ack)
//! ```
//!
//! # Which reading of the paper the model follows
//!
//! The paper prints `T_ack` with `T_txtail` in it, but its worked example
//! evaluates `T_ack` without it (0.2904 s at 1200 bit/s). Both readings
//! are available ([`AckReading`]); the default,
//! [`AckReading::WithTxTail`], is the formula as printed, the reading
//! that reproduces Tables II and III, and
//! [`AckReading::WithoutTxTail`] is the worked example's.
//!
//! Like the paper's tables, the model counts every frame as a full
//! N1-octet frame: 7182 octets make 29 frames of 255 octets, although the
//! last carries only 42.
//!
//! How close each reading comes to the published values, and what the
//! remaining differences look like, is reported in docs/reproduce.md,
//! section "Ronan et al., Tables II and III (the closed-form model)".
//!
//! The model's `p * T_slot` stands for the mean CSMA wait, as the paper
//! states; it is not the p-persistent expectation of Zieliński's eq. 1.

use crate::airtime::frame_airtime;

/// Which of the paper's two statements of `T_ack` to use (see the module
/// documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AckReading {
    /// `T_ack` includes `T_txtail`, as the formula is printed. Matches
    /// Tables II and III.
    #[default]
    WithTxTail,
    /// `T_ack` leaves `T_txtail` out, as the worked example evaluates it.
    WithoutTxTail,
}

/// Link and message parameters of the model; [`Default`] is the paper's
/// Table I.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Radio link bit rate, bit/s.
    pub bitrate_bps: f64,
    /// Message length, octets.
    pub size_octets: u64,
    /// Information field length of every I frame (AX.25 N1), octets.
    pub n1: u32,
    /// Transmitter key-up delay before the first frame, s.
    pub txdelay_s: f64,
    /// Transmitter hold time after the last frame, s.
    pub txtail_s: f64,
    /// CSMA slot time, s.
    pub slot_s: f64,
    /// CSMA persistence as a probability (0.25 in Table I).
    pub persistence: f64,
    /// Which statement of `T_ack` to evaluate.
    pub ack_reading: AckReading,
}

impl Default for Params {
    /// Table I: 1200 bit/s, T_slot 20 ms, T_txdelay 150 ms, T_tail 20 ms,
    /// p = 0.25, 7182 octets in 255-octet frames.
    fn default() -> Self {
        Params {
            bitrate_bps: 1200.0,
            size_octets: 7182,
            n1: 255,
            txdelay_s: 0.150,
            txtail_s: 0.020,
            slot_s: 0.020,
            persistence: 0.25,
            ack_reading: AckReading::WithTxTail,
        }
    }
}

/// One row of Table II or III: the model's transfer time for one window size.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Row {
    /// Acknowledgement window (AX.25 `maxframe`, k).
    pub window: u32,
    /// I frames needed for the message.
    pub frames: u64,
    /// Transmissions of data, each answered by one acknowledgement.
    pub windows: u64,
    /// Modelled transfer time, s.
    pub transfer_s: f64,
}

impl Params {
    /// `T_frame`: air time of one full I frame.
    pub fn t_frame(&self) -> f64 {
        frame_airtime(f64::from(self.n1), self.bitrate_bps)
    }

    /// `T_ack`: one acknowledgement transmission with its set-up and release.
    pub fn t_ack(&self) -> f64 {
        let tail = match self.ack_reading {
            AckReading::WithTxTail => self.txtail_s,
            AckReading::WithoutTxTail => 0.0,
        };
        self.txdelay_s + frame_airtime(0.0, self.bitrate_bps) + tail + self.csma_wait()
    }

    /// Mean channel-access wait as the paper models it, `p * T_slot`.
    pub fn csma_wait(&self) -> f64 {
        self.persistence * self.slot_s
    }

    /// Number of I frames, `ceil(size / N1)`; zero when N1 is zero.
    pub fn frames(&self) -> u64 {
        match u64::from(self.n1) {
            0 => 0,
            n1 => self.size_octets.div_ceil(n1),
        }
    }

    /// `T_message` for acknowledgement window `window` (at least 1).
    pub fn transfer(&self, window: u32) -> Row {
        let frames = self.frames();
        let windows = frames.div_ceil(u64::from(window.max(1)));
        let per_window = self.txdelay_s + self.txtail_s + self.csma_wait() + self.t_ack();
        Row {
            window,
            frames,
            windows,
            transfer_s: frames as f64 * self.t_frame() + windows as f64 * per_window,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example_t_ack_leaves_out_txtail() {
        let printed = Params {
            ack_reading: AckReading::WithoutTxTail,
            ..Params::default()
        };
        assert!((printed.t_ack() - 0.2904).abs() < 2e-4);
        assert!((Params::default().t_ack() - 0.3104).abs() < 2e-4);
    }

    #[test]
    fn windows_six_and_seven_both_need_five_acknowledgements() {
        let p = Params::default();
        assert_eq!(p.frames(), 29);
        assert_eq!(p.transfer(6).windows, 5);
        assert_eq!(p.transfer(7).windows, 5);
        assert_eq!(p.transfer(6).transfer_s, p.transfer(7).transfer_s);
    }

    #[test]
    fn zero_n1_gives_no_frames_instead_of_dividing_by_zero() {
        let p = Params {
            n1: 0,
            ..Params::default()
        };
        assert_eq!(p.transfer(3).frames, 0);
    }
}
