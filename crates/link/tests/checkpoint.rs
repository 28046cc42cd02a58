//! Checkpointing of a station that polls on the last I frame of every
//! burst and holds new frames for the answer (crates/link/src/datalink/
//! checkpoint.rs): a gap reported in the answer to that poll, or a lost
//! polled frame, is resent at once instead of after T1, and the late
//! second answer of an enquiry resends nothing. Seen on the air: Dire Wolf's
//! receiver in REJ exception answers such a poll with RR F = 1 and stays
//! silent otherwise, so each of these cost a T1 at 20% frame loss.

mod support;

use std::time::Duration;

use linklab_link::{Config, Event, State};
use linklab_wire::ax25::{AddressField, CommandResponse, Frame};
use linklab_wire::control::{Modulus, Supervisory};
use support::{addr, Pair, Side};

const MINUTE: Duration = Duration::from_secs(60);

/// Modulo 8 with REJ, P on the last I frame of every burst, new frames
/// held for its answer: what `linklab send` runs on a radio port.
fn polling() -> Config {
    Config {
        modulus: Modulus::Mod8,
        poll_on_last_i_frame: true,
        poll_holds_new_frames: true,
        ..Config::default()
    }
}

/// A connected pair of polling stations with four 40-octet data units
/// queued at A, and the link log's length before them.
fn four_frames_queued(seed: u64) -> (Pair, usize) {
    let mut p = Pair::new(polling(), polling(), seed);
    p.connect();
    for i in 0..4u8 {
        p.a().send(vec![i; 40]).unwrap();
    }
    let mark = p.log.len();
    (p, mark)
}

fn delivered_in_order(p: &Pair) -> bool {
    p.received(Side::B) == (0..4u8).map(|i| vec![i; 40]).collect::<Vec<_>>()
}

/// How many times A sent the I frame with N(S) = `ns`.
fn sent_i(p: &Pair, ns: u8) -> usize {
    p.logged(&format!(" A> N0AAA>N0BBB: <I C S{ns} R0>"))
        + p.logged(&format!(" A> N0AAA>N0BBB: <I C P S{ns} R0>"))
}

#[test]
fn a_gap_in_the_answer_to_the_last_poll_is_resent_at_once() {
    // The whole first burst is lost: T1, the enquiry, and the answer RR F
    // R0 start a go-back with P on its last frame. Its first frame is lost
    // again: B sends REJ R0 (a second report of the gap the go-back under
    // way repairs, so not acted on) and answers the poll with RR F R0
    // from REJ exception. That answer reports on every frame A sent: the
    // go-back failed, and it is sent again at once, not after a second T1.
    let (mut p, mark) = four_frames_queued(41);
    let mut lost = 0;
    p.dropper = Some(Box::new(move |side, frame: &Frame| {
        let i_frame = side == Side::A && frame.control().ns().is_some();
        // The first burst (4 frames), then S0 once more.
        let drop = i_frame && (lost < 4 || (lost == 4 && frame.control().ns() == Some(0)));
        lost += usize::from(drop);
        drop
    }));
    assert!(
        p.run_until(MINUTE, |p| delivered_in_order(p)
            && p.links[0].unacked() == 0),
        "{}",
        p.dump()
    );
    let log = p.log_since(mark).join("\n");
    assert_eq!(p.logged("<RR C P R0>"), 1, "{log}");
    assert_eq!(p.logged("<REJ R R0>"), 1, "{log}");
    assert_eq!(p.logged("<RR R F R0>"), 2, "{log}");
    assert_eq!(sent_i(&p, 0), 3, "{log}");
    assert_eq!(sent_i(&p, 3), 3, "{log}");
}

/// A's poll on frame 3 is answered too late: T1 expires and A sends an
/// enquiry while that P is unanswered. The first RR F R4 ends Timer
/// Recovery and A sends frames 4-7 with a new poll; B's answer to the
/// enquiry, a second RR F R4, arrives after them. It acknowledges, and
/// must not send 4-7 again. `after_the_air`: it arrives once frames 4-7
/// have left A's line (B's answer to the new poll is lost), else while
/// they are still on it.
fn late_answer_to_an_enquiry(after_the_air: bool) {
    let (mut p, _) = four_frames_queued(43);
    p.dropper = Some(Box::new(|side, _: &Frame| side == Side::B));
    assert!(
        p.run_until(MINUTE, |p| p.received(Side::B).len() == 4
            && p.links[0].state() == State::TimerRecovery),
        "{}",
        p.dump()
    );
    assert_eq!(p.logged("<RR C P R0>"), 1, "{}", p.dump());
    let final_r4 = Frame::s(
        AddressField::new(addr("N0AAA"), addr("N0BBB"), &[], CommandResponse::Response).unwrap(),
        Modulus::Mod8,
        Supervisory::Rr,
        4,
        true,
    )
    .unwrap();
    p.inject(Side::A, &final_r4);
    assert_eq!(p.links[0].state(), State::Connected, "{}", p.dump());
    for i in 4..8u8 {
        p.a().send(vec![i; 40]).unwrap();
    }
    p.transmit();
    if after_the_air {
        // Until A's line is free: four 57-octet frames at 9600 bit/s.
        p.run_for(Duration::from_millis(300));
        assert_eq!(p.received(Side::B).len(), 8, "{}", p.dump());
        assert!(!p.transmitting(Side::A), "{}", p.dump());
    } else {
        p.dropper = None;
    }
    let mark = p.log.len();
    p.inject(Side::A, &final_r4);
    p.dropper = None;
    assert!(
        p.run_until(MINUTE, |p| p.received(Side::B).len() == 8
            && p.links[0].unacked() == 0),
        "{}",
        p.dump()
    );
    let log = p.log_since(mark).join("\n");
    for ns in 4..8u8 {
        assert_eq!(sent_i(&p, ns), 1, "S{ns}: {log}");
    }
    assert!(
        !p.events(Side::A)
            .iter()
            .any(|e| matches!(e, Event::LinkFailure { .. })),
        "{log}"
    );
}

#[test]
fn the_late_answer_to_an_enquiry_resends_nothing_while_the_new_poll_is_on_the_air() {
    late_answer_to_an_enquiry(false);
}

#[test]
fn the_late_answer_to_an_enquiry_resends_nothing_after_the_new_poll_left_the_air() {
    late_answer_to_an_enquiry(true);
}

#[test]
fn an_srej_for_a_frame_whose_resend_is_still_on_the_air_resends_nothing() {
    // Modulo 128 with SREJ. Frame 1 is lost; B asks for it with SREJ and A
    // resends it. An SREJ F R1 that arrives while that resend is still on
    // A's line (Dire Wolf's answer to an earlier poll, which still lists
    // the frames open when it was sent) was sent before B could hear the
    // resend: it asks for nothing new.
    let config = Config {
        modulus: Modulus::Mod128,
        recovery: linklab_link::RecoveryMode::Srej,
        ..polling()
    };
    let mut p = Pair::new(config.clone(), config, 44);
    p.connect();
    assert!(p.run_until(MINUTE, |p| !p.links.iter().any(|l| l.negotiating())));
    let mut lost = false;
    p.dropper = Some(Box::new(move |side, frame: &Frame| {
        let drop = side == Side::A && frame.control().ns() == Some(1) && !lost;
        lost |= drop;
        drop
    }));
    for i in 0..4u8 {
        p.a().send(vec![i; 40]).unwrap();
    }
    // Until A has resent frame 1 and is still transmitting it.
    assert!(
        p.run_until(MINUTE, |p| sent_i_128(p, 1) == 2),
        "{}",
        p.dump()
    );
    assert!(p.transmitting(Side::A), "{}", p.dump());
    let srej_f_r1 = Frame::s(
        AddressField::new(addr("N0AAA"), addr("N0BBB"), &[], CommandResponse::Response).unwrap(),
        Modulus::Mod128,
        Supervisory::Srej,
        1,
        true,
    )
    .unwrap();
    p.inject(Side::A, &srej_f_r1);
    assert!(
        p.run_until(MINUTE, |p| p.received(Side::B).len() == 4
            && p.links[0].unacked() == 0),
        "{}",
        p.dump()
    );
    assert_eq!(sent_i_128(&p, 1), 2, "{}", p.dump());
}

/// How many times A sent the modulo-128 I frame with N(S) = `ns`.
fn sent_i_128(p: &Pair, ns: u8) -> usize {
    p.sent[0]
        .iter()
        .filter(|(_, frame)| frame.control().ns() == Some(ns))
        .count()
}

#[test]
fn an_srej_resend_lost_again_is_resent_after_t1_under_a_driver_that_never_reports_the_air() {
    // Modulo 128 with SREJ, and no word from the driver on when frames
    // leave the air (the station's NET/ROM links were so at first). Frame
    // 1 is lost, and so is its resend: B's next SREJ F R1, the answer to
    // A's poll at T1, must be acted on, or A polls and B asks until the
    // link fails (seen against LinBPQ, which sends SREJ unasked).
    let config = Config {
        modulus: Modulus::Mod128,
        recovery: linklab_link::RecoveryMode::Srej,
        ..polling()
    };
    let mut p = Pair::new(config.clone(), config, 45);
    p.reports_air = false;
    p.connect();
    assert!(p.run_until(MINUTE, |p| !p.links.iter().any(|l| l.negotiating())));
    let mut losses = 0;
    p.dropper = Some(Box::new(move |side, frame: &Frame| {
        let drop = side == Side::A && frame.control().ns() == Some(1) && losses < 2;
        losses += usize::from(drop);
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
    assert_eq!(sent_i_128(&p, 1), 3, "{}", p.dump());
}

#[test]
fn a_rej_that_acknowledges_everything_ends_the_wait_for_the_final() {
    // A polls on its one I frame; B's RR F = 1 is lost; then a REJ
    // response with F = 0 acknowledges that frame (a peer in REJ
    // exception repeating itself). Everything is acknowledged and T1 is
    // stopped: A must not hold its next frames for the lost answer until
    // T3 (seen in the station at 12% loss: 16 frames queued, nothing sent
    // for minutes).
    let mut p = Pair::new(polling(), polling(), 46);
    p.connect();
    p.dropper = Some(Box::new(|side, frame: &Frame| {
        side == Side::B && frame.control().pf() && frame.control().ns().is_none()
    }));
    p.a().send(vec![1; 40]).unwrap();
    assert!(p.run_until(MINUTE, |p| p.received(Side::B).len() == 1
        && p.links[1].sequence_variables().2 == 1));
    // B's answer went nowhere; A still waits for it.
    p.dropper = None;
    let rej_r1 = Frame::s(
        AddressField::new(addr("N0AAA"), addr("N0BBB"), &[], CommandResponse::Response).unwrap(),
        Modulus::Mod8,
        Supervisory::Rej,
        1,
        false,
    )
    .unwrap();
    p.inject(Side::A, &rej_r1);
    p.a().send(vec![2; 40]).unwrap();
    let start = p.now;
    assert!(
        p.run_until(MINUTE, |p| p.received(Side::B).len() == 2),
        "{}",
        p.dump()
    );
    assert!(
        p.now - start < Duration::from_secs(3),
        "the second frame waited {:?}: {}",
        p.now - start,
        p.dump()
    );
}

#[test]
fn a_rej_in_the_same_answer_as_the_go_back_it_follows_resends_nothing() {
    // Seen over Dire Wolf at 1200 bit/s: an answer of several S frames,
    // composed before the peer could hear anything sent after its start.
    // Frame 2 is lost on the way to B; B's own frames to A are lost, and
    // A hears instead one transmission of B's, three frames back to back:
    // RR F R0 (B's answer to an earlier poll) sends A back to resend 0-3;
    // RR R2 (B had 0 and 1) moves V(A) into that go-back; REJ R2 (B lacks
    // 2) asks for what the go-back already carries. It is not acted on.
    let config = Config {
        bit_rate: Some(1200),
        ..polling()
    };
    let mut p = Pair::new(config.clone(), config, 46);
    p.connect();
    let script = std::rc::Rc::new(std::cell::Cell::new(true));
    let scripted = script.clone();
    let mut lost = false;
    p.dropper = Some(Box::new(move |side, frame: &Frame| {
        let first_2 = side == Side::A && frame.control().ns() == Some(2) && !lost;
        lost |= first_2;
        first_2 || (side == Side::B && scripted.get())
    }));
    for i in 0..4u8 {
        p.a().send(vec![i; 40]).unwrap();
    }
    // Until A's burst has left the line (B's answer to its P is lost).
    assert!(
        p.run_until(MINUTE, |p| sent_i(p, 3) == 1 && !p.transmitting(Side::A)),
        "{}",
        p.dump()
    );
    let from_b = |kind, nr, f| {
        Frame::s(
            AddressField::new(addr("N0AAA"), addr("N0BBB"), &[], CommandResponse::Response)
                .unwrap(),
            Modulus::Mod8,
            kind,
            nr,
            f,
        )
        .unwrap()
    };
    p.inject(Side::A, &from_b(Supervisory::Rr, 0, true));
    assert_eq!(sent_i(&p, 0), 2, "the go-back from 0\n{}", p.dump());
    p.inject(Side::A, &from_b(Supervisory::Rr, 2, false));
    p.inject(Side::A, &from_b(Supervisory::Rej, 2, false));
    script.set(false);
    assert!(
        p.run_until(MINUTE, |p| delivered_in_order(p)
            && p.links[0].unacked() == 0),
        "{}",
        p.dump()
    );
    for ns in 2..4 {
        assert_eq!(sent_i(&p, ns), 2, "frame {ns}\n{}", p.dump());
    }
}
