//! Answering at the end of the peer's window: a sender like Dire Wolf's
//! engine (MAXFRAME 4 at modulo 8, no P on any I frame, FRACK 3 s) to
//! linklab's receiver (window 7, `--ack-policy window`, T2 from the bit
//! rate) on the emulated half-duplex 1200 bit/s channel (`air`).
//!
//! linklab's window of 7 never fills from a sender whose window is 4, and
//! nothing on a KISS port says when the sender's carrier dropped, so
//! without the learnt window every one of the 16 windows of the file
//! waited T2 (2.8 s at 1200 bit/s) after its last frame, and the
//! sender's FRACK of 3 s, counted from the end of its transmission,
//! expired first and it polled. With it only the first window waits (its
//! poll is answered): the later ones are answered as their fourth frame
//! arrives, as Dire Wolf's receiver answers when the carrier drops.

mod air;

use core::time::Duration;

use air::{linklab, settings, transfer_between, Side, FRAMES};
use linklab_core::Instant;
use linklab_io::AckMode;
use linklab_link::Config;
use linklab_wire::control::{Control, Modulus, Supervisory};

/// Dire Wolf 1.6's engine as a sender: modulo 8, MAXFRAME 4, FRACK 3 s,
/// P only on its enquiries.
fn dire_wolf_sender() -> Config {
    Config {
        modulus: Modulus::Mod8,
        window_mod8: 4,
        t1: Duration::from_secs(3),
        poll_on_last_i_frame: false,
        ..Config::default()
    }
}

/// B's answers (RR responses), each with whether it has F = 1 and how
/// long after the last I frame B had heard it was handed to the TNC.
fn answers(b: &Side) -> Vec<(bool, Duration)> {
    b.sent
        .iter()
        .filter_map(|(at, f)| match f.control() {
            Control::S {
                kind: Supervisory::Rr,
                pf,
                ..
            } if !f.is_command() => Some((*at, pf)),
            _ => None,
        })
        .map(|(at, f)| {
            let last_i: Instant = b
                .heard
                .iter()
                .rev()
                .find(|(heard, f)| *heard <= at && matches!(f.control(), Control::I { .. }))
                .map(|(heard, _)| *heard)
                .expect("an RR answers an I frame");
            (f, at - last_i)
        })
        .collect()
}

#[test]
fn a_peer_that_never_polls_has_each_window_after_the_first_answered_at_its_last_frame() {
    for seed in 1..=3 {
        let (a, b) = transfer_between(
            [dire_wolf_sender(), linklab()],
            settings(AckMode::Off),
            seed,
        );
        let answers = answers(&b);
        // The first window: T2, or the sender's poll, or both crossing.
        let later = FRAMES / 4 - 1;
        assert!(
            (later + 1..=later + 2).contains(&answers.len()),
            "seed {seed}: one answer per window after the first, none early: {answers:?}"
        );
        assert!(
            answers[answers.len() - later..]
                .iter()
                .all(|&(f, delay)| !f && delay.is_zero()),
            "seed {seed}: windows after the first answered as their last frame arrives: \
             {answers:?}"
        );
        assert!(
            a.enquiries() <= 1,
            "seed {seed}: the sender polled only before the window was known"
        );
        assert_eq!(a.i_frames(), FRAMES, "seed {seed}: nothing sent twice");
    }
}
