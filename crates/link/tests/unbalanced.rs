//! Scenarios of the HDLC procedures in virtual time: NRM and ARM between a
//! primary (A) and a secondary (B), and LAPB in ABM between a DTE (A) and a
//! DCE (B) (ISO/IEC 13239; ITU-T X.25 2.4; Bux, Kümmerle and Truong 1982,
//! Appendix A1, A2).

mod hdlc_pair;
mod support;

use std::time::Duration;

use hdlc_pair::{configs, HdlcPair, Side};
use linklab_link::{
    Config, DisconnectReason, Event, FailureReason, InvalidFrame, LinkError, Mode, PollPolicy,
    RecoveryMode, Role, RoleError, State, Version,
};
use linklab_wire::ax25::FrmrInfo;
use linklab_wire::control::{Control, Modulus, Supervisory, Unnumbered};
use linklab_wire::lapb::Frame;

const MINUTE: Duration = Duration::from_secs(60);

fn base(modulus: Modulus) -> Config {
    Config {
        modulus,
        recovery: RecoveryMode::Rej,
        t1: Duration::from_secs(2),
        t3: Duration::from_secs(60),
        ..Config::default()
    }
}

fn pair(mode: Mode, modulus: Modulus, policy: PollPolicy) -> HdlcPair {
    let (a, b) = configs(
        mode,
        Config {
            poll_policy: policy,
            ..base(modulus)
        },
    );
    HdlcPair::new(mode, a, b, 7)
}

fn nrm() -> HdlcPair {
    pair(Mode::Nrm, Modulus::Mod8, PollPolicy::AsOftenAsPossible)
}

fn messages(n: u8, len: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| vec![i; len]).collect()
}

/// Queues `msgs` on `side`, runs until they arrived and everything is
/// acknowledged, and checks the secondary spoke only when polled (NRM).
fn transfer(p: &mut HdlcPair, side: Side, msgs: &[Vec<u8>]) {
    for m in msgs {
        p.links[side as usize].send(m.clone()).unwrap();
    }
    let other = match side {
        Side::A => Side::B,
        Side::B => Side::A,
    };
    let n = msgs.len();
    let ok = p.run_until(MINUTE * 5, |p| p.received(other).len() >= n && p.idle());
    assert!(ok, "transfer incomplete:\n{}", p.dump());
    assert_eq!(p.received(other), msgs, "{}", p.dump());
}

fn i_frames_with_ns(p: &HdlcPair, side: Side, ns: u8) -> usize {
    p.sent[side as usize]
        .iter()
        .filter(|(_, f)| matches!(f.control(), Control::I { ns: n, .. } if n == ns))
        .count()
}

fn is_i(frame: &Frame, ns: u8) -> bool {
    matches!(frame.control(), Control::I { ns: n, .. } if n == ns)
}

#[test]
fn nrm_set_up_and_release() {
    let mut p = nrm();
    p.connect();
    assert_eq!(p.logged("A> 21 <SNRM PF>"), 1, "{}", p.dump());
    assert_eq!(p.logged("B> 21 <UA PF>"), 1, "{}", p.dump());
    assert_eq!(
        p.events(Side::A),
        &[Event::Connected {
            version: Version::V2_0,
            incoming: false
        }]
    );
    assert!(matches!(
        p.events(Side::B),
        [Event::Connected { incoming: true, .. }]
    ));
    // The secondary cannot set the link up or release it by itself: it
    // asks with RD when polled, and the primary releases with DISC.
    p.b().request_disconnect().unwrap();
    assert!(p.run_until(MINUTE, |p| p.all(State::Disconnected)));
    assert_eq!(p.logged("B> 21 <DISC"), 1, "RD:\n{}", p.dump());
    assert_eq!(p.logged("A> 21 <DISC PF>"), 1, "{}", p.dump());
    assert!(p.events(Side::B).contains(&Event::Disconnected {
        reason: DisconnectReason::LocalRequest
    }));
    // And the primary releases on its own.
    p.connect();
    let now = p.now;
    p.a().disconnect(now).unwrap();
    assert!(p.run_until(MINUTE, |p| p.all(State::Disconnected)));
    assert_eq!(
        p.events(Side::A).last(),
        Some(&Event::Disconnected {
            reason: DisconnectReason::LocalRequest
        })
    );
    assert_eq!(
        p.events(Side::B).last(),
        Some(&Event::Disconnected {
            reason: DisconnectReason::RemoteRequest
        })
    );
    p.secondary_only_polled().unwrap();
}

#[test]
fn a_secondary_cannot_connect_or_disconnect_and_sends_nothing_for_it() {
    let mut p = nrm();
    let now = p.now;
    assert_eq!(p.b().connect(now), Err(RoleError::SecondaryCannotSetUp));
    assert_eq!(
        p.b().disconnect(now),
        Err(RoleError::SecondaryCannotRelease)
    );
    p.run_for(Duration::from_secs(1));
    assert!(p.sent[1].is_empty(), "{}", p.dump());
    assert_eq!(p.links[1].state(), State::Disconnected);

    // Established by the primary: the secondary still neither resets nor
    // releases it, and sends no SNRM, DISC or RD for asking.
    p.connect();
    let now = p.now;
    assert_eq!(p.b().connect(now), Err(RoleError::SecondaryCannotSetUp));
    assert_eq!(
        p.b().disconnect(now),
        Err(RoleError::SecondaryCannotRelease)
    );
    p.run_for(Duration::from_secs(5));
    assert!(p.all(State::Connected), "{}", p.dump());
    assert_eq!(p.logged("B> 21 <DISC"), 0, "{}", p.dump());
    assert_eq!(p.logged("B> 21 <SNRM"), 0, "{}", p.dump());
    assert_eq!(p.logged("A> 21 <DISC"), 0, "{}", p.dump());
    // RD is for a secondary only.
    assert_eq!(
        p.a().request_disconnect(),
        Err(RoleError::NotSecondary {
            role: Role::Primary
        })
    );
    p.secondary_only_polled().unwrap();
}

#[test]
fn nrm_secondary_refuses_when_not_listening_and_cannot_connect() {
    let mut p = nrm();
    p.b().set_accept_incoming(false);
    let now = p.now;
    assert_eq!(p.b().connect(now), Err(RoleError::SecondaryCannotSetUp));
    p.run_for(Duration::from_secs(1));
    assert!(p.sent[1].is_empty(), "{}", p.dump());
    let now = p.now;
    p.a().connect(now).unwrap();
    p.run_until(MINUTE, |p| p.links[0].state() == State::Disconnected);
    assert_eq!(
        p.events(Side::A),
        &[Event::Disconnected {
            reason: DisconnectReason::Refused
        }]
    );
    assert_eq!(p.logged("B> 21 <DM PF>"), 1, "{}", p.dump());
}

#[test]
fn nrm_one_way_primary_to_secondary() {
    for policy in [PollPolicy::AsOftenAsPossible, PollPolicy::OnLastIFrame] {
        let mut p = pair(Mode::Nrm, Modulus::Mod8, policy);
        p.connect();
        transfer(&mut p, Side::A, &messages(20, 100));
        p.secondary_only_polled().unwrap();
        // No retransmissions on a clean line.
        assert_eq!(
            p.sent[0]
                .iter()
                .filter(|(_, f)| matches!(f.control(), Control::I { .. }))
                .count(),
            20,
            "{policy:?}:\n{}",
            p.dump()
        );
    }
}

#[test]
fn nrm_one_way_secondary_to_primary() {
    let mut p = nrm();
    p.connect();
    transfer(&mut p, Side::B, &messages(20, 100));
    p.secondary_only_polled().unwrap();
    // Every transmission opportunity ends with F = 1, never more than
    // M - 1 = 7 I frames in one.
    let mut run = 0;
    for (_, f) in &p.sent[1] {
        if matches!(f.control(), Control::I { .. }) {
            run += 1;
        }
        assert!(run <= 7, "{}", p.dump());
        if f.control().pf() {
            run = 0;
        }
    }
}

#[test]
fn nrm_secondary_waits_for_the_poll() {
    let mut p = pair(Mode::Nrm, Modulus::Mod8, PollPolicy::OnLastIFrame);
    p.links[0] = {
        let (a, _) = configs(
            Mode::Nrm,
            Config {
                poll_policy: PollPolicy::OnLastIFrame,
                poll_interval: Duration::from_secs(5),
                ..base(Modulus::Mod8)
            },
        );
        linklab_link::HdlcLink::new(
            a,
            linklab_link::HdlcAddressing::Unbalanced {
                station: linklab_wire::lapb::Station::Primary,
                secondary: hdlc_pair::SECONDARY,
            },
        )
        .unwrap()
    };
    p.connect();
    let t0 = p.now;
    p.b().send(b"hello".to_vec()).unwrap();
    p.run_for(Duration::from_secs(4));
    assert!(p.received(Side::A).is_empty(), "{}", p.dump());
    assert!(p.run_until(MINUTE, |p| p.received(Side::A).len() == 1));
    assert!(p.now >= t0 + Duration::from_secs(5), "{}", p.dump());
    p.secondary_only_polled().unwrap();
}

#[test]
fn nrm_two_way_flow() {
    let mut p = nrm();
    p.connect();
    let a = messages(15, 80);
    let b: Vec<Vec<u8>> = (100..115u8).map(|i| vec![i; 60]).collect();
    for m in &a {
        p.a().send(m.clone()).unwrap();
    }
    for m in &b {
        p.b().send(m.clone()).unwrap();
    }
    assert!(p.run_until(MINUTE * 5, |p| p.received(Side::B).len() == 15
        && p.received(Side::A).len() == 15
        && p.idle()));
    assert_eq!(p.received(Side::B), a);
    assert_eq!(p.received(Side::A), b);
    p.secondary_only_polled().unwrap();
}

#[test]
fn nrm_rej_recovery_primary_to_secondary() {
    let mut p = pair(Mode::Nrm, Modulus::Mod8, PollPolicy::OnLastIFrame);
    p.connect();
    let mut dropped = false;
    p.dropper = Some(Box::new(move |side, f| {
        let hit = side == Side::A && !dropped && is_i(f, 1);
        dropped |= hit;
        hit
    }));
    transfer(&mut p, Side::A, &messages(5, 50));
    assert_eq!(p.logged("B> 21 <REJ"), 1, "{}", p.dump());
    // REJ and the F that carries it ask for the same frames: sent once.
    assert_eq!(i_frames_with_ns(&p, Side::A, 1), 2, "{}", p.dump());
    assert_eq!(i_frames_with_ns(&p, Side::A, 2), 2, "{}", p.dump());
    p.secondary_only_polled().unwrap();
}

#[test]
fn nrm_rej_recovery_secondary_to_primary() {
    let mut p = nrm();
    p.connect();
    let mut dropped = false;
    p.dropper = Some(Box::new(move |side, f| {
        let hit = side == Side::B && !dropped && is_i(f, 1);
        dropped |= hit;
        hit
    }));
    transfer(&mut p, Side::B, &messages(5, 50));
    assert_eq!(p.logged("A> 21 <REJ"), 1, "{}", p.dump());
    // The poll after the REJ has the same N(R): no second retransmission.
    assert_eq!(i_frames_with_ns(&p, Side::B, 1), 2, "{}", p.dump());
    assert_eq!(i_frames_with_ns(&p, Side::B, 3), 2, "{}", p.dump());
    p.secondary_only_polled().unwrap();
}

#[test]
fn nrm_checkpoint_recovers_a_lost_rej() {
    let mut p = nrm();
    p.connect();
    let (mut i1, mut rej) = (false, false);
    p.dropper = Some(Box::new(move |side, f| {
        let hit_i = side == Side::B && !i1 && is_i(f, 1);
        i1 |= hit_i;
        let hit_rej = side == Side::A
            && !rej
            && matches!(
                f.control(),
                Control::S {
                    kind: Supervisory::Rej,
                    ..
                }
            );
        rej |= hit_rej;
        hit_i || hit_rej
    }));
    transfer(&mut p, Side::B, &messages(5, 50));
    assert_eq!(p.logged("A> 21 <REJ"), 1, "{}", p.dump());
    assert_eq!(p.logged("[dropped by test]"), 2, "{}", p.dump());
    // The next poll's N(R) = 1 starts the retransmission (P/F checkpoint).
    assert_eq!(i_frames_with_ns(&p, Side::B, 1), 2, "{}", p.dump());
    p.secondary_only_polled().unwrap();
}

#[test]
fn nrm_checkpoint_recovers_a_lost_retransmission() {
    let mut p = nrm();
    p.connect();
    let mut drops = 0;
    p.dropper = Some(Box::new(move |side, f| {
        let hit = side == Side::B && drops < 2 && is_i(f, 1);
        drops += usize::from(hit);
        hit
    }));
    transfer(&mut p, Side::B, &messages(5, 50));
    // REJ recovery cannot be repeated; the checkpoint does it.
    assert_eq!(p.logged("A> 21 <REJ"), 1, "{}", p.dump());
    assert_eq!(i_frames_with_ns(&p, Side::B, 1), 3, "{}", p.dump());
    p.secondary_only_polled().unwrap();
}

#[test]
fn nrm_primary_recovers_by_time_out() {
    let mut p = nrm();
    p.connect();
    // Lose the secondary's first answer to a poll that carries data.
    let mut dropped = false;
    p.dropper = Some(Box::new(move |side, f| {
        let hit = side == Side::B && !dropped && f.control().pf() && f.control().nr() == Some(3);
        dropped |= hit;
        hit
    }));
    let t0 = p.now;
    transfer(&mut p, Side::A, &messages(3, 50));
    assert_eq!(p.logged("[dropped by test]"), 1, "{}", p.dump());
    // T1 (adapted, at least T1 min = 1 s) expired and the primary asked
    // again with RR P = 1.
    assert!(p.now >= t0 + Duration::from_secs(1), "{}", p.dump());
    assert!(p.logged("A> 21 <RR PF R0>") >= 1, "{}", p.dump());
    assert_eq!(p.links[0].state(), State::Connected);
    p.secondary_only_polled().unwrap();
}

#[test]
fn nrm_failure_is_reported_on_both_sides() {
    let mut p = nrm();
    p.connect();
    p.dropper = Some(Box::new(|side, _| side == Side::B));
    p.a().send(b"lost".to_vec()).unwrap();
    p.b().send(b"lost too".to_vec()).unwrap();
    assert!(p.run_until(MINUTE * 10, |p| p.all(State::Disconnected)));
    assert!(p.events(Side::A).contains(&Event::LinkFailure {
        reason: FailureReason::UnacknowledgedData
    }));
    // The secondary hears no more polls and gives up after T3.
    assert!(p
        .events(Side::B)
        .iter()
        .any(|e| matches!(e, Event::LinkFailure { .. })));
    p.secondary_only_polled().unwrap();
}

#[test]
fn nrm_modulo_128() {
    let (a, b) = configs(
        Mode::Nrm,
        Config {
            window_mod128: 100,
            ..base(Modulus::Mod128)
        },
    );
    let mut p = HdlcPair::new(Mode::Nrm, a, b, 3);
    p.bit_rate = 1_000_000;
    p.propagation = Duration::from_millis(200);
    p.connect();
    assert_eq!(p.logged("A> 21 <SNRME PF>"), 1, "{}", p.dump());
    let msgs = messages(120, 20);
    for m in &msgs {
        p.b().send(m.clone()).unwrap();
        p.a().send(m.clone()).unwrap();
    }
    assert!(p.run_until(MINUTE * 5, |p| p.received(Side::A).len() == 120
        && p.received(Side::B).len() == 120
        && p.idle()));
    assert_eq!(p.received(Side::A), msgs);
    assert_eq!(p.received(Side::B), msgs);
    // More than 7 frames outstanding at once: up to 100 in one response.
    let mut run = 0;
    let mut longest = 0;
    for (_, f) in &p.sent[1] {
        if matches!(f.control(), Control::I { .. }) {
            run += 1;
            longest = longest.max(run);
        }
        if f.control().pf() {
            run = 0;
        }
    }
    assert!((8..=100).contains(&longest), "{longest}\n{}", p.dump());
    p.secondary_only_polled().unwrap();
}

#[test]
fn arm_secondary_sends_unpolled() {
    let mut p = pair(Mode::Arm, Modulus::Mod8, PollPolicy::AsOftenAsPossible);
    p.connect();
    assert_eq!(p.logged("A> 21 <SARM PF>"), 1, "{}", p.dump());
    let sent_before = p.sent[0].len();
    transfer(&mut p, Side::B, &messages(10, 60));
    // The secondary's first I frame went out before the primary sent
    // anything after the UA.
    let first_i = p.sent[1]
        .iter()
        .find(|(_, f)| matches!(f.control(), Control::I { .. }))
        .map(|(t, _)| *t)
        .unwrap();
    let first_poll = p.sent[0][sent_before..].first().map(|(t, _)| *t);
    assert!(first_poll.is_none_or(|t| t >= first_i), "{}", p.dump());
    assert!(p.secondary_only_polled().is_err());
    transfer(&mut p, Side::A, &messages(10, 60));
}

#[test]
fn arm_secondary_recovers_by_its_own_timer() {
    let mut p = pair(Mode::Arm, Modulus::Mod8, PollPolicy::AsOftenAsPossible);
    p.connect();
    // The last I frame cannot be recovered by REJ: the secondary's T1.
    let mut dropped = false;
    p.dropper = Some(Box::new(move |side, f| {
        let hit = side == Side::B && !dropped && is_i(f, 2);
        dropped |= hit;
        hit
    }));
    transfer(&mut p, Side::B, &messages(3, 60));
    assert_eq!(i_frames_with_ns(&p, Side::B, 2), 2, "{}", p.dump());
}

#[test]
fn lapb_abm_uses_addresses_a_and_b() {
    let (a, b) = configs(Mode::Abm, base(Modulus::Mod8));
    let mut p = HdlcPair::new(Mode::Abm, a, b, 5);
    p.connect();
    // DTE -> DCE command: B (0x01); DCE response: B.
    assert_eq!(p.logged("A> 01 <SABM PF>"), 1, "{}", p.dump());
    assert_eq!(p.logged("B> 01 <UA PF>"), 1, "{}", p.dump());
    transfer(&mut p, Side::A, &messages(5, 40));
    transfer(&mut p, Side::B, &messages(5, 40));
    // DTE I commands carry B, DCE I commands carry A (0x03).
    assert!(p.logged("A> 01 <I") >= 5, "{}", p.dump());
    assert!(p.logged("B> 03 <I") >= 5, "{}", p.dump());
    // Acknowledgements are responses: the sender's own address.
    assert!(p.logged("B> 01 <RR") >= 1, "{}", p.dump());
    assert!(p.logged("A> 03 <RR") >= 1, "{}", p.dump());
    let now = p.now;
    p.b().disconnect(now).unwrap();
    assert!(p.run_until(MINUTE, |p| p.all(State::Disconnected)));
    assert_eq!(p.logged("B> 03 <DISC PF>"), 1, "{}", p.dump());
}

#[test]
fn lapb_modulo_128_needs_no_xid() {
    let (a, b) = configs(Mode::Abm, base(Modulus::Mod128));
    let mut p = HdlcPair::new(Mode::Abm, a, b, 5);
    p.connect();
    assert_eq!(p.logged("<SABME PF>"), 1, "{}", p.dump());
    assert_eq!(p.logged("XID"), 0, "{}", p.dump());
    transfer(&mut p, Side::A, &messages(40, 40));
}

#[test]
fn mismatched_framing_is_refused() {
    use linklab_link::{HdlcAddressing, HdlcLink, NewLinkError, Role};
    let (a, _) = configs(Mode::Nrm, Config::default());
    let lapb = HdlcAddressing::Lapb {
        role: linklab_wire::lapb::Role::Dte,
        procedure: linklab_wire::lapb::LinkProcedure::SingleLink,
    };
    assert!(matches!(
        HdlcLink::new(a, lapb),
        Err(NewLinkError::Framing { .. })
    ));
    let bad = Config {
        role: Role::Primary,
        ..Config::default()
    };
    assert_eq!(
        bad.validate().unwrap_err().to_string(),
        "a Primary station cannot work in Abm: ABM needs combined stations, NRM and ARM a primary and a secondary"
    );
}

/// An undecodable frame from the primary (errors L, M, N of AX.25):
/// the secondary cannot reset the link, so it rejects the frame with FRMR,
/// W set and X too for an information field not permitted or a wrong
/// length, quoting the control field, its V(S) and V(R) and the frame's
/// C/R (ISO/IEC 13239 5.5.3.4.2); the primary resets the link (error K)
/// and data then flow again.
#[test]
fn secondary_rejects_an_invalid_frame_with_frmr() {
    let cases = [
        (Mode::Nrm, InvalidFrame::UnknownControl, 0xDF, false),
        (Mode::Nrm, InvalidFrame::InfoNotAllowed, 0x11, true),
        (Mode::Arm, InvalidFrame::BadLength, 0x01, true),
    ];
    for (mode, invalid, control, x) in cases {
        let mut p = pair(mode, Modulus::Mod8, PollPolicy::AsOftenAsPossible);
        p.connect();
        transfer(&mut p, Side::B, &messages(3, 20));
        let now = p.now;
        let sent = p.sent[1].len();
        // A command with P = 1 in its control field (bit 4): an NRM
        // secondary may answer at once.
        p.b().handle_invalid_frame(now, invalid, &[control], true);
        assert!(
            p.run_until(MINUTE, |p| p.sent[1].len() > sent),
            "{}",
            p.dump()
        );
        let frmr = &p.sent[1][sent].1;
        assert_eq!(
            frmr.control(),
            Control::U {
                kind: Unnumbered::Frmr,
                pf: mode == Mode::Nrm
            },
            "{}",
            p.dump()
        );
        let info = FrmrInfo::decode(frmr.info(), Modulus::Mod8).unwrap();
        assert_eq!(
            info,
            FrmrInfo {
                rejected_control: u16::from(control),
                vs: 3,
                vr: 0,
                rejected_was_response: false,
                w: true,
                x,
                ..FrmrInfo::default()
            }
        );
        assert!(p.run_until(MINUTE, |p| p.all(State::Connected)
            && p.events(Side::A)
                .iter()
                .any(|e| matches!(e, Event::Error(_)))));
        assert!(
            matches!(
                p.events(Side::A).iter().find(|e| matches!(e, Event::Error(_))),
                Some(Event::Error(LinkError::Frmr(Some(got)))) if *got == info
            ),
            "{}",
            p.dump()
        );
        let reason = match invalid {
            InvalidFrame::UnknownControl => "L:",
            InvalidFrame::InfoNotAllowed => "M:",
            InvalidFrame::BadLength => "N:",
        };
        assert!(p
            .events(Side::B)
            .iter()
            .any(|e| matches!(e, Event::Error(error) if error.to_string().starts_with(reason))));
        let mark = p.received(Side::A).len();
        let more = messages(4, 30);
        for m in &more {
            p.b().send(m.clone()).unwrap();
        }
        assert!(p.run_until(MINUTE * 5, |p| p.received(Side::A).len() >= mark + 4));
        assert_eq!(p.received(Side::A)[mark..], more, "{}", p.dump());
    }
}

/// A reset drops the old link's numbered frames: an NRM secondary's RNR
/// waiting for its poll on a modulo-8 link must not go out after SNRME
/// has set modulo 128 (found by the `hdlc_link` fuzz target: its one-
/// octet control field no longer decoded).
#[test]
fn a_reset_drops_the_numbered_frames_of_the_old_link() {
    use linklab_core::{Engine, Instant};
    use linklab_link::{HdlcAddressing, HdlcLink};
    use linklab_wire::lapb::{Address, Station};

    let address = Address(0x03);
    let config = Config {
        mode: Mode::Nrm,
        role: Role::Secondary,
        xid: false,
        ..base(Modulus::Mod8)
    };
    let addressing = HdlcAddressing::Unbalanced {
        station: Station::Secondary,
        secondary: address,
    };
    let mut b = HdlcLink::new(config, addressing).unwrap();
    b.set_accept_incoming(true);
    let now = Instant::ZERO;
    let snrm = |modulus, kind| Frame::u(address, modulus, kind, true, Vec::new()).unwrap();
    b.handle_frame(now, &snrm(Modulus::Mod8, Unnumbered::Snrm));
    assert!(matches!(
        b.poll_transmit(now).map(|f| f.control()),
        Some(Control::U {
            kind: Unnumbered::Ua,
            ..
        })
    ));
    assert_eq!(b.state(), State::Connected);
    // Busy: an RNR waits for the next poll.
    b.set_own_receiver_busy(now, true);
    assert_eq!(b.poll_transmit(now), None);
    b.handle_frame(now, &snrm(Modulus::Mod128, Unnumbered::Snrme));
    let sent: Vec<Frame> = std::iter::from_fn(|| b.poll_transmit(now)).collect();
    assert_eq!(b.modulus(), Modulus::Mod128);
    assert!(
        matches!(sent.as_slice(), [ua] if matches!(ua.control(), Control::U { kind: Unnumbered::Ua, .. })),
        "{sent:?}"
    );
}
