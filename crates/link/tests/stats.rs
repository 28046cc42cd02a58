//! The link's counters (`Link::stats`) against the frames a
//! deterministic pair logged on the line: I frames and octets each way,
//! the frames sent again, REJ and SREJ each way, T1 expiries.

mod support;

use std::time::Duration;

use linklab_link::{Config, RecoveryMode, Stats};
use linklab_wire::ax25::Frame;
use linklab_wire::control::Modulus;
use support::{Pair, Side};

const MINUTE: Duration = Duration::from_secs(60);

fn config(recovery: RecoveryMode) -> Config {
    Config {
        modulus: Modulus::Mod128,
        recovery,
        ..Config::default()
    }
}

/// Six 50-octet data units from A to B, the I frames of A in `lost`
/// (counted from 0 in the order sent) dropped on the line.
fn transfer(recovery: RecoveryMode, lost: &'static [usize], seed: u64) -> Pair {
    let mut p = Pair::new(config(recovery), config(recovery), seed);
    p.connect();
    let mut i_frames = 0usize;
    p.dropper = Some(Box::new(move |side, frame: &Frame| {
        if side != Side::A || frame.control().ns().is_none() {
            return false;
        }
        i_frames += 1;
        lost.contains(&(i_frames - 1))
    }));
    for i in 0..6u8 {
        p.a().send(vec![i; 50]).unwrap();
    }
    let want: Vec<Vec<u8>> = (0..6u8).map(|i| vec![i; 50]).collect();
    assert!(
        p.run_until(MINUTE, |p| p.received(Side::B) == want
            && p.links[0].unacked() == 0),
        "{}",
        p.dump()
    );
    p
}

/// I frames A put on the line (lost ones included).
fn i_frames_of_a(p: &Pair) -> u64 {
    p.sent[0]
        .iter()
        .filter(|(_, f)| f.control().ns().is_some())
        .count() as u64
}

#[test]
fn a_clean_transfer_counts_each_frame_once() {
    let p = transfer(RecoveryMode::Rej, &[], 1);
    let a = *p.links[0].stats();
    let b = *p.links[1].stats();
    assert_eq!(a.i_frames_sent, 6);
    assert_eq!(a.i_octets_sent, 300);
    assert_eq!(a.i_frames_resent, 0);
    assert_eq!(b.i_frames_received, 6);
    assert_eq!(b.i_octets_received, 300);
    assert_eq!((a.rej_received, b.rej_sent, a.t1_expiries), (0, 0, 0));
    assert_eq!(i_frames_of_a(&p), a.i_frames_sent);
    // A: disconnected, awaiting connection, connected; B: connected.
    assert_eq!((a.state_changes, b.state_changes), (2, 1));
}

#[test]
fn a_lost_frame_counts_a_rej_each_way_and_the_frames_sent_again() {
    // The second I frame is lost: B answers the third with REJ and A goes
    // back to it.
    let p = transfer(RecoveryMode::Rej, &[1], 2);
    let (a, b) = (*p.links[0].stats(), *p.links[1].stats());
    let rej = p.logged("<REJ") as u64;
    assert!(rej >= 1, "{}", p.dump());
    assert_eq!(b.rej_sent, rej, "{}", p.dump());
    assert_eq!(a.rej_received, rej, "{}", p.dump());
    assert_eq!(a.i_frames_sent, i_frames_of_a(&p));
    assert_eq!(a.i_frames_resent, a.i_frames_sent - 6, "{}", p.dump());
    assert!(a.i_frames_resent >= 1);
    assert_eq!(b.i_frames_received, a.i_frames_sent - 1);
}

#[test]
fn srej_counts_each_way() {
    let p = transfer(RecoveryMode::Srej, &[1], 3);
    let (a, b) = (*p.links[0].stats(), *p.links[1].stats());
    let srej = p.logged("<SREJ") as u64;
    assert!(srej >= 1, "{}", p.dump());
    assert_eq!((b.srej_sent, a.srej_received), (srej, srej), "{}", p.dump());
    assert_eq!(a.i_frames_resent, a.i_frames_sent - 6);
}

#[test]
fn a_lost_last_frame_is_a_t1_expiry() {
    // The last of the six is lost and nothing follows it: only T1 finds
    // it.
    let p = transfer(RecoveryMode::Rej, &[5], 4);
    let a: Stats = *p.links[0].stats();
    assert!(a.t1_expiries >= 1, "{}", p.dump());
    assert_eq!(p.links[1].stats().t1_expiries, 0);
    // Into timer recovery and out of it at least once.
    assert!(a.state_changes >= 4, "{}", p.dump());
}
