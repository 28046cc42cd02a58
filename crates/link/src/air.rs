//! Air time on a radio port, which linklab's own link settings follow
//! when the port's bit rate is known: T2 and telling the peer's
//! transmissions apart ([`Config::bit_rate`](crate::Config::bit_rate)).

use core::time::Duration;

/// Time on the air of an AX.25 frame of `octets` (address field to
/// information field) at `bit_rate` bit/s: opening flag, the octets and
/// FCS, with bit stuffing's expected one bit in 62 for random data.
pub fn frame_air_time(bit_rate: u32, octets: usize) -> Duration {
    let bits = (octets as u64 + 3) * 8;
    let stuffed = bits + bits / 62;
    Duration::from_micros(stuffed * 1_000_000 / u64::from(bit_rate.max(1)))
}

/// T2 when none is given, for a radio of `bit_rate` bit/s and
/// information fields of at most `n1` octets: one and a half times the air
/// time of the longest frame, between 200 ms and 3 s. With the `window`
/// acknowledgement policy every I frame restarts T2, so it expires once
/// no frame has followed for longer than the next one could take: at the
/// end of the peer's transmission, where Dire Wolf's engine answers (it
/// acknowledges once it has the channel). The fixed 1 s waited four
/// frames' time after every burst at 9600 bit/s, and at 1200 bit/s, less
/// than a 256-octet frame's 1.9 s, it answered every frame in the middle
/// of the peer's transmission (each RR then waits in the TNC for the
/// channel, and they all go at once).
pub fn t2_for_bit_rate(bit_rate: u32, n1: usize) -> Duration {
    let frame = frame_air_time(bit_rate, n1 + 20);
    (frame * 3 / 2).clamp(Duration::from_millis(200), Duration::from_secs(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t2_outlasts_one_frame_and_ends_with_the_peers_transmission() {
        let ms = |rate| t2_for_bit_rate(rate, 256).as_millis();
        // 276 octets, stuffed, at 9600 bit/s: 233 ms; T2 half as long again.
        assert!((340..=360).contains(&ms(9600)), "{}", ms(9600));
        // At 1200 bit/s a frame takes 1.87 s: T2 2.8 s.
        assert!((2750..=2850).contains(&ms(1200)), "{}", ms(1200));
        assert_eq!(ms(300), 3000);
        assert_eq!(ms(76_800), 200);
    }
}
