//! A frame asked for with REJ and lost again (measured at 20% frame loss
//! over two Dire Wolf modems, 14 of the 21 T1 expiries of Dire Wolf's
//! engine sending to linklab were this). The SDL's receiver sends one REJ
//! per exception (6.4.4.1) and then says nothing until the sender's T1;
//! with `Config::reject_again_after_go_back` it asks again as soon as the
//! sender's go-back shows the frame missing, and a sender acts on that
//! REJ once its own go-back has left the air.

mod support;

use std::time::Duration;

use linklab_link::{Config, Event};
use linklab_wire::ax25::Frame;
use linklab_wire::control::Modulus;
use support::{Pair, Side};

const MINUTE: Duration = Duration::from_secs(60);

/// Modulo 8, REJ, no P on I frames: a sender like Dire Wolf's engine.
fn sdl() -> Config {
    Config {
        modulus: Modulus::Mod8,
        ..Config::default()
    }
}

/// A sends four frames to B; the first two transmissions of frame 2 are
/// lost. Returns the pair once everything is delivered and acknowledged.
/// (Four, so that A's go-back, frames 2 and 3, has left its line when
/// B's second REJ comes: on a half-duplex radio it always has.)
fn frame_2_lost_twice(receiver: Config) -> Pair {
    let mut p = Pair::new(sdl(), receiver, 51);
    p.connect();
    let mut lost = 0;
    p.dropper = Some(Box::new(move |side, frame: &Frame| {
        let drop = side == Side::A && frame.control().ns() == Some(2) && lost < 2;
        lost += usize::from(drop);
        drop
    }));
    for i in 0..4u8 {
        p.a().send(vec![i; 40]).unwrap();
    }
    assert!(
        p.run_until(MINUTE, |p| p.received(Side::B).len() == 4
            && p.links[0].unacked() == 0),
        "{}",
        p.dump()
    );
    assert_eq!(
        p.received(Side::B),
        (0..4u8).map(|i| vec![i; 40]).collect::<Vec<_>>()
    );
    assert!(!p
        .events(Side::A)
        .iter()
        .any(|e| matches!(e, Event::LinkFailure { .. })));
    p
}

#[test]
fn a_frame_lost_again_after_rej_is_asked_for_again_without_waiting_for_t1() {
    let p = frame_2_lost_twice(Config {
        reject_again_after_go_back: true,
        ..sdl()
    });
    // Frame 3 arrives out of sequence twice: REJ R2 each time; A goes back
    // each time, and nobody polls.
    assert_eq!(p.logged("<REJ R R2>"), 2, "{}", p.dump());
    assert_eq!(p.logged("<RR C P"), 0, "{}", p.dump());
    assert_eq!(p.logged("<I C S2 R0>"), 3, "{}", p.dump());
}

#[test]
fn the_sdl_receiver_sends_one_rej_per_exception() {
    // The control: one REJ, and the sender's T1 and enquiry recover.
    let p = frame_2_lost_twice(sdl());
    assert_eq!(p.logged("<REJ R R2>"), 1, "{}", p.dump());
    assert_eq!(p.logged("<RR C P"), 1, "{}", p.dump());
}
