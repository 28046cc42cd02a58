//! The station's digipeater, sans-IO. A frame heard on a port is
//! repeated when its next hop (the first repeater with H clear, AX.25
//! v2.2 3.12.5) is:
//!
//! - one of the port's callsigns: H set in place ([`digipeat`]), as TNC
//!   firmware and the kernel's digipeater did for connected-mode paths;
//! - one of its aliases, or an n-N alias it serves (`WIDE2-2`): by the
//!   APRS station rules of [`DigipeatRules`] (the alias replaced by the
//!   port's first callsign, n-N decremented and traced, hop limits).
//!
//! A UI frame repeated within the duplicate window is not repeated again
//! ("dedupe", 30 s in Dire Wolf's default configuration): two copies of
//! one APRS packet heard from two digipeaters go out once. Two UI frames
//! are the same when their [`dedupe_key`]s are (source, destination and
//! information, whatever the path). Other frames are never suppressed: a
//! connected-mode I frame sent again by its station after a loss beyond
//! the digipeater must be repeated again, or the link through it fails.

use std::collections::hash_map::DefaultHasher;
use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::time::Duration;

use linklab_core::Instant;
use linklab_wire::ax25::{dedupe_key, digipeat, Address, AddressField, DigipeatRules};

/// How long a repeated UI frame suppresses its copies.
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(30);

/// Frames remembered at most, whatever their age: a flood of distinct
/// frames cannot grow memory.
const REMEMBERED: usize = 4096;

/// The UI control field, P clear or set (AX.25 v2.2 4.3.3.6).
const UI: u8 = 0x03;
const UI_P: u8 = 0x13;

/// What a port repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeats {
    /// Callsigns repeated in place (H set, the path kept).
    pub callsigns: Vec<Address>,
    /// The APRS station rules, for aliases and n-N aliases; `None` when
    /// the port has no callsign to put in a path.
    pub rules: Option<DigipeatRules>,
}

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
    /// `repeats` says so and it is not a UI frame repeated within
    /// [`DUPLICATE_WINDOW`].
    pub fn repeat(&mut self, now: Instant, frame: &[u8], repeats: &Repeats) -> Option<Vec<u8>> {
        let out = repeats
            .callsigns
            .iter()
            .find_map(|call| digipeat(frame, call))
            .or_else(|| repeats.rules.as_ref()?.apply(frame))?;
        if let Some(key) = ui_identity(frame) {
            while self
                .recent
                .front()
                .is_some_and(|(t, _)| now - *t > DUPLICATE_WINDOW)
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
        }
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

/// A UI frame's duplicate-suppression key, hashed; `None` for any other
/// frame.
fn ui_identity(frame: &[u8]) -> Option<u64> {
    let (_, used) = AddressField::decode(frame).ok()?;
    let control = *frame.get(used)?;
    if control != UI && control != UI_P {
        return None;
    }
    let key = dedupe_key(frame)?;
    let mut hasher = DefaultHasher::new();
    key.hash(&mut hasher);
    Some(hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_wire::ax25::{CommandResponse, Frame, Pid};
    use linklab_wire::control::Modulus;

    fn call(text: &str) -> Address {
        text.parse().unwrap()
    }

    fn l2(calls: &[&str]) -> Repeats {
        Repeats {
            callsigns: calls.iter().map(|c| call(c)).collect(),
            rules: None,
        }
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
            .repeat(Instant::ZERO, &ui(&["RELAY"], "hello"), &l2(&["RELAY"]))
            .expect("repeated");
        let (field, _) = AddressField::decode(&out).unwrap();
        assert!(field.digipeaters()[0].c_or_h());
        assert_eq!(digi.repeated(), 1);
    }

    #[test]
    fn ignores_frames_for_other_repeaters() {
        let mut digi = Digipeater::new();
        assert!(digi
            .repeat(Instant::ZERO, &ui(&["OTHER"], "x"), &l2(&["RELAY"]))
            .is_none());
    }

    #[test]
    fn a_copy_within_the_window_is_not_repeated_and_one_after_it_is() {
        let mut digi = Digipeater::new();
        let calls = l2(&["RELAY", "N0CALL-1"]);
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
                &l2(&["RELAY"]),
            );
        }
        assert_eq!(digi.recent.len(), REMEMBERED);
    }

    #[test]
    fn a_connected_mode_frame_sent_again_is_repeated_again() {
        let mut digi = Digipeater::new();
        let via = [call("N0CALL-1")];
        let address = AddressField::new(
            call("N0CALL-9"),
            call("N0CALL-5"),
            &via,
            CommandResponse::Command,
        )
        .unwrap();
        let frame = Frame::i(
            address,
            Modulus::Mod8,
            0,
            0,
            false,
            Pid::NoLayer3,
            b"data".to_vec(),
        )
        .unwrap()
        .encode();
        assert!(digi
            .repeat(Instant::ZERO, &frame, &l2(&["N0CALL-1"]))
            .is_some());
        let later = Instant::ZERO + Duration::from_secs(3);
        assert!(digi.repeat(later, &frame, &l2(&["N0CALL-1"])).is_some());
    }

    #[test]
    fn wide2_2_is_traced_and_its_copy_suppressed() {
        let mut digi = Digipeater::new();
        let repeats = Repeats {
            callsigns: vec![call("N0CALL-1")],
            rules: Some(DigipeatRules::new(call("N0CALL-1"))),
        };
        let out = digi
            .repeat(Instant::ZERO, &ui(&["WIDE2-2"], "pos"), &repeats)
            .expect("repeated");
        let (field, _) = AddressField::decode(&out).unwrap();
        let path: Vec<String> = field.digipeaters().iter().map(|a| a.to_string()).collect();
        assert_eq!(path[1], "WIDE2-1");
        assert_eq!(
            field.digipeaters()[0].callsign(),
            call("N0CALL-1").callsign()
        );
        // The next digipeater's copy, WIDE2-1, heard back: a duplicate.
        let later = Instant::ZERO + Duration::from_secs(2);
        assert!(digi
            .repeat(later, &ui(&["WIDE2-1"], "pos"), &repeats)
            .is_none());
    }
}
