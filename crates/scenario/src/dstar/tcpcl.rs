//! DTN over TCPCLv4 between the two PCs, as the paper's dtnsend ran it:
//! a bundle agent ([`linklab_dtn::Agent`]) on each PC, a TCPCLv4 session
//! ([`linklab_tcpcl::Session`], RFC 9174) between them over one smoltcp
//! TCP connection on the same Ethernet interface as iperf
//! (`testbed::run_pcs`).
//!
//! PC 1 connects to PC 2's TCPCL port (the active entity, RFC 9174
//! section 3.1); once the session is established (contact headers and
//! SESS_INITs exchanged, as on the paper's always-open static link) PC 1's
//! agent makes the file one BPv7 bundle asking for a "delivered" status
//! report (RFC 9171 4.2.3) and the session sends it as one transfer. PC
//! 2's agent delivers it and sends the report back over the same session;
//! the run ends when PC 1's agent receives the report. Throughput is the
//! file's octets over the time from the send request to the report, the
//! "time=" of dtnsend's report line (section III of the paper).
//!
//! When a session ends (the TCP connection aborted by its user timeout in
//! a fade, the peer's keepalive or establishment timer, RFC 9174 sections
//! 5.1.1 and 6.1), both PCs drop it, PC 2 listens again and PC 1 connects
//! again [`RECONNECT_AFTER`] later. A bundle cut off in the session is
//! fragmented reactively (RFC 9171 section 5.8), as DTN2 did and as the
//! workspace's node does (`linklab-dtnnode`'s TCPCL link): PC 2's agent
//! keeps the prefix that its queued XFER_ACKs covered
//! ([`Session::incoming`], RFC 9174 section 5.2.3) as a fragment
//! ([`Agent::handle_partial_bundle`]); PC 1's agent replaces the bundle by
//! a fragment of the payload after the last Acknowledged Length it
//! received ([`Agent::transfer_partial`]), which goes on the next session
//! as soon as it is up ([`Agent::retry_now`]). PC 2 reassembles the
//! payload from the pieces (RFC 9171 section 5.9) and delivers it.

use linklab_core::{earliest, Engine, Instant, Streams};
use std::collections::VecDeque;

use core::time::Duration;

use linklab_channel::{DdChannel, DdConfig, DdStats, StationId};
use linklab_dtn::{
    Agent, Config as AgentConfig, Eid, Event as AgentEvent, LinkId, MemoryStore, SendRequest,
    StatusKind, TransmitId,
};
use linklab_ip::{EthInterface, Host, TcpConfig};
use linklab_tcpcl::{
    Config as ClConfig, Event as ClEvent, Role, Session, State as ClState, TransferId,
};
use smoltcp::iface::SocketHandle;
use smoltcp::socket::tcp;
use smoltcp::wire::{IpAddress, IpEndpoint};

use super::testbed::{pcs, run_pcs, Application, TestbedError, IPV4};

/// TCPCL's registered port (RFC 9174 section 8.1).
pub const TCPCL_PORT: u16 = 4556;
/// How long PC 1 waits after a session ended before it connects again
/// (DTN2's minimum link retry interval, 5 s).
pub const RECONNECT_AFTER: Duration = Duration::from_secs(5);
/// The link each agent names its TCPCL session by.
const LINK: LinkId = LinkId(0);
/// DTN time at the start of a run: 2010-06-01, ms since 2000-01-01.
const DTN_TIME_AT_ZERO: u64 = 328_665_600_000;

/// What a DTN-over-TCPCL run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct DtnRun {
    /// Send request to delivery report, if the report came within the
    /// horizon.
    pub completed: Option<Duration>,
    /// File octets over [`DtnRun::completed`] (0 if it did not).
    pub bytes_per_s: f64,
    /// Octets of each bundle PC 1's agent sent: the first is the whole
    /// bundle, any later one what was left of it after a session broke
    /// off (a fragment, or the bundle again if none of it was
    /// acknowledged).
    pub transmissions: Vec<usize>,
    /// Why the run stopped early, if it did (an agent error, a bad
    /// delivery).
    pub failure: Option<String>,
    /// TCPCL sessions that ended before the report came (each followed by
    /// a new one).
    pub sessions_ended: u32,
    /// The radios' counters.
    pub radio: [DdStats; 2],
}

/// One PC: its agent, its session and the connection under it.
struct Node {
    agent: Agent<MemoryStore>,
    session: Session,
    socket: SocketHandle,
    /// Session octets not yet taken by the socket (front partly sent).
    outbox: VecDeque<Vec<u8>>,
    sent_of_front: usize,
    /// Transfers in the session, the agent's transmissions they carry and
    /// the octets the peer acknowledged of each.
    transfers: Vec<(TransferId, TransmitId, usize)>,
    /// The incoming transfer's octets that XFER_ACKs queued so far cover.
    incoming: Option<(TransferId, Vec<u8>)>,
    /// PC 1 connects again at this instant (the session having ended).
    reconnect_at: Option<Instant>,
    /// Sessions that ended.
    sessions_ended: u32,
}

impl Node {
    /// A TCP socket and a session for PC `i`: PC 1 connects to PC 2's
    /// TCPCL port (the active entity, RFC 9174 section 3.1), PC 2 listens.
    fn open(
        host: &mut Host<EthInterface>,
        tcp: &TcpConfig,
        i: usize,
        now: Instant,
    ) -> Result<(SocketHandle, Session), String> {
        let text = |e: &dyn std::fmt::Display| e.to_string();
        let socket = host.add_socket_last(tcp.socket());
        let role = if i == 0 {
            let remote = IpEndpoint::new(IpAddress::Ipv4(IPV4[1]), TCPCL_PORT);
            host.tcp_connect(socket, remote, 49153)
                .map_err(|e| text(&e))?;
            Role::Active
        } else {
            host.tcp(socket).listen(TCPCL_PORT).map_err(|e| text(&e))?;
            Role::Passive
        };
        let session = Session::new(role, ClConfig::new(format!("ipn:{}.0", i + 1)), now)
            .map_err(|e| text(&e))?;
        Ok((socket, session))
    }

    /// Keeps the incoming transfer's acknowledged prefix: called before
    /// the XFER_ACKs the session queued are written out, so that what the
    /// peer sees acknowledged is kept here.
    fn keep_incoming(&mut self) {
        let Some((transfer, prefix)) = self.session.incoming() else {
            return;
        };
        match &mut self.incoming {
            Some((kept, octets)) if *kept == transfer => {
                octets.extend_from_slice(&prefix[octets.len()..]);
            }
            _ => self.incoming = Some((transfer, prefix.to_vec())),
        }
    }

    /// The outgoing transfer `id` broke off: the rest of its bundle goes
    /// again as a fragment after what the peer acknowledged (the whole
    /// bundle if nothing).
    fn transfer_cut(&mut self, now: Instant, id: TransferId) -> Result<(), String> {
        if let Some(k) = self.transfers.iter().position(|t| t.0 == id) {
            let (_, transmit, acknowledged) = self.transfers.swap_remove(k);
            self.agent
                .transfer_partial(now, transmit, acknowledged)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The session ended: transfers cut off in it are fragmented, the
    /// incoming bundle's acknowledged prefix is kept as a fragment, the
    /// agent's link goes down, the connection is aborted and dropped; PC 2
    /// listens again at once, PC 1 connects again after
    /// [`RECONNECT_AFTER`].
    fn session_ended(
        &mut self,
        host: &mut Host<EthInterface>,
        tcp: &TcpConfig,
        i: usize,
        now: Instant,
    ) -> Result<(), String> {
        self.sessions_ended += 1;
        let cut: Vec<TransferId> = self.transfers.iter().map(|t| t.0).collect();
        for id in cut {
            self.transfer_cut(now, id)?;
        }
        if let Some((_, prefix)) = self.incoming.take() {
            self.agent
                .handle_partial_bundle(now, &prefix)
                .map_err(|e| e.to_string())?;
        }
        self.agent.link_down(LINK);
        self.outbox.clear();
        self.sent_of_front = 0;
        host.tcp(self.socket).abort();
        host.remove_socket(self.socket);
        if i == 0 {
            self.reconnect_at = Some(now + RECONNECT_AFTER);
            // Until then, a closed session on a socket that is not
            // connected.
            self.socket = host.add_socket_last(tcp.socket());
        } else {
            (self.socket, self.session) = Node::open(host, tcp, i, now)?;
        }
        Ok(())
    }
}

/// The dtnsend application on both PCs.
struct DtnOverTcpcl {
    nodes: [Node; 2],
    tcp: TcpConfig,
    file: Vec<u8>,
    sent_at: Option<Instant>,
    report_at: Option<Instant>,
    transmissions: Vec<usize>,
    failure: Option<String>,
}

fn eid(text: &str) -> Result<Eid, TestbedError> {
    text.parse()
        .map_err(|e| TestbedError::Setup(format!("endpoint {text}: {e:?}")))
}

impl DtnOverTcpcl {
    fn new(
        hosts: &mut [Host<EthInterface>; 2],
        tcp: &TcpConfig,
        file: Vec<u8>,
    ) -> Result<Self, TestbedError> {
        let setup = |e: &dyn std::fmt::Display| TestbedError::Setup(e.to_string());
        let mut nodes = Vec::with_capacity(2);
        for (i, host) in hosts.iter_mut().enumerate() {
            let node = i + 1;
            let mut config = AgentConfig::new(eid(&format!("ipn:{node}.0"))?);
            config.dtn_time_at_zero = DTN_TIME_AT_ZERO;
            // A bundle whose transfer was cut goes again on the next
            // session, as soon as PC 1 could have connected again.
            config.retry_after = RECONNECT_AFTER;
            let mut agent = Agent::open(config, MemoryStore::new()).map_err(|e| setup(&e))?;
            agent
                .register(eid(&format!("ipn:{node}.1"))?)
                .map_err(|e| setup(&e))?;
            let route = format!("ipn:{}.*", 3 - node)
                .parse()
                .map_err(|e| setup(&format!("{e:?}")))?;
            agent.add_route(route, LINK);
            let (socket, session) =
                Node::open(host, tcp, i, Instant::ZERO).map_err(|e| setup(&e))?;
            nodes.push(Node {
                agent,
                session,
                socket,
                outbox: VecDeque::new(),
                sent_of_front: 0,
                transfers: Vec::new(),
                incoming: None,
                reconnect_at: None,
                sessions_ended: 0,
            });
        }
        let Ok(nodes) = nodes.try_into() else {
            return Err(TestbedError::Setup("two nodes".into()));
        };
        Ok(DtnOverTcpcl {
            nodes,
            tcp: *tcp,
            file,
            sent_at: None,
            report_at: None,
            transmissions: Vec::new(),
            failure: None,
        })
    }

    /// dtnsend on PC 1: the file as one bundle, delivery report asked.
    fn send_file(&mut self, now: Instant) -> Result<(), String> {
        let mut request = SendRequest::new(
            eid("ipn:1.1").map_err(|e| e.to_string())?,
            eid("ipn:2.1").map_err(|e| e.to_string())?,
            self.file.clone(),
        );
        request.reports = vec![StatusKind::Delivered];
        self.nodes[0]
            .agent
            .send(now, &request)
            .map_err(|e| e.to_string())?;
        self.sent_at = Some(now);
        Ok(())
    }

    fn step_node(
        &mut self,
        host: &mut Host<EthInterface>,
        i: usize,
        now: Instant,
    ) -> Result<(), String> {
        let text = |e: &dyn std::fmt::Display| e.to_string();
        let node = &mut self.nodes[i];
        if node.reconnect_at.is_some_and(|t| t <= now) {
            node.reconnect_at = None;
            host.remove_socket(node.socket);
            (node.socket, node.session) = Node::open(host, &self.tcp, i, now)?;
        }
        if node.agent.poll_timeout().is_some_and(|t| t <= now) {
            node.agent.handle_timeout(now).map_err(|e| text(&e))?;
        }
        if node.reconnect_at.is_some() {
            return Ok(());
        }
        let socket = host.tcp(node.socket);
        let mut buf = [0u8; 4096];
        while socket.can_recv() {
            let n = socket.recv_slice(&mut buf).map_err(|e| text(&e))?;
            if n == 0 {
                break;
            }
            node.session.handle_input(now, &buf[..n]);
        }
        // The peer closed or the connection was aborted (user timeout).
        let ended = matches!(socket.state(), tcp::State::CloseWait | tcp::State::Closed);
        if ended && !node.session.is_closed() {
            node.session.handle_eof(now);
        }
        if node.session.poll_timeout().is_some_and(|t| t <= now) {
            node.session.handle_timeout(now);
        }
        let mut established = false;
        let mut ended = false;
        while let Some(event) = node.session.poll_event() {
            match event {
                ClEvent::SessionEstablished(_) => {
                    node.agent.link_up(LINK, None);
                    // What broke off in the last session goes now.
                    node.agent.retry_now(LINK);
                    established = true;
                }
                ClEvent::TransferReceived { data, .. } => {
                    node.incoming = None;
                    node.agent.handle_bundle(now, &data).map_err(|e| text(&e))?;
                }
                ClEvent::TransferAcked { id, octets, .. } => {
                    if let Some(t) = node.transfers.iter_mut().find(|t| t.0 == id) {
                        t.2 = usize::try_from(octets).unwrap_or(usize::MAX);
                    }
                }
                ClEvent::TransferSucceeded { id } => {
                    if let Some(k) = node.transfers.iter().position(|t| t.0 == id) {
                        let (_, transmit, _) = node.transfers.swap_remove(k);
                        node.agent
                            .transfer_succeeded(now, transmit)
                            .map_err(|e| text(&e))?;
                    }
                }
                ClEvent::TransferRefused { id, .. } => {
                    if let Some(k) = node.transfers.iter().position(|t| t.0 == id) {
                        let (_, transmit, _) = node.transfers.swap_remove(k);
                        node.agent.transfer_failed(now, transmit);
                    }
                }
                ClEvent::TransferAborted { id } => node.transfer_cut(now, id)?,
                ClEvent::SessionTerminated(_) => ended = true,
                ClEvent::TransferStarted { .. }
                | ClEvent::MessageRejected { .. }
                | ClEvent::SessionEnding { .. } => {}
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
        if established && i == 0 && self.sent_at.is_none() {
            self.send_file(now)?;
        }
        let node = &mut self.nodes[i];
        if node.session.state() == ClState::Established {
            while let Some(transmit) = node.agent.poll_transmit(now).map_err(|e| text(&e))? {
                if i == 0 {
                    self.transmissions.push(transmit.octets.len());
                }
                let id = node
                    .session
                    .send_transfer(now, &transmit.octets)
                    .map_err(|e| text(&e))?;
                node.transfers.push((id, transmit.id, 0));
            }
        }
        node.keep_incoming();
        while let Some(octets) = node.session.poll_transmit(now) {
            node.outbox.push_back(octets);
        }
        if ended {
            return node.session_ended(host, &self.tcp, i, now);
        }
        let socket = host.tcp(node.socket);
        while socket.may_send() {
            let Some(front) = node.outbox.front() else {
                break;
            };
            let n = socket
                .send_slice(&front[node.sent_of_front..])
                .map_err(|e| text(&e))?;
            node.sent_of_front += n;
            if node.sent_of_front == front.len() {
                node.outbox.pop_front();
                node.sent_of_front = 0;
            } else {
                break;
            }
        }
        Ok(())
    }
}

impl Application for DtnOverTcpcl {
    fn step(&mut self, hosts: &mut [Host<EthInterface>], now: Instant) {
        for (i, host) in hosts.iter_mut().enumerate() {
            if self.failure.is_some() {
                return;
            }
            if let Err(e) = self.step_node(host, i, now) {
                self.failure = Some(e);
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        earliest(self.nodes.iter().flat_map(|n| {
            let live = n.reconnect_at.is_none() && !n.session.is_closed();
            let session = live.then(|| n.session.poll_timeout());
            // The agent's retry waits end in `poll_transmit`, which
            // needs the link: they count while the session is up.
            let up = n.session.state() == ClState::Established;
            let agent = up.then(|| n.agent.poll_timeout());
            [session.flatten(), agent.flatten(), n.reconnect_at]
        }))
    }

    fn finished(&self) -> bool {
        self.report_at.is_some() || self.failure.is_some()
    }
}

/// dtnsend of `file` from PC 1 to PC 2 over TCPCLv4 with `tcp`, up to
/// `horizon` (see the module documentation).
pub fn dtn_tcpcl_transfer(
    channel: DdConfig,
    tcp: &TcpConfig,
    file: Vec<u8>,
    horizon: Duration,
    seed: u64,
) -> Result<DtnRun, TestbedError> {
    let streams = Streams::new(seed);
    let mut medium = DdChannel::new(channel, &streams);
    let mut hosts = pcs(&streams);
    let octets = file.len();
    let mut app = DtnOverTcpcl::new(&mut hosts, tcp, file)?;
    run_pcs(&mut medium, &mut hosts, &mut app, Instant::ZERO + horizon)?;
    let completed = match (app.sent_at, app.report_at) {
        (Some(sent), Some(report)) => Some(report - sent),
        _ => None,
    };
    Ok(DtnRun {
        completed,
        bytes_per_s: completed.map_or(0.0, |t| octets as f64 / t.as_secs_f64()),
        transmissions: app.transmissions,
        sessions_ended: app.nodes[0].sessions_ended,
        failure: app.failure,
        radio: [medium.stats(StationId(0)), medium.stats(StationId(1))],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dstar::testbed::linux_tcp;

    #[test]
    fn the_bundle_arrives_and_the_delivery_report_comes_back() {
        let file: Vec<u8> = (0..60_000u32).map(|i| (i * 7) as u8).collect();
        let run = dtn_tcpcl_transfer(
            DdConfig::id1(),
            &linux_tcp(None),
            file,
            Duration::from_secs(60),
            5,
        )
        .unwrap();
        assert_eq!(run.failure, None);
        let t = run.completed.expect("report back");
        // 60 kB at under the air's 16 kB/s, with the bundle's and the
        // session's overhead: more than 4 s.
        assert!(t > Duration::from_secs(4), "{t:?}");
        assert_eq!(run.transmissions.len(), 1, "{:?}", run.transmissions);
        assert!((60_000 + 20..60_000 + 200).contains(&run.transmissions[0]));
        // Both radios carried frames: the report came back over the air.
        assert!(run.radio.iter().all(|r| r.frames_sent > 0));
    }

    #[test]
    fn a_bundle_cut_off_in_a_fade_resumes_where_it_broke() {
        // Fades of a minute against spells of 15 s, TCP giving up after
        // 20 s: sessions break inside the bundle (seed chosen so that one
        // breaks after part of it was acknowledged).
        let channel = crate::dstar::hostile(15.0, 60.0, 1e-3);
        let file: Vec<u8> = (0..200_000u32).map(|i| (i * 7) as u8).collect();
        let run = dtn_tcpcl_transfer(
            channel,
            &linux_tcp(Some(Duration::from_secs(20))),
            file,
            Duration::from_secs(2000),
            6,
        )
        .unwrap();
        // The payload PC 2 delivered is the file (else `failure`).
        assert_eq!(run.failure, None);
        assert!(run.completed.is_some(), "{run:?}");
        assert!(run.sessions_ended > 0);
        let whole = run.transmissions[0];
        assert!(
            run.transmissions[1..].iter().any(|&t| t < whole / 2),
            "only the rest went again: {:?}",
            run.transmissions
        );
    }
}
