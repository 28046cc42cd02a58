//! The AX.25 link settings a host stack behind a KISS TNC starts from,
//! shared by the one-shot commands' options and the station's
//! configuration file, so both have the same defaults and the same
//! checks.

use core::time::Duration;

use linklab_link::{t2_for_bit_rate, AckPolicy, Config, ConfigError, RecoveryMode};
use linklab_wire::control::Modulus;

/// The initial T1 when none is given: 3 s, Dire Wolf's FRACK. T1 is held
/// while our frames wait in the TNC or are on the air (the port's
/// [`crate::AirClock`]: ACKMODE answers, or an estimate from the bit
/// rate), so it times only the peer's answer: its channel access,
/// TXDELAY and acknowledgement, about 1-1.5 s at 1200 bit/s. (Counted
/// from the hand-over, as a host stack's T1 was before, four 256-octet
/// frames alone take 7.4 s at 1200 bit/s and 3 s expired on every
/// window; 15 s was needed.) T1 then follows the measured round trip from
/// its first measurement.
pub const DEFAULT_T1: Duration = Duration::from_secs(3);

/// The window k at modulo 8 when none is given: 4, not the spec's 7.
/// Node and BBS software sends its greeting right after UA, and a sender
/// that has already put 7 I frames on the air acknowledges none of that
/// greeting in them; a widely used node counts each such frame as a
/// repeat and drops the link after its retry count. Dire Wolf's MAXFRAME
/// default is 4 too.
pub const DEFAULT_WINDOW_MOD8: u8 = 4;

/// Link settings as a user gives them: each `None` takes the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkSettings {
    /// Initial T1 in milliseconds ([`DEFAULT_T1`]).
    pub t1_ms: Option<u64>,
    /// T2 in milliseconds (the engine's default, 1 s).
    pub t2_ms: Option<u64>,
    /// T3 in milliseconds (the engine's default, 300 s).
    pub t3_ms: Option<u64>,
    /// N2, the most tries of a frame.
    pub n2: Option<u8>,
    /// The window k (modulo 8 default [`DEFAULT_WINDOW_MOD8`], modulo 128
    /// the engine's).
    pub window: Option<u8>,
    /// N1, the largest information field.
    pub n1: Option<usize>,
    /// Selective reject (multi-SREJ if XID agrees) instead of REJ.
    pub srej: bool,
    /// P on the last I frame of every burst, new frames held until the
    /// answer (default on: the peer answers at once instead of after its
    /// T2).
    pub poll_last: bool,
    /// When to acknowledge I frames that do not ask for an answer.
    pub ack_policy: AckPolicy,
}

impl Default for LinkSettings {
    fn default() -> LinkSettings {
        LinkSettings {
            t1_ms: None,
            t2_ms: None,
            t3_ms: None,
            n2: None,
            window: None,
            n1: None,
            srej: false,
            poll_last: true,
            ack_policy: AckPolicy::WindowOrT2,
        }
    }
}

impl LinkSettings {
    /// The link configuration for `modulus` on a radio of `bit_rate` bit/s
    /// if known: [`LinkSettings::config`], with T2 from
    /// [`t2_for_bit_rate`] unless one is given, and the bit rate for
    /// telling the peer's transmissions apart ([`Config::bit_rate`]).
    pub fn config_at(
        &self,
        modulus: Modulus,
        bit_rate: Option<u32>,
    ) -> Result<Config, ConfigError> {
        let mut config = self.config(modulus)?;
        if let (None, Some(rate)) = (self.t2_ms, bit_rate) {
            config.t2 = t2_for_bit_rate(rate, config.n1);
        }
        config.bit_rate = bit_rate;
        Ok(config)
    }

    /// The link configuration for `modulus`: AX.25 v2.2 defaults with
    /// [`DEFAULT_T1`] and [`DEFAULT_WINDOW_MOD8`], then the values given;
    /// a value that cannot work is refused (AX.25 v2.2 6.7, 4.3.3).
    pub fn config(&self, modulus: Modulus) -> Result<Config, ConfigError> {
        let mut config = Config {
            modulus,
            recovery: if self.srej {
                RecoveryMode::MultiSrej
            } else {
                RecoveryMode::Rej
            },
            poll_on_last_i_frame: self.poll_last,
            poll_holds_new_frames: true,
            reject_again_after_go_back: true,
            ack_policy: self.ack_policy,
            window_mod8: DEFAULT_WINDOW_MOD8,
            t1: DEFAULT_T1,
            srt_first_sample: true,
            ..Config::default()
        };
        if let Some(ms) = self.t1_ms {
            config.t1 = Duration::from_millis(ms);
            config.t1_min = config.t1_min.min(config.t1);
        }
        if let Some(ms) = self.t2_ms {
            config.t2 = Duration::from_millis(ms);
        }
        if let Some(ms) = self.t3_ms {
            config.t3 = Duration::from_millis(ms);
        }
        if let Some(n2) = self.n2 {
            config.n2 = n2;
        }
        if let Some(n1) = self.n1 {
            config.n1 = n1;
        }
        if let Some(k) = self.window {
            config.window_mod128 = k;
            if k <= 7 || modulus == Modulus::Mod8 {
                config.window_mod8 = k;
            }
        }
        config.validate()?;
        Ok(config)
    }

    /// The name of the setting a [`ConfigError`] is about, as the
    /// command-line option without its dashes (`t1-ms`, `window`).
    pub fn setting_of(error: &ConfigError) -> &'static str {
        match error {
            ConfigError::Window { .. } | ConfigError::SrejWindow { .. } => "window",
            ConfigError::N1 { .. } => "n1",
            ConfigError::N2 => "n2",
            ConfigError::Timer { name: "T2", .. } => "t2-ms",
            ConfigError::Timer { name: "T3", .. } => "t3-ms",
            ConfigError::Timer { .. } => "t1-ms",
            ConfigError::RoleMode { .. } => "link parameters",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t2_and_the_bit_rate_follow_the_port_unless_t2_is_given() {
        let settings = LinkSettings::default();
        let config = settings.config_at(Modulus::Mod8, Some(9600)).unwrap();
        assert_eq!(config.t2, t2_for_bit_rate(9600, 256));
        assert_eq!(config.bit_rate, Some(9600));
        let given = LinkSettings {
            t2_ms: Some(700),
            ..LinkSettings::default()
        };
        let config = given.config_at(Modulus::Mod8, Some(9600)).unwrap();
        assert_eq!(config.t2, Duration::from_millis(700), "a T2 given wins");
    }
}
