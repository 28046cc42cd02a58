//! TCPCLv4 (RFC 9174) sessions: the sans-IO [`linklab_tcpcl::Session`]
//! on a tokio TCP stream, passive ([`listen`]) and active ([`dial`], which
//! reconnects with exponential backoff).

use std::collections::BTreeMap;
use std::time::Duration;

use linklab_dtn::LinkId;
use linklab_tcpcl::{Config, Event, Instant, RefuseReason, Role, SessTermReason, Session};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

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
    config
}

/// Accepts TCPCL connections for ever, a passive session for each.
pub async fn listen(
    listener: TcpListener,
    config: Config,
    events: mpsc::UnboundedSender<LinkEvent>,
) {
    loop {
        match listener.accept().await {
            Ok((stream, from)) => {
                let config = config.clone();
                let events = events.clone();
                tokio::spawn(async move {
                    let remote = format!("tcpcl from {from}");
                    run(stream, Role::Passive, config, remote, None, events).await;
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
/// [`MAX_BACKOFF`].
pub async fn dial(
    address: String,
    config: Config,
    link: LinkId,
    events: mpsc::UnboundedSender<LinkEvent>,
) {
    let mut wait = MIN_BACKOFF;
    let mut reported = false;
    loop {
        match TcpStream::connect(&address).await {
            Ok(stream) => {
                reported = false;
                let remote = format!("tcpcl to {address}");
                let up = run(
                    stream,
                    Role::Active,
                    config.clone(),
                    remote,
                    Some(link),
                    events.clone(),
                )
                .await;
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

/// Runs one session until it is over; whether it was established.
async fn run(
    stream: TcpStream,
    role: Role,
    config: Config,
    remote: String,
    configured: Option<LinkId>,
    events: mpsc::UnboundedSender<LinkEvent>,
) -> bool {
    let id = SessionId::next();
    let origin = tokio::time::Instant::now();
    let now = move || Instant::from_micros(origin.elapsed().as_micros() as u64);
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
    let mut transfers = BTreeMap::new();
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
                Event::TransferReceived { data, .. } => {
                    // The last XFER_ACK is queued in the session: it goes
                    // out below, only once the node has stored the bundle.
                    let (stored, done) = oneshot::channel();
                    let _ = events.send(LinkEvent::Received {
                        session: id,
                        octets: data,
                        stored,
                    });
                    let _ = done.await;
                }
                Event::TransferSucceeded { id: transfer } => {
                    if let Some(transmit) = transfers.remove(&transfer) {
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
                    if let Some(transmit) = transfers.remove(&transfer) {
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
                    // A failure, not a partial transfer: XFER_ACKs (RFC
                    // 9174 5.2.3) acknowledge octets as they arrive, not
                    // as they are stored, and the receiving session keeps
                    // nothing of a transfer cut off, so the peer may hold
                    // none of what it acknowledged. The whole bundle goes
                    // again.
                    if let Some(transmit) = transfers.remove(&transfer) {
                        let _ = events.send(LinkEvent::Sent {
                            session: id,
                            transmit,
                            outcome: Err("the session ended before the transfer".into()),
                        });
                    }
                }
                Event::SessionTerminated(termination) => ended = Some(termination.to_string()),
                Event::MessageRejected {
                    reason,
                    rejected_header,
                } => eprintln!(
                    "linklab dtn node: {remote}: the peer rejected message type {rejected_header:#04x} ({reason})"
                ),
                Event::TransferStarted { .. }
                | Event::TransferAcked { .. }
                | Event::SessionEnding { .. } => {}
            }
        }
        while let Some(octets) = session.poll_transmit() {
            let _ = out_tx.send(octets);
        }
        if session.is_closed() {
            break;
        }
        let deadline = session
            .poll_timeout()
            .map(|at| origin + Duration::from_micros(at.as_micros()));
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
                            transfers.insert(transfer, transmit);
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
            _ = sleep_until(deadline) => session.handle_timeout(now()),
        }
    }
    drop(out_tx);
    // Let the last octets (SESS_TERM, acknowledgements) leave, briefly.
    let _ = tokio::time::timeout(Duration::from_secs(2), write_task).await;
    for (_, transmit) in std::mem::take(&mut transfers) {
        let _ = events.send(LinkEvent::Sent {
            session: id,
            transmit,
            outcome: Err("the session ended before the transfer".into()),
        });
    }
    if up {
        let _ = events.send(LinkEvent::Down {
            session: id,
            why: ended.unwrap_or_else(|| "closed".into()),
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
