//! Virtual time. Engines never read a clock: every call that can start or
//! fire a timer takes `now` as an argument (ARCHITECTURE.md, "the one rule").

use core::ops::Add;
use core::time::Duration;

/// A point in virtual time, in microseconds since an arbitrary origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

impl Instant {
    /// The origin of virtual time.
    pub const ZERO: Instant = Instant(0);

    /// The instant `micros` microseconds after the origin.
    pub const fn from_micros(micros: u64) -> Instant {
        Instant(micros)
    }

    /// Microseconds since the origin.
    pub const fn as_micros(self) -> u64 {
        self.0
    }

    /// Time elapsed from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_micros(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    /// Adds a span, saturating at the end of time.
    fn add(self, span: Duration) -> Instant {
        let micros = u64::try_from(span.as_micros()).unwrap_or(u64::MAX);
        Instant(self.0.saturating_add(micros))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_micros(5) + Duration::from_millis(2);
        assert_eq!(t.as_micros(), 2005);
        assert_eq!(Instant::ZERO.saturating_duration_since(t), Duration::ZERO);
        assert_eq!(
            t.saturating_duration_since(Instant::ZERO),
            Duration::from_micros(2005)
        );
        assert_eq!(
            Instant::from_micros(u64::MAX) + Duration::from_secs(1),
            Instant::from_micros(u64::MAX)
        );
    }
}
