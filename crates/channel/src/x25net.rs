//! A public X.25 network between two DTEs, after the AT&T ACCUNET service
//! Korb (1987) measured: each DTE on its own full-duplex access line
//! (56 kbit/s, section 2), a network that switches virtual calls between
//! them with a call set-up delay ("20-30 seconds", section 4), a random
//! transit delay (calibrated from Table 1's ping medians, see
//! [`X25NetConfig::korb1987`]), and network flow control that accepts at
//! most a share of the access line's rate (the paper: "capable of
//! handling 63% of the 56K bps access line capacity", section 4, its
//! estimate from Table 4's level near 35 kbit/s of file data; the share
//! the model needs for that level is fitted, see
//! [`X25NetConfig::korb1987`]).
//!
//! The model runs the real engines on the network side of each access
//! line: an LAPB [`HdlcLink`] (DCE role) and an X.25 packet layer [`Dte`]
//! playing the DCE's part. So LAPB and X.25 flow control are local to each
//! access line, as in a public network: the DTE's window of 2 packets is
//! acknowledged by the network's packet layer (P(R) of local
//! significance), not by the far DTE. Between the two ports the network
//! moves whole messages (complete packet sequences, X.25 4.3.5), each:
//!
//! 1. reassembled by the ingress port's packet layer;
//! 2. queued at the ingress for the network's flow control, a token
//!    bucket (GCRA, virtual scheduling) of rate `share` × the access line
//!    rate over the message's user data bits, with depth `burst_octets`;
//!    and a bucket per call ([`PerCallLimit`], the call's throughput
//!    class, X.25 6.13; optional), one queue per call so that a
//!    held call's messages do not block the others';
//!    while `ingress_buffer` messages wait there, the ingress port holds
//!    the DTE's calls with RNR ("packets being queued waiting for the
//!    network to accept them", section 3.5), and with a per-call limit it
//!    also holds each call while a message of that call waits;
//! 3. carried across in a transit delay drawn from [`Delay`] plus
//!    `per_octet` per user data octet (the store-and-forward of the
//!    network's internal trunks), in order per direction;
//! 4. sent to the egress DTE by the egress port's packet layer, which
//!    splits it into packets of that call's size.
//!
//! A CALL REQUEST from a DTE is offered to the other DTE as an INCOMING
//! CALL after the call set-up delay; when the called DTE accepts, the
//! network accepts the caller's call (CALL CONNECTED). Clears and resets
//! are passed to the other leg with their cause. The calling address the
//! called DTE sees is its port's `remote_address` (the other DTE's
//! address), since the network has only two DTEs.
//!
//! Randomness: transit delays from stream `"{name}/transit/{i}"` (i = the
//! ingress port), set-up delays from `"{name}/setup"`, bit errors of the
//! access lines from `"{name}/access{i}/..."`.

use core::time::Duration;
use linklab_core::{Engine, Instant, Stream, Streams};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use linklab_link::{Config as LinkConfig, Event as LinkEvent, HdlcAddressing, HdlcLink};
use linklab_wire::lapb::{Frame, LinkProcedure, Role as LapbRole};
use linklab_x25::{CallOptions, Config as X25Config, Dte, DteAddress, Event, Lci, Role};
use thiserror::Error;

use crate::line::{LineConfig, PointToPointLine};
use crate::medium::{Medium, StationId};
use crate::ErrorModel;

/// A random delay distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Delay {
    /// Always the same.
    Constant(Duration),
    /// Uniform between `min` and `max` (Korb's "20-30 seconds" of call
    /// set-up).
    Uniform {
        /// Lower bound.
        min: Duration,
        /// Upper bound.
        max: Duration,
    },
    /// `min` plus an exponential excess of mean `mean_excess`: median
    /// `min + mean_excess · ln 2`.
    ShiftedExponential {
        /// The floor.
        min: Duration,
        /// Mean of the excess.
        mean_excess: Duration,
    },
    /// Log-normal: `median · exp(sigma · Z)`, Z standard normal; mean
    /// `median · exp(sigma² / 2)`.
    LogNormal {
        /// The median.
        median: Duration,
        /// Standard deviation of the logarithm.
        sigma: f64,
    },
}

impl Delay {
    /// The distribution's median.
    pub fn median(&self) -> Duration {
        match *self {
            Delay::Constant(d) => d,
            Delay::Uniform { min, max } => (min + max) / 2,
            Delay::ShiftedExponential { min, mean_excess } => {
                min + mean_excess.mul_f64(core::f64::consts::LN_2)
            }
            Delay::LogNormal { median, .. } => median,
        }
    }

    /// The distribution's mean.
    pub fn mean(&self) -> Duration {
        match *self {
            Delay::Constant(d) => d,
            Delay::Uniform { min, max } => (min + max) / 2,
            Delay::ShiftedExponential { min, mean_excess } => min + mean_excess,
            Delay::LogNormal { median, sigma } => median.mul_f64((sigma * sigma / 2.0).exp()),
        }
    }

    /// One draw from `stream`.
    pub fn sample(&self, stream: &mut Stream) -> Duration {
        match *self {
            Delay::Constant(d) => d,
            Delay::Uniform { min, max } => min + max.saturating_sub(min).mul_f64(stream.uniform()),
            Delay::ShiftedExponential { min, mean_excess } => {
                min + stream.exponential_duration(mean_excess)
            }
            Delay::LogNormal { median, sigma } => {
                // Box-Muller; 1 - u keeps the logarithm finite.
                let u1 = 1.0 - stream.uniform();
                let u2 = stream.uniform();
                let z = (-2.0 * u1.ln()).sqrt() * (core::f64::consts::TAU * u2).cos();
                median.mul_f64((sigma * z).exp().min(1e6))
            }
        }
    }

    fn validate(&self, name: &'static str) -> Result<(), X25NetError> {
        let ok = match *self {
            Delay::Constant(_) | Delay::ShiftedExponential { .. } => true,
            Delay::Uniform { min, max } => min <= max,
            Delay::LogNormal { sigma, .. } => sigma.is_finite() && sigma >= 0.0,
        };
        if ok {
            Ok(())
        } else {
            Err(X25NetError::Delay(name))
        }
    }
}

/// Parameters of an [`X25Network`].
#[derive(Debug, Clone, PartialEq)]
pub struct X25NetConfig {
    /// Each DTE's access line (Korb: 56 kbit/s).
    pub access_line: LineConfig,
    /// LAPB on the network side of each access line (DCE role).
    pub link: LinkConfig,
    /// The packet layer on the network side of each access line: its
    /// window and packet size are the network's defaults (Korb: window 2,
    /// "X.25 window in use: 2 packets"); `address` is ignored.
    pub packet_layer: X25Config,
    /// The two DTEs' X.121 addresses, port 0 and port 1.
    pub dte_addresses: [DteAddress; 2],
    /// Transit delay of a message across the network, before `per_octet`.
    pub transit: Delay,
    /// Extra transit time per user data octet (internal store-and-forward).
    pub per_octet: Duration,
    /// Call set-up delay inside the network.
    pub call_setup: Delay,
    /// Share of the access line rate the network accepts from a DTE
    /// (Korb: 0.858, fitted to Table 4's saturated level).
    pub share: f64,
    /// Token bucket depth, octets of user data.
    pub burst_octets: u32,
    /// Messages waiting for the flow control at which the ingress port
    /// sends RNR on its calls (RR again below it).
    pub ingress_buffer: usize,
    /// The throughput class the network enforces on each virtual call
    /// (`None`: only the access line's `share` limits a call).
    pub per_call: Option<PerCallLimit>,
}

/// A call's throughput class as the network enforces it: a token bucket
/// (GCRA) per virtual call at the ingress, on top of the access line's.
/// Messages of a call leave the ingress no faster than `rate_bps` of user
/// data on average; a call idle long enough to fill the bucket sends
/// `burst_octets` at once. Messages of other calls pass a held call's
/// messages (one queue per call). X.25 (10/96) 6.13 makes the throughput
/// class a per-call bound that the network sets and need not reach; how
/// it holds a call to it is the network's own affair, and a bucket is the
/// simplest mechanism that gives a call its class on average. The rate is
/// free (not only the standard classes' 75 bit/s to 64 kbit/s), since
/// what a network enforces is its own approximation of a class.
///
/// A message leaves when the call's bucket is not in debt by more than
/// the depth, and is charged as it leaves; so a message after an idle
/// spell passes at once whatever its size, and messages spaced at least
/// their size at `rate_bps` apart (Korb's pings, once a second) are never
/// delayed. The depth decides the bursts: one as deep as the largest
/// message the DTE sends (a whole IP datagram, the interface's MTU) lets
/// a second datagram follow the first at once, a shallower one holds it
/// until the class has earned most of the first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerCallLimit {
    /// Rate, bit/s of user data.
    pub rate_bps: f64,
    /// Bucket depth, octets of user data.
    pub burst_octets: u32,
}

impl X25NetConfig {
    /// ACCUNET as Korb (1987) measured it:
    ///
    /// - access lines 56 kbit/s, 1 ms one-way (line and DCE processing);
    /// - network window 2, packet size 128 (section 3.5, "two-packet
    ///   window"; 128 is X.25's default);
    /// - call set-up uniform 20-30 s (section 4);
    /// - transit: log-normal with median 107.13 ms and sigma 0.35, plus
    ///   304.72 µs per octet; the median and the per-octet time are fitted
    ///   to Table 1's two ping medians (`linklab-scenario`'s example
    ///   `korb_calibrate`), sigma is chosen, not fitted;
    /// - flow control share 0.858 of the line, bucket depth 1024 octets;
    ///   the share is fitted to the saturated level of section 3.5 (35,000
    ///   bit/s of file data) with ten circuits (example `korb_fit`);
    /// - a throughput class per call ([`PerCallLimit`]) of 6,902 bit/s of
    ///   user data, fitted to Table 3's two-circuit row (example
    ///   `korb_fit`), bucket depth 576 octets (one RFC 877 datagram, the
    ///   interface MTU; not fitted).
    ///
    /// Each fitted value comes from the one table named, and no other
    /// table refits it; every other row of Tables 2-4 is a prediction. How
    /// the fits were made and what they give: docs/reproduce.md, section
    /// "Korb and Wills 1987, Tables 1-4".
    pub fn korb1987(dte_addresses: [DteAddress; 2]) -> X25NetConfig {
        X25NetConfig {
            access_line: LineConfig {
                bit_rate: 56_000,
                delay: Duration::from_millis(1),
                errors: ErrorModel::Perfect,
            },
            link: LinkConfig {
                xid: false,
                n1: 2048,
                window_mod8: 7,
                t1: Duration::from_secs(1),
                t1_adaptive: false,
                ..LinkConfig::default()
            },
            packet_layer: X25Config {
                role: Role::Dce,
                packet_size: 128,
                window: 2,
                max_packet_size: 1024,
                max_window: 7,
                ..X25Config::default()
            },
            dte_addresses,
            transit: Delay::LogNormal {
                median: Duration::from_micros(107_130),
                sigma: 0.35,
            },
            per_octet: Duration::from_nanos(304_720),
            call_setup: Delay::Uniform {
                min: Duration::from_secs(20),
                max: Duration::from_secs(30),
            },
            share: 0.858,
            burst_octets: 1024,
            ingress_buffer: 8,
            per_call: Some(PerCallLimit {
                rate_bps: 6_902.0,
                burst_octets: 576,
            }),
        }
    }

    fn validate(&self) -> Result<(), X25NetError> {
        if !(self.share > 0.0 && self.share <= 1.0) {
            return Err(X25NetError::Share(self.share));
        }
        if self.access_line.bit_rate == 0 {
            return Err(X25NetError::Zero("access_line.bit_rate"));
        }
        if self.ingress_buffer == 0 {
            return Err(X25NetError::Zero("ingress_buffer"));
        }
        if let Some(limit) = self.per_call {
            if !(limit.rate_bps.is_finite() && limit.rate_bps > 0.0) {
                return Err(X25NetError::Zero("per_call.rate_bps"));
            }
        }
        self.transit.validate("transit")?;
        self.call_setup.validate("call_setup")?;
        Ok(())
    }
}

/// Why an [`X25Network`] cannot be built.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum X25NetError {
    /// The flow control share is outside (0, 1].
    #[error("share = {0}: the network's share of the access line must be in (0, 1]")]
    Share(f64),
    /// A value that must be positive is zero.
    #[error("{0} must be positive")]
    Zero(&'static str),
    /// A delay distribution's parameters are inconsistent.
    #[error("{0}: delay parameters invalid (uniform needs min <= max, log-normal sigma >= 0)")]
    Delay(&'static str),
    /// The network side's LAPB configuration is refused.
    #[error("network LAPB: {0}")]
    Link(String),
    /// The network side's packet layer configuration is refused.
    #[error("network packet layer: {0}")]
    PacketLayer(#[from] linklab_x25::ConfigError),
}

/// The earliest a message may leave a GCRA whose theoretical arrival time
/// is `tat` and whose tolerance is `tau`.
fn gcra_gate(tat: Instant, tau: Duration) -> Instant {
    Instant::from_micros(tat.as_micros().saturating_sub(tau.as_micros() as u64))
}

/// Time to carry `octets` at `rate_bps`.
fn octets_time(octets: u64, rate_bps: f64) -> Duration {
    Duration::from_secs_f64(octets as f64 * 8.0 / rate_bps)
}

/// A frame the network hands to a DTE (the far end of its access line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetDelivery {
    /// The receiving DTE, 0 or 1.
    pub dte: usize,
    /// When its last bit arrived.
    pub at: Instant,
    /// The LAPB frame (as given to the line, without flags or FCS).
    pub frame: Vec<u8>,
    /// False if bit errors hit it (the DTE's FCS check fails).
    pub intact: bool,
}

/// Counters of an [`X25Network`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct X25NetStats {
    /// Calls switched through (both legs in data transfer).
    pub calls_connected: u64,
    /// Messages accepted from each DTE into the network.
    pub messages_in: [u64; 2],
    /// User data octets accepted from each DTE into the network.
    pub octets_in: [u64; 2],
    /// Messages delivered to each DTE's port for sending.
    pub messages_out: [u64; 2],
    /// Transit delay of each message carried, from its departure from
    /// the flow control to its arrival at the egress port (µs), in order.
    pub transit_micros: Vec<u64>,
    /// Times an ingress port held one of its DTE's calls with RNR.
    pub flow_control_holds: u64,
}

#[derive(Debug)]
struct Message {
    arrived: Instant,
    lci: Lci,
    q: bool,
    data: Vec<u8>,
}

#[derive(Debug)]
struct Port {
    line: PointToPointLine,
    link: HdlcLink,
    packet_layer: Dte,
    /// Messages waiting for the flow control, with their ingress LCI.
    ingress: VecDeque<Message>,
    /// GCRA theoretical arrival time.
    tat: Instant,
    /// Per-call GCRA theoretical arrival times ([`PerCallLimit`]).
    call_tat: BTreeMap<Lci, Instant>,
    /// Calls held with RNR.
    held: BTreeSet<Lci>,
    /// Messages crossing to the other port: (arrival, ingress LCI, q, data).
    transit: VecDeque<(Instant, Lci, bool, Vec<u8>)>,
    transit_stream: Stream,
}

/// A virtual call through the network: its two legs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Leg {
    port: usize,
    lci: Lci,
}

/// The two-DTE X.25 network. Drive it like a [`Medium`]: hand it each
/// DTE's LAPB frames with [`X25Network::transmit`], call
/// [`X25Network::handle_timeout`] at [`X25Network::poll_timeout`], and
/// drain [`X25Network::poll_delivery`].
#[derive(Debug)]
pub struct X25Network {
    config: X25NetConfig,
    ports: [Port; 2],
    /// Each leg's partner; legs being set up map to the caller's leg.
    partner: BTreeMap<(usize, Lci), Leg>,
    /// Incoming calls waiting for the set-up delay: (due, caller's leg,
    /// call user data).
    setups: Vec<(Instant, Leg, Vec<u8>)>,
    setup_stream: Stream,
    deliveries: VecDeque<NetDelivery>,
    stats: X25NetStats,
}

impl X25Network {
    /// A network; the ports' LAPB links wait for the DTEs' SABM.
    pub fn new(
        config: X25NetConfig,
        streams: &Streams,
        name: &str,
    ) -> Result<X25Network, X25NetError> {
        config.validate()?;
        let make = |i: usize| -> Result<Port, X25NetError> {
            let mut link = HdlcLink::new(
                config.link.clone(),
                HdlcAddressing::Lapb {
                    role: LapbRole::Dce,
                    procedure: LinkProcedure::SingleLink,
                },
            )
            .map_err(|e| X25NetError::Link(e.to_string()))?;
            link.set_accept_incoming(true);
            let packet_layer = Dte::new(X25Config {
                role: Role::Dce,
                address: config.dte_addresses[1 - i].clone(),
                ..config.packet_layer.clone()
            })?;
            Ok(Port {
                line: PointToPointLine::new(
                    config.access_line,
                    streams,
                    &format!("{name}/access{i}"),
                ),
                link,
                packet_layer,
                ingress: VecDeque::new(),
                tat: Instant::ZERO,
                call_tat: BTreeMap::new(),
                held: BTreeSet::new(),
                transit: VecDeque::new(),
                transit_stream: streams.stream(&format!("{name}/transit/{i}")),
            })
        };
        let ports = [make(0)?, make(1)?];
        Ok(X25Network {
            setup_stream: streams.stream(&format!("{name}/setup")),
            config,
            ports,
            partner: BTreeMap::new(),
            setups: Vec::new(),
            deliveries: VecDeque::new(),
            stats: X25NetStats::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &X25NetConfig {
        &self.config
    }

    /// The counters.
    pub fn stats(&self) -> &X25NetStats {
        &self.stats
    }

    /// DTE `dte`'s access line (its station 0 is the DTE, 1 the network).
    pub fn access_line(&self, dte: usize) -> Option<&PointToPointLine> {
        self.ports.get(dte).map(|p| &p.line)
    }

    /// Messages from `dte` waiting for the network's flow control.
    pub fn ingress_backlog(&self, dte: usize) -> usize {
        self.ports.get(dte).map_or(0, |p| p.ingress.len())
    }

    /// Queues DTE `dte`'s LAPB frame on its access line. Out-of-range
    /// `dte` is ignored.
    pub fn transmit(&mut self, now: Instant, dte: usize, frame: Vec<u8>) {
        if let Some(port) = self.ports.get_mut(dte) {
            port.line.transmit(now, StationId(0), frame);
        }
    }

    /// The next frame for a DTE, in time order.
    pub fn poll_delivery(&mut self) -> Option<NetDelivery> {
        self.deliveries.pop_front()
    }

    /// When [`X25Network::handle_timeout`] is next needed.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut take = |t: Option<Instant>| {
            if let Some(t) = t {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        };
        for port in &self.ports {
            take(port.line.poll_timeout());
            take(port.link.poll_timeout());
            take(port.packet_layer.poll_timeout());
            take(self.departure(port).map(|(_, t)| t));
            take(port.transit.front().map(|m| m.0));
        }
        take(self.setups.iter().map(|s| s.0).min());
        next
    }

    /// Runs everything due at or before `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        for i in 0..2 {
            let port = &mut self.ports[i];
            port.line.handle_timeout(now);
            port.link.handle_timeout(now);
            port.packet_layer.handle_timeout(now);
        }
        self.pump(now);
        let (due, later): (Vec<_>, Vec<_>) = self.setups.drain(..).partition(|s| s.0 <= now);
        self.setups = later;
        for (_, caller, user_data) in due {
            self.offer_call(now, caller, user_data);
        }
        for i in 0..2 {
            self.depart_due(now, i);
            while self.ports[i].transit.front().is_some_and(|m| m.0 <= now) {
                let (_, lci, q, data) = self.ports[i].transit.pop_front().expect("front");
                self.arrive(i, lci, q, data);
            }
            self.update_hold(i);
        }
        self.pump(now);
    }

    /// The next message of `port`'s ingress queue to leave and when
    /// (GCRA): the head, or with a [`PerCallLimit`] the earliest of each
    /// call's first message (queue order breaks ties).
    fn departure(&self, port: &Port) -> Option<(usize, Instant)> {
        let line_gate = gcra_gate(
            port.tat,
            self.bucket_time(u64::from(self.config.burst_octets)),
        );
        let Some(limit) = self.config.per_call else {
            let head = port.ingress.front()?;
            return Some((0, head.arrived.max(line_gate)));
        };
        let call_tau = octets_time(u64::from(limit.burst_octets), limit.rate_bps);
        let mut seen: Vec<Lci> = Vec::new();
        let mut best: Option<(usize, Instant)> = None;
        for (index, message) in port.ingress.iter().enumerate() {
            if seen.contains(&message.lci) {
                continue;
            }
            seen.push(message.lci);
            let call_gate = port
                .call_tat
                .get(&message.lci)
                .map_or(Instant::ZERO, |&tat| gcra_gate(tat, call_tau));
            let at = message.arrived.max(line_gate).max(call_gate);
            if best.is_none_or(|(_, t)| at < t) {
                best = Some((index, at));
            }
        }
        best
    }

    /// Sends into the network every message of port `i` whose flow
    /// control allows it by `now`.
    fn depart_due(&mut self, now: Instant, i: usize) {
        while self
            .departure(&self.ports[i])
            .is_some_and(|(_, t)| t <= now)
        {
            self.depart(i);
        }
    }

    /// Time the token bucket needs for `octets` of user data.
    fn bucket_time(&self, octets: u64) -> Duration {
        octets_time(
            octets,
            self.config.share * f64::from(self.config.access_line.bit_rate),
        )
    }

    fn depart(&mut self, i: usize) {
        let Some((index, at)) = self.departure(&self.ports[i]) else {
            return;
        };
        let message = self.ports[i]
            .ingress
            .remove(index)
            .expect("departure named a queued message");
        let len = message.data.len() as u64;
        let cost = self.bucket_time(len);
        let call_cost = self
            .config
            .per_call
            .map(|limit| octets_time(len, limit.rate_bps));
        let port = &mut self.ports[i];
        port.tat = port.tat.max(at) + cost;
        if let Some(call_cost) = call_cost {
            let tat = port.call_tat.entry(message.lci).or_insert(Instant::ZERO);
            *tat = (*tat).max(at) + call_cost;
        }
        let transit = self.config.transit.sample(&mut port.transit_stream)
            + self.config.per_octet * u32::try_from(len).unwrap_or(u32::MAX);
        let last = port.transit.back().map_or(Instant::ZERO, |m| m.0);
        let arrival = (at + transit).max(last);
        self.stats
            .transit_micros
            .push((arrival - at).as_micros() as u64);
        port.transit
            .push_back((arrival, message.lci, message.q, message.data));
    }

    /// A message from port `from`'s leg `lci` reaches the other port.
    fn arrive(&mut self, from: usize, lci: Lci, q: bool, data: Vec<u8>) {
        let Some(&out) = self.partner.get(&(from, lci)) else {
            return;
        };
        if self.ports[out.port]
            .packet_layer
            .send(out.lci, &data, q, false)
            .is_ok()
        {
            self.stats.messages_out[out.port] += 1;
        }
    }

    /// RNR on port `i`'s calls while its ingress queue is full, RR below;
    /// with a [`PerCallLimit`], also RNR on a call while one of its
    /// messages waits at the ingress (X.25 flow control is per logical
    /// channel, 4.4.1: the network holds the call that exceeds its class,
    /// not the others).
    fn update_hold(&mut self, i: usize) {
        let full = self.ports[i].ingress.len() >= self.config.ingress_buffer;
        let per_call = self.config.per_call.is_some();
        let legs: Vec<Lci> = self
            .partner
            .keys()
            .filter(|(p, _)| *p == i)
            .map(|&(_, lci)| lci)
            .collect();
        for lci in legs {
            let port = &mut self.ports[i];
            let hold = full || (per_call && port.ingress.iter().any(|m| m.lci == lci));
            if hold == port.held.contains(&lci) {
                continue;
            }
            // Only calls in data transfer take RNR; others have no data
            // (and are held, if need be, once connected).
            if port.packet_layer.set_receiver_busy(lci, hold).is_err() {
                continue;
            }
            if hold {
                port.held.insert(lci);
                self.stats.flow_control_holds += 1;
            } else {
                port.held.remove(&lci);
            }
        }
    }

    /// After the set-up delay: the network calls the other DTE.
    fn offer_call(&mut self, now: Instant, caller: Leg, user_data: Vec<u8>) {
        let called = 1 - caller.port;
        let options = CallOptions {
            called: self.config.dte_addresses[called].clone(),
            user_data,
            ..CallOptions::default()
        };
        match self.ports[called].packet_layer.call(now, options) {
            Ok(lci) => {
                let leg = Leg { port: called, lci };
                self.partner.insert((called, lci), caller);
                self.partner.insert((caller.port, caller.lci), leg);
            }
            Err(_) => {
                // The called DTE's interface is not ready or has no free
                // channel: "number busy" (Table 5-5).
                let _ = self.ports[caller.port].packet_layer.clear(
                    now,
                    caller.lci,
                    linklab_x25::packet::cause::clearing::NUMBER_BUSY,
                    None,
                );
            }
        }
    }

    /// Moves frames, packets and events until nothing is due at `now`.
    fn pump(&mut self, now: Instant) {
        loop {
            let mut moved = false;
            for i in 0..2 {
                moved |= self.pump_port(now, i);
            }
            if !moved {
                return;
            }
        }
    }

    fn pump_port(&mut self, now: Instant, i: usize) -> bool {
        let mut moved = false;
        while let Some(delivery) = self.ports[i].line.poll_delivery() {
            moved = true;
            if delivery.to == StationId(1) {
                let link = &mut self.ports[i].link;
                if delivery.is_intact() {
                    if let Ok(frame) = Frame::decode(&delivery.frame, link.modulus()) {
                        link.handle_frame(now, &frame);
                    }
                }
            } else {
                self.deliveries.push_back(NetDelivery {
                    dte: i,
                    at: delivery.at,
                    intact: delivery.is_intact(),
                    frame: delivery.frame,
                });
            }
        }
        while self.ports[i].line.poll_event().is_some() {}
        while let Some(event) = self.ports[i].link.poll_event() {
            moved = true;
            let port = &mut self.ports[i];
            match event {
                LinkEvent::Connected { .. } => port.packet_layer.start(now),
                LinkEvent::Data { data, .. } => port.packet_layer.handle_octets(now, &data),
                _ => {}
            }
        }
        while let Some(packet) = self.ports[i].packet_layer.poll_transmit(now) {
            moved = true;
            if let Ok(octets) = packet.encode() {
                // A refused send (link down) loses the packet, as a DCE
                // whose link failed would.
                let _ = self.ports[i].link.send(octets);
            }
        }
        while let Some(event) = self.ports[i].packet_layer.poll_event() {
            moved = true;
            self.on_event(now, i, event);
        }
        while let Some(frame) = self.ports[i].link.poll_transmit(now) {
            moved = true;
            self.ports[i]
                .line
                .transmit(now, StationId(1), frame.encode());
        }
        moved
    }

    fn on_event(&mut self, now: Instant, i: usize, event: Event) {
        match event {
            Event::IncomingCall { lci, user_data, .. } => {
                let delay = self.config.call_setup.sample(&mut self.setup_stream);
                self.setups
                    .push((now + delay, Leg { port: i, lci }, user_data));
            }
            Event::Connected { lci, .. } => {
                // The called DTE accepted our leg: accept the caller's.
                if let Some(&caller) = self.partner.get(&(i, lci)) {
                    if caller.port != i
                        && self.ports[caller.port]
                            .packet_layer
                            .accept(caller.lci)
                            .is_ok()
                    {
                        self.stats.calls_connected += 1;
                    }
                }
            }
            Event::Data { lci, q, data, .. } if self.partner.contains_key(&(i, lci)) => {
                self.stats.messages_in[i] += 1;
                self.stats.octets_in[i] += data.len() as u64;
                self.ports[i].ingress.push_back(Message {
                    arrived: now,
                    lci,
                    q,
                    data,
                });
                // A message its buckets admit at once never holds its call.
                self.depart_due(now, i);
                self.update_hold(i);
            }
            Event::Cleared {
                lci,
                cause,
                diagnostic,
                ..
            } => {
                self.setups.retain(|s| !(s.1.port == i && s.1.lci == lci));
                self.ports[i].call_tat.remove(&lci);
                self.ports[i].held.remove(&lci);
                if let Some(other) = self.partner.remove(&(i, lci)) {
                    self.partner.remove(&(other.port, other.lci));
                    let _ = self.ports[other.port]
                        .packet_layer
                        .clear(now, other.lci, cause, diagnostic);
                }
            }
            Event::Reset {
                lci,
                cause,
                diagnostic,
                by_peer: true,
            } => {
                if let Some(&other) = self.partner.get(&(i, lci)) {
                    let _ = self.ports[other.port]
                        .packet_layer
                        .reset(now, other.lci, cause, diagnostic);
                }
            }
            _ => {}
        }
    }
}
