//! Deterministic scenarios of the AX.25 v2.2 data link in virtual time.

mod support;

use linklab_core::Engine;
use std::time::Duration;

use linklab_link::{
    AckPolicy, DisconnectReason, FailureReason, LinkError, RecoveryMode, SabmeHandling, SendError,
};
use linklab_link::{Config, Event, State, Version};
use linklab_wire::ax25::{AddressField, CommandResponse, Frame, MultiSrejInfo, Pid, SrejRequest};
use linklab_wire::control::Modulus;
use linklab_wire::control::{Control, Supervisory, Unnumbered};
use support::{addr, Pair, Side};

fn v20() -> Config {
    Config {
        modulus: Modulus::Mod8,
        ..Config::default()
    }
}

#[test]
fn connect_v2_2_transfer_and_disconnect() {
    let mut p = Pair::new(Config::default(), Config::default(), 1);
    p.connect();
    assert_eq!(
        p.events(Side::A),
        &[Event::Connected {
            version: Version::V2_2,
            incoming: false
        }]
    );
    assert_eq!(
        p.events(Side::B),
        &[Event::Connected {
            version: Version::V2_2,
            incoming: true
        }]
    );
    for i in 0..10u8 {
        p.a().send(vec![i; 100]).unwrap();
    }
    assert!(
        p.run_until(Duration::from_secs(60), |p| p.received(Side::B).len() == 10
            && p.links[0].unacked() == 0)
    );
    assert_eq!(
        p.received(Side::B),
        (0..10u8).map(|i| vec![i; 100]).collect::<Vec<_>>()
    );
    let now = p.now;
    p.a().disconnect(now).unwrap();
    assert!(p.run_until(Duration::from_secs(60), |p| p
        .links
        .iter()
        .all(|l| l.state() == State::Disconnected)));
}

const MINUTE: Duration = Duration::from_secs(60);

/// Address field of a frame from B to A.
fn b_to_a(cr: CommandResponse) -> AddressField {
    AddressField::new(addr("N0AAA"), addr("N0BBB"), &[], cr).unwrap()
}

fn all_connected(p: &Pair) -> bool {
    p.links.iter().all(|l| l.state() == State::Connected)
}

fn fallback_with(handling: SabmeHandling) -> Pair {
    let peer = Config {
        sabme_handling: handling,
        ..v20()
    };
    let mut p = Pair::new(Config::default(), peer, 2);
    p.connect();
    assert_eq!(
        p.events(Side::A),
        &[Event::Connected {
            version: Version::V2_0,
            incoming: false
        }],
        "{}",
        p.dump()
    );
    assert_eq!(p.links[0].modulus(), Modulus::Mod8);
    assert_eq!(p.logged("<SABM C P>"), 1, "{}", p.dump());
    p
}

#[test]
fn v2_2_falls_back_to_v2_0_on_dm() {
    let p = fallback_with(SabmeHandling::Dm);
    assert_eq!(p.logged("<SABME C P>"), 1);
    assert_eq!(p.logged("<DM R F>"), 1);
}

#[test]
fn v2_2_falls_back_to_v2_0_on_frmr() {
    let p = fallback_with(SabmeHandling::Frmr);
    assert_eq!(p.logged("<SABME C P>"), 1);
    assert_eq!(p.logged("FRMR"), 1, "{}", p.dump());
}

#[test]
fn v2_2_falls_back_to_v2_0_after_n2_unanswered_sabme() {
    let mut p = fallback_with(SabmeHandling::Ignore);
    assert_eq!(p.logged("<SABME C P>"), 10);
    // And the v2.0 link carries data (no segmentation: too long is refused).
    assert_eq!(
        p.a().send(vec![0; 300]),
        Err(SendError::TooLongForV2_0 { len: 300, n1: 256 })
    );
    p.a().send(b"hello".to_vec()).unwrap();
    assert!(p.run_until(MINUTE, |p| p.received(Side::B).len() == 1));
}

#[test]
fn connect_refused_when_not_listening() {
    let mut p = Pair::new(v20(), v20(), 3);
    p.b().set_accept_incoming(false);
    let now = p.now;
    p.a().connect(now).unwrap();
    assert!(p.run_until(MINUTE, |p| p.links[0].state() == State::Disconnected));
    assert_eq!(
        p.events(Side::A),
        &[Event::Disconnected {
            reason: DisconnectReason::Refused
        }]
    );
    assert_eq!(p.logged("<DM R F>"), 1);
    assert_eq!(
        p.a().send(vec![1]),
        Err(SendError::NotConnected {
            state: State::Disconnected
        })
    );
}

#[test]
fn connect_times_out_after_n2_tries() {
    let mut p = Pair::new(v20(), v20(), 4);
    p.dropper = Some(Box::new(|_, _| true));
    let now = p.now;
    p.a().connect(now).unwrap();
    assert!(p.run_until(Duration::from_secs(600), |p| p.links[0].state()
        == State::Disconnected));
    assert_eq!(
        p.events(Side::A),
        &[Event::LinkFailure {
            reason: FailureReason::ConnectTimeout
        }]
    );
    assert_eq!(p.logged("<SABM C P>"), 10, "{}", p.dump());
}

/// Drops the first transmission of A's I frame with N(S) = `ns`.
fn drop_first_i(ns: u8) -> support::Dropper {
    let mut dropped = false;
    Box::new(move |side, frame: &Frame| {
        let hit = side == Side::A && frame.control().ns() == Some(ns) && !dropped;
        dropped |= hit;
        hit
    })
}

fn transfer_with_one_loss(config: Config, ns: u8) -> Pair {
    let mut p = Pair::new(config.clone(), config, 5);
    p.connect();
    p.dropper = Some(drop_first_i(ns));
    for i in 0..6u8 {
        p.a().send(vec![i; 40]).unwrap();
    }
    assert!(
        p.run_until(MINUTE, |p| p.received(Side::B).len() == 6
            && p.links[0].unacked() == 0),
        "{}",
        p.dump()
    );
    assert_eq!(
        p.received(Side::B),
        (0..6u8).map(|i| vec![i; 40]).collect::<Vec<_>>()
    );
    p
}

#[test]
fn rej_recovery_after_one_lost_i_frame() {
    let p = transfer_with_one_loss(v20(), 2);
    assert_eq!(p.logged("<REJ R R2>"), 1, "{}", p.dump());
    // Go-back-N: frames 2..5 are sent twice, 0 and 1 once.
    assert_eq!(p.logged("<I C S3 R0>"), 2);
    assert_eq!(p.logged("<I C S0 R0>"), 1);
}

#[test]
fn srej_recovery_resends_only_the_lost_frame() {
    let p = transfer_with_one_loss(Config::default(), 2);
    assert_eq!(p.logged("<SREJ R R2>"), 1, "{}", p.dump());
    assert_eq!(p.logged("<I C S2 R0>"), 2);
    assert_eq!(p.logged("<I C S3 R0>"), 1);
    assert_eq!(p.logged("<I C S5 R0>"), 1);
}

#[test]
fn t1_expiry_polls_and_recovers_a_lost_last_frame() {
    let p = transfer_with_one_loss(v20(), 5);
    // Nothing follows the lost frame, so only T1 can detect it.
    assert_eq!(p.logged("<RR C P R0>"), 1, "{}", p.dump());
    assert_eq!(p.logged("<RR R F R5>"), 1);
    assert_eq!(p.logged("<I C S5 R0>"), 2);
}

#[test]
fn n2_exhaustion_is_a_link_failure_on_both_sides() {
    let mut p = Pair::new(v20(), v20(), 6);
    p.connect();
    // B's transmitter dies: A hears nothing more.
    p.dropper = Some(Box::new(|side, _| side == Side::B));
    p.a().send(b"lost in space".to_vec()).unwrap();
    assert!(
        p.run_until(Duration::from_secs(600), |p| p
            .links
            .iter()
            .all(|l| l.state() == State::Disconnected)),
        "{}",
        p.dump()
    );
    assert!(p.events(Side::A).contains(&Event::LinkFailure {
        reason: FailureReason::UnacknowledgedData
    }));
    assert_eq!(p.logged("<RR C P R0>"), 10, "{}", p.dump());
    // A's DM tells B.
    assert!(p.events(Side::B).contains(&Event::Disconnected {
        reason: DisconnectReason::RemoteDm
    }));
}

#[test]
fn window_stalls_at_k_and_resumes() {
    let config = Config {
        window_mod8: 2,
        ack_policy: AckPolicy::OnPollImmediately,
        ..v20()
    };
    let mut p = Pair::new(config.clone(), config, 7);
    p.connect();
    for i in 0..5u8 {
        p.a().send(vec![i]).unwrap();
    }
    p.run_for(Duration::from_secs(1));
    // Two frames out, the rest wait for an acknowledgement that only a poll brings.
    assert_eq!((p.links[0].unacked(), p.links[0].queued()), (2, 3));
    assert!(p.run_until(MINUTE, |p| p.received(Side::B).len() == 5
        && p.links[0].unacked() == 0));
    assert!(p.logged("<RR C P") >= 2, "{}", p.dump());
}

#[test]
fn rnr_stops_the_sender_until_rr() {
    let mut p = Pair::new(v20(), v20(), 8);
    p.connect();
    let now = p.now;
    p.b().set_own_receiver_busy(now, true);
    p.run_for(Duration::from_secs(1));
    for i in 0..3u8 {
        p.a().send(vec![i]).unwrap();
    }
    p.run_for(Duration::from_secs(20));
    assert!(p.received(Side::B).is_empty());
    assert!(p.logged("<RNR R") >= 1, "{}", p.dump());
    let now = p.now;
    p.b().set_own_receiver_busy(now, false);
    assert!(
        p.run_until(MINUTE, |p| p.received(Side::B).len() == 3),
        "{}",
        p.dump()
    );
}

#[test]
fn nr_outside_window_re_establishes() {
    let mut p = Pair::new(v20(), v20(), 9);
    p.connect();
    let bad = Frame::s(
        b_to_a(CommandResponse::Response),
        Modulus::Mod8,
        Supervisory::Rr,
        5,
        false,
    )
    .unwrap();
    p.inject(Side::A, &bad);
    assert!(p
        .events(Side::A)
        .contains(&Event::Error(LinkError::NrSequence {
            nr: 5,
            va: 0,
            vs: 0
        })));
    assert_eq!(p.links[0].state(), State::AwaitingConnection);
    assert!(p.run_until(MINUTE, all_connected));
}

#[test]
fn i_frame_longer_than_n1_re_establishes() {
    let mut p = Pair::new(v20(), v20(), 10);
    p.connect();
    let long = Frame::i(
        b_to_a(CommandResponse::Command),
        Modulus::Mod8,
        0,
        0,
        false,
        Pid::NoLayer3,
        vec![0; 257],
    )
    .unwrap();
    p.inject(Side::A, &long);
    assert!(p
        .events(Side::A)
        .contains(&Event::Error(LinkError::IFrameTooLong {
            len: 257,
            n1: 256
        })));
    assert_eq!(p.logged("<SABM C P>"), 2);
    assert!(p.received(Side::A).is_empty());
}

#[test]
fn unexpected_frames_get_the_prescribed_response() {
    let mut p = Pair::new(v20(), v20(), 11);
    // Disconnected: I command -> DM F=P; RR command with P -> DM F; UA -> error C only.
    let i = Frame::i(
        b_to_a(CommandResponse::Command),
        Modulus::Mod8,
        0,
        0,
        true,
        Pid::NoLayer3,
        vec![1],
    )
    .unwrap();
    p.inject(Side::A, &i);
    assert_eq!(p.logged("A> N0AAA>N0BBB: <DM R F>"), 1, "{}", p.dump());
    let rr = Frame::s(
        b_to_a(CommandResponse::Command),
        Modulus::Mod8,
        Supervisory::Rr,
        0,
        true,
    )
    .unwrap();
    p.inject(Side::A, &rr);
    assert_eq!(p.logged("A> N0AAA>N0BBB: <DM R F>"), 2);
    let ua = Frame::u(
        b_to_a(CommandResponse::Response),
        Modulus::Mod8,
        Unnumbered::Ua,
        true,
        vec![],
    )
    .unwrap();
    p.inject(Side::A, &ua);
    assert_eq!(
        p.take_events(Side::A),
        vec![Event::Error(LinkError::UnexpectedUa)]
    );
    assert_eq!(p.links[0].state(), State::Disconnected);
    // Connected: DM -> disconnected (error E).
    p.connect();
    p.take_events(Side::A);
    let dm = Frame::u(
        b_to_a(CommandResponse::Response),
        Modulus::Mod8,
        Unnumbered::Dm,
        false,
        vec![],
    )
    .unwrap();
    p.inject(Side::A, &dm);
    assert_eq!(
        p.take_events(Side::A),
        vec![
            Event::Error(LinkError::DmWhileConnected),
            Event::Disconnected {
                reason: DisconnectReason::RemoteDm
            }
        ]
    );
    // Frames for other stations are ignored.
    let other = Frame::u(
        AddressField::new(addr("N0XYZ"), addr("N0BBB"), &[], CommandResponse::Command).unwrap(),
        Modulus::Mod8,
        Unnumbered::Sabm,
        true,
        vec![],
    )
    .unwrap();
    let before = p.log.len();
    p.inject(Side::A, &other);
    assert_eq!(p.log.len(), before + 1);
}

#[test]
fn peer_reset_with_sabm_while_connected() {
    let mut p = Pair::new(v20(), v20(), 12);
    p.connect();
    let sabm = Frame::u(
        b_to_a(CommandResponse::Command),
        Modulus::Mod8,
        Unnumbered::Sabm,
        true,
        vec![],
    )
    .unwrap();
    p.inject(Side::A, &sabm);
    assert!(p
        .events(Side::A)
        .contains(&Event::Error(LinkError::ResetByPeer)));
    assert_eq!(p.links[0].state(), State::Connected);
    assert_eq!(p.logged("A> N0AAA>N0BBB: <UA R F>"), 1);
}

#[test]
fn segmentation_of_5000_octets_with_n1_256() {
    let mut p = Pair::new(Config::default(), Config::default(), 13);
    p.connect();
    let data: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
    p.a().send_with_pid(Pid::Ip, data.clone()).unwrap();
    assert!(p.run_until(MINUTE, |p| !p.received(Side::B).is_empty()));
    assert_eq!(p.received(Side::B), vec![data]);
    assert!(p.events(Side::B).contains(&Event::Data {
        pid: Pid::Ip,
        data: p.received(Side::B)[0].clone()
    }));
    assert_eq!(p.logged("[08 seg"), 20);
    let too_long = vec![0; 254 + 127 * 255 + 1];
    assert!(matches!(
        p.a().send(too_long),
        Err(SendError::TooLongToSegment { .. })
    ));
}

#[test]
fn rej_mode_on_v2_2_link_and_poll_on_last_i_frame() {
    let config = Config {
        recovery: RecoveryMode::Rej,
        poll_on_last_i_frame: true,
        ..Config::default()
    };
    let p = transfer_with_one_loss(config, 3);
    assert_eq!(p.logged("<REJ R R3>"), 1, "{}", p.dump());
    assert!(p.logged("<I C P S5") >= 1);
}

#[test]
fn disconnect_collision_and_release_timeout() {
    let mut p = Pair::new(v20(), v20(), 14);
    p.connect();
    p.dropper = Some(Box::new(|side, _| side == Side::B));
    let now = p.now;
    p.a().disconnect(now).unwrap();
    assert!(p.run_until(Duration::from_secs(600), |p| p.links[0].state()
        == State::Disconnected));
    assert!(p.events(Side::A).contains(&Event::Disconnected {
        reason: DisconnectReason::ReleaseTimeout
    }));
    assert_eq!(p.logged("<DISC C P>"), 10);
}

#[test]
fn poll_on_last_i_frame_holds_new_frames_until_the_final() {
    let config = Config {
        poll_on_last_i_frame: true,
        poll_holds_new_frames: true,
        ..v20()
    };
    let mut p = Pair::new(config.clone(), config, 21);
    p.connect();
    let now = p.now;
    // The first send is the last in the queue when it goes out: it ends
    // its burst and carries P = 1. Data queued while that poll is
    // unanswered waits for the answer (one P outstanding, 4.4.3), so that
    // it too can end a burst with P instead of waiting for the peer's T2.
    p.a().send(b"first".to_vec()).unwrap();
    let first = p.a().poll_transmit(now).expect("an I frame");
    assert!(first.control().pf(), "{first:?}");
    p.a().send(b"second".to_vec()).unwrap();
    assert_eq!(p.a().poll_transmit(now), None, "held until F = 1");
    p.b().handle_frame(now, &first);
    let answer = p.b().poll_transmit(now).expect("RR F = 1");
    assert!(answer.control().pf(), "{answer:?}");
    p.a().handle_frame(now, &answer);
    let second = p.a().poll_transmit(now).expect("the held I frame");
    assert!(second.control().pf(), "{second:?}");
}

#[test]
fn poll_on_last_i_frame_polls_the_last_frame_of_a_short_burst() {
    // As seen over two Dire Wolf modems: a sender with window 7, a
    // receiver with window 4 that acknowledges when its window fills (RR R4, no F)
    // just before it answers the poll. Frames freed by that RR must not
    // go out while the poll is unanswered: the last of them would end
    // the transfer without P and wait for the receiver's T2 (1.45 s of
    // an 11.8 s transfer at 9600 bit/s).
    let sender = Config {
        poll_on_last_i_frame: true,
        poll_holds_new_frames: true,
        window_mod8: 7,
        ..v20()
    };
    let receiver = Config {
        window_mod8: 4,
        ack_policy: AckPolicy::WindowOrT2,
        ..v20()
    };
    let receiver_t2 = receiver.t2;
    let mut p = Pair::new(sender, receiver, 24);
    p.connect();
    for n in 0..8u8 {
        p.a().send(vec![n; 40]).unwrap();
    }
    let t0 = p.now;
    assert!(p.run_until(MINUTE, |p| p.received(Side::B).len() == 8
        && p.links[0].sequence_variables().1 == 0));
    assert_eq!(p.logged("<RR R R4>"), 1, "{}", p.dump());
    assert_eq!(p.logged("<I C P S6"), 1, "{}", p.dump());
    assert_eq!(p.logged("<I C P S7"), 1, "{}", p.dump());
    assert_eq!(p.logged("<RR R F"), 2, "{}", p.dump());
    assert!(p.now - t0 < receiver_t2, "waited for T2: {}", p.dump());
}

#[test]
fn poll_on_last_i_frame_polls_every_window_once_answered() {
    let config = Config {
        poll_on_last_i_frame: true,
        window_mod8: 2,
        ..v20()
    };
    let mut p = Pair::new(config.clone(), config, 22);
    p.connect();
    for n in 0..6u8 {
        p.a().send(vec![n; 40]).unwrap();
    }
    assert!(p.run_until(MINUTE, |p| p.received(Side::B).len() == 6));
    // Each window of two ends with P = 1, answered at once by RR F = 1;
    // the answer ends the checkpoint, so the next window may poll again.
    assert_eq!(p.logged("<I C P"), 3, "{}", p.dump());
    assert_eq!(p.logged("<RR R F"), 3, "{}", p.dump());
    assert!(!p
        .events(Side::A)
        .iter()
        .any(|e| matches!(e, Event::Error(_))));
}

#[test]
fn a_pending_acknowledgement_rides_in_a_keyed_transmission() {
    let config = Config {
        ack_policy: AckPolicy::AfterT2,
        t2: Duration::from_secs(3),
        ..v20()
    };
    let mut p = Pair::new(config.clone(), config, 23);
    p.connect();
    p.a().send(b"hello".to_vec()).unwrap();
    let now = p.now;
    let i = p.a().poll_transmit(now).expect("an I frame");
    p.b().handle_frame(now, &i);
    // B owes an acknowledgement, delayed by T2...
    assert!(p.b().poll_transmit(now).is_none());
    // ...until its transmitter is keyed for something else: then it goes now.
    p.b().transmitter_keyed(now);
    let rr = p.b().poll_transmit(now).expect("the acknowledgement");
    assert_eq!(linklab_wire::monitor::format(&rr), "N0BBB>N0AAA: <RR R R1>");
    // Keying again with nothing owed sends nothing.
    p.b().transmitter_keyed(now);
    assert!(p.b().poll_transmit(now).is_none());
}

/// The window-or-T2 policy: a complete window is acknowledged as soon as
/// its last frame arrives; the frames of a burst that does not fill the
/// window are acknowledged once T2 passes without another frame.
#[test]
fn window_or_t2_acknowledges_a_full_window_at_once_and_the_rest_after_t2() {
    let config = Config {
        window_mod8: 4,
        ack_policy: AckPolicy::WindowOrT2,
        t2: Duration::from_millis(500),
        ..v20()
    };
    let mut p = Pair::new(config.clone(), config, 24);
    p.connect();
    for n in 0..6u8 {
        p.a().send(vec![n; 40]).unwrap();
    }
    // 6 frames of 40 octets at 9600 bit/s arrive within 0.4 s: the first
    // four are acknowledged as soon as the fourth is in, the last two not
    // yet.
    p.run_for(Duration::from_millis(400));
    assert_eq!(p.received(Side::B).len(), 6, "{}", p.dump());
    assert_eq!(p.logged("<RR R R4>"), 1, "{}", p.dump());
    assert_eq!(p.links[0].unacked(), 2, "{}", p.dump());
    p.run_for(Duration::from_millis(300));
    assert_eq!(p.logged("<RR R R6>"), 0, "{}", p.dump());
    p.run_for(Duration::from_millis(400));
    assert_eq!(p.logged("<RR R R6>"), 1, "{}", p.dump());
    assert_eq!(p.links[0].unacked(), 0);
    assert_eq!(p.logged("<RR C P"), 0, "T1 never expired: {}", p.dump());
    assert_eq!(p.logged("<I C P"), 0, "no checkpointing was asked for");
}

/// A v2.2 link up and idle, XID done; then `bytes` from B reach A with
/// data queued at A. Returns the pair and the log line before the frame.
fn invalid_frame_at_a(seed: u64, bytes: &[u8]) -> (Pair, usize) {
    let mut p = Pair::new(Config::default(), Config::default(), seed);
    p.connect();
    assert!(p.run_until(MINUTE, |p| !p.links[0].negotiating()));
    p.run_for(Duration::from_secs(1));
    p.take_events(Side::A);
    p.take_events(Side::B);
    // Queued, not sent yet: the reset discards it (fig. C4.4a).
    p.a().send(b"queued before".to_vec()).unwrap();
    let mark = p.log.len();
    p.inject_bytes(Side::A, bytes);
    (p, mark)
}

/// What errors L, M and N share (figs. C4.4a, C4.5a): DL-ERROR, the I
/// queue discarded, SABME (P = 1) at once, state 5; the UA completes a
/// DL-CONNECT confirm and the XID exchange follows; then data flow
/// correctly again.
fn re_established(mut p: Pair, mark: usize, error: LinkError, inject: &str) {
    assert_eq!(
        p.log_since(mark),
        [
            format!("inject >A <undecodable: {inject}> 9C 60 82 82 82 40 ..."),
            "A> N0AAA>N0BBB: <SABME C P>".to_string(),
            format!("A: Error({error:?})"),
        ],
        "{}",
        p.dump()
    );
    assert_eq!(p.links[0].state(), State::AwaitingConnection2_2);
    assert_eq!((p.links[0].queued(), p.links[0].unacked()), (0, 0));
    let mark = p.log.len();
    assert!(p.run_until(MINUTE, |p| all_connected(p) && !p.links[0].negotiating()));
    let lines = p.log_since(mark);
    assert_eq!(
        lines[..4],
        [
            "B> N0BBB>N0AAA: <UA R F>",
            "B: Error(ResetByPeer)",
            "A> N0AAA>N0BBB: <XID C P> XID: class=ABM,half-duplex \
             opt=REJ,SREJ,ext-addr,mod128,TEST,FCS16,sync-tx,segmenter n1rx=256 krx=32 \
             t1=3000ms n2=10",
            "A: Connected { version: V2_2, incoming: false }",
        ],
        "{}",
        p.dump()
    );
    assert_eq!(
        p.events(Side::A)[..2],
        [
            Event::Error(error),
            Event::Connected {
                version: Version::V2_2,
                incoming: false
            }
        ]
    );
    for i in 0..5u8 {
        p.a().send(vec![i; 300]).unwrap();
    }
    assert!(p.run_until(MINUTE, |p| p.received(Side::B).len() == 5
        && p.links[0].unacked() == 0));
    assert_eq!(
        p.received(Side::B),
        (0..5u8).map(|i| vec![i; 300]).collect::<Vec<_>>()
    );
    assert_eq!(
        p.events(Side::A)
            .iter()
            .filter(|e| matches!(e, Event::Error(_)))
            .count(),
        1
    );
}

#[test]
fn unknown_control_field_is_error_l_and_re_establishes() {
    let mut bytes = Vec::new();
    b_to_a(CommandResponse::Command).encode_into(&mut bytes);
    bytes.push(0xCB);
    let (p, mark) = invalid_frame_at_a(31, &bytes);
    let error = LinkError::ControlFieldInvalid {
        control: vec![0xCB],
    };
    assert_eq!(
        error.to_string(),
        "L: control field 0xCB invalid or not implemented"
    );
    re_established(
        p,
        mark,
        error,
        "unknown U frame control field 0xCB (modifier bits 11010)",
    );
}

#[test]
fn information_in_an_s_frame_is_error_m_and_re_establishes() {
    let mut bytes = Frame::s(
        b_to_a(CommandResponse::Response),
        Modulus::Mod128,
        Supervisory::Rr,
        0,
        false,
    )
    .unwrap()
    .encode();
    bytes.push(0x55);
    let (p, mark) = invalid_frame_at_a(32, &bytes);
    let error = LinkError::InfoNotPermitted {
        control: vec![0x01, 0x00],
    };
    assert_eq!(
        error.to_string(),
        "M: information field received in a U or S frame that allows none \
         (control field 0x01 0x00)"
    );
    re_established(
        p,
        mark,
        error,
        "RR frame carries 1 octets of information; only I, UI, XID, TEST and FRMR frames may",
    );
}

#[test]
fn one_control_octet_in_a_modulo_128_s_frame_is_error_n_and_re_establishes() {
    let mut bytes = Vec::new();
    b_to_a(CommandResponse::Response).encode_into(&mut bytes);
    bytes.push(0x01);
    let (p, mark) = invalid_frame_at_a(33, &bytes);
    let error = LinkError::FrameLength {
        control: vec![0x01],
    };
    assert_eq!(
        error.to_string(),
        "N: length of frame incorrect for frame type (control field 0x01)"
    );
    re_established(
        p,
        mark,
        error,
        "modulo-128 S frame control field needs 2 octets; only 1 present",
    );
}

#[test]
fn invalid_frames_in_other_states() {
    let mut unknown = Vec::new();
    b_to_a(CommandResponse::Command).encode_into(&mut unknown);
    unknown.push(0xCB);
    let error = Event::Error(LinkError::ControlFieldInvalid {
        control: vec![0xCB],
    });
    // Disconnected (fig. C4.1): the error only, no DM.
    let mut p = Pair::new(Config::default(), Config::default(), 34);
    p.inject_bytes(Side::A, &unknown);
    assert_eq!(p.take_events(Side::A), std::slice::from_ref(&error));
    assert_eq!(p.sent[0].len(), 0);
    assert_eq!(p.links[0].state(), State::Disconnected);
    // Timer recovery (fig. C4.5a): as in state 3, re-establishment.
    p.connect();
    assert!(p.run_until(MINUTE, |p| !p.links[0].negotiating()));
    p.dropper = Some(Box::new(|side, _| side == Side::B));
    p.a().send(b"unanswered".to_vec()).unwrap();
    assert!(p.run_until(MINUTE, |p| p.links[0].state() == State::TimerRecovery));
    p.take_events(Side::A);
    p.dropper = None;
    let mark = p.log.len();
    p.inject_bytes(Side::A, &unknown);
    assert_eq!(p.take_events(Side::A), std::slice::from_ref(&error));
    assert_eq!(p.links[0].state(), State::AwaitingConnection2_2);
    let sent: Vec<String> = p
        .log_since(mark)
        .into_iter()
        .filter(|l| l.starts_with("A> "))
        .collect();
    assert_eq!(sent, ["A> N0AAA>N0BBB: <SABME C P>"], "{}", p.dump());
    assert!(p.run_until(MINUTE, all_connected));
    // Awaiting release (fig. C4.3): the error only.
    let now = p.now;
    p.dropper = Some(Box::new(|side, _| side == Side::B));
    p.a().disconnect(now).unwrap();
    p.transmit();
    p.take_events(Side::A);
    let sent = p.sent[0].len();
    p.inject_bytes(Side::A, &unknown);
    assert_eq!(p.take_events(Side::A), [error]);
    assert_eq!(p.links[0].state(), State::AwaitingRelease);
    assert_eq!(p.sent[0].len(), sent);
}

/// Six I frames from A to B, the first transmission of those with N(S) in
/// `lost` dropped; A polls with its last I frame. Both stations configured
/// for `recovery`; A's XID negotiation ends before the data.
fn transfer_with_losses(recovery: RecoveryMode, lost: &'static [u8]) -> Pair {
    let config = Config {
        recovery,
        poll_on_last_i_frame: true,
        ..Config::default()
    };
    let mut p = Pair::new(config.clone(), config, 31);
    p.connect();
    assert!(p.run_until(MINUTE, |p| !p.links[0].negotiating()));
    let mut dropped = [false; 128];
    p.dropper = Some(Box::new(move |side, frame: &Frame| {
        match (side, frame.control().ns()) {
            (Side::A, Some(ns)) if lost.contains(&ns) && !dropped[usize::from(ns)] => {
                dropped[usize::from(ns)] = true;
                true
            }
            _ => false,
        }
    }));
    for i in 0..6u8 {
        p.a().send(vec![i; 40]).unwrap();
    }
    assert!(
        p.run_until(MINUTE, |p| p.received(Side::B).len() == 6
            && p.links[0].unacked() == 0),
        "{}",
        p.dump()
    );
    assert_eq!(
        p.received(Side::B),
        (0..6u8).map(|i| vec![i; 40]).collect::<Vec<_>>()
    );
    p
}

/// The SREJs B sent: (N(R), F, further N(R)s).
fn srejs_from_b(p: &Pair) -> Vec<(u8, bool, Vec<u8>)> {
    p.sent[1]
        .iter()
        .filter_map(|(_, frame)| {
            let further = frame.multi_srej()?;
            let Control::S { nr, pf, .. } = frame.control() else {
                return None;
            };
            let further = further.sequence_numbers(Modulus::Mod128).collect();
            Some((nr, pf, further))
        })
        .collect()
}

#[test]
fn multi_srej_asks_for_frames_2_and_4_in_one_srej_when_negotiated() {
    let p = transfer_with_losses(RecoveryMode::MultiSrej, &[2, 4]);
    assert_eq!(p.links[1].params().recovery, RecoveryMode::MultiSrej);
    // Each gap is asked for as it shows (frame 3, then 5); the poll on 5
    // is answered with one SREJ naming both frames still missing.
    assert_eq!(
        srejs_from_b(&p),
        vec![(2, false, vec![]), (2, true, vec![4])],
        "{}",
        p.dump()
    );
    assert_eq!(p.logged("<SREJ R F R2,4>"), 1, "{}", p.dump());
}

#[test]
fn single_srejs_for_frames_2_and_4_without_multi_srej() {
    let p = transfer_with_losses(RecoveryMode::Srej, &[2, 4]);
    assert_eq!(p.links[1].params().recovery, RecoveryMode::Srej);
    // The poll on 5 is answered with SREJ F = 1 for 2, the oldest gap,
    // then SREJ for 4. A resent 2 for the first SREJ after its poll went
    // out, so the F = 1 repeat is not acted on (4.4.4): 2 goes twice in
    // all, not three times. A polls again on 4, answered with RR F = 1.
    assert_eq!(
        srejs_from_b(&p),
        vec![(2, false, vec![]), (2, true, vec![]), (4, false, vec![])],
        "{}",
        p.dump()
    );
    assert_eq!(p.logged("<I C S2 R0>"), 2, "{}", p.dump());
    assert_eq!(p.logged("<I C P S4 R0>"), 1, "{}", p.dump());
    assert_eq!(p.logged("<RR R F R6>"), 1, "{}", p.dump());
}

#[test]
fn multi_srej_names_a_contiguous_gap_in_one_srej() {
    let p = transfer_with_losses(RecoveryMode::MultiSrej, &[2, 3]);
    // Frame 4 shows the gap 2-3: one SREJ for both; the poll on 5 asks
    // again for both in one SREJ with F = 1.
    assert_eq!(
        srejs_from_b(&p),
        vec![(2, false, vec![3]), (2, true, vec![3])],
        "{}",
        p.dump()
    );
    assert_eq!(p.logged("<SREJ R R2,3>"), 1, "{}", p.dump());
}

#[test]
fn multi_srej_is_not_used_unless_the_peer_agrees() {
    let config = |recovery| Config {
        recovery,
        poll_on_last_i_frame: true,
        ..Config::default()
    };
    let mut p = Pair::new(
        config(RecoveryMode::Srej),
        config(RecoveryMode::MultiSrej),
        31,
    );
    p.connect();
    assert!(p.run_until(MINUTE, |p| !p.links[0].negotiating()));
    assert_eq!(p.links[1].params().recovery, RecoveryMode::Srej);
    assert_eq!(p.links[0].params().recovery, RecoveryMode::Srej);
}

#[test]
fn received_multi_srej_retransmits_exactly_the_frames_named() {
    let config = Config {
        recovery: RecoveryMode::MultiSrej,
        ..Config::default()
    };
    let mut p = Pair::new(config.clone(), config, 33);
    p.connect();
    assert!(p.run_until(MINUTE, |p| !p.links[0].negotiating()));
    // Lose the first transmission of 2, 4 and 5; B's own answers are lost
    // too, so that A acts on the injected multi-SREJ only.
    let mut dropped = [false; 128];
    p.dropper = Some(Box::new(move |side, frame: &Frame| match side {
        Side::B => true,
        Side::A => match frame.control().ns() {
            Some(ns @ (2 | 4 | 5)) if !dropped[usize::from(ns)] => {
                dropped[usize::from(ns)] = true;
                true
            }
            _ => false,
        },
    }));
    for i in 0..7u8 {
        p.a().send(vec![i; 50]).unwrap();
    }
    p.run_for(Duration::from_millis(700));
    assert_eq!(p.links[0].unacked(), 7, "{}", p.dump());
    let from = p.log.len();
    let further = MultiSrejInfo {
        requests: vec![SrejRequest::Span { first: 4, last: 5 }],
    };
    let srej = Frame::srej(
        b_to_a(CommandResponse::Response),
        Modulus::Mod128,
        2,
        true,
        &further,
    )
    .unwrap();
    p.inject(Side::A, &srej);
    p.dropper = None;
    assert!(
        p.run_until(MINUTE, |p| p.received(Side::B).len() == 7
            && p.links[0].unacked() == 0),
        "{}",
        p.dump()
    );
    assert_eq!(
        p.received(Side::B),
        (0..7u8).map(|i| vec![i; 50]).collect::<Vec<_>>()
    );
    // A's next I frames are 2, 4 and 5, in that order, once each.
    let resent: Vec<String> = p
        .log_since(from)
        .into_iter()
        .filter(|l| l.contains("<I C"))
        .collect();
    assert!(resent.len() == 3, "{}", p.dump());
    for (line, ns) in resent.iter().zip([2, 4, 5]) {
        assert!(line.contains(&format!("<I C S{ns} R0>")), "{}", p.dump());
    }
    for ns in [0, 1, 3, 6] {
        assert_eq!(p.logged(&format!("<I C S{ns} R0>")), 1, "{}", p.dump());
    }
    assert!(
        p.events(Side::A)
            .iter()
            .all(|e| !matches!(e, Event::Error(_))),
        "{:?}",
        p.events(Side::A)
    );
}

/// The capture of `interop/channel-gensio.sh` (docs/interop.md section
/// 7): a peer that answers each of several queued polls with the same
/// `RR R F`. In Timer Recovery the first F = 1 ends recovery and
/// retransmits from N(R) (fig. C4.5); the copies arrive in Connected with
/// no P = 1 outstanding: error A each (fig. C4.4, "check need for
/// response"), and, N(R) = V(A), nothing more is retransmitted.
#[test]
fn a_repeated_final_retransmits_once() {
    // B hears nothing more from A: four I frames and then A's polls are lost.
    let mut p = unanswered_window(Modulus::Mod128, RecoveryMode::Rej);
    assert_eq!(p.logged("<RR C P R0>"), 1, "{}", p.dump());
    let final_r0 = Frame::s(
        b_to_a(CommandResponse::Response),
        Modulus::Mod128,
        Supervisory::Rr,
        0,
        true,
    )
    .unwrap();
    // The answer to the poll: go back to N(R) = 0, state 3.
    p.inject(Side::A, &final_r0);
    assert_eq!(p.links[0].state(), State::Connected, "{}", p.dump());
    assert_eq!(i_frames_from_a(&p), 8, "{}", p.dump());
    assert_eq!(p.logged("<I C S0 R0>"), 2);
    assert_eq!(p.logged("<I C S3 R0>"), 2);
    assert!(p.take_events(Side::A).is_empty());
    // The same answer twice more: error A each, no retransmission.
    for _ in 0..2 {
        p.inject(Side::A, &final_r0);
        assert_eq!(p.links[0].state(), State::Connected);
        assert_eq!(i_frames_from_a(&p), 8, "{}", p.dump());
        assert_eq!(
            p.take_events(Side::A),
            vec![Event::Error(LinkError::UnexpectedFinal)]
        );
        assert_eq!(p.links[0].sequence_variables(), (4, 0, 0));
    }
}

#[test]
fn the_first_round_trip_measured_sets_t1() {
    // RFC 6298 2.2's rule for the first sample: a link set up with a long
    // initial T1 (15 s, as behind a slow TNC) and a 26 ms round trip
    // has T1 = 2 x SRT, floored at T1 min, once the SABM(E)/UA exchange
    // (and the XID exchange after it) is done; with the SDL's 1/8
    // smoothing from T1V / 2 it would still be 13 s.
    let polling = Config {
        t1: Duration::from_secs(15),
        t1_min: Duration::from_millis(10),
        poll_on_last_i_frame: true,
        srt_first_sample: true,
        ..Config::default()
    };
    let mut p = Pair::new(polling.clone(), polling.clone(), 25);
    p.connect();
    let t1v = p.links[0].t1v();
    assert!(
        t1v < Duration::from_millis(200),
        "T1V {t1v:?}: {}",
        p.dump()
    );
    // A station that does not poll waits for the peer's delayed
    // acknowledgement: twice (SRT + T2).
    let waiting = Config {
        poll_on_last_i_frame: false,
        ..polling
    };
    let t2 = waiting.t2;
    let mut p = Pair::new(waiting.clone(), waiting, 25);
    p.connect();
    let t1v = p.links[0].t1v();
    assert!(
        t1v > 2 * t2 && t1v < 2 * t2 + Duration::from_millis(200),
        "T1V {t1v:?}"
    );
}

/// A with four I frames outstanding, none of which reached B, in Timer
/// Recovery with its enquiry (RR P = 1) lost too. Both stations use
/// `recovery` on a link of `modulus`.
fn unanswered_window(modulus: Modulus, recovery: RecoveryMode) -> Pair {
    let config = Config {
        modulus,
        recovery,
        ..Config::default()
    };
    let mut p = Pair::new(config.clone(), config, 31);
    p.connect();
    assert!(p.run_until(MINUTE, |p| !p.links.iter().any(|l| l.negotiating())));
    assert_eq!(p.links[0].modulus(), modulus);
    p.dropper = Some(Box::new(|side, _| side == Side::A));
    for i in 0..4u8 {
        p.a().send(vec![i; 40]).unwrap();
    }
    assert!(
        p.run_until(MINUTE, |p| p.links[0].state() == State::TimerRecovery),
        "{}",
        p.dump()
    );
    p.take_events(Side::A);
    assert_eq!(i_frames_from_a(&p), 4, "{}", p.dump());
    p
}

fn i_frames_from_a(p: &Pair) -> usize {
    p.log
        .iter()
        .filter(|l| l.contains(" A> ") && l.contains("<I C"))
        .count()
}

/// An S response from B to A.
fn s_from_b(modulus: Modulus, kind: Supervisory, nr: u8, f: bool) -> Frame {
    Frame::s(b_to_a(CommandResponse::Response), modulus, kind, nr, f).unwrap()
}

const BOTH_MODULI: [Modulus; 2] = [Modulus::Mod8, Modulus::Mod128];

/// One retransmission per recovery event: the answer to A's enquiry (RR
/// F = 1, N(R) = 0) sends frames 0-3 again; a REJ for the same N(R) right
/// behind it (seen at 1200 bit/s) is not acted on again, but still
/// counts as an acknowledgement.
#[test]
fn a_final_then_a_rej_for_the_same_nr_resend_the_window_once() {
    for modulus in BOTH_MODULI {
        let mut p = unanswered_window(modulus, RecoveryMode::Rej);
        p.inject(Side::A, &s_from_b(modulus, Supervisory::Rr, 0, true));
        assert_eq!(p.links[0].state(), State::Connected, "{}", p.dump());
        assert_eq!(i_frames_from_a(&p), 8, "{}", p.dump());
        p.inject(Side::A, &s_from_b(modulus, Supervisory::Rej, 0, false));
        assert_eq!(i_frames_from_a(&p), 8, "{modulus:?}\n{}", p.dump());
        assert_eq!(p.links[0].sequence_variables(), (4, 0, 0));
        assert!(p.take_events(Side::A).is_empty());
        for ns in 0..4 {
            assert_eq!(p.logged(&format!("<I C S{ns} R0>")), 2, "{}", p.dump());
        }
    }
}

/// The other order: a REJ in Timer Recovery goes back to N(R) at once;
/// the F = 1 answer to the enquiry with the same N(R) then ends Timer
/// Recovery without sending the window a third time.
#[test]
fn a_rej_then_a_final_for_the_same_nr_resend_the_window_once() {
    for modulus in BOTH_MODULI {
        let mut p = unanswered_window(modulus, RecoveryMode::Rej);
        p.inject(Side::A, &s_from_b(modulus, Supervisory::Rej, 0, false));
        assert_eq!(i_frames_from_a(&p), 8, "{}", p.dump());
        p.inject(Side::A, &s_from_b(modulus, Supervisory::Rr, 0, true));
        assert_eq!(p.links[0].state(), State::Connected, "{}", p.dump());
        assert_eq!(i_frames_from_a(&p), 8, "{modulus:?}\n{}", p.dump());
        assert!(p.take_events(Side::A).is_empty());
    }
}

/// The inhibition ends with progress: once N(R) = 2 acknowledges frames
/// 0 and 1, a REJ for 2 resends 2 and 3.
#[test]
fn a_rej_for_a_later_nr_after_progress_still_acts() {
    for modulus in BOTH_MODULI {
        let mut p = unanswered_window(modulus, RecoveryMode::Rej);
        p.inject(Side::A, &s_from_b(modulus, Supervisory::Rr, 0, true));
        assert_eq!(i_frames_from_a(&p), 8, "{}", p.dump());
        p.inject(Side::A, &s_from_b(modulus, Supervisory::Rr, 2, false));
        assert_eq!(i_frames_from_a(&p), 8, "{}", p.dump());
        p.inject(Side::A, &s_from_b(modulus, Supervisory::Rej, 2, false));
        assert_eq!(i_frames_from_a(&p), 10, "{modulus:?}\n{}", p.dump());
        assert_eq!(p.logged("<I C S2 R0>"), 3, "{}", p.dump());
        assert_eq!(p.logged("<I C S1 R0>"), 2, "{}", p.dump());
    }
}

/// The inhibition ends with T1: the resent frames are lost again, T1
/// expires, and the answer to the new enquiry, with the same N(R), sends
/// them once more.
#[test]
fn t1_expiry_ends_the_inhibition() {
    for modulus in BOTH_MODULI {
        let mut p = unanswered_window(modulus, RecoveryMode::Rej);
        p.inject(Side::A, &s_from_b(modulus, Supervisory::Rr, 0, true));
        p.inject(Side::A, &s_from_b(modulus, Supervisory::Rej, 0, false));
        assert_eq!(i_frames_from_a(&p), 8, "{}", p.dump());
        assert!(
            p.run_until(MINUTE, |p| p.links[0].state() == State::TimerRecovery),
            "{}",
            p.dump()
        );
        p.inject(Side::A, &s_from_b(modulus, Supervisory::Rr, 0, true));
        assert_eq!(i_frames_from_a(&p), 12, "{modulus:?}\n{}", p.dump());
    }
}

/// 4.4.4: A acts on an SREJ for frame 1 while its enquiry is outstanding;
/// the SREJ with F = 1 that answers the enquiry repeats N(R) = 1 (the
/// peer could not yet have seen the frame resent) and is not acted on.
/// After T1 expires, the answer to the next enquiry is acted on.
#[test]
fn an_srej_with_f_repeating_an_actioned_nr_is_not_acted_on() {
    let modulus = Modulus::Mod128;
    let mut p = unanswered_window(modulus, RecoveryMode::Srej);
    let srej = |nr, f| {
        Frame::srej(
            b_to_a(CommandResponse::Response),
            modulus,
            nr,
            f,
            &MultiSrejInfo::default(),
        )
        .unwrap()
    };
    p.inject(Side::A, &srej(1, false));
    assert_eq!(i_frames_from_a(&p), 5, "{}", p.dump());
    assert_eq!(p.logged("<I C S1 R0>"), 2, "{}", p.dump());
    p.inject(Side::A, &srej(1, true));
    assert_eq!(p.links[0].state(), State::Connected, "{}", p.dump());
    assert_eq!(i_frames_from_a(&p), 5, "{}", p.dump());
    assert_eq!(p.links[0].sequence_variables(), (4, 1, 0));
    assert!(p.take_events(Side::A).is_empty());
    assert!(
        p.run_until(MINUTE, |p| p.links[0].state() == State::TimerRecovery),
        "{}",
        p.dump()
    );
    p.inject(Side::A, &srej(1, true));
    assert_eq!(i_frames_from_a(&p), 6, "{}", p.dump());
    assert_eq!(p.logged("<I C S1 R0>"), 3, "{}", p.dump());
}

#[test]
fn a_lost_final_does_not_hold_new_frames_once_all_is_acknowledged() {
    // Over Dire Wolf's modem at 20% loss: A's P went out, the answer with
    // F = 1 never came, and a frame without F acknowledged everything
    // (here B's own I frame). T1 stopped with nothing outstanding, and A
    // held its new frames for the lost answer until T3, 300 s later.
    let sender = Config {
        poll_on_last_i_frame: true,
        poll_holds_new_frames: true,
        ..v20()
    };
    let mut p = Pair::new(sender, v20(), 26);
    p.connect();
    let mut dropped = false;
    p.dropper = Some(Box::new(move |side, frame| {
        let answer = side == Side::B
            && matches!(
                frame.control(),
                Control::S {
                    kind: Supervisory::Rr,
                    pf: true,
                    ..
                }
            );
        let hit = answer && !dropped;
        dropped |= hit;
        hit
    }));
    for n in 0..3u8 {
        p.a().send(vec![n; 40]).unwrap();
    }
    assert!(p.run_until(MINUTE, |p| p.received(Side::B).len() == 3));
    // B's own I frame acknowledges all three, without F.
    p.b().send(b"from B".to_vec()).unwrap();
    assert!(
        p.run_until(MINUTE, |p| p.links[0].unacked() == 0),
        "{}",
        p.dump()
    );
    p.dropper = None;
    let t0 = p.now;
    p.a().send(b"more".to_vec()).unwrap();
    assert!(
        p.run_until(Duration::from_secs(30), |p| p.received(Side::B).len() == 4),
        "held for a lost F = 1:\n{}",
        p.dump()
    );
    assert!(p.now - t0 < Duration::from_secs(5), "{}", p.dump());
}
