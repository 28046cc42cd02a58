//! Fuzzes one HDLC station (`linklab_link::HdlcLink`) against a bad peer:
//! arbitrary frames that decode (ISO/IEC 13239 addressing, modulo 8 or
//! 128), user data, own-busy toggles and time advancing with timers
//! running, in NRM, ARM or ABM, as primary, secondary or combined, under
//! each policy of an NRM primary at its window limit (Bux et al. 3.1.3).
//!
//! Input: one flags octet (modulus, procedure and role, window-limit
//! policy, recovery, poll policy), then steps of one op octet (low 2 bits:
//! what; high 6 bits: time to advance, in 20 ms units) and its operands.
//!
//! Invariants: no panic; every frame the station sends decodes and
//! encodes again to its octets; the I frames outstanding never exceed the
//! window k.
#![no_main]

use core::time::Duration;
use linklab_core::{Engine, Instant};

mod input;

use input::Input;
use libfuzzer_sys::fuzz_target;
use linklab_link::{
    AckPolicy, Config, HdlcAddressing, HdlcLink, Mode, PollPolicy, RecoveryMode, Role, WindowLimit,
};
use linklab_wire::control::Modulus;
use linklab_wire::lapb::{Address, Frame, LinkProcedure, Role as LapbRole, Station};

/// Steps per input at most, and timer runs after the input ends.
const MAX_STEPS: usize = 4096;
const SETTLE_STEPS: usize = 64;

/// The station under test, from the flags octet.
fn station(flags: u8) -> Option<HdlcLink> {
    let modulus = if flags & 1 == 0 {
        Modulus::Mod8
    } else {
        Modulus::Mod128
    };
    let secondary = Address(0x03);
    let unbalanced = |station| HdlcAddressing::Unbalanced { station, secondary };
    let (mode, role, addressing) = match (flags >> 1) & 0b111 {
        0 => (Mode::Nrm, Role::Primary, unbalanced(Station::Primary)),
        1 => (Mode::Nrm, Role::Secondary, unbalanced(Station::Secondary)),
        2 => (Mode::Arm, Role::Primary, unbalanced(Station::Primary)),
        3 => (Mode::Arm, Role::Secondary, unbalanced(Station::Secondary)),
        role => (
            Mode::Abm,
            Role::Combined,
            HdlcAddressing::Lapb {
                role: if role & 1 == 0 {
                    LapbRole::Dte
                } else {
                    LapbRole::Dce
                },
                procedure: LinkProcedure::SingleLink,
            },
        ),
    };
    let config = Config {
        modulus,
        mode,
        role,
        window_mod128: 127,
        xid: false,
        t1: Duration::from_millis(500),
        t1_min: Duration::from_millis(500),
        t1_max: Duration::from_millis(500),
        t1_adaptive: false,
        poll_interval: Duration::from_millis(100),
        ack_policy: AckPolicy::Immediately,
        nrm_primary_at_window_limit: match (flags >> 4) & 0b11 {
            0 => WindowLimit::Acknowledge,
            1 => WindowLimit::Withhold,
            _ => WindowLimit::ReceiverNotReady,
        },
        recovery: if flags & 0x40 == 0 {
            RecoveryMode::Rej
        } else {
            RecoveryMode::Srej
        },
        poll_policy: if flags & 0x80 == 0 {
            PollPolicy::SupervisoryAtOnce
        } else {
            PollPolicy::AsOftenAsPossible
        },
        ..Config::default()
    };
    let mut link = HdlcLink::new(config, addressing).ok()?;
    link.set_accept_incoming(true);
    if role != Role::Secondary {
        link.connect(Instant::ZERO).ok()?;
    }
    Some(link)
}

/// Takes every frame and event the station has, checking each frame.
fn drain(link: &mut HdlcLink, now: Instant) {
    while let Some(frame) = link.poll_transmit(now) {
        // A decoder without the command/response context reads SARM as DM
        // (the same code point, ISO/IEC 13239 5.5.3): the octets, not the
        // meaning, must survive.
        let octets = frame.encode();
        let decoded = Frame::decode(&octets, link.modulus());
        assert_eq!(
            decoded.map(|f| f.encode()).as_deref(),
            Ok(octets.as_slice()),
            "a frame sent does not decode and encode again to its octets"
        );
    }
    while link.poll_event().is_some() {}
    let window = match link.modulus() {
        Modulus::Mod8 => link.config().window_mod8,
        Modulus::Mod128 => link.config().window_mod128,
    };
    assert!(
        link.unacked() <= usize::from(window),
        "{} I frames outstanding, window {window}",
        link.unacked()
    );
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let Some(mut link) = input.byte().and_then(station) else {
        return;
    };
    let mut now = Instant::ZERO;
    let mut busy = false;
    for _ in 0..MAX_STEPS {
        let Some(op) = input.byte() else {
            break;
        };
        now = now + Duration::from_millis(20) * u32::from(op >> 2);
        if link.poll_timeout().is_some_and(|t| t <= now) {
            link.handle_timeout(now);
        }
        match op & 0b11 {
            0 => {
                let len = usize::from(input.byte().unwrap_or(0));
                let bytes = input.take(len);
                if let Ok(frame) = Frame::decode(bytes, link.modulus()) {
                    link.handle_frame(now, &frame);
                }
            }
            1 => {
                let len = usize::from(input.byte().unwrap_or(0));
                let _ = link.send(input.take(len).to_vec());
            }
            2 => {
                busy = !busy;
                link.set_own_receiver_busy(now, busy);
            }
            _ => {}
        }
        drain(&mut link, now);
    }
    for _ in 0..SETTLE_STEPS {
        let Some(t) = link.poll_timeout() else {
            break;
        };
        now = now.max(t);
        link.handle_timeout(now);
        drain(&mut link, now);
    }
});
