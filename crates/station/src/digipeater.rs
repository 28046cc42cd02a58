//! The station's digipeater, sans-IO: a frame heard on a port whose next
//! hop is one of the port's callsigns or aliases goes out again with that
//! repeater's H bit set (AX.25 v2.2 3.12.5, [`digipeat`]), unless the
//! same frame was repeated within the duplicate window.
//!
//! The window is what APRS digipeaters keep ("dedupe", 30 s in Dire
//! Wolf's default configuration): two copies of one frame heard from two
//! other digipeaters, or a frame repeated back to us, go out once. Two
//! frames are the same when source, destination and everything after the
//! address field (control, PID, information) are, whatever the path says.

use std::collections::hash_map::DefaultHasher;
use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use linklab_core::Instant;
use linklab_wire::ax25::{digipeat, Address, AddressField};

/// How long a repeated frame suppresses its copies.
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(30);

/// Frames remembered at most, whatever their age: a flood of distinct
/// frames cannot grow memory.
const REMEMBERED: usize = 4096;

/// A digipeater's memory of what it repeated.
#[derive(Debug, Clone, Default)]
pub struct Digipeater {
    recent: VecDeque<(Instant, u64)>,
    repeated: u64,
    duplicates: u64,
}

impl Digipeater {
    /// A digipeater that has repeated nothing.
    pub fn new() -> Digipeater {
        Digipeater::default()
    }

    /// The frame to send for `frame` (AX.25, no FCS) heard at `now`, if
    /// its next hop is one of `calls` and it was not repeated within
    /// [`DUPLICATE_WINDOW`].
    pub fn repeat(&mut self, now: Instant, frame: &[u8], calls: &[Address]) -> Option<Vec<u8>> {
        let out = calls.iter().find_map(|call| digipeat(frame, call))?;
        let key = identity(frame)?;
        while self
            .recent
            .front()
            .is_some_and(|(t, _)| now.saturating_duration_since(*t) > DUPLICATE_WINDOW)
        {
            self.recent.pop_front();
        }
        if self.recent.iter().any(|(_, k)| *k == key) {
            self.duplicates += 1;
            return None;
        }
        if self.recent.len() == REMEMBERED {
            self.recent.pop_front();
        }
        self.recent.push_back((now, key));
        self.repeated += 1;
        Some(out)
    }

    /// Frames repeated so far.
    pub fn repeated(&self) -> u64 {
        self.repeated
    }

    /// Copies not repeated because they were duplicates.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }
}

/// What makes two frames the same for duplicate suppression: source,
/// destination and the octets after the address field.
fn identity(frame: &[u8]) -> Option<u64> {
    let (field, used) = AddressField::decode(frame).ok()?;
    let mut hasher = DefaultHasher::new();
    let station = |a: &Address| (a.callsign(), a.ssid());
    station(field.source()).hash(&mut hasher);
    station(field.dest()).hash(&mut hasher);
    frame.get(used..).unwrap_or_default().hash(&mut hasher);
    Some(hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_wire::ax25::{Frame, Pid};

    fn call(text: &str) -> Address {
        text.parse().unwrap()
    }

    fn ui(via: &[&str], text: &str) -> Vec<u8> {
        let via: Vec<Address> = via.iter().map(|v| call(v)).collect();
        Frame::ui(
            call("ID"),
            call("N0CALL-5"),
            &via,
            Pid::NoLayer3,
            text.into(),
        )
        .unwrap()
        .encode()
    }

    #[test]
    fn repeats_a_frame_for_its_call_with_h_set() {
        let mut digi = Digipeater::new();
        let out = digi
            .repeat(Instant::ZERO, &ui(&["RELAY"], "hello"), &[call("RELAY")])
            .expect("repeated");
        let (field, _) = AddressField::decode(&out).unwrap();
        assert!(field.digipeaters()[0].c_or_h());
        assert_eq!(digi.repeated(), 1);
    }

    #[test]
    fn ignores_frames_for_other_repeaters() {
        let mut digi = Digipeater::new();
        assert!(digi
            .repeat(Instant::ZERO, &ui(&["OTHER"], "x"), &[call("RELAY")])
            .is_none());
    }

    #[test]
    fn a_copy_within_the_window_is_not_repeated_and_one_after_it_is() {
        let mut digi = Digipeater::new();
        let calls = [call("RELAY"), call("N0CALL-1")];
        assert!(digi
            .repeat(Instant::ZERO, &ui(&["RELAY"], "a"), &calls)
            .is_some());
        // The same frame by another path: a duplicate.
        let later = Instant::ZERO + Duration::from_secs(5);
        assert!(digi
            .repeat(later, &ui(&["N0CALL-1"], "a"), &calls)
            .is_none());
        assert_eq!(digi.duplicates(), 1);
        // Another text is another frame.
        assert!(digi.repeat(later, &ui(&["RELAY"], "b"), &calls).is_some());
        let after = Instant::ZERO + DUPLICATE_WINDOW + Duration::from_secs(1);
        assert!(digi.repeat(after, &ui(&["RELAY"], "a"), &calls).is_some());
    }

    #[test]
    fn memory_is_bounded() {
        let mut digi = Digipeater::new();
        for i in 0..REMEMBERED + 10 {
            digi.repeat(
                Instant::ZERO,
                &ui(&["RELAY"], &i.to_string()),
                &[call("RELAY")],
            );
        }
        assert_eq!(digi.recent.len(), REMEMBERED);
    }
}
