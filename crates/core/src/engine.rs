//! The one convention for time in a sans-IO engine (docs/architecture.md, "the
//! one rule"), in the manner of quinn-proto's `Connection`.
//!
//! An engine never reads a clock. Every call that may start, fire or look
//! at a timer takes `now`; output is drained with [`Engine::poll_transmit`]
//! and the next instant at which the engine wants [`Engine::handle_timeout`]
//! is given by [`Engine::poll_timeout`]. Requests and received input are
//! the engine's own inherent methods, since their shapes differ by
//! protocol.

use crate::Instant;

/// A sans-IO protocol engine driven by a caller that owns the clock.
///
/// The contract a driver (the simulator's loop, the emulator, a real-time
/// driver) relies on:
/// - after any call, drain [`Engine::poll_transmit`] until it returns
///   `None`;
/// - call [`Engine::handle_timeout`] once `now` reaches
///   [`Engine::poll_timeout`], and not necessarily at any other time (an
///   early call is harmless: nothing that is not due fires);
/// - `now` never goes backwards from one call to the next.
pub trait Engine {
    /// What the engine hands to the layer below: a frame, a packet, a
    /// segment or a datagram.
    type Transmit;

    /// The next unit to send at `now`, if any.
    fn poll_transmit(&mut self, now: Instant) -> Option<Self::Transmit>;

    /// The earliest instant at which a timer is due, if any runs.
    fn poll_timeout(&self) -> Option<Instant>;

    /// Fires every timer due at `now`.
    fn handle_timeout(&mut self, now: Instant);
}

/// The earliest of several optional deadlines: the next wake-up of a set of
/// engines and media.
pub fn earliest(deadlines: impl IntoIterator<Item = Option<Instant>>) -> Option<Instant> {
    deadlines.into_iter().flatten().min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_skips_idle_parts() {
        assert_eq!(earliest([None, None]), None);
        assert_eq!(
            earliest([
                None,
                Some(Instant::from_micros(7)),
                Some(Instant::from_micros(3))
            ]),
            Some(Instant::from_micros(3))
        );
    }
}
