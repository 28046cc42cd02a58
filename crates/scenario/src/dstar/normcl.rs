//! DTN over NORM between the two PCs, as the paper's dtnsend ran it over
//! DTN2's NORM convergence layer: a bundle agent
//! ([`linklab_dtn::Agent`]) on each PC and a NORM CL session
//! ([`linklab_normcl::Session`]: one NORM object per bundle, RFC 5740
//! NORM at a fixed rate) toward the other PC, its datagrams in UDP/IPv4
//! on the PCs' Ethernet ports ([`udp_ipv4`]), through the radios.
//!
//! PC 1's agent makes the file one BPv7 bundle asking for a "delivered"
//! status report (RFC 9171 4.2.3); its session sends it as one NORM
//! object and asks PC 2 for positive acknowledgement of it (a watermark,
//! RFC 5740 5.1.3), which PC 2's session gives only once its agent has
//! stored the bundle. PC 2's agent delivers the file and sends the report
//! back over its own session; the run ends when PC 1's agent receives it.
//! Throughput is the file's octets over the time from the send request
//! to the report, as dtnsend reported it.
//!
//! The session is set up as DTN2's NORM CL ran: its defaults (segments
//! of 1400 octets, blocks of 64 with 16 parity, robust factor 20) are
//! `linklab_normcl`'s, and its reliable mode set a watermark that went
//! unanswered again, for as long as the link was open, which on the
//! paper's statically configured (always-on) link was for ever. So the
//! session's shortest acknowledgement wait ([`ClConfig::min_ack_wait`])
//! is the run's horizon: a bundle is never failed for want of an
//! acknowledgement, and the link never goes down for it.
//! `linklab_normcl`'s own bound (robust factor × 2·GRTT) does not fit this
//! link: a GRTT measured while the radio's transmit buffer is empty is far
//! shorter than the time a round of FLUSHes can wait in it when it is
//! full, so the bound would fail the bundle and the agent would send it
//! again, whole (what that did at 128 kbit/s: docs/reproduce.md, section
//! "Ronan et al. on D-STAR, Tables I and II").

use core::net::{IpAddr, SocketAddr};
use core::time::Duration;
use linklab_core::{earliest, Engine, Instant, Streams};

use linklab_channel::{DdChannel, DdConfig, DdStats, Medium, StationId};
use linklab_dtn::{
    Agent, Config as AgentConfig, Eid, Event as AgentEvent, LinkId, MemoryStore, SendRequest,
    StatusKind, TransmitId,
};
use linklab_ip::ether::{decapsulate, encapsulate, ETHERTYPE_IPV4};
use linklab_normcl::{Config as ClConfig, Event as ClEvent, Session, TransferId};
use linklab_sim::{drive, DriveError, World};

use super::testbed::{parse_udp_ipv4, udp_ipv4, TestbedError, IPV4, MACS, NORM_PORT, NORM_SEGMENT};

/// How long a bundle whose transfer failed (the session refused it)
/// waits before it goes again (DTN2's minimum link retry interval, as
/// for TCPCL).
pub const RETRY_AFTER: Duration = super::tcpcl::RECONNECT_AFTER;
/// The link each agent names its NORM CL session by.
const LINK: LinkId = LinkId(0);
/// DTN time at the start of a run: 2010-06-01, ms since 2000-01-01.
const DTN_TIME_AT_ZERO: u64 = 328_665_600_000;

/// What a DTN-over-NORM run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct NormClRun {
    /// Send request to delivery report, if the report came within the
    /// horizon.
    pub completed: Option<Duration>,
    /// File octets over [`NormClRun::completed`] (0 if it did not).
    pub bytes_per_s: f64,
    /// Octets of each bundle PC 1's agent handed to its session (the
    /// first is the whole file's bundle; more if a transfer failed).
    pub transmissions: Vec<usize>,
    /// Why the run stopped early, if it did.
    pub failure: Option<String>,
    /// NORM_DATA PC 1's sender retransmitted (repairs).
    pub repairs: u64,
    /// The radios' counters.
    pub radio: [DdStats; 2],
}

/// One PC: its agent and its session toward the other.
struct Node {
    agent: Agent<MemoryStore>,
    session: Session,
    addr: SocketAddr,
    /// Transfers in the session and the agent's transmissions they carry.
    transfers: Vec<(TransferId, TransmitId)>,
}

fn eid(text: &str) -> Result<Eid, TestbedError> {
    text.parse()
        .map_err(|e| TestbedError::Setup(format!("endpoint {text}: {e:?}")))
}

impl Node {
    /// PC `i`'s agent and its NORM CL session at `bits_per_second`.
    fn new(
        i: usize,
        bits_per_second: f64,
        ack_wait: Duration,
        streams: &Streams,
    ) -> Result<Node, TestbedError> {
        let setup = |e: &dyn std::fmt::Display| TestbedError::Setup(e.to_string());
        let (me, peer) = (i + 1, 2 - i);
        let addr = |k: usize| SocketAddr::new(IpAddr::V4(IPV4[k]), NORM_PORT);
        let mut config = AgentConfig::new(eid(&format!("ipn:{me}.0"))?);
        config.dtn_time_at_zero = DTN_TIME_AT_ZERO;
        config.retry_after = RETRY_AFTER;
        let mut agent = Agent::open(config, MemoryStore::new()).map_err(|e| setup(&e))?;
        agent
            .register(eid(&format!("ipn:{me}.1"))?)
            .map_err(|e| setup(&e))?;
        let route = format!("ipn:{peer}.*")
            .parse()
            .map_err(|e| setup(&format!("{e:?}")))?;
        agent.add_route(route, LINK);
        let mut cl = ClConfig::new(
            &format!("ipn:{me}.0"),
            &format!("ipn:{peer}.0"),
            addr(1 - i),
            bits_per_second,
        );
        cl.segment_size = NORM_SEGMENT;
        cl.min_ack_wait = ack_wait;
        cl.instance_id = me as u16;
        cl.seed = streams.stream(&format!("normcl/{i}")).next_u64();
        let session = Session::new(cl, Instant::ZERO).map_err(|e| setup(&e))?;
        Ok(Node {
            agent,
            session,
            addr: addr(i),
            transfers: Vec::new(),
        })
    }

    fn transmit_of(&mut self, id: TransferId) -> Option<TransmitId> {
        let k = self.transfers.iter().position(|t| t.0 == id)?;
        Some(self.transfers.swap_remove(k).1)
    }
}

/// dtnsend on both PCs.
struct DtnOverNorm {
    nodes: [Node; 2],
    file: Vec<u8>,
    sent_at: Option<Instant>,
    report_at: Option<Instant>,
    transmissions: Vec<usize>,
    failure: Option<String>,
}

impl DtnOverNorm {
    /// Passes session events to PC `i`'s agent and the agent's bundles to
    /// the session; takes deliveries and reports.
    fn step_node(&mut self, i: usize, now: Instant) -> Result<(), String> {
        let text = |e: &dyn std::fmt::Display| e.to_string();
        let node = &mut self.nodes[i];
        if node.agent.poll_timeout().is_some_and(|t| t <= now) {
            node.agent.handle_timeout(now).map_err(|e| text(&e))?;
        }
        while let Some(event) = node.session.poll_event() {
            match event {
                ClEvent::LinkUp => {
                    node.agent
                        .link_up(LINK, Some(node.session.max_bundle_len()));
                    node.agent.retry_now(LINK);
                }
                ClEvent::LinkDown { .. } => {
                    node.agent.link_down(LINK);
                    node.transfers.clear();
                }
                ClEvent::BundleReceived { receipt, bundle } => {
                    // Stored (or known already): the peer may be told.
                    node.agent
                        .handle_bundle(now, &bundle)
                        .map_err(|e| text(&e))?;
                    node.session.bundle_stored(now, receipt);
                }
                ClEvent::ObjectRefused { why } => return Err(format!("NORM CL: {why}")),
                ClEvent::TransferSucceeded(id) => {
                    if let Some(transmit) = node.transmit_of(id) {
                        node.agent
                            .transfer_succeeded(now, transmit)
                            .map_err(|e| text(&e))?;
                    }
                }
                ClEvent::TransferFailed { id, .. } => {
                    if let Some(transmit) = node.transmit_of(id) {
                        node.agent.transfer_failed(now, transmit);
                    }
                }
            }
        }
        while let Some(delivery) = node.agent.poll_delivery() {
            node.agent
                .delivery_done(now, delivery.id)
                .map_err(|e| text(&e))?;
            if delivery.payload != self.file {
                return Err(format!(
                    "delivered {} octets, not the {}-octet file",
                    delivery.payload.len(),
                    self.file.len()
                ));
            }
        }
        while let Some(event) = node.agent.poll_event() {
            if let AgentEvent::StatusReport { .. } = event {
                if i == 0 {
                    self.report_at.get_or_insert(now);
                }
            }
        }
        if node.session.is_up() {
            while let Some(transmit) = node.agent.poll_transmit(now).map_err(|e| text(&e))? {
                if i == 0 {
                    self.transmissions.push(transmit.octets.len());
                }
                match node.session.send_bundle(now, &transmit.octets) {
                    Ok(id) => node.transfers.push((id, transmit.id)),
                    Err(_) => node.agent.transfer_failed(now, transmit.id),
                }
            }
        }
        Ok(())
    }

    /// dtnsend on PC 1: the file as one bundle, delivery report asked.
    fn send_file(&mut self, now: Instant) -> Result<(), TestbedError> {
        let mut request = SendRequest::new(eid("ipn:1.1")?, eid("ipn:2.1")?, self.file.clone());
        request.reports = vec![StatusKind::Delivered];
        self.nodes[0]
            .agent
            .send(now, &request)
            .map_err(|e| TestbedError::Setup(e.to_string()))?;
        self.sent_at = Some(now);
        Ok(())
    }

    fn poll_timeout(&self) -> Option<Instant> {
        earliest(self.nodes.iter().flat_map(|n| {
            // The agent's retry waits end in `poll_transmit`, which needs
            // the link: they count while it is up.
            let agent = n.session.is_up().then(|| n.agent.poll_timeout());
            [n.session.poll_timeout(), agent.flatten()]
        }))
    }
}

/// The two PCs' agents and NORM CL sessions on the radios: what [`drive`]
/// takes through time.
struct Pcs<'a> {
    medium: &'a mut DdChannel,
    app: &'a mut DtnOverNorm,
    end: Instant,
    now: Instant,
}

impl World for Pcs<'_> {
    /// Moves datagrams among the agents, the sessions and the radios until
    /// nothing moves.
    fn settle(&mut self, now: Instant) {
        let (medium, app) = (&mut *self.medium, &mut *self.app);
        loop {
            let mut busy = false;
            for i in 0..2 {
                if let Err(e) = app.step_node(i, now) {
                    app.failure = Some(e);
                }
                let node = &mut app.nodes[i];
                while let Some(t) = node.session.poll_transmit(now) {
                    busy = true;
                    if let Some(d) = udp_ipv4(node.addr, t.destination, &t.payload) {
                        let frame = encapsulate(MACS[1 - i], MACS[i], ETHERTYPE_IPV4, &d);
                        medium.transmit(now, StationId(i), frame);
                    }
                }
            }
            while medium.poll_event().is_some() {}
            while let Some(delivery) = medium.poll_delivery() {
                busy = true;
                if !delivery.is_intact() {
                    continue;
                }
                let Some((_, _, payload)) = decapsulate(&delivery.frame) else {
                    continue;
                };
                let Some((from, message)) = parse_udp_ipv4(payload) else {
                    continue;
                };
                app.nodes[delivery.to.0]
                    .session
                    .handle_datagram(now, from, message);
            }
            for i in 0..2 {
                if let Err(e) = app.step_node(i, now) {
                    app.failure = Some(e);
                }
            }
            if !busy {
                return;
            }
        }
    }

    fn done(&self) -> bool {
        self.app.failure.is_some() || self.app.report_at.is_some() || self.now >= self.end
    }

    fn next_wake(&mut self, _now: Instant) -> Option<Instant> {
        earliest([self.medium.poll_timeout(), self.app.poll_timeout()])
            .map(|next| next.min(self.end))
    }

    fn advance(&mut self, to: Instant) {
        self.now = to;
        self.medium.handle_timeout(to);
        for node in &mut self.app.nodes {
            if node.session.poll_timeout().is_some_and(|t| t <= to) {
                node.session.handle_timeout(to);
            }
        }
    }
}

/// dtnsend of `file` from PC 1 to PC 2 over the NORM CL at a fixed
/// `bits_per_second`, up to `horizon` (see the module documentation).
pub fn dtn_norm_transfer(
    channel: DdConfig,
    bits_per_second: f64,
    file: Vec<u8>,
    horizon: Duration,
    seed: u64,
) -> Result<NormClRun, TestbedError> {
    let streams = Streams::new(seed);
    let mut medium = DdChannel::new(channel, &streams);
    let octets = file.len();
    let mut app = DtnOverNorm {
        nodes: [
            Node::new(0, bits_per_second, horizon, &streams)?,
            Node::new(1, bits_per_second, horizon, &streams)?,
        ],
        file,
        sent_at: None,
        report_at: None,
        transmissions: Vec::new(),
        failure: None,
    };
    app.send_file(Instant::ZERO)?;
    let end = Instant::ZERO + horizon;
    let mut world = Pcs {
        medium: &mut medium,
        app: &mut app,
        end,
        now: Instant::ZERO,
    };
    match drive(&mut world, Instant::ZERO, end) {
        // Nothing scheduled: the sessions wait for nothing; wake-ups are
        // clamped to `end`, where the run is done.
        Ok(_) | Err(DriveError::Stalled { .. }) | Err(DriveError::Horizon { .. }) => {}
        Err(DriveError::Livelock { at }) => {
            return Err(TestbedError::Livelock {
                at_s: at.as_secs_f64(),
            })
        }
    }
    let completed = match (app.sent_at, app.report_at) {
        (Some(sent), Some(report)) => Some(report - sent),
        _ => None,
    };
    Ok(NormClRun {
        completed,
        bytes_per_s: completed.map_or(0.0, |t| octets as f64 / t.as_secs_f64()),
        transmissions: app.transmissions,
        failure: app.failure,
        repairs: app.nodes[0].session.sender_stats().repairs_sent,
        radio: [medium.stats(StationId(0)), medium.stats(StationId(1))],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_arrives_and_the_delivery_report_comes_back_over_norm() {
        let file: Vec<u8> = (0..60_000u32).map(|i| (i * 7) as u8).collect();
        for rate in [84e3, 128e3] {
            let run = dtn_norm_transfer(
                DdConfig::id1(),
                rate,
                file.clone(),
                Duration::from_secs(120),
                5,
            )
            .unwrap();
            assert_eq!(run.failure, None);
            let t = run.completed.expect("report back");
            // No faster than the configured rate lets the bundle go.
            assert!(t.as_secs_f64() > 60_000.0 * 8.0 / rate, "{t:?}");
            assert_eq!(run.transmissions.len(), 1, "{:?}", run.transmissions);
            assert!((60_000 + 20..60_000 + 200).contains(&run.transmissions[0]));
            // Both radios carried frames: the report came back over the air.
            assert!(run.radio.iter().all(|r| r.frames_sent > 0));
        }
    }
}
