//! Bit-error processes: independent bit errors and the Gilbert-Elliott
//! two-state burst model.
//!
//! A frame is corrupted when at least one of its line bits is in error; the
//! HDLC FCS is assumed to catch every corrupted frame (its residual error
//! rate is ignored).
//!
//! - **Independent errors** (Bux et al. 1982, "independent bit errors
//!   p_bit"): a frame of n bits is lost with probability
//!   1 − (1 − p_bit)^n.
//! - **Gilbert-Elliott**: a two-state Markov chain *stepped once per bit
//!   time* at the medium's bit rate, in state Good (bit-error probability
//!   `ber_good`) or Bad (`ber_bad`); it leaves Good with probability
//!   `p_good_to_bad` and Bad with `p_bad_to_good` per bit time. The chain
//!   keeps running while the medium is idle (time, not traffic, drives
//!   it), so a burst can outlast a gap between frames. Stationary
//!   probability of Bad: π_B = p_GB / (p_GB + p_BG).

use linklab_core::{Instant, Stream};

/// The error characteristic of a medium.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum ErrorModel {
    /// No bit errors.
    #[default]
    Perfect,
    /// Independent bit errors with probability `ber` per bit (Bux et al.
    /// 1982, p_bit).
    Independent {
        /// Bit-error probability.
        ber: f64,
    },
    /// Gilbert-Elliott burst errors.
    GilbertElliott(GilbertElliott),
}

impl ErrorModel {
    /// Probability that a frame of `bits` line bits is lost, in the
    /// long run (Gilbert-Elliott: starting from the stationary state).
    pub fn frame_loss_probability(&self, bits: u64) -> f64 {
        match self {
            ErrorModel::Perfect => 0.0,
            ErrorModel::Independent { ber } => loss_independent(*ber, bits as f64),
            ErrorModel::GilbertElliott(ge) => ge.frame_loss_probability(bits),
        }
    }
}

/// 1 − (1 − p)^n, computed without cancellation for tiny p.
fn loss_independent(ber: f64, bits: f64) -> f64 {
    let p = ber.clamp(0.0, 1.0);
    if p >= 1.0 {
        return if bits > 0.0 { 1.0 } else { 0.0 };
    }
    -((-p).ln_1p() * bits).exp_m1()
}

/// Parameters of the Gilbert-Elliott channel, per bit time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GilbertElliott {
    /// P(Good → Bad) per bit time.
    pub p_good_to_bad: f64,
    /// P(Bad → Good) per bit time.
    pub p_bad_to_good: f64,
    /// Bit-error probability in Good.
    pub ber_good: f64,
    /// Bit-error probability in Bad.
    pub ber_bad: f64,
}

impl GilbertElliott {
    /// Stationary probability of the Bad state, p_GB / (p_GB + p_BG)
    /// (Good when both transition probabilities are 0).
    pub fn stationary_bad(&self) -> f64 {
        let sum = self.p_good_to_bad + self.p_bad_to_good;
        if sum > 0.0 {
            self.p_good_to_bad / sum
        } else {
            0.0
        }
    }

    /// Long-run bit-error rate π_G·e_G + π_B·e_B.
    pub fn mean_ber(&self) -> f64 {
        let bad = self.stationary_bad();
        (1.0 - bad) * self.ber_good + bad * self.ber_bad
    }

    /// Probability that a frame of `bits` bits, whose first bit finds the
    /// chain in its stationary distribution, has at least one bit error:
    /// 1 − π·D·(P·D)^(n−1)·1, with P the transition matrix and
    /// D = diag(1 − e_G, 1 − e_B).
    pub fn frame_loss_probability(&self, bits: u64) -> f64 {
        if bits == 0 {
            return 0.0;
        }
        let (g, b) = (1.0 - self.ber_good, 1.0 - self.ber_bad);
        let (pgb, pbg) = (self.p_good_to_bad, self.p_bad_to_good);
        // P·D, row-major.
        let pd = [[(1.0 - pgb) * g, pgb * b], [pbg * g, (1.0 - pbg) * b]];
        let bad = self.stationary_bad();
        let v = [(1.0 - bad) * g, bad * b];
        let m = mat_pow(pd, bits - 1);
        let ok = v[0] * (m[0][0] + m[0][1]) + v[1] * (m[1][0] + m[1][1]);
        1.0 - ok
    }

    /// P(Bad after `steps` bit times | Bad now = `bad`):
    /// π_B + (x − π_B)·(1 − p_GB − p_BG)^steps.
    fn bad_after(&self, bad: bool, steps: u64) -> f64 {
        let pi = self.stationary_bad();
        let lambda = 1.0 - self.p_good_to_bad - self.p_bad_to_good;
        let x = if bad { 1.0 } else { 0.0 };
        let mut decay = lambda.abs().powf(steps as f64);
        if lambda < 0.0 && steps % 2 == 1 {
            decay = -decay;
        }
        pi + (x - pi) * decay
    }
}

type Mat2 = [[f64; 2]; 2];

fn mat_mul(a: Mat2, b: Mat2) -> Mat2 {
    let mut c = [[0.0; 2]; 2];
    for (i, row) in c.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = a[i][0] * b[0][j] + a[i][1] * b[1][j];
        }
    }
    c
}

fn mat_pow(mut base: Mat2, mut exp: u64) -> Mat2 {
    let mut acc = [[1.0, 0.0], [0.0, 1.0]];
    while exp > 0 {
        if exp & 1 == 1 {
            acc = mat_mul(acc, base);
        }
        base = mat_mul(base, base);
        exp >>= 1;
    }
    acc
}

/// The running state of one error process (one receiver of a radio
/// channel, one direction of a line), with its own random stream.
#[derive(Debug, Clone)]
pub struct ErrorProcess {
    model: ErrorModel,
    rng: Stream,
    /// Gilbert-Elliott: the state of the last bit judged, and when it ended.
    bad: bool,
    last: Option<Instant>,
}

impl ErrorProcess {
    /// A process following `model`, drawing from `rng`.
    pub fn new(model: ErrorModel, rng: Stream) -> Self {
        ErrorProcess {
            model,
            rng,
            bad: false,
            last: None,
        }
    }

    /// The model this process follows.
    pub fn model(&self) -> &ErrorModel {
        &self.model
    }

    /// Judges one frame of `bits` line bits sent from `start` to `end` at
    /// `bit_rate` bit/s: `true` if it arrives without a bit error. Frames
    /// must be judged in time order (a receiver never hears two frames at
    /// once without a collision, and collided frames are not judged).
    pub fn frame_survives(
        &mut self,
        start: Instant,
        end: Instant,
        bits: u64,
        bit_rate: u32,
    ) -> bool {
        match self.model {
            ErrorModel::Perfect => true,
            ErrorModel::Independent { ber } => {
                !self.rng.bernoulli(loss_independent(ber, bits as f64))
            }
            ErrorModel::GilbertElliott(ge) => self.gilbert_elliott(ge, start, end, bits, bit_rate),
        }
    }

    fn gilbert_elliott(
        &mut self,
        ge: GilbertElliott,
        start: Instant,
        end: Instant,
        bits: u64,
        bit_rate: u32,
    ) -> bool {
        // State of the first bit: stationary at the first frame, else the
        // chain run forward over the idle gap.
        let p_bad = match self.last {
            None => ge.stationary_bad(),
            Some(last) => {
                let gap_us = (start - last).as_micros();
                let steps = gap_us.saturating_mul(u128::from(bit_rate)) / 1_000_000;
                ge.bad_after(self.bad, u64::try_from(steps).unwrap_or(u64::MAX))
            }
        };
        self.bad = self.rng.bernoulli(p_bad);
        let mut ok = true;
        let mut remaining = bits;
        while remaining > 0 {
            let (leave, ber) = if self.bad {
                (ge.p_bad_to_good, ge.ber_bad)
            } else {
                (ge.p_good_to_bad, ge.ber_good)
            };
            let sojourn = self.geometric(leave);
            let here = sojourn.min(remaining);
            if ok && self.rng.bernoulli(loss_independent(ber, here as f64)) {
                ok = false;
            }
            remaining -= here;
            if remaining > 0 {
                // The sojourn ended inside the frame: the next bit is in
                // the other state.
                self.bad = !self.bad;
            }
        }
        self.last = Some(end);
        ok
    }

    /// Bits spent in a state left with probability `leave` per bit,
    /// counting the current bit: geometric on {1, 2, ...}.
    fn geometric(&mut self, leave: f64) -> u64 {
        if leave >= 1.0 {
            return 1;
        }
        if leave <= 0.0 || leave.is_nan() {
            return u64::MAX;
        }
        let u = 1.0 - self.rng.uniform(); // (0, 1]
        let k = (u.ln() / (-leave).ln_1p()).floor();
        // `as` saturates for huge k.
        1u64.saturating_add(k as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_forms() {
        let m = ErrorModel::Independent { ber: 1e-4 };
        let want = 1.0 - (1.0f64 - 1e-4).powi(1000);
        assert!((m.frame_loss_probability(1000) - want).abs() < 1e-12);
        assert_eq!(ErrorModel::Perfect.frame_loss_probability(1000), 0.0);
        let ge = GilbertElliott {
            p_good_to_bad: 1e-4,
            p_bad_to_good: 1e-2,
            ber_good: 0.0,
            ber_bad: 0.5,
        };
        assert!((ge.stationary_bad() - 1e-4 / 1.01e-2).abs() < 1e-15);
        // One bit: loss = mean BER.
        assert!((ge.frame_loss_probability(1) - ge.mean_ber()).abs() < 1e-15);
        // Memoryless special case: equal BERs reduce to independent errors.
        let flat = GilbertElliott {
            ber_good: 1e-3,
            ber_bad: 1e-3,
            ..ge
        };
        let ind = ErrorModel::Independent { ber: 1e-3 };
        assert!((flat.frame_loss_probability(500) - ind.frame_loss_probability(500)).abs() < 1e-12);
        assert!((ge.bad_after(true, 0) - 1.0).abs() < 1e-15);
        assert!((ge.bad_after(false, u64::MAX) - ge.stationary_bad()).abs() < 1e-15);
    }
}
