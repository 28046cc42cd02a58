//! IP over X.25 (RFC 877/1356, `linklab_ip::x25`) over the packet layer
//! over LAPB: two `IpOverX25` interfaces, each on a `linklab_link::HdlcLink`
//! (ABM, X.25 2.4), the links joined by a full-duplex 56 kbit/s line with
//! 20 ms propagation, in virtual time. A (LAPB DTE, X.25 DTE role) is
//! 10.0.0.1 at X.121 address 1111, B (LAPB DCE side, the X.25 DCE's part)
//! 10.0.0.2 at 2222. Seeded frame loss exercises LAPB recovery under the
//! packet layer.
use linklab_core::{Engine, Instant, Stream};
use std::net::Ipv4Addr;
use std::time::Duration;

use linklab_ip::x25::{Encapsulation, IpConfig, IpEvent, IpOverX25, Route, SendError, Spreading};
use linklab_link::{Config as LinkConfig, Event as LinkEvent, HdlcAddressing, HdlcLink};
use linklab_testkit::{random_octets, Line};
use linklab_wire::control::Modulus;
use linklab_wire::lapb::{Frame, LinkProcedure, Role as LapbRole};
use linklab_x25::{Body, Config, DteAddress, LayerState, Role};

const BIT_RATE: u64 = 56_000;
const PROPAGATION: Duration = Duration::from_millis(20);
const IPS: [Ipv4Addr; 2] = [Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2)];
const X121: [&str; 2] = ["1111", "2222"];

struct Stack {
    link: HdlcLink,
    ip: IpOverX25,
    received: Vec<Vec<u8>>,
    events: Vec<IpEvent>,
    /// Link-layer failures (N2 exhausted, disconnection): the clear
    /// failure a lossy run may end in.
    link_failures: Vec<LinkEvent>,
}

struct Net {
    stacks: [Stack; 2],
    now: Instant,
    line: Line,
    /// Call user data of every CALL REQUEST sent.
    call_user_data: Vec<Vec<u8>>,
}

fn ip_config(side: usize, tune: &dyn Fn(&mut IpConfig)) -> IpConfig {
    let roles = [Role::Dte, Role::Dce];
    let routes = vec![Route {
        ip: IPS[1 - side],
        address: DteAddress::new(X121[1 - side]).unwrap(),
    }];
    let mut ip = IpConfig::new(
        config(roles[side], X121[side]),
        Encapsulation::Rfc1356,
        routes,
    );
    tune(&mut ip);
    ip
}

impl Net {
    fn new(loss: f64, seed: u64, tune: &dyn Fn(&mut IpConfig)) -> Net {
        let make = |side: usize, role: LapbRole| {
            let link_config = LinkConfig {
                modulus: Modulus::Mod8,
                xid: false,
                n1: 2048,
                window_mod8: 7,
                t1: Duration::from_secs(1),
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
            Stack {
                link,
                ip: IpOverX25::new(ip_config(side, tune)).unwrap(),
                received: Vec::new(),
                events: Vec::new(),
                link_failures: Vec::new(),
            }
        };
        let mut net = Net {
            stacks: [make(0, LapbRole::Dte), make(1, LapbRole::Dce)],
            now: Instant::ZERO,
            line: Line::new(BIT_RATE, PROPAGATION, loss, seed),
            call_user_data: Vec::new(),
        };
        net.stacks[0].link.connect(Instant::ZERO).unwrap();
        net.run_until(Duration::from_secs(60), |n| {
            n.stacks
                .iter()
                .all(|s| s.ip.dte().layer_state() == LayerState::Ready)
        });
        net
    }

    fn pump(&mut self) {
        let now = self.now;
        for side in 0..2 {
            let stack = &mut self.stacks[side];
            while let Some(event) = stack.link.poll_event() {
                match event {
                    LinkEvent::Connected { .. } => stack.ip.start(now),
                    LinkEvent::Data { data, .. } => stack.ip.handle_octets(now, &data),
                    other => stack.link_failures.push(other),
                }
            }
            while let Some(packet) = stack.ip.poll_transmit(now) {
                if let Body::CallRequest { fields, .. } = &packet.body {
                    self.call_user_data.push(fields.user_data.clone());
                }
                stack.link.send(packet.encode().unwrap()).unwrap();
            }
            while let Some(datagram) = stack.ip.poll_datagram() {
                assert_eq!(datagram.from, Some(IPS[1 - side]));
                stack.received.push(datagram.bytes);
            }
            while let Some(event) = stack.ip.poll_event() {
                stack.events.push(event);
            }
            while let Some(frame) = stack.link.poll_transmit(now) {
                self.line.send(side, now, frame.encode());
            }
        }
    }

    /// Runs until `done` holds (true), or nothing is left to do or
    /// `limit` of virtual time passes (false; the clock then stands at
    /// the limit).
    fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&Net) -> bool) -> bool {
        let end = self.now + limit;
        loop {
            self.pump();
            if done(self) {
                return true;
            }
            let arrivals = self.line.next_arrival();
            let timers = self
                .stacks
                .iter()
                .flat_map(|s| [s.link.poll_timeout(), s.ip.poll_timeout()])
                .flatten();
            let Some(next) = arrivals.into_iter().chain(timers).min() else {
                return false;
            };
            if next > end {
                self.now = self.now.max(end);
                return false;
            }
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
                stack.ip.handle_timeout(self.now);
            }
        }
    }

    /// Queues `datagrams[side]` at each side, then runs until each has
    /// received that many more. False if that did not happen within `limit`.
    fn exchange(&mut self, datagrams: &[Vec<Vec<u8>>; 2], limit: Duration) -> bool {
        for side in 0..2 {
            for d in &datagrams[side] {
                let now = self.now;
                self.stacks[side]
                    .ip
                    .send_datagram(now, IPS[1 - side], d.clone())
                    .unwrap();
            }
        }
        let counts = [
            self.stacks[0].received.len() + datagrams[1].len(),
            self.stacks[1].received.len() + datagrams[0].len(),
        ];
        self.run_until(limit, |n| {
            (0..2).all(|s| n.stacks[s].received.len() >= counts[s])
        })
    }
}

/// Datagrams over several circuits may arrive out of order (IP allows
/// it): `got` must hold exactly `want`'s datagrams, byte-exact, in any
/// order. Reports sizes, not contents, on failure.
fn assert_same_datagrams(got: &[Vec<u8>], want: &[Vec<u8>], context: &str) {
    let mut got_sorted = got.to_vec();
    let mut want_sorted = want.to_vec();
    got_sorted.sort();
    want_sorted.sort();
    assert!(
        got_sorted == want_sorted,
        "{context}: got {} datagrams {:?}, want {} {:?}",
        got.len(),
        got.iter().map(Vec::len).collect::<Vec<_>>(),
        want.len(),
        want.iter().map(Vec::len).collect::<Vec<_>>()
    );
}

fn random_datagrams(seed: u64, sizes: &[usize]) -> [Vec<Vec<u8>>; 2] {
    let mut rng = Stream::from_seed(seed);
    [0, 1].map(|_| sizes.iter().map(|&n| random_octets(&mut rng, n)).collect())
}

#[test]
fn datagrams_of_many_sizes_arrive_byte_exact_both_ways() {
    let mut net = Net::new(0.0, 1, &|_| {});
    let sizes = [
        1, 2, 20, 40, 84, 127, 128, 129, 255, 256, 257, 532, 576, 1000, 1499, 1500,
    ];
    let datagrams = random_datagrams(7, &sizes);
    assert!(net.exchange(&datagrams, Duration::from_secs(120)));
    for side in 0..2 {
        assert_same_datagrams(
            &net.stacks[side].received,
            &datagrams[1 - side],
            &format!("side {side}"),
        );
    }
    // One call each way at most (the calls may collide, each side then
    // using its own circuit), all with IP's call user data.
    assert!(!net.call_user_data.is_empty());
    assert!(net.call_user_data.iter().all(|d| d == &[0xCC]));
    // A datagram larger than P = 128 rode as a complete packet sequence.
    let stats = net.stacks[0].ip.stats();
    assert_eq!(stats.datagrams_sent, sizes.len() as u64);
    assert_eq!(stats.datagrams_received, sizes.len() as u64);
    // The MTU refuses a larger datagram, counted.
    let now = net.now;
    assert_eq!(
        net.stacks[0].ip.send_datagram(now, IPS[1], vec![0; 1501]),
        Err(SendError::TooBig {
            len: 1501,
            mtu: 1500
        })
    );
    assert_eq!(net.stacks[0].ip.stats().dropped_too_big, 1);
    assert_eq!(
        net.stacks[0]
            .ip
            .send_datagram(now, Ipv4Addr::new(10, 9, 9, 9), vec![1]),
        Err(SendError::NoRoute(Ipv4Addr::new(10, 9, 9, 9)))
    );
}

#[test]
fn rfc877_mtu_is_576() {
    let mut net = Net::new(0.0, 2, &|c| {
        *c = IpConfig::new(c.dte.clone(), Encapsulation::Rfc877, c.routes.clone());
    });
    let now = net.now;
    let ip = &mut net.stacks[0].ip;
    assert_eq!(ip.config().mtu, 576);
    assert!(matches!(
        ip.send_datagram(now, IPS[1], vec![0; 577]),
        Err(SendError::TooBig { mtu: 576, .. })
    ));
    let datagrams = [vec![vec![5; 576]], vec![]];
    assert!(net.exchange(&datagrams, Duration::from_secs(30)));
    assert_eq!(net.stacks[1].received, datagrams[0]);
}

/// A burst of 40 datagrams: the queue passes the threshold (8) while the
/// first call is made, so a second circuit opens (max 2) and the
/// datagrams are spread over both.
fn two_circuits(spreading: Spreading) {
    let mut net = Net::new(0.0, 3, &|c| {
        c.open_threshold = 8;
        c.max_circuits = 2;
        c.spreading = spreading;
    });
    let sizes: Vec<usize> = (0..40).map(|i| 100 + 35 * i).collect();
    let datagrams = [random_datagrams(11, &sizes)[0].clone(), Vec::new()];
    assert!(net.exchange(&datagrams, Duration::from_secs(120)));
    assert_same_datagrams(&net.stacks[1].received, &datagrams[0], "A to B");
    let stats = net.stacks[0].ip.stats();
    assert_eq!(stats.calls_made, 2, "{stats:?}");
    assert_eq!(stats.circuits_opened, 2);
    let per_circuit: Vec<u64> = stats.circuits.iter().map(|c| c.datagrams_sent).collect();
    assert_eq!(per_circuit.iter().sum::<u64>(), 40);
    assert!(per_circuit.iter().all(|&n| n >= 10), "{per_circuit:?}");
    assert_eq!(net.stacks[0].ip.open_circuits(IPS[1]).len(), 2);
    // B received on both.
    let received: Vec<u64> = net.stacks[1]
        .ip
        .stats()
        .circuits
        .iter()
        .map(|c| c.datagrams_received)
        .collect();
    assert_eq!(received.len(), 2);
    assert!(received.iter().all(|&n| n > 0));
}

#[test]
fn a_second_circuit_opens_when_the_queue_passes_the_threshold() {
    two_circuits(Spreading::LeastQueued);
}

#[test]
fn round_robin_spreading_also_uses_both_circuits() {
    two_circuits(Spreading::RoundRobin);
}

#[test]
fn a_lone_datagram_uses_one_circuit() {
    let mut net = Net::new(0.0, 4, &|c| c.open_threshold = 8);
    let datagrams = [vec![vec![1; 300], vec![2; 300]], vec![]];
    assert!(net.exchange(&datagrams, Duration::from_secs(30)));
    assert_eq!(net.stacks[0].ip.stats().calls_made, 1);
}

#[test]
fn idle_circuits_are_cleared_after_the_idle_timeout() {
    let idle = Duration::from_secs(30);
    let mut net = Net::new(0.0, 5, &|c| c.idle_timeout = idle);
    // A calls; B answers on A's circuit (it knows A's X.121 address).
    assert!(net.exchange(&[vec![vec![9; 200]], vec![]], Duration::from_secs(30)));
    assert!(net.exchange(&[vec![], vec![vec![8; 100]]], Duration::from_secs(30)));
    let last_traffic = net.now;
    assert_eq!(net.stacks[1].ip.stats().calls_made, 0);
    assert_eq!(net.stacks[0].ip.open_circuits(IPS[1]).len(), 1);
    // Nothing for 29 s: still open.
    net.run_until(Duration::from_secs(29), |_| false);
    assert_eq!(net.stacks[0].ip.open_circuits(IPS[1]).len(), 1);
    assert!(net.run_until(Duration::from_secs(10), |n| {
        n.stacks.iter().all(|s| s.ip.stats().circuits_closed == 1)
    }));
    let closed_at = net.now;
    assert!(closed_at >= last_traffic + idle);
    assert!(closed_at <= last_traffic + idle + Duration::from_secs(1));
    // The side whose timer ran first cleared it; the other saw the clear.
    let idle_closes: Vec<u64> = net
        .stacks
        .iter()
        .map(|s| s.ip.stats().idle_closes)
        .collect();
    assert_eq!(idle_closes.iter().sum::<u64>(), 1, "{idle_closes:?}");
    for stack in &net.stacks {
        assert!(stack
            .events
            .iter()
            .any(|e| matches!(e, IpEvent::CircuitClosed { cause: 0, .. })));
        assert!(stack.ip.stats().circuits[0].closed_at.is_some());
    }
    // New traffic opens a new circuit.
    let more = [vec![vec![7; 50]], vec![]];
    assert!(net.exchange(&more, Duration::from_secs(30)));
    assert_eq!(net.stacks[0].ip.stats().circuits_opened, 2);
}

/// Two packet layers joined directly (no link): `a` a bare DTE, `b` an
/// IP interface. Moves packets both ways until both are quiet.
fn shuttle(now: Instant, a: &mut linklab_x25::Dte, b: &mut IpOverX25) {
    loop {
        let mut moved = false;
        while let Some(p) = a.poll_transmit(now) {
            b.handle_packet(now, p);
            moved = true;
        }
        while let Some(p) = b.poll_transmit(now) {
            a.handle_packet(now, p);
            moved = true;
        }
        if !moved {
            return;
        }
    }
}

#[test]
fn a_call_without_ip_user_data_is_refused() {
    let now = Instant::ZERO;
    let mut a = linklab_x25::Dte::new(config(Role::Dte, "1111")).unwrap();
    let mut b = IpOverX25::new(ip_config(1, &|_| {})).unwrap();
    a.start(now);
    shuttle(now, &mut a, &mut b);
    assert_eq!(b.dte().layer_state(), LayerState::Ready);
    // An X.29 PAD call (protocol identifier 0x01): not IP.
    let options = linklab_x25::CallOptions {
        called: DteAddress::new("2222").unwrap(),
        user_data: vec![0x01, 0, 0, 0],
        ..Default::default()
    };
    a.call(now, options).unwrap();
    shuttle(now, &mut a, &mut b);
    let cleared = std::iter::from_fn(|| a.poll_event())
        .find(|e| matches!(e, linklab_x25::Event::Cleared { .. }));
    assert!(
        matches!(
            cleared,
            Some(linklab_x25::Event::Cleared {
                cause: 0,
                by_peer: true,
                ..
            })
        ),
        "{cleared:?}"
    );
    assert_eq!(b.stats().calls_refused, 1);
    assert_eq!(b.stats().circuits_opened, 0);
    assert!(matches!(
        b.poll_event(),
        Some(IpEvent::RefusedCall { user_data, .. }) if user_data == [1, 0, 0, 0]
    ));
}

#[test]
fn a_refused_ip_call_is_reported_and_the_queue_dropped() {
    let now = Instant::ZERO;
    // B is a bare DTE that clears every call (cause 0x80 + 1).
    let mut b = linklab_x25::Dte::new(config(Role::Dce, "2222")).unwrap();
    let mut a = IpOverX25::new(ip_config(0, &|_| {})).unwrap();
    a.start(now);
    for _ in 0..2 {
        while let Some(p) = a.poll_transmit(now) {
            b.handle_packet(now, p);
        }
        while let Some(p) = b.poll_transmit(now) {
            a.handle_packet(now, p);
        }
    }
    assert_eq!(a.dte().layer_state(), LayerState::Ready);
    for n in 1..=3 {
        a.send_datagram(now, IPS[1], vec![n; 100]).unwrap();
    }
    for _ in 0..3 {
        while let Some(p) = a.poll_transmit(now) {
            b.handle_packet(now, p);
        }
        while let Some(event) = b.poll_event() {
            if let linklab_x25::Event::IncomingCall { lci, .. } = event {
                b.clear(now, lci, 0x81, Some(0)).unwrap();
            }
        }
        while let Some(p) = b.poll_transmit(now) {
            a.handle_packet(now, p);
        }
    }
    let events: Vec<IpEvent> = std::iter::from_fn(|| a.poll_event()).collect();
    assert_eq!(
        events,
        [
            IpEvent::CallFailed {
                destination: IPS[1],
                cause: 0x81,
                diagnostic: Some(0)
            },
            IpEvent::Unreachable {
                destination: IPS[1],
                dropped: 3
            }
        ]
    );
    assert_eq!(a.stats().dropped_unreachable, 3);
    assert_eq!(a.queued(IPS[1]), 0);
}

#[test]
fn lapb_frame_loss_still_delivers_byte_exact() {
    let mut rng = Stream::from_seed(0x4c49);
    let sizes: Vec<usize> = (0..30)
        .map(|_| 1 + (rng.next_u64() % 1500) as usize)
        .collect();
    for seed in 1..=4 {
        let mut net = Net::new(0.1, seed, &|c| c.max_circuits = 2);
        let datagrams = random_datagrams(seed ^ 0x55, &sizes);
        let done = net.exchange(&datagrams, Duration::from_secs(600));
        let failed = net.stacks.iter().any(|s| !s.link_failures.is_empty());
        if done {
            for side in 0..2 {
                assert_same_datagrams(
                    &net.stacks[side].received,
                    &datagrams[1 - side],
                    &format!("seed {seed} side {side}"),
                );
            }
        } else {
            // Not all delivered: only acceptable with a reported failure,
            // and what did arrive is intact and in order.
            assert!(failed, "seed {seed}: stalled without a reported failure");
            for side in 0..2 {
                let got = &net.stacks[side].received;
                assert!(got.iter().all(|d| datagrams[1 - side].contains(d)));
            }
        }
    }
}

fn config(role: Role, address: &str) -> Config {
    Config {
        role,
        address: DteAddress::new(address).unwrap(),
        ..Config::default()
    }
}
