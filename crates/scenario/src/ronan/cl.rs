//! The DTN application of Ronan et al.'s measurements, for real: a bundle
//! agent and an AX.25 CL session above each engine ([`DtnOverAx25Cl`]).
//!
//! The sender's agent makes the file a BPv7 bundle (`ipn:1.1` to
//! `ipn:2.1`, CRC-32C blocks), its CL session cuts the bundle into
//! DATA_SEGMENTs that each fill one I frame (N1 octets, CRC-32 included)
//! and the receiver's session acknowledges every `ack_window` segments and
//! the complete bundle at once (`linklab_ax25cl`). Both sessions exchange
//! contact headers when the AX.25 link comes up, before the file is
//! offered. The sender knows the file is through when its session reports
//! the bundle acknowledged to its last octet.
//!
//! A session ends with its AX.25 link: the link failed, or the peer reset
//! it (SABM while connected, AX.25 v2.2 6.5: the reset tells the station
//! that did not ask for it only by error F). The sender's agent then
//! keeps the part of the bundle its peer had not acknowledged, the
//! receiver's the part that arrived (RFC 7242 5.2.4's reactive
//! fragmentation, as the paper's CL does it), and the transfer resumes
//! in the session of the next link. What arrived beyond the last
//! acknowledgement crosses the link twice ([`BundleOutcome::octets_twice`]).

use std::collections::VecDeque;
use std::time::Duration;

use linklab_ax25cl::Cause;
use linklab_ax25cl::{Config as ClConfig, Event as ClEvent, Session, State as ClState};
use linklab_core::{Instant, Streams};
use linklab_dtn::{
    Agent, Config as AgentConfig, Eid, LinkId, MemoryStore, SendRequest, TransmitId,
};
use linklab_link::{DataLink, Event, LinkError};

use crate::transfer::{
    message, run_transfer_with, Application, TransferConfig, TransferError, TransferOutcome, SENDER,
};

/// The link each agent names its CL session by.
const LINK: LinkId = LinkId(0);
/// DTN time at the start of a run: 2013-01-01 (the paper's year), ms
/// since 2000-01-01.
const DTN_TIME_AT_ZERO: u64 = 410_227_200_000;

/// Two bundle agents, each over an AX.25 CL session above its engine.
pub(crate) struct DtnOverAx25Cl {
    file: Vec<u8>,
    agents: [Agent<MemoryStore>; 2],
    sessions: [Session; 2],
    to_send: [VecDeque<Vec<u8>>; 2],
    /// Station i's link came up or was reset: its CL starts a new session
    /// before it sends anything more.
    relink: [bool; 2],
    /// Length of the encoded bundle the sender's agent handed to its CL.
    bundle_octets: Option<usize>,
    delivered: Option<Vec<u8>>,
    sent: bool,
    failure: Option<String>,
    /// CL sessions established at the sender.
    sessions_up: u32,
    /// Octets the sender had acknowledged when its sessions ended, summed.
    acknowledged_at_end: u64,
    /// Octets that had arrived at the receiver when its sessions ended
    /// inside the bundle, summed.
    arrived_at_end: u64,
}

/// What one bundle transfer over the AX.25 CL measured.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleOutcome {
    /// The transfer as the link carried it.
    pub link: TransferOutcome,
    /// CL sessions the sender's node established: 1, and one more for
    /// each time the link failed or was reset under the bundle.
    pub sessions: u32,
    /// Octets of the bundle that crossed the link twice: what had reached
    /// the receiver when a session ended, beyond what the sender knew
    /// acknowledged and so sent again (the duplication a short
    /// `ack_window` keeps small, Ronan et al. section V.B).
    pub octets_twice: u64,
}

fn eid(text: &str) -> Result<Eid, TransferError> {
    text.parse()
        .map_err(|e| TransferError::Application(format!("endpoint {text}: {e:?}")))
}

/// One transfer of `config`'s message as one BPv7 bundle over the AX.25
/// convergence layer with `ack_window` (Ronan et al., section V.B; the
/// set-up of Tables V-VII), with the random streams `streams`.
pub fn run_bundle_transfer(
    config: &TransferConfig,
    ack_window: u32,
    streams: &Streams,
) -> Result<BundleOutcome, TransferError> {
    let mut app = DtnOverAx25Cl::new(message(config, streams), config.n1, ack_window)?;
    let link = run_transfer_with(config, streams, &mut app)?;
    Ok(BundleOutcome {
        link,
        sessions: app.sessions_up,
        octets_twice: app.arrived_at_end.saturating_sub(app.acknowledged_at_end),
    })
}

impl DtnOverAx25Cl {
    /// `file` from node 1 to node 2, CL DATA_SEGMENTs filling `n1`-octet
    /// I frames, the receiver acknowledging every `ack_window` segments.
    pub(crate) fn new(file: Vec<u8>, n1: usize, ack_window: u32) -> Result<Self, TransferError> {
        let app = |e: &dyn std::fmt::Display| TransferError::Application(e.to_string());
        let mut agents = Vec::with_capacity(2);
        let mut sessions = Vec::with_capacity(2);
        for node in [1u32, 2] {
            let mut config = AgentConfig::new(eid(&format!("ipn:{node}.0"))?);
            config.dtn_time_at_zero = DTN_TIME_AT_ZERO;
            config.retry_after = Duration::from_secs(1);
            let mut agent = Agent::open(config, MemoryStore::new()).map_err(|e| app(&e))?;
            agent
                .register(eid(&format!("ipn:{node}.1"))?)
                .map_err(|e| app(&e))?;
            let other = 3 - node;
            let route = format!("ipn:{other}.*").parse().map_err(|e| app(&e))?;
            agent.add_route(route, LINK);
            agents.push(agent);
            let mut cl = ClConfig::new(format!("ipn:{node}.0"))
                .fit_frame(n1)
                .map_err(|e| app(&e))?;
            cl.ack_window = ack_window;
            sessions.push(Session::new(cl).map_err(|e| app(&e))?);
        }
        let (Ok(agents), Ok(sessions)) = (agents.try_into(), sessions.try_into()) else {
            return Err(TransferError::Application("two nodes".into()));
        };
        Ok(DtnOverAx25Cl {
            file,
            agents,
            sessions,
            to_send: [VecDeque::new(), VecDeque::new()],
            relink: [false; 2],
            bundle_octets: None,
            delivered: None,
            sent: false,
            failure: None,
            sessions_up: 0,
            acknowledged_at_end: 0,
            arrived_at_end: 0,
        })
    }

    /// Octets of the bundle the sender's agent made of the file.
    #[cfg(test)]
    pub(crate) fn bundle_octets(&self) -> Option<usize> {
        self.bundle_octets
    }

    /// Moves node `i`'s CL events to its agent and its agent's bundles to
    /// its CL, and the CL's messages towards the engine.
    fn pump(&mut self, now: Instant, i: usize) {
        if let Err(e) = self.try_pump(now, i) {
            self.failure.get_or_insert(e);
        }
    }

    fn try_pump(&mut self, now: Instant, i: usize) -> Result<(), String> {
        let (agent, cl) = (&mut self.agents[i], &mut self.sessions[i]);
        let text = |e: &dyn std::fmt::Display| e.to_string();
        while let Some(event) = cl.poll_event() {
            match event {
                ClEvent::Established { .. } => {
                    agent.link_up(LINK, None);
                    if i == SENDER {
                        self.sessions_up += 1;
                    }
                }
                ClEvent::BundleReceived { data } => {
                    agent.handle_bundle(now, &data).map_err(|e| text(&e))?;
                }
                ClEvent::PartialReceived { data } => {
                    self.arrived_at_end += data.len() as u64;
                    agent
                        .handle_partial_bundle(now, &data)
                        .map_err(|e| text(&e))?;
                }
                ClEvent::BundleSent { id } => {
                    agent
                        .transfer_succeeded(now, TransmitId(id))
                        .map_err(|e| text(&e))?;
                    self.sent = true;
                }
                ClEvent::BundleRefused { id, .. } => agent.transfer_failed(now, TransmitId(id)),
                ClEvent::TransferInterrupted { id, acknowledged } => {
                    self.acknowledged_at_end += acknowledged;
                    agent
                        .transfer_partial(now, TransmitId(id), acknowledged as usize)
                        .map_err(|e| text(&e))?;
                }
                // The next link's session takes the transfer on.
                ClEvent::SessionEnded {
                    cause: Cause::LinkDown,
                } => agent.link_down(LINK),
                ClEvent::SessionEnded { cause } => {
                    agent.link_down(LINK);
                    return Err(format!("the CL session ended: {cause:?}"));
                }
            }
        }
        if cl.state() == ClState::Established {
            while let Some(transmit) = agent.poll_transmit(now).map_err(|e| text(&e))? {
                self.bundle_octets.get_or_insert(transmit.octets.len());
                cl.send_bundle(transmit.id.0, transmit.octets)
                    .map_err(|e| text(&e))?;
            }
        }
        while let Some(message) = cl.poll_transmit() {
            self.to_send[i].push_back(message);
        }
        while let Some(delivery) = agent.poll_delivery() {
            agent
                .delivery_done(now, delivery.id)
                .map_err(|e| text(&e))?;
            self.delivered = Some(delivery.payload);
        }
        Ok(())
    }
}

impl Application for DtnOverAx25Cl {
    fn offer(&mut self, now: Instant) -> Result<(), TransferError> {
        let request = SendRequest::new(eid("ipn:1.1")?, eid("ipn:2.1")?, self.file.clone());
        self.agents[SENDER]
            .send(now, &request)
            .map_err(|e| TransferError::Application(e.to_string()))?;
        self.pump(now, SENDER);
        Ok(())
    }

    fn handle_event(&mut self, now: Instant, station: usize, event: Event) {
        let cl = &mut self.sessions[station];
        match event {
            // A link reset by the peer is reported by error F, and also by
            // DL-CONNECT if data went with it: either starts one new
            // session, once the engine's events are all in.
            Event::Connected { .. } | Event::Error(LinkError::ResetByPeer) => {
                self.relink[station] = true;
            }
            Event::Data { data, .. } => cl.handle_input(&data),
            Event::Disconnected { .. } | Event::LinkFailure { .. } => cl.link_down(),
            _ => {}
        }
        self.pump(now, station);
    }

    fn poll_send(&mut self, now: Instant, station: usize) -> Option<Vec<u8>> {
        if std::mem::take(&mut self.relink[station]) {
            // A session still open on the earlier link is ended first.
            self.sessions[station].link_up();
            self.pump(now, station);
        }
        self.to_send[station].pop_front()
    }

    fn ready(&self) -> bool {
        self.sessions
            .iter()
            .all(|s| s.state() == ClState::Established)
    }

    fn complete(&self, _sender: &DataLink) -> bool {
        self.sent
    }

    fn verify(&self) -> Result<(), TransferError> {
        if let Some(failure) = &self.failure {
            return Err(TransferError::Application(failure.clone()));
        }
        match &self.delivered {
            Some(payload) if *payload == self.file => Ok(()),
            Some(payload) => Err(TransferError::Corrupted {
                got: payload.len(),
                sent: self.file.len(),
            }),
            None => Err(TransferError::Application(
                "the receiver's agent delivered nothing".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transfer::{message, run_transfer_with, TransferConfig};
    use linklab_core::Streams;

    #[test]
    fn the_file_goes_as_one_bundle_in_frame_filling_segments() {
        let config = TransferConfig::ronan_table_1(9600, 4);
        let streams = Streams::new(3).replication(0);
        // ack_window 32: the receiver's only ACK_SEGMENT is the bundle's.
        let mut app = DtnOverAx25Cl::new(message(&config, &streams), 255, 32).unwrap();
        let out = run_transfer_with(&config, &streams, &mut app).expect("transfer completes");
        let bundle = app.bundle_octets().unwrap();
        assert!((7182 + 30..7182 + 100).contains(&bundle), "{bundle}");
        // One I frame per DATA_SEGMENT of 248 octets, nothing else.
        assert_eq!(out.sender_frames, bundle.div_ceil(248) as u64);
        assert_eq!(out.radio.collisions, 0);
        let again = DtnOverAx25Cl::new(message(&config, &streams), 255, 32)
            .and_then(|mut app| run_transfer_with(&config, &streams, &mut app))
            .unwrap();
        assert_eq!(again, out);
    }

    #[test]
    fn after_a_link_drop_the_bundle_resumes_from_what_was_acknowledged() {
        use crate::transfer::LinkDrop;
        let config = TransferConfig {
            link_drop: Some(LinkDrop {
                after_frames: 14,
                back_after: Duration::from_secs(30),
            }),
            ..TransferConfig::ronan_table_1(9600, 4)
        };
        let streams = Streams::new(3).replication(0);
        let calm = run_bundle_transfer(&TransferConfig::ronan_table_1(9600, 4), 4, &streams)
            .expect("transfer completes");
        assert_eq!((calm.sessions, calm.octets_twice), (1, 0));
        let twice = |ack_window| {
            let out = run_bundle_transfer(&config, ack_window, &streams)
                .unwrap_or_else(|e| panic!("ack_window {ack_window}: {e}"));
            // The file arrived whole (verified), in a second session,
            // after the sender's link had failed: N2 T1 expiries.
            assert_eq!(out.sessions, 2, "ack_window {ack_window}");
            assert!(out.link.transfer > calm.link.transfer + Duration::from_secs(100));
            out.octets_twice
        };
        // Frames 1-14 arrived; the receiver had acknowledged segments
        // 1-12 with ack_window 4, none with 32 (its first is at 32).
        assert_eq!(twice(4), 2 * 248);
        assert_eq!(twice(32), 14 * 248);
    }
}
