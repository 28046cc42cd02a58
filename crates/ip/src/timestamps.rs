//! The TCP timestamps option (RFC 7323 section 3) as a host-wide switch,
//! like Linux's `net.ipv4.tcp_timestamps` (on by default since Linux
//! 2.2): a socket offers the option in its SYN and uses it when the peer
//! did too (RFC 7323 3.2), after which every segment carries 12 octets of
//! options (kind 8, length 10, TSval, TSecr, two NOPs) and so 12 octets
//! less payload than the MSS allows, as Linux's `tcp_current_mss` does.
//!
//! smoltcp takes the TSval clock as a plain function. The host is stepped
//! in virtual time, so the clock is the virtual time of the host's latest
//! poll, kept per thread ([`set_clock`] before each smoltcp poll): a
//! timestamp clock of 1 ms per tick (RFC 7323 5.4 allows 1 ms to 1 s),
//! deterministic, and private to the simulation running on the thread.

use core::cell::Cell;

use linklab_core::Instant;
use smoltcp::socket::tcp;

std::thread_local! {
    static CLOCK_MS: Cell<u32> = const { Cell::new(0) };
}

/// The timestamp clock at `now`: milliseconds since the start of virtual
/// time, modulo 2^32 (RFC 7323 5.4).
pub(crate) fn ticks(now: Instant) -> u32 {
    (now.as_micros() / 1000) as u32
}

/// Sets this thread's timestamp clock to `now`.
pub(crate) fn set_clock(now: Instant) {
    CLOCK_MS.with(|c| c.set(ticks(now)));
}

/// The TSval of a segment sent now (smoltcp's generator).
fn tsval() -> u32 {
    CLOCK_MS.with(Cell::get)
}

/// Turns the option on or off on `socket`.
pub(crate) fn apply(socket: &mut tcp::Socket<'_>, on: bool) {
    socket.set_tsval_generator(on.then_some(tsval as fn() -> u32));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_ticks_in_milliseconds_of_virtual_time_and_wraps() {
        set_clock(Instant::from_micros(12_345_678));
        assert_eq!(tsval(), 12_345);
        let wrap = (u64::from(u32::MAX) + 1) * 1000 + 7_000;
        assert_eq!(ticks(Instant::from_micros(wrap)), 7);
    }

    #[test]
    fn a_socket_offers_the_option_only_when_switched_on() {
        let buffer = || tcp::SocketBuffer::new(vec![0; 64]);
        let mut socket = tcp::Socket::new(buffer(), buffer());
        assert!(!socket.timestamp_enabled());
        apply(&mut socket, true);
        assert!(socket.timestamp_enabled());
        apply(&mut socket, false);
        assert!(!socket.timestamp_enabled());
    }
}
