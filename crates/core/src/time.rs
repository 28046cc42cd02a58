//! Virtual time. Engines never read a clock: every call that can start or
//! fire a timer takes `now` as an argument (docs/architecture.md, "the one
//! rule").
//!
//! A real-time driver gives its engines the time since it started:
//! `Instant::ZERO + start.elapsed()`, and waits for an engine's wake-up
//! `at` until `start + (at - Instant::ZERO)`.

use core::fmt;
use core::ops::{Add, Sub};
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

    /// Seconds since the origin, as the reports and logs show time.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
}

impl Sub for Instant {
    type Output = Duration;

    /// Time elapsed from `earlier` to `self`, saturating at zero as
    /// `std::time::Instant`'s subtraction does.
    fn sub(self, earlier: Instant) -> Duration {
        Duration::from_micros(self.0.saturating_sub(earlier.0))
    }
}

impl fmt::Display for Instant {
    /// Seconds since the origin, with the formatter's width and precision
    /// (`{:.3}` for milliseconds).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.as_secs_f64(), f)
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
        assert_eq!(Instant::ZERO - t, Duration::ZERO);
        assert_eq!(t - Instant::ZERO, Duration::from_micros(2005));
        assert_eq!(
            Instant::from_micros(u64::MAX) + Duration::from_secs(1),
            Instant::from_micros(u64::MAX)
        );
        assert_eq!(t - Instant::from_micros(5), Duration::from_millis(2));
    }

    #[test]
    fn a_driver_converts_to_and_from_elapsed_time() {
        let elapsed = Duration::from_micros(1_234_567);
        let now = Instant::ZERO + elapsed;
        assert_eq!(now - Instant::ZERO, elapsed);
        assert_eq!(
            Instant::ZERO + Duration::MAX,
            Instant::from_micros(u64::MAX)
        );
    }

    #[test]
    fn shown_in_seconds_with_the_formatters_precision() {
        let t = Instant::from_micros(12_345_678);
        assert_eq!(t.as_secs_f64(), 12.345678);
        assert_eq!(t.to_string(), "12.345678");
        assert_eq!(format!("{t:>8.3}"), "  12.346");
    }
}
