//! What the seeded random transfers check, for AX.25 and HDLC alike:
//! every data unit is delivered exactly once and in order, or its sender
//! was told; and the statistics over all cases.
#![allow(dead_code)]

use std::time::Duration;

use linklab_link::{AckPolicy, DisconnectReason, Event, LinkError, State, T1Backoff};

use crate::support::{LinkPair, Side, TestFraming};
use linklab_core::Stream;

/// What one case did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Outcome {
    /// Data units sent, and delivered.
    pub sent: usize,
    pub delivered: usize,
    /// Some side was told of a failure or reset.
    pub trouble: bool,
}

/// True if the side was told of trouble: a failure, a reset, or a release
/// it did not ask for. The orderly release that ends every case (A's DISC:
/// `LocalRequest` on A, `RemoteRequest` on B, or `ReleaseTimeout` if A's
/// DISC goes unanswered) tells nothing about the data sent before it.
pub fn told(events: &[Event]) -> bool {
    let connects = events
        .iter()
        .filter(|e| matches!(e, Event::Connected { .. }))
        .count();
    connects > 1
        || events.iter().any(|e| match e {
            Event::LinkFailure { .. } => true,
            Event::Disconnected { reason } => !matches!(
                reason,
                DisconnectReason::LocalRequest
                    | DisconnectReason::RemoteRequest
                    | DisconnectReason::ReleaseTimeout
            ),
            _ => false,
        })
}

/// [`told`], or told that data queued before negotiation ended was
/// unsendable after it (AX.25 v2.2).
pub fn told_or_discarded(events: &[Event]) -> bool {
    told(events)
        || events
            .iter()
            .any(|e| matches!(e, Event::Error(LinkError::DataDiscarded { .. })))
}

/// A random acknowledgement policy.
pub fn ack_policy(rng: &mut Stream) -> AckPolicy {
    match rng.uniform_int(0, 3) {
        0 => AckPolicy::AfterT2,
        1 => AckPolicy::Immediately,
        2 => AckPolicy::WindowOrT2,
        _ => AckPolicy::OnPollImmediately,
    }
}

/// A random T1 backoff.
pub fn t1_backoff(rng: &mut Stream) -> T1Backoff {
    match rng.uniform_int(0, 2) {
        0 => T1Backoff::Constant,
        1 => T1Backoff::Exponential,
        _ => T1Backoff::Linear {
            step: Duration::from_millis(250),
        },
    }
}

/// Message `id` of `len` octets: 4-octet id then pseudo-random filler.
pub fn message(rng: &mut Stream, id: u32, len: usize) -> Vec<u8> {
    let mut m = id.to_be_bytes().to_vec();
    m.extend((4..len.max(4)).map(|_| rng.next_u64() as u8));
    m
}

/// A connects. `Ok(false)` if it failed and A was told (by `told`), an
/// error if it neither succeeded nor failed.
pub fn connect<F: TestFraming>(
    p: &mut LinkPair<F>,
    told: fn(&[Event]) -> bool,
) -> Result<bool, String> {
    let now = p.now;
    p.a().connect(now).unwrap();
    p.run_until(Duration::from_secs(600), |p| {
        matches!(p.links[0].state(), State::Connected | State::Disconnected)
    });
    if p.links[0].state() == State::Connected {
        Ok(true)
    } else if told(p.events(Side::A)) {
        Ok(false)
    } else {
        Err("connect neither succeeded nor failed".into())
    }
}

/// Runs until A has received `want[1]` and B `want[0]` data units with
/// both idle, or both are idle after a reset, or a side gave up; then
/// lets the other side learn it and A releases the link.
pub fn deliver_and_release<F: TestFraming>(p: &mut LinkPair<F>, want: [usize; 2]) {
    p.run_until(Duration::from_secs(1800), |p| {
        let done = p.received(Side::B).len() == want[0]
            && p.received(Side::A).len() == want[1]
            && p.idle();
        // After a reset, queues are discarded: stop once both are idle.
        let idle = p.all(State::Connected) && p.idle();
        done || idle || p.links.iter().any(|l| l.state() == State::Disconnected)
    });
    // If one side gave up, let the other learn it (DM, or its own T1/N2
    // or T3 supervision) before the orderly release below.
    if p.links.iter().any(|l| l.state() == State::Disconnected) {
        p.run_until(Duration::from_secs(1800), |p| p.all(State::Disconnected));
    }
    let now = p.now;
    p.a().disconnect(now).unwrap();
    p.run_until(Duration::from_secs(1800), |p| p.all(State::Disconnected));
}

/// Each side's data units (`sent`, by A then B) arrived at the other in
/// order, with no duplicates and nothing invented; any lost ones only if
/// their sender was told (by `told`).
pub fn delivered_in_order<F: TestFraming>(
    p: &LinkPair<F>,
    sent: &[Vec<Vec<u8>>; 2],
    told: fn(&[Event]) -> bool,
) -> Result<(), String> {
    for (from, to) in [(Side::A, Side::B), (Side::B, Side::A)] {
        let got = p.received(to);
        let sent = &sent[from as usize];
        let mut next = 0;
        for data in &got {
            match sent[next..].iter().position(|m| m == data) {
                Some(skip) => {
                    if skip > 0 && !told(p.events(from)) {
                        return Err(format!(
                            "{from:?}->{to:?}: {skip} messages silently lost before #{next}"
                        ));
                    }
                    next += skip + 1;
                }
                None => {
                    return Err(format!(
                        "{from:?}->{to:?}: delivered data not sent in this order (after #{next})"
                    ))
                }
            }
        }
        if next < sent.len() && !told(p.events(from)) {
            return Err(format!(
                "{from:?}->{to:?}: {next} of {} delivered, sender not told",
                sent.len()
            ));
        }
    }
    Ok(())
}

/// Runs cases 0..`cases` (seeds), prints `label` with the statistics and
/// asserts none failed, at least 90 % ran without trouble and at least
/// 90 % of the data units were delivered.
pub fn check_cases(label: &str, cases: u64, mut run: impl FnMut(u64) -> Result<Outcome, String>) {
    let mut failures = Vec::new();
    let (mut sent, mut delivered, mut clean) = (0, 0, 0);
    for seed in 0..cases {
        match run(seed) {
            Ok(o) => {
                sent += o.sent;
                delivered += o.delivered;
                clean += u64::from(!o.trouble);
            }
            Err(why) => failures.push(format!("seed {seed}: {why}")),
        }
    }
    println!(
        "{label}: {cases} cases, {clean} without trouble, {delivered}/{sent} data units delivered"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The recovery procedures must actually work, not just report failure.
    assert!(
        clean * 10 >= cases * 9,
        "only {clean} of {cases} cases ran without a failure or reset"
    );
    assert!(
        delivered * 10 >= sent * 9,
        "only {delivered} of {sent} data units delivered"
    );
}
