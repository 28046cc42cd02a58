//! The packet layer over LAPB: each DTE's packets ride in the I frames of
//! a `linklab_link::HdlcLink` (ABM, X.25 2.4), the two links joined by a
//! full-duplex 9600 bit/s line with 20 ms propagation, in virtual time.
//! A (the LAPB DTE, X.25 DTE role) calls B (the LAPB DCE side, playing
//! the X.25 DCE's part); seeded frame loss exercises LAPB recovery under
//! the packet layer, which must see every packet exactly once, in order.

mod support;

use linklab_core::{Engine, Instant, Stream};
use std::time::Duration;

use linklab_link::{Config as LinkConfig, Event as LinkEvent, HdlcAddressing, HdlcLink};
use linklab_testkit::{random_octets, Line};
use linklab_wire::control::Modulus;
use linklab_wire::lapb::{Frame, LinkProcedure, Role as LapbRole};
use linklab_x25::{Body, CallOptions, Dte, DteAddress, Event, Lci, Packet, Role};
use support::{config, messages, WindowMonitor};

const BIT_RATE: u64 = 9600;
const PROPAGATION: Duration = Duration::from_millis(20);

struct Stack {
    link: HdlcLink,
    dte: Dte,
    events: Vec<Event>,
}

struct Lapb {
    stacks: [Stack; 2],
    now: Instant,
    /// (arrival, receiver, frame octets), per direction in order.
    line: Line,
    monitor: [WindowMonitor; 2],
    /// Packets the packet layers sent, (sender, packet).
    log: Vec<(usize, Packet)>,
}

impl Lapb {
    fn new(modulus: Modulus, loss: f64, seed: u64) -> Lapb {
        let make = |i: usize, role: LapbRole| {
            let link_config = LinkConfig {
                modulus,
                xid: false,
                n1: 2048,
                window_mod8: 7,
                t1: Duration::from_secs(3),
                t1_adaptive: false,
                ..LinkConfig::default()
            };
            let mut link = HdlcLink::new(
                link_config,
                HdlcAddressing::Lapb {
                    role,
                    procedure: LinkProcedure::SingleLink,
                },
            )
            .unwrap();
            link.set_accept_incoming(true);
            let roles = [Role::Dte, Role::Dce];
            Stack {
                link,
                dte: Dte::new(config(roles[i], ["1111", "2222"][i])).unwrap(),
                events: Vec::new(),
            }
        };
        let mut lapb = Lapb {
            stacks: [make(0, LapbRole::Dte), make(1, LapbRole::Dce)],
            now: Instant::ZERO,
            line: Line::new(BIT_RATE, PROPAGATION, loss, seed),
            monitor: Default::default(),
            log: Vec::new(),
        };
        lapb.stacks[0].link.connect(Instant::ZERO).unwrap();
        lapb
    }

    /// Moves packets, frames and events until nothing is due now.
    fn pump(&mut self) {
        let now = self.now;
        for side in 0..2 {
            let stack = &mut self.stacks[side];
            while let Some(event) = stack.link.poll_event() {
                match event {
                    // The packet layer restarts when the link comes up.
                    LinkEvent::Connected { .. } => stack.dte.start(now),
                    LinkEvent::Data { data, .. } => {
                        if let Ok(packet) = Packet::decode(&data) {
                            self.monitor[side].delivered(&packet);
                        }
                        stack.dte.handle_octets(now, &data);
                    }
                    other => panic!("link {side}: {other:?}"),
                }
            }
            while let Some(packet) = stack.dte.poll_transmit(now) {
                let window = stack.dte.call_params(packet.lci).map_or(0, |p| p.tx_window);
                self.monitor[side].sent(&packet, window);
                stack.link.send(packet.encode().unwrap()).unwrap();
                self.log.push((side, packet));
            }
            while let Some(event) = stack.dte.poll_event() {
                stack.events.push(event);
            }
            while let Some(frame) = stack.link.poll_transmit(now) {
                self.line.send(side, now, frame.encode());
            }
        }
    }

    /// Runs until `done` holds or `limit` of virtual time passes.
    fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&mut Lapb) -> bool) {
        let end = self.now + limit;
        loop {
            self.pump();
            if done(self) {
                return;
            }
            let arrivals = self.line.next_arrival();
            let timers = self
                .stacks
                .iter()
                .flat_map(|s| [s.link.poll_timeout(), s.dte.poll_timeout()])
                .flatten();
            let Some(next) = arrivals.into_iter().chain(timers).min() else {
                return;
            };
            assert!(next <= end, "not done within {limit:?}");
            self.now = self.now.max(next);
            for side in 0..2 {
                while let Some(octets) = self.line.recv(side, self.now) {
                    let receiver = &mut self.stacks[1 - side].link;
                    if let Ok(frame) = Frame::decode(&octets, receiver.modulus()) {
                        receiver.handle_frame(self.now, &frame);
                    }
                }
                let stack = &mut self.stacks[side];
                stack.link.handle_timeout(self.now);
                stack.dte.handle_timeout(self.now);
            }
        }
    }

    fn take(&mut self, side: usize) -> Vec<Event> {
        core::mem::take(&mut self.stacks[side].events)
    }
}

fn call_b() -> CallOptions {
    CallOptions {
        called: DteAddress::new("2222").unwrap(),
        user_data: vec![0xCC],
        ..CallOptions::default()
    }
}

/// Restart over the link, a call, messages both ways; returns the pair.
fn session(modulus: Modulus, loss: f64, seed: u64, sizes: &[usize]) -> Lapb {
    let mut lapb = Lapb::new(modulus, loss, seed);
    lapb.run_until(Duration::from_secs(120), |l| {
        l.stacks
            .iter()
            .all(|s| s.dte.layer_state() == linklab_x25::LayerState::Ready)
    });
    let now = lapb.now;
    let lci = lapb.stacks[0].dte.call(now, call_b()).unwrap();
    lapb.run_until(Duration::from_secs(120), |l| {
        l.stacks[1]
            .events
            .iter()
            .any(|e| matches!(e, Event::IncomingCall { .. }))
    });
    lapb.stacks[1].dte.accept(lci).unwrap();
    lapb.run_until(Duration::from_secs(120), |l| {
        l.stacks[0]
            .events
            .iter()
            .any(|e| matches!(e, Event::Connected { .. }))
    });
    lapb.take(0);
    lapb.take(1);
    let mut rng = Stream::from_seed(seed ^ 0x5555);
    let sent: [Vec<Vec<u8>>; 2] =
        [0, 1].map(|_| sizes.iter().map(|&n| random_octets(&mut rng, n)).collect());
    for (stack, messages) in lapb.stacks.iter_mut().zip(&sent) {
        for data in messages {
            stack.dte.send(lci, data, false, false).unwrap();
        }
    }
    let count = sizes.len();
    lapb.run_until(Duration::from_secs(3600), |l| {
        (0..2).all(|side| messages(&l.stacks[side].events).len() == count)
    });
    for side in 0..2 {
        let got: Vec<Vec<u8>> = messages(&lapb.take(side))
            .into_iter()
            .map(|m| m.2)
            .collect();
        assert_eq!(got, sent[1 - side], "side {side}");
    }
    assert_eq!(lapb.monitor.each_ref().map(|m| m.max_outstanding), [2, 2]);
    check_lci(&lapb, lci);
    lapb
}

fn check_lci(lapb: &Lapb, lci: Lci) {
    assert!(lapb
        .log
        .iter()
        .all(|(_, p)| p.lci == lci || p.lci == Lci::ZERO));
}

#[test]
fn call_and_transfer_over_lapb_modulo_8() {
    let sizes = [0, 1, 128, 129, 700, 2000, 33, 4096];
    let lapb = session(Modulus::Mod8, 0.0, 1, &sizes);
    // Each packet layer restarted when its link came up (B first: it sees
    // the SABM before A sees the UA), so the restarts collided.
    let restarts: Vec<usize> = lapb
        .log
        .iter()
        .filter(|(_, p)| matches!(p.body, Body::RestartRequest { .. }))
        .map(|(side, _)| *side)
        .collect();
    assert_eq!(restarts, [1, 0]);
    assert!(!lapb
        .log
        .iter()
        .any(|(_, p)| p.body == Body::RestartConfirmation));
}

#[test]
fn lapb_recovers_lost_frames_under_the_packet_layer() {
    let mut rng = Stream::from_seed(0x4c49);
    let sizes: Vec<usize> = (0..25).map(|_| (rng.next_u64() % 1500) as usize).collect();
    for seed in 1..=4 {
        session(Modulus::Mod8, 0.1, seed, &sizes);
    }
    session(Modulus::Mod128, 0.1, 9, &sizes);
}
