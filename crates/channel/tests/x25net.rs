//! The two-DTE X.25 network model (`linklab_channel::x25net`) with real
//! engines on both sides of each access line: each DTE is an LAPB
//! `HdlcLink` (DTE role) carrying a `linklab_x25::Dte`. Checks that the
//! measured transit delays follow the configured distribution, that call
//! set-up takes the configured 20-30 s, that the network's flow control
//! caps a saturated flow at its share of the 56 kbit/s line, and that the
//! per-call throughput class limits each call on its own while a bucket
//! one datagram deep lets a lone datagram through at once.

use linklab_core::{Engine, Instant, Streams};
use std::time::Duration;

use linklab_channel::x25net::{Delay, PerCallLimit, X25NetConfig, X25Network};
use linklab_link::{Config as LinkConfig, Event as LinkEvent, HdlcAddressing, HdlcLink};
use linklab_wire::lapb::{Frame, LinkProcedure, Role as LapbRole};
use linklab_x25::{CallOptions, Config, Dte, DteAddress, Event, LayerState, Lci, Role};

const X121: [&str; 2] = ["1111", "2222"];

struct Host {
    link: HdlcLink,
    dte: Dte,
    events: Vec<(Instant, Event)>,
}

struct Sim {
    net: X25Network,
    hosts: [Host; 2],
    now: Instant,
}

impl Sim {
    fn new(config: X25NetConfig, seed: u64) -> Sim {
        let host = |i: usize| {
            let mut link = HdlcLink::new(
                LinkConfig {
                    xid: false,
                    n1: 2048,
                    window_mod8: 7,
                    t1: Duration::from_secs(1),
                    t1_adaptive: false,
                    ..LinkConfig::default()
                },
                HdlcAddressing::Lapb {
                    role: LapbRole::Dte,
                    procedure: LinkProcedure::SingleLink,
                },
            )
            .unwrap();
            link.connect(Instant::ZERO).unwrap();
            Host {
                link,
                dte: Dte::new(Config {
                    role: Role::Dte,
                    address: DteAddress::new(X121[i]).unwrap(),
                    ..Config::default()
                })
                .unwrap(),
                events: Vec::new(),
            }
        };
        let net = X25Network::new(config, &Streams::new(seed), "net").unwrap();
        let mut sim = Sim {
            net,
            hosts: [host(0), host(1)],
            now: Instant::ZERO,
        };
        assert!(sim.run_until(Duration::from_secs(30), |s| s
            .hosts
            .iter()
            .all(|h| h.dte.layer_state() == LayerState::Ready)));
        sim
    }

    fn pump(&mut self) {
        let now = self.now;
        loop {
            let mut moved = false;
            while let Some(d) = self.net.poll_delivery() {
                moved = true;
                let link = &mut self.hosts[d.dte].link;
                if d.intact {
                    if let Ok(frame) = Frame::decode(&d.frame, link.modulus()) {
                        link.handle_frame(now, &frame);
                    }
                }
            }
            for (i, host) in self.hosts.iter_mut().enumerate() {
                while let Some(event) = host.link.poll_event() {
                    moved = true;
                    match event {
                        LinkEvent::Connected { .. } => host.dte.start(now),
                        LinkEvent::Data { data, .. } => host.dte.handle_octets(now, &data),
                        other => panic!("host {i} link: {other:?}"),
                    }
                }
                while let Some(packet) = host.dte.poll_transmit(now) {
                    moved = true;
                    host.link.send(packet.encode().unwrap()).unwrap();
                }
                while let Some(event) = host.dte.poll_event() {
                    moved = true;
                    host.events.push((now, event));
                }
                while let Some(frame) = host.link.poll_transmit(now) {
                    moved = true;
                    self.net.transmit(now, i, frame.encode());
                }
            }
            if !moved {
                return;
            }
        }
    }

    fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&Sim) -> bool) -> bool {
        let end = self.now + limit;
        loop {
            self.pump();
            if done(self) {
                return true;
            }
            let next = self
                .hosts
                .iter()
                .flat_map(|h| [h.link.poll_timeout(), h.dte.poll_timeout()])
                .chain([self.net.poll_timeout()])
                .flatten()
                .min();
            match next {
                Some(t) if t <= end => {
                    self.now = self.now.max(t);
                    self.net.handle_timeout(self.now);
                    for host in &mut self.hosts {
                        host.link.handle_timeout(self.now);
                        host.dte.handle_timeout(self.now);
                    }
                }
                _ => {
                    self.now = self.now.max(end);
                    return false;
                }
            }
        }
    }

    /// A calls B through the network, B accepts; returns (A's LCI, B's
    /// LCI, set-up time as A saw it).
    fn call(&mut self) -> (Lci, Lci, Duration) {
        let start = self.now;
        let options = CallOptions {
            called: DteAddress::new(X121[1]).unwrap(),
            user_data: vec![0xCC],
            ..CallOptions::default()
        };
        let incoming = |s: &Sim| {
            s.hosts[1]
                .events
                .iter()
                .filter(|(_, e)| matches!(e, Event::IncomingCall { .. }))
                .count()
        };
        let connected = |s: &Sim| {
            s.hosts[0]
                .events
                .iter()
                .filter(|(_, e)| matches!(e, Event::Connected { .. }))
                .count()
        };
        let (incoming_before, connected_before) = (incoming(self), connected(self));
        let a = self.hosts[0].dte.call(start, options).unwrap();
        assert!(self.run_until(Duration::from_secs(60), |s| incoming(s) > incoming_before));
        let (calling, b) = self.hosts[1]
            .events
            .iter()
            .rev()
            .find_map(|(_, e)| match e {
                Event::IncomingCall { lci, calling, .. } => Some((calling.clone(), *lci)),
                _ => None,
            })
            .unwrap();
        assert_eq!(calling.to_string(), X121[0]);
        self.hosts[1].dte.accept(b).unwrap();
        assert!(self.run_until(Duration::from_secs(10), |s| connected(s) > connected_before));
        (a, b, self.now - start)
    }

    /// Messages B received, with their times.
    fn received(&self) -> Vec<(Instant, usize)> {
        self.hosts[1]
            .events
            .iter()
            .filter_map(|(t, e)| match e {
                Event::Data { data, .. } => Some((*t, data.len())),
                _ => None,
            })
            .collect()
    }
}

fn addresses() -> [DteAddress; 2] {
    X121.map(|a| DteAddress::new(a).unwrap())
}

#[test]
fn call_set_up_takes_the_configured_delay() {
    let mut sim = Sim::new(X25NetConfig::korb1987(addresses()), 1);
    let (_, _, setup) = sim.call();
    // 20-30 s inside the network, plus the packets on the access lines.
    assert!(
        setup >= Duration::from_secs(20) && setup <= Duration::from_millis(30_100),
        "{setup:?}"
    );
}

#[test]
fn measured_transit_delays_follow_the_configured_distribution() {
    let mut config = X25NetConfig::korb1987(addresses());
    config.call_setup = Delay::Constant(Duration::from_secs(1));
    let transit = config.transit;
    let per_octet = config.per_octet;
    let mut sim = Sim::new(config, 2);
    let (a, _, _) = sim.call();
    // 400 messages of 32 octets, one every 2 s: far enough apart that the
    // in-order rule never holds one behind another.
    let count = 400;
    for n in 0..count {
        sim.hosts[0]
            .dte
            .send(a, &[n as u8; 32], false, false)
            .unwrap();
        sim.run_until(Duration::from_secs(2), |_| false);
    }
    assert_eq!(sim.received().len(), count);
    let mut delays: Vec<f64> = sim
        .net
        .stats()
        .transit_micros
        .iter()
        .map(|&us| us as f64 - per_octet.as_secs_f64() * 1e6 * 32.0)
        .collect();
    assert_eq!(delays.len(), count);
    delays.sort_by(f64::total_cmp);
    let median = (delays[count / 2 - 1] + delays[count / 2]) / 2.0;
    let mean = delays.iter().sum::<f64>() / count as f64;
    let want_median = transit.median().as_secs_f64() * 1e6;
    let want_mean = transit.mean().as_secs_f64() * 1e6;
    // Sampling error of the median of 400 log-normal draws with sigma
    // 0.35: about 0.35 * 1.25 / 20 = 2.2%; allow 3 standard errors.
    assert!(
        (median / want_median - 1.0).abs() < 0.07,
        "median {median} µs, configured {want_median}"
    );
    assert!(
        (mean / want_mean - 1.0).abs() < 0.07,
        "mean {mean} µs, configured {want_mean}"
    );
    // The log-normal's spread: the quartiles sit at median·exp(±0.6745σ).
    let q1 = delays[count / 4] / want_median;
    let q3 = delays[3 * count / 4] / want_median;
    let sigma = 0.35_f64;
    assert!((q1.ln() / (-0.6745 * sigma) - 1.0).abs() < 0.2, "q1 {q1}");
    assert!((q3.ln() / (0.6745 * sigma) - 1.0).abs() < 0.2, "q3 {q3}");
}

#[test]
fn flow_control_caps_a_saturated_flow_at_its_share_of_the_line() {
    let mut config = X25NetConfig::korb1987(addresses());
    config.call_setup = Delay::Constant(Duration::from_secs(1));
    // One call: without the per-call class, only the line share limits it.
    config.per_call = None;
    let share = config.share;
    let rate = f64::from(config.access_line.bit_rate);
    let mut sim = Sim::new(config, 3);
    let (a, _, _) = sim.call();
    // 160 KB offered at once: far more than the network accepts.
    let messages = 160;
    for n in 0..messages {
        sim.hosts[0]
            .dte
            .send(a, &[n as u8; 1024], false, false)
            .unwrap();
    }
    assert!(sim.run_until(Duration::from_secs(120), |s| s.received().len() == messages));
    let received = sim.received();
    // Throughput over the steady part: from the 20th message to the last.
    let (t0, _) = received[19];
    let (t1, _) = received[messages - 1];
    let octets: usize = received[20..].iter().map(|r| r.1).sum();
    let bps = octets as f64 * 8.0 / (t1 - t0).as_secs_f64();
    let want = share * rate;
    assert!(
        (bps / want - 1.0).abs() < 0.03,
        "{bps:.0} bit/s of user data, want {want:.0} ({share} of {rate})"
    );
    // The network held the DTE with RNR while its ingress queue was full.
    assert!(sim.net.stats().flow_control_holds > 0);
}

#[test]
fn a_per_call_limit_caps_one_call_below_the_line_share() {
    let mut config = X25NetConfig::korb1987(addresses());
    config.call_setup = Delay::Constant(Duration::from_secs(1));
    let rate = 8_000.0;
    config.per_call = Some(PerCallLimit {
        rate_bps: rate,
        burst_octets: 600,
    });
    let mut sim = Sim::new(config, 4);
    let (a, _, _) = sim.call();
    let messages = 40;
    for n in 0..messages {
        sim.hosts[0]
            .dte
            .send(a, &[n as u8; 500], false, false)
            .unwrap();
    }
    assert!(sim.run_until(Duration::from_secs(120), |s| s.received().len() == messages));
    let received = sim.received();
    let (t0, _) = received[9];
    let (t1, _) = received[messages - 1];
    let octets: usize = received[10..].iter().map(|r| r.1).sum();
    let bps = octets as f64 * 8.0 / (t1 - t0).as_secs_f64();
    // The transit delay's spread blurs the spacing of the last messages;
    // over 30 of them it stays within a few percent.
    assert!(
        (bps / rate - 1.0).abs() < 0.05,
        "{bps:.0} bit/s, limit {rate}"
    );
}

/// Times from handing A's DTE each of two messages of `octets`, `gap`
/// apart, on an idle call to B receiving it (constant transit delay).
fn two_message_times(
    per_call: Option<PerCallLimit>,
    octets: usize,
    gap: Duration,
) -> [Duration; 2] {
    let mut config = X25NetConfig::korb1987(addresses());
    config.call_setup = Delay::Constant(Duration::from_secs(1));
    config.transit = Delay::Constant(Duration::from_millis(100));
    config.per_call = per_call;
    let mut sim = Sim::new(config, 5);
    let (a, _, _) = sim.call();
    // Idle long enough to fill any bucket.
    sim.run_until(Duration::from_secs(5), |_| false);
    let first = sim.now;
    sim.hosts[0]
        .dte
        .send(a, &vec![0; octets], false, false)
        .unwrap();
    sim.run_until(gap, |_| false);
    let second = sim.now;
    sim.hosts[0]
        .dte
        .send(a, &vec![1; octets], false, false)
        .unwrap();
    assert!(sim.run_until(Duration::from_secs(20), |s| s.received().len() == 2));
    let received = sim.received();
    [received[0].0 - first, received[1].0 - second]
}

#[test]
fn a_class_one_datagram_deep_delays_no_ping_and_passes_a_datagram_pair() {
    // Korb's largest ping: 512 octets of data in a 540-octet datagram.
    let preset = X25NetConfig::korb1987(addresses()).per_call.unwrap();
    assert!(preset.burst_octets >= 576, "one RFC 877 datagram deep");
    // One a second: the class refills 540 octets in under a second, so
    // it delays neither ping.
    let second = Duration::from_secs(1);
    assert_eq!(
        two_message_times(None, 540, second),
        two_message_times(Some(preset), 540, second),
    );
    // Back to back: a bucket one datagram deep lets the second through as
    // soon as it has crossed the access line; a shallower one holds it
    // until the class has earned most of the first.
    let free = two_message_times(None, 540, Duration::ZERO);
    assert_eq!(free, two_message_times(Some(preset), 540, Duration::ZERO));
    let shallow = PerCallLimit {
        burst_octets: 128,
        ..preset
    };
    let held = two_message_times(Some(shallow), 540, Duration::ZERO);
    assert_eq!(held[0], free[0], "the first passes at once either way");
    // The second may leave (540 - 128) octets' time after the first; it
    // reached the ingress one datagram's serialisation (about 80 ms at
    // 56 kbit/s) after it.
    let wait = Duration::from_secs_f64((540.0 - 128.0) * 8.0 / preset.rate_bps)
        .saturating_sub(Duration::from_millis(100));
    assert!(
        held[1] >= free[1] + wait,
        "{held:?} against {free:?} + {wait:?}"
    );
}

#[test]
fn each_call_is_held_to_its_own_class() {
    let mut config = X25NetConfig::korb1987(addresses());
    config.call_setup = Delay::Constant(Duration::from_secs(1));
    let rate = 8_000.0;
    config.per_call = Some(PerCallLimit {
        rate_bps: rate,
        burst_octets: 600,
    });
    let mut sim = Sim::new(config, 6);
    let (a1, b1, _) = sim.call();
    let (a2, b2, _) = sim.call();
    assert_ne!(a1, a2);
    let messages = 30;
    for n in 0..messages {
        for a in [a1, a2] {
            sim.hosts[0]
                .dte
                .send(a, &[n as u8; 500], false, false)
                .unwrap();
        }
    }
    assert!(
        sim.run_until(Duration::from_secs(120), |s| s.received().len()
            == 2 * messages)
    );
    let on = |lci: Lci| -> Vec<Instant> {
        sim.hosts[1]
            .events
            .iter()
            .filter_map(|(t, e)| match e {
                Event::Data { lci: l, .. } if *l == lci => Some(*t),
                _ => None,
            })
            .collect()
    };
    for b in [b1, b2] {
        let times = on(b);
        assert_eq!(times.len(), messages);
        let span = times[messages - 1] - times[9];
        let bps = (messages - 10) as f64 * 500.0 * 8.0 / span.as_secs_f64();
        // Each call at its own class, together twice it: neither waits
        // for the other (the line's share, 48 kbit/s, is not reached).
        assert!(
            (bps / rate - 1.0).abs() < 0.05,
            "{bps:.0} bit/s, class {rate}"
        );
    }
    // The network held the calls with RNR, each while its messages waited.
    assert!(sim.net.stats().flow_control_holds >= 2);
}
