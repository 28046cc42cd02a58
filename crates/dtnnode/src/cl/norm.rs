//! The NORM convergence layer ([`linklab_normcl`]) over one UDP socket:
//! a [`Session`] for each configured peer, told apart by the address
//! datagrams come from.
//!
//! Each session is one session of the node's contract ([`super`]) while
//! its link is up: it starts up (a configured peer is taken to be
//! reachable), goes down after unanswered acknowledgement requests, and
//! comes up again — a new [`SessionId`] — when the peer is heard or after
//! the retry interval. A received bundle is acknowledged (NORM_ACK to the
//! peer's watermark) only once the node has stored it; a sent bundle
//! succeeds only once the peer acknowledged it.

use linklab_core::{Engine, Instant};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use linklab_dtn::TransmitId;
use linklab_normcl::{Config, Event, Rate, ReceiptId, Session, TransferId};
use tokio::net::UdpSocket;
use tokio::sync::{mpsc, oneshot};

use super::{LinkCommand, LinkEvent, SessionId};

/// One configured neighbour over NORM.
#[derive(Debug, Clone)]
pub struct NormPeer {
    /// Its node ID.
    pub node: String,
    /// Its UDP address.
    pub address: SocketAddr,
}

/// A peer's session and what the node knows of it.
struct Contact {
    peer: NormPeer,
    session: Session,
    /// The node's session while the link is up.
    id: Option<SessionId>,
    transfers: BTreeMap<TransferId, TransmitId>,
}

/// The session configuration for a peer: `rate` (fixed or NORM-CC), a
/// NORM instance ID and seeds new at each start.
pub fn session_config(node: &str, peer: &NormPeer, rate: Rate) -> Config {
    let clock = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut config = Config::with_rate(node, &peer.node, peer.address, rate);
    config.instance_id = (clock >> 10) as u16;
    config.seed = clock ^ u64::from(peer.address.port());
    config
}

/// Runs the NORM sessions with `peers` on `socket` until the node stops.
pub async fn run(
    socket: UdpSocket,
    configs: Vec<(NormPeer, Config)>,
    events: mpsc::UnboundedSender<LinkEvent>,
) {
    let origin = tokio::time::Instant::now();
    let now = move || Instant::ZERO + origin.elapsed();
    let mut contacts = Vec::new();
    for (peer, config) in configs {
        match Session::new(config, now()) {
            Ok(session) => contacts.push(Contact {
                peer,
                session,
                id: None,
                transfers: BTreeMap::new(),
            }),
            Err(e) => eprintln!("linklab dtn node: norm: peer {}: {e}", peer.node),
        }
    }
    // Commands of every session, tagged with the contact and the session
    // they were given to, and stored bundles' receipts.
    let (command_tx, mut command_rx) = mpsc::unbounded_channel::<(usize, SessionId, LinkCommand)>();
    let (stored_tx, mut stored_rx) = mpsc::unbounded_channel::<(usize, ReceiptId)>();
    let mut buffer = vec![0u8; 65_536];
    loop {
        for (index, c) in contacts.iter_mut().enumerate() {
            let t = now();
            while let Some(out) = c.session.poll_transmit(t) {
                if let Err(e) = socket.send_to(&out.payload, out.destination).await {
                    eprintln!("linklab dtn node: norm: to {}: {e}", out.destination);
                }
            }
            while let Some(event) = c.session.poll_event() {
                report(index, c, event, &events, &command_tx, &stored_tx);
            }
        }
        if events.is_closed() {
            return;
        }
        let deadline = contacts
            .iter()
            .filter_map(|c| c.session.poll_timeout())
            .min()
            .map(|at| origin + (at - Instant::ZERO));
        tokio::select! {
            received = socket.recv_from(&mut buffer) => match received {
                Ok((n, from)) => {
                    if let Some(c) = contacts.iter_mut().find(|c| c.peer.address == from) {
                        c.session.handle_datagram(now(), from, &buffer[..n]);
                    }
                }
                Err(e) => eprintln!("linklab dtn node: norm: receive: {e}"),
            },
            Some((index, session, command)) = command_rx.recv() => {
                let c = &mut contacts[index];
                // A session that went down: the node has failed its
                // transfers already.
                if c.id != Some(session) {
                    continue;
                }
                match command {
                    LinkCommand::Send { transmit, octets } => {
                        match c.session.send_bundle(now(), &octets) {
                            Ok(transfer) => {
                                c.transfers.insert(transfer, transmit);
                            }
                            Err(e) => {
                                let _ = events.send(LinkEvent::Sent {
                                    session,
                                    transmit,
                                    outcome: Err(e.to_string()),
                                });
                            }
                        }
                    }
                    LinkCommand::Close => c.session.close(),
                }
            }
            Some((index, receipt)) = stored_rx.recv() => {
                contacts[index].session.bundle_stored(now(), receipt);
            }
            _ = sleep_until(deadline) => {
                let t = now();
                for c in &mut contacts {
                    c.session.handle_timeout(t);
                }
            }
        }
    }
}

/// Tells the node what a session did.
fn report(
    index: usize,
    c: &mut Contact,
    event: Event,
    events: &mpsc::UnboundedSender<LinkEvent>,
    command_tx: &mpsc::UnboundedSender<(usize, SessionId, LinkCommand)>,
    stored_tx: &mpsc::UnboundedSender<(usize, ReceiptId)>,
) {
    match event {
        Event::LinkUp => {
            let session = SessionId::next();
            c.id = Some(session);
            let (commands, mut rx) = mpsc::unbounded_channel();
            let forward = command_tx.clone();
            tokio::spawn(async move {
                while let Some(command) = rx.recv().await {
                    if forward.send((index, session, command)).is_err() {
                        break;
                    }
                }
            });
            let _ = events.send(LinkEvent::Up {
                session,
                peer: c.peer.node.clone(),
                remote: format!("norm to {}", c.peer.address),
                // The node routes the peer's node ID to it.
                configured: None,
                mtu: Some(c.session.max_bundle_len()),
                commands,
            });
        }
        Event::LinkDown { why } => {
            if let Some(session) = c.id.take() {
                let _ = events.send(LinkEvent::Down { session, why });
            }
        }
        Event::BundleReceived { receipt, bundle } => {
            // Received bundles arrive whether or not our own link to the
            // peer is up; the node takes them from any session.
            let session = c.id.unwrap_or(SessionId(0));
            let (stored, done) = oneshot::channel();
            let _ = events.send(LinkEvent::Received {
                session,
                octets: bundle,
                stored,
            });
            let stored_tx = stored_tx.clone();
            tokio::spawn(async move {
                let _ = done.await;
                let _ = stored_tx.send((index, receipt));
            });
        }
        Event::ObjectRefused { why } => eprintln!(
            "linklab dtn node: norm: an object from {} is refused: {why}",
            c.peer.node
        ),
        Event::TransferSucceeded(transfer) => sent(c, transfer, Ok(()), events),
        Event::TransferFailed { id, why } => sent(c, id, Err(why), events),
    }
}

fn sent(
    c: &mut Contact,
    transfer: TransferId,
    outcome: Result<(), String>,
    events: &mpsc::UnboundedSender<LinkEvent>,
) {
    if let (Some(transmit), Some(session)) = (c.transfers.remove(&transfer), c.id) {
        let _ = events.send(LinkEvent::Sent {
            session,
            transmit,
            outcome,
        });
    }
}

/// Sleeps until `deadline`, or for ever without one.
async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
