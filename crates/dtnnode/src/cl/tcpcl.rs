//! TCPCLv4 (RFC 9174) sessions: the sans-IO [`linklab_tcpcl::Session`]
//! on a tokio TCP stream, passive ([`listen`]) and active ([`dial`], which
//! reconnects with exponential backoff).
//!
//! A transfer cut off is reactive fragmentation (RFC 9171 5.8), as on the
//! AX.25 CL. The receiving session spools the segments of the incoming
//! bundle to a file in the store directory ([`super::spooled`]) and
//! writes out the XFER_ACKs that acknowledge them (RFC 9174 5.2.3) only
//! once they are synced, so an acknowledged octet survives this node
//! stopping; when the session ends inside the transfer it hands the node
//! the spooled prefix ([`LinkEvent::PartialReceived`]) to keep as a
//! fragment. The last XFER_ACK of a bundle waits for the node's store
//! commit (`hold_final_ack`) without stalling the session: it goes on
//! reading, acknowledging the next transfer's segments and sending
//! KEEPALIVEs meanwhile, so a slow commit cannot make the peer's
//! keepalive expire, and the spool of a bundle goes only once it is
//! stored. The sending session reports a transfer the session ended
//! with part of it acknowledged as [`LinkEvent::Interrupted`] with the
//! last acknowledged length, and the node sends only the rest. A peer that
//! acknowledges segments it does not keep (RFC 9174 does not require it
//! to) loses the first part of such a bundle.

use linklab_core::{Engine, Instant};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use linklab_dtn::{LinkId, TransmitId};
use linklab_tcpcl::{Config, Event, RefuseReason, Role, SessTermReason, Session, TransferId};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

use super::spool::Spool;
use super::{LinkCommand, LinkEvent, SessionId};

/// The first wait before reconnecting to a peer; it doubles after each
/// failure up to [`MAX_BACKOFF`] and starts again once a session was
/// established.
pub const MIN_BACKOFF: Duration = Duration::from_millis(250);

/// The longest wait between two connection attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// The session configuration the node uses: keepalive 30 s, and 2 s to
/// end a session cleanly.
pub fn session_config(node_id: &str) -> Config {
    let mut config = Config::new(node_id);
    config.keepalive_interval = 30;
    config.ending_timeout = Duration::from_secs(2);
    config.establishment_timeout = Duration::from_secs(10);
    config.hold_final_ack = true;
    config
}

/// Accepts TCPCL connections for ever, a passive session for each;
/// incoming bundles are spooled in `spool_dir` (the store directory).
pub async fn listen(
    listener: TcpListener,
    config: Config,
    spool_dir: PathBuf,
    events: mpsc::UnboundedSender<LinkEvent>,
) {
    loop {
        match listener.accept().await {
            Ok((stream, from)) => {
                let session = Setup {
                    role: Role::Passive,
                    config: config.clone(),
                    remote: format!("tcpcl from {from}"),
                    configured: None,
                    spool_dir: spool_dir.clone(),
                };
                let events = events.clone();
                tokio::spawn(async move {
                    run(stream, session, events).await;
                });
            }
            Err(e) => {
                eprintln!("linklab dtn node: tcpcl: accept: {e}");
                tokio::time::sleep(MIN_BACKOFF).await;
            }
        }
    }
}

/// Opens sessions to `address` for ever: reconnects after each session
/// ends or each failed attempt, waiting [`MIN_BACKOFF`] doubling up to
/// [`MAX_BACKOFF`]. Incoming bundles are spooled in `spool_dir`.
pub async fn dial(
    address: String,
    config: Config,
    link: LinkId,
    spool_dir: PathBuf,
    events: mpsc::UnboundedSender<LinkEvent>,
) {
    let mut wait = MIN_BACKOFF;
    let mut reported = false;
    loop {
        match TcpStream::connect(&address).await {
            Ok(stream) => {
                reported = false;
                let session = Setup {
                    role: Role::Active,
                    config: config.clone(),
                    remote: format!("tcpcl to {address}"),
                    configured: Some(link),
                    spool_dir: spool_dir.clone(),
                };
                let up = run(stream, session, events.clone()).await;
                if up {
                    wait = MIN_BACKOFF;
                }
            }
            Err(e) => {
                if !reported {
                    eprintln!(
                        "linklab dtn node: tcpcl: cannot connect to {address}: {e} (retrying)"
                    );
                    reported = true;
                }
            }
        }
        if events.is_closed() {
            return;
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(MAX_BACKOFF);
    }
}

/// How one session is run.
struct Setup {
    role: Role,
    config: Config,
    /// Where it goes, for the log.
    remote: String,
    /// The link of the configured peer it was opened for.
    configured: Option<LinkId>,
    /// Where the incoming bundle is spooled.
    spool_dir: PathBuf,
}

/// An incoming transfer's octets acknowledged so far: on disk, and in
/// memory for the node if the session ends inside it.
struct Incoming {
    transfer: TransferId,
    spool: Spool,
    octets: Vec<u8>,
}

impl Incoming {
    /// Nothing kept yet of `transfer` on `session`; its spool in `dir`.
    fn new(dir: &Path, session: SessionId, transfer: TransferId) -> Incoming {
        Incoming {
            transfer,
            spool: Spool::new(dir, "tcpcl", &format!("{}-{transfer}", session.0)),
            octets: Vec::new(),
        }
    }

    /// Makes `prefix` durable before its XFER_ACKs go out.
    async fn keep(&mut self, prefix: &[u8]) -> std::io::Result<()> {
        self.spool.keep(prefix).await?;
        self.octets.extend_from_slice(&prefix[self.octets.len()..]);
        Ok(())
    }
}

/// `current` if it is the transfer `transfer`, else a new one (the spool
/// of a transfer given up, refused, goes).
fn incoming_for(
    current: Option<Incoming>,
    dir: &Path,
    session: SessionId,
    transfer: TransferId,
) -> Incoming {
    match current {
        Some(incoming) if incoming.transfer == transfer => incoming,
        other => {
            if let Some(mut old) = other {
                old.spool.clear();
            }
            Incoming::new(dir, session, transfer)
        }
    }
}

/// What the node is told of an outgoing transfer the session ended:
/// interrupted after the octets the peer acknowledged, or failed if none.
fn cut_off(session: SessionId, transmit: TransmitId, acknowledged: u64) -> LinkEvent {
    match usize::try_from(acknowledged) {
        Ok(acknowledged) if acknowledged > 0 => LinkEvent::Interrupted {
            session,
            transmit,
            acknowledged,
        },
        _ => LinkEvent::Sent {
            session,
            transmit,
            outcome: Err("the session ended before the peer acknowledged any of the bundle".into()),
        },
    }
}

/// Runs one session until it is over; whether it was established.
async fn run(stream: TcpStream, setup: Setup, events: mpsc::UnboundedSender<LinkEvent>) -> bool {
    let Setup {
        role,
        config,
        remote,
        configured,
        spool_dir,
    } = setup;
    let id = SessionId::next();
    let origin = tokio::time::Instant::now();
    let now = move || Instant::ZERO + origin.elapsed();
    // The transfer coming in, and the bundles received whole whose last
    // XFER_ACK waits for the node to store them (with their spools),
    // answered on `stored_rx`: whether the node stored the transfer.
    let mut incoming: Option<Incoming> = None;
    let mut storing: BTreeMap<TransferId, Spool> = BTreeMap::new();
    let (stored_tx, mut stored_rx) = mpsc::unbounded_channel::<(TransferId, bool)>();
    let mut session = match Session::new(role, config, now()) {
        Ok(session) => session,
        Err(e) => {
            eprintln!("linklab dtn node: tcpcl: {e}");
            return false;
        }
    };
    stream.set_nodelay(true).ok();
    let (mut reader, mut writer) = stream.into_split();
    // Writes go through their own task, so that a peer slow to read never
    // stops this one reading (two peers sending at once would deadlock).
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let write_task = tokio::spawn(async move {
        while let Some(octets) = out_rx.recv().await {
            if writer.write_all(&octets).await.is_err() {
                break;
            }
        }
        let _ = writer.shutdown().await;
    });
    let (commands, mut command_rx) = mpsc::unbounded_channel();
    // Outgoing transfers: the node's transmission, octets acknowledged.
    let mut transfers: BTreeMap<TransferId, (TransmitId, u64)> = BTreeMap::new();
    let mut failed = None;
    let mut up = false;
    let mut ended = None;
    let mut buffer = vec![0u8; 64 * 1024];
    let mut eof = false;
    loop {
        while let Some(event) = session.poll_event() {
            match event {
                Event::SessionEstablished(params) => {
                    up = true;
                    let _ = events.send(LinkEvent::Up {
                        session: id,
                        peer: params.peer_node_id.clone(),
                        remote: remote.clone(),
                        configured,
                        mtu: usize::try_from(params.transfer_mtu).ok(),
                        commands: commands.clone(),
                    });
                }
                Event::TransferReceived {
                    id: transfer,
                    data,
                } => {
                    // The XFER_ACKs queued before its last one go out
                    // below: what they acknowledge is kept first. The last
                    // is held until the node has stored the bundle.
                    let mut received = incoming_for(incoming.take(), &spool_dir, id, transfer);
                    let acknowledged = session
                        .acknowledged(transfer)
                        .map_or(data.len(), |octets| octets as usize);
                    if let Err(e) = received.keep(&data[..acknowledged]).await {
                        failed = Some(format!("cannot keep the bundle coming in ({e})"));
                        break;
                    }
                    let (stored, done) = oneshot::channel();
                    let _ = events.send(LinkEvent::Received {
                        session: id,
                        octets: data,
                        stored,
                    });
                    let answer = stored_tx.clone();
                    tokio::spawn(async move {
                        let _ = answer.send((transfer, done.await.is_ok()));
                    });
                    storing.insert(transfer, received.spool);
                }
                Event::TransferAcked {
                    id: transfer,
                    octets,
                    ..
                } => {
                    if let Some((_, acknowledged)) = transfers.get_mut(&transfer) {
                        *acknowledged = octets;
                    }
                }
                Event::TransferSucceeded { id: transfer } => {
                    if let Some((transmit, _)) = transfers.remove(&transfer) {
                        let _ = events.send(LinkEvent::Sent {
                            session: id,
                            transmit,
                            outcome: Ok(()),
                        });
                    }
                }
                Event::TransferRefused {
                    id: transfer,
                    reason,
                } => {
                    if let Some((transmit, _)) = transfers.remove(&transfer) {
                        // "Completed": the peer has the bundle already.
                        let outcome = match reason {
                            RefuseReason::Completed => Ok(()),
                            other => Err(format!("the peer refused the transfer ({other})")),
                        };
                        let _ = events.send(LinkEvent::Sent {
                            session: id,
                            transmit,
                            outcome,
                        });
                    }
                }
                Event::TransferAborted { id: transfer } => {
                    if let Some((transmit, acknowledged)) = transfers.remove(&transfer) {
                        let _ = events.send(cut_off(id, transmit, acknowledged));
                    }
                }
                Event::SessionTerminated(termination) => ended = Some(termination.to_string()),
                Event::MessageRejected {
                    reason,
                    rejected_header,
                } => eprintln!(
                    "linklab dtn node: {remote}: the peer rejected message type {rejected_header:#04x} ({reason})"
                ),
                Event::TransferStarted { .. } | Event::SessionEnding { .. } => {}
            }
        }
        if failed.is_some() {
            break;
        }
        if let Some((transfer, prefix)) = session.incoming() {
            // The XFER_ACKs about to go out acknowledge this much.
            let current = incoming_for(incoming.take(), &spool_dir, id, transfer);
            let current = incoming.insert(current);
            if let Err(e) = current.keep(prefix).await {
                failed = Some(format!("cannot keep the bundle coming in ({e})"));
                break;
            }
        }
        while let Some(octets) = session.poll_transmit(now()) {
            let _ = out_tx.send(octets);
        }
        if session.is_closed() {
            break;
        }
        let deadline = session
            .poll_timeout()
            .map(|at| origin + (at - Instant::ZERO));
        tokio::select! {
            read = reader.read(&mut buffer), if !eof => match read {
                Ok(0) | Err(_) => {
                    eof = true;
                    session.handle_eof(now());
                }
                Ok(n) => session.handle_input(now(), &buffer[..n]),
            },
            command = command_rx.recv() => match command {
                Some(LinkCommand::Send { transmit, octets }) => {
                    match session.send_transfer(now(), &octets) {
                        Ok(transfer) => {
                            transfers.insert(transfer, (transmit, 0));
                        }
                        Err(e) => {
                            let _ = events.send(LinkEvent::Sent {
                                session: id,
                                transmit,
                                outcome: Err(e.to_string()),
                            });
                        }
                    }
                }
                Some(LinkCommand::Close) => session.terminate(now(), SessTermReason::Unknown),
                None => {}
            },
            Some((transfer, stored)) = stored_rx.recv() => {
                if let Some(mut spool) = storing.remove(&transfer) {
                    if stored {
                        // Its last XFER_ACK goes (unless the session has
                        // closed meanwhile).
                        let _ = session.accept_transfer(now(), transfer);
                        spool.clear();
                    } else {
                        // The node is gone: the spool stays for its next
                        // start, the bundle unacknowledged.
                        failed = Some("the node did not store a bundle it received".into());
                        break;
                    }
                }
            }
            _ = sleep_until(deadline) => session.handle_timeout(now()),
        }
    }
    drop(out_tx);
    // Let the last octets (SESS_TERM, acknowledgements) leave, briefly.
    let _ = tokio::time::timeout(Duration::from_secs(2), write_task).await;
    for (_, (transmit, acknowledged)) in std::mem::take(&mut transfers) {
        let _ = events.send(cut_off(id, transmit, acknowledged));
    }
    // Bundles received whole and not yet stored: their spools go once the
    // node has them.
    drop(stored_tx);
    while !storing.is_empty() {
        let Some((transfer, stored)) = stored_rx.recv().await else {
            break;
        };
        if let (Some(mut spool), true) = (storing.remove(&transfer), stored) {
            spool.clear();
        }
    }
    if let Some(mut incoming) = incoming.filter(|i| !i.octets.is_empty()) {
        // Cut off inside a bundle: the node keeps what was acknowledged
        // as a fragment; the sender resumes after what it saw acknowledged.
        let (stored, done) = oneshot::channel();
        let _ = events.send(LinkEvent::PartialReceived {
            session: id,
            octets: std::mem::take(&mut incoming.octets),
            stored,
        });
        if done.await.is_ok() {
            incoming.spool.clear();
        }
    }
    if up {
        let _ = events.send(LinkEvent::Down {
            session: id,
            why: failed.or(ended).unwrap_or_else(|| "closed".into()),
        });
    } else if let Some(why) = ended {
        eprintln!("linklab dtn node: {remote}: no session: {why}");
    }
    up
}

/// Sleeps until `deadline`, or for ever without one.
async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
