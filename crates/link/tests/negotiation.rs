//! XID parameter negotiation (AX.25 v2.2 6.3.2, Appendix C5), multiple
//! SREJs from a Dire Wolf-like peer, and UI frames, in virtual time.

mod support;

use std::time::Duration;

use linklab_link::{
    Config, Event, LinkError, LinkParams, Negotiation, RecoveryMode, SendError, State,
};
use linklab_wire::ax25::{
    AddressField, CommandResponse, Frame, FrmrInfo, Pid, XidNumber, XidParams,
};
use linklab_wire::control::{Control, Modulus, Supervisory, Unnumbered};
use support::{addr, Pair, Side};

const MINUTE: Duration = Duration::from_secs(60);

fn b_to_a(cr: CommandResponse) -> AddressField {
    AddressField::new(addr("N0AAA"), addr("N0BBB"), &[], cr).unwrap()
}

fn negotiated(p: &Pair, side: Side) -> Vec<(Negotiation, LinkParams)> {
    p.events(side)
        .iter()
        .filter_map(|e| match e {
            Event::Negotiated { outcome, params } => Some((*outcome, *params)),
            _ => None,
        })
        .collect()
}

fn a_config() -> Config {
    Config {
        n1: 128,
        window_mod128: 10,
        ..Config::default()
    }
}

fn b_config() -> Config {
    Config {
        n1: 64,
        window_mod128: 20,
        t1: Duration::from_secs(5),
        n2: 12,
        recovery: RecoveryMode::MultiSrej,
        ..Config::default()
    }
}

#[test]
fn xid_exchange_after_sabme_negotiates_each_direction() {
    let mut p = Pair::new(a_config(), b_config(), 21);
    p.connect();
    // Queued while the XID command is outstanding: held, then segmented
    // with the N1 that B notifies (64), not A's own (128).
    assert!(p.links[0].negotiating());
    let data: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
    p.a().send(data.clone()).unwrap();
    assert!(p.run_until(MINUTE, |p| !p.received(Side::B).is_empty()));
    assert_eq!(p.received(Side::B), vec![data]);
    assert_eq!(
        p.logged(
            "A> N0AAA>N0BBB: <XID C P> XID: class=ABM,half-duplex \
             opt=REJ,SREJ,ext-addr,mod128,TEST,FCS16,sync-tx,segmenter \
             n1rx=128 krx=10 t1=3000ms n2=10"
        ),
        1,
        "{}",
        p.dump()
    );
    // B offers multi-SREJ but A does not: SREJ, the lesser (6.3.2). T1
    // and N2 are the greater of both; N1 and k each side's own receive.
    assert_eq!(
        p.logged(
            "B> N0BBB>N0AAA: <XID R F> XID: class=ABM,half-duplex \
             opt=SREJ,ext-addr,mod128,TEST,FCS16,sync-tx,segmenter \
             n1rx=64 krx=20 t1=5000ms n2=12"
        ),
        1
    );
    let common = LinkParams {
        recovery: RecoveryMode::Srej,
        segmenter: true,
        n1_tx: 64,
        n1_rx: 128,
        k_tx: 10,
        k_rx: 10,
        t1: Duration::from_secs(5),
        n2: 12,
    };
    assert_eq!(negotiated(&p, Side::A), vec![(Negotiation::Agreed, common)]);
    let b = LinkParams {
        n1_tx: 64,
        n1_rx: 64,
        k_rx: 20,
        ..common
    };
    assert_eq!(negotiated(&p, Side::B), vec![(Negotiation::Answered, b)]);
    assert_eq!(p.links[1].params().n1_tx, 64);
    // Every I frame A sent fits B's N1; B's to A fit A's.
    assert!(p.logged("[08 seg") >= 16, "{}", p.dump());
    p.b().send(vec![7; 300]).unwrap();
    assert!(p.run_until(MINUTE, |p| !p.received(Side::A).is_empty()));
    assert!(p
        .events(Side::A)
        .iter()
        .chain(p.events(Side::B))
        .all(|e| !matches!(e, Event::Error(_))));
}

/// A connected with B's XID responses dropped, then `refusal` injected.
fn refused_with(refusal: Frame) -> Pair {
    let mut p = Pair::new(Config::default(), Config::default(), 22);
    p.dropper = Some(Box::new(|side, frame: &Frame| {
        side == Side::B
            && matches!(
                frame.control(),
                Control::U {
                    kind: Unnumbered::Xid,
                    ..
                }
            )
    }));
    p.connect();
    p.run_for(Duration::from_millis(500));
    assert!(p.links[0].negotiating());
    p.inject(Side::A, &refusal);
    assert!(!p.links[0].negotiating());
    assert_eq!(p.links[0].state(), State::Connected, "{}", p.dump());
    p.dropper = None;
    p
}

fn assert_v2_0_defaults_and_transfer(mut p: Pair) {
    let params = p.links[0].params();
    assert_eq!(
        negotiated(&p, Side::A),
        vec![(Negotiation::Refused, params)]
    );
    assert_eq!(params.recovery, RecoveryMode::Rej);
    assert!(!params.segmenter);
    assert_eq!((params.n1_tx, params.k_tx), (256, 7));
    assert_eq!(
        p.a().send(vec![0; 300]),
        Err(SendError::NoSegmenter { len: 300, n1: 256 })
    );
    for i in 0..10u8 {
        p.a().send(vec![i; 200]).unwrap();
    }
    assert!(p.run_until(MINUTE, |p| p.received(Side::B).len() == 10
        && p.links[0].unacked() == 0));
    assert_eq!(p.logged("Error"), 0, "{}", p.dump());
}

#[test]
fn xid_refused_by_frmr_keeps_the_link_with_v2_0_defaults() {
    let info = FrmrInfo {
        rejected_control: 0xAF | 0x10,
        w: true,
        ..FrmrInfo::default()
    }
    .encode(Modulus::Mod128)
    .unwrap();
    let frmr = Frame::u(
        b_to_a(CommandResponse::Response),
        Modulus::Mod128,
        Unnumbered::Frmr,
        true,
        info,
    )
    .unwrap();
    assert_v2_0_defaults_and_transfer(refused_with(frmr));
}

#[test]
fn xid_refused_by_dm_keeps_the_link() {
    let dm = Frame::u(
        b_to_a(CommandResponse::Response),
        Modulus::Mod128,
        Unnumbered::Dm,
        true,
        vec![],
    )
    .unwrap();
    assert_v2_0_defaults_and_transfer(refused_with(dm));
}

#[test]
fn unanswered_xid_is_tried_n2_times_then_v2_2_defaults() {
    let a = Config {
        n1: 512,
        window_mod128: 40,
        ..Config::default()
    };
    let mut p = Pair::new(a, Config::default(), 23);
    // B ignores XID: its responses never arrive.
    p.dropper = Some(Box::new(|side, frame: &Frame| {
        side == Side::B && frame.control().pf() && frame.info().first() == Some(&0x82)
    }));
    p.connect();
    assert!(p.run_until(Duration::from_secs(600), |p| !p.links[0].negotiating()));
    assert_eq!(p.logged("A> N0AAA>N0BBB: <XID C P>"), 10, "{}", p.dump());
    assert_eq!(p.links[0].state(), State::Connected);
    let params = p.links[0].params();
    assert_eq!(
        negotiated(&p, Side::A),
        vec![(Negotiation::NoAnswer, params)]
    );
    assert_eq!((params.n1_tx, params.k_tx), (256, 32));
    assert_eq!(params.recovery, RecoveryMode::Srej);
    p.a().send(b"still here".to_vec()).unwrap();
    assert!(p.run_until(MINUTE, |p| p.received(Side::B).len() == 1));
}

fn xid_command(pf: bool) -> Frame {
    let params = XidParams {
        i_field_length_rx: Some(XidNumber::new(100 * 8)),
        window_size_rx: Some(XidNumber::new(4)),
        ack_timer: Some(XidNumber::new(2000)),
        retries: Some(XidNumber::new(3)),
        ..XidParams::default()
    };
    Frame::u(
        b_to_a(CommandResponse::Command),
        Modulus::Mod128,
        Unnumbered::Xid,
        pf,
        params.encode().unwrap(),
    )
    .unwrap()
}

#[test]
fn xid_command_is_answered_while_disconnected_and_applies_to_the_next_link() {
    let mut p = Pair::new(Config::default(), Config::default(), 24);
    p.inject(Side::A, &xid_command(true));
    // Parameters absent from the command keep their values (4.3.3.7);
    // T1 and N2 are the greater of both, N1 and k A's own receive limits.
    assert_eq!(
        p.logged(
            "A> N0AAA>N0BBB: <XID R F> XID: class=ABM,half-duplex \
             opt=SREJ,ext-addr,mod128,TEST,FCS16,sync-tx,segmenter \
             n1rx=256 krx=32 t1=3000ms n2=10"
        ),
        1,
        "{}",
        p.dump()
    );
    // B now sets up the link (without an XID of its own).
    p.a().set_accept_incoming(true);
    let now = p.now;
    p.b().connect(now).unwrap();
    assert!(p.run_until(MINUTE, |p| p.links[0].state() == State::Connected));
    let params = p.links[0].params();
    assert_eq!((params.n1_tx, params.k_tx), (100, 4));
    assert!(negotiated(&p, Side::A).contains(&(Negotiation::Answered, params)));
}

#[test]
fn xid_protocol_errors() {
    let mut p = Pair::new(Config::default(), Config::default(), 25);
    p.inject(Side::A, &xid_command(false));
    let response = Frame::u(
        b_to_a(CommandResponse::Response),
        Modulus::Mod128,
        Unnumbered::Xid,
        true,
        vec![],
    )
    .unwrap();
    p.inject(Side::A, &response);
    let garbage = Frame::u(
        b_to_a(CommandResponse::Command),
        Modulus::Mod128,
        Unnumbered::Xid,
        true,
        vec![0x82, 0x80, 0x00, 0x05, 0x02],
    )
    .unwrap();
    p.inject(Side::A, &garbage);
    let events = p.take_events(Side::A);
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0], Event::Error(LinkError::XidWithoutPoll));
    assert_eq!(events[1], Event::Error(LinkError::UnexpectedXidResponse));
    assert!(matches!(events[2], Event::Error(LinkError::BadXid(_))));
    assert_eq!(p.logged("A> N0AAA>N0BBB: <XID"), 0);
}

#[test]
fn crossing_xid_commands_are_both_answered() {
    // gensio's accepting side sends XID C too: A answers it while its own
    // command is outstanding, then completes with B's response.
    let mut p = Pair::new(Config::default(), Config::default(), 26);
    p.connect();
    assert!(p.links[0].negotiating());
    p.inject(Side::A, &xid_command(true));
    assert_eq!(p.logged("A> N0AAA>N0BBB: <XID R F>"), 1);
    assert!(p.run_until(MINUTE, |p| !p.links[0].negotiating()));
    let results = negotiated(&p, Side::A);
    let outcomes: Vec<_> = results.iter().map(|n| n.0).collect();
    assert_eq!(outcomes, vec![Negotiation::Answered, Negotiation::Agreed]);
    // The injected command's limits applied first; B's own response,
    // arriving last, notified B's real ones.
    assert_eq!((results[0].1.n1_tx, results[0].1.k_tx), (100, 4));
    assert_eq!(
        (results[0].1.t1, results[0].1.n2),
        (Duration::from_secs(3), 10)
    );
    let params = p.links[0].params();
    assert_eq!((params.n1_tx, params.k_tx), (256, 32));
}

#[test]
fn three_srejs_in_a_row_each_retransmit_once() {
    // Dire Wolf answers a burst loss with one SREJ per missing frame, the
    // first with F = 1 (Dire Wolf's allow_f1), no information field.
    let config = Config {
        recovery: RecoveryMode::MultiSrej,
        ..Config::default()
    };
    let mut p = Pair::new(config.clone(), config, 27);
    p.connect();
    assert!(p.run_until(MINUTE, |p| !p.links[0].negotiating()));
    assert_eq!(p.links[0].params().recovery, RecoveryMode::MultiSrej);
    // Lose the first transmission of 2, 3 and 4; B's own answers are lost
    // too, so that A acts on the injected SREJs only.
    let mut dropped = [false; 128];
    p.dropper = Some(Box::new(move |side, frame: &Frame| match side {
        Side::B => true,
        Side::A => match frame.control().ns() {
            Some(ns @ 2..=4) if !dropped[usize::from(ns)] => {
                dropped[usize::from(ns)] = true;
                true
            }
            _ => false,
        },
    }));
    for i in 0..8u8 {
        p.a().send(vec![i; 50]).unwrap();
    }
    p.run_for(Duration::from_millis(700));
    assert_eq!(p.links[0].unacked(), 8, "{}", p.dump());
    for (nr, f) in [(2, true), (3, false), (4, false)] {
        let srej = Frame::s(
            b_to_a(CommandResponse::Response),
            Modulus::Mod128,
            Supervisory::Srej,
            nr,
            f,
        )
        .unwrap();
        p.inject(Side::A, &srej);
    }
    p.dropper = None;
    assert!(
        p.run_until(MINUTE, |p| p.received(Side::B).len() == 8
            && p.links[0].unacked() == 0),
        "{}",
        p.dump()
    );
    assert_eq!(
        p.received(Side::B),
        (0..8u8).map(|i| vec![i; 50]).collect::<Vec<_>>()
    );
    for ns in 2..=4 {
        assert_eq!(p.logged(&format!("<I C S{ns} R0>")), 2, "{}", p.dump());
    }
    for ns in [0, 1, 5, 6, 7] {
        assert_eq!(p.logged(&format!("<I C S{ns} R0>")), 1, "{}", p.dump());
    }
    assert!(
        p.events(Side::A)
            .iter()
            .all(|e| !matches!(e, Event::Error(_))),
        "{:?}",
        p.events(Side::A)
    );
    // B itself asked for the whole gap with one multi-SREJ: N(R) 2, then
    // 3 and 4 in its information field (shown after the N(R)).
    assert_eq!(
        p.logged("B> N0BBB>N0AAA: <SREJ R R2,3,4>"),
        1,
        "{}",
        p.dump()
    );
    assert_eq!(p.logged("B> N0BBB>N0AAA: <SREJ"), 1, "{}", p.dump());
}

#[test]
fn ui_frames_in_and_out_of_the_link() {
    let mut p = Pair::new(Config::default(), Config::default(), 28);
    p.a()
        .send_unit_data(Pid::NoLayer3, b"beacon".to_vec())
        .unwrap();
    p.run_for(Duration::from_secs(1));
    assert_eq!(
        p.events(Side::B),
        &[Event::UnitData {
            pid: Pid::NoLayer3,
            data: b"beacon".to_vec()
        }]
    );
    assert_eq!(
        p.logged("A> N0AAA>N0BBB: <UI C> [F0] beacon"),
        1,
        "{}",
        p.dump()
    );
    assert_eq!(
        p.a().send_unit_data(Pid::NoLayer3, vec![0; 257]),
        Err(SendError::UnitDataTooLong { len: 257, n1: 256 })
    );
    // A UI command with P = 1, "ping", from B.
    let ui = |modulus| {
        Frame::new(
            b_to_a(CommandResponse::Command),
            modulus,
            Control::U {
                kind: Unnumbered::Ui,
                pf: true,
            },
            Some(Pid::NoLayer3),
            b"ping".to_vec(),
        )
        .unwrap()
    };
    // It gets DM F = 1 while disconnected (4.3.3.6).
    p.inject(Side::A, &ui(Modulus::Mod8));
    assert_eq!(p.logged("A> N0AAA>N0BBB: <DM R F>"), 1, "{}", p.dump());
    // ... and RR F = 1 on a link.
    p.connect();
    p.inject(Side::A, &ui(Modulus::Mod128));
    assert_eq!(p.logged("A> N0AAA>N0BBB: <RR R F R0>"), 1, "{}", p.dump());
    assert_eq!(
        p.events(Side::A)
            .iter()
            .filter(|e| matches!(e, Event::UnitData { .. }))
            .count(),
        2
    );
}
