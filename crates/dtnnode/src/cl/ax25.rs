//! The AX.25 connected-mode convergence layer ([`linklab_ax25cl`], the
//! AX.25CM-CL of Ronan et al.) over a KISS TNC: one station with the
//! node's callsign ([`linklab_io::Station`] run by [`linklab_io::driver`]),
//! accepting AX.25 connections and connecting to configured peers when the
//! node has a bundle routed to them, with one [`Session`] per AX.25 link.
//!
//! Each AX.25 link is one session of the node's contract ([`super`]):
//! `Established` is [`LinkEvent::Up`]; a received bundle is acknowledged
//! only once stored, because the session's queued ACK_SEGMENT goes out
//! after the node answers. A link lost inside a bundle is reactive
//! fragmentation (Ronan et al., section V.B; RFC 9171 5.8): the sender
//! reports the octets the peer acknowledged ([`LinkEvent::Interrupted`]),
//! so that only the rest goes again, as a fragment, and the receiver hands
//! the node the CRC-checked octets that arrived
//! ([`LinkEvent::PartialReceived`]) before the session's
//! [`LinkEvent::Down`].
//!
//! When the node stops (its `stopping` turns true), the layer connects
//! to no one and releases every link a peer opens; the node ends each
//! session with SHUTDOWN once the bundles on it are acknowledged.
//!
//! A configured peer is connected to, through the digipeaters given for
//! it if any, as soon as the node has a bundle for it (a station that
//! connects through digipeaters is answered back through the reversed
//! path, as [`Station`] does for every link); a connection that fails (or a link that fails before the session is
//! established) is tried again with a backoff, from
//! [`MIN_CONNECT_BACKOFF`] doubling up to [`MAX_CONNECT_BACKOFF`], until a
//! session is up.
//!
//! An ACK_SEGMENT inside a bundle (every `ack_window` segments) goes out
//! only once the octets it acknowledges are synced to a spool file in the
//! store directory, so the prefix a sender will not send again survives
//! this node being killed ([`super::spooled`] finds what a stopped node left).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use linklab_ax25cl::wire::{Decoded, Message, RefuseReason};
use linklab_ax25cl::{Event, Session};
use linklab_dtn::{LinkId, TransmitId};
use linklab_io::{
    driver, Direction, DriverOptions, Notice, Request, Station, StationError, StationEvent,
};
use linklab_link::{Event as LinkLayerEvent, LinkError};
use linklab_wire::ax25::{Address, Callsign};
use linklab_wire::control::Modulus;
use linklab_wire::monitor;
use tokio::sync::{mpsc, oneshot, watch};

use super::{LinkCommand, LinkEvent, SessionId};
use crate::options::Ax25Options;

use super::spool::Spool;

pub use linklab_ax25cl::DEFAULT_ACK_WINDOW;

/// The first wait before connecting to the TNC again; it doubles up to
/// [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(250);

/// The longest wait between two attempts to reach the TNC.
const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// The first wait before connecting again to a configured peer that did
/// not answer; it doubles up to [`MAX_CONNECT_BACKOFF`].
pub const MIN_CONNECT_BACKOFF: Duration = Duration::from_millis(500);

/// The longest wait between two connection attempts to a peer.
pub const MAX_CONNECT_BACKOFF: Duration = Duration::from_secs(30);

/// How the AX.25 convergence layer is set up.
#[derive(Debug, Clone)]
pub struct Ax25Setup {
    /// The TNC, its port and transmitter, the node's callsign and the
    /// AX.25 link parameters (N1 sizes the DATA_SEGMENTs), as configured.
    pub options: Ax25Options,
    /// The convergence layer's parameters (`ack_window`, local EID).
    pub cl: linklab_ax25cl::Config,
    /// Where incoming bundles are spooled before they are acknowledged
    /// (the store directory; see [`super::spooled`]).
    pub spool_dir: PathBuf,
}

/// One configured neighbour: its callsign, the digipeaters to reach it
/// through and the node's link to it.
#[derive(Debug, Clone)]
pub struct Ax25Peer {
    /// Its callsign and SSID.
    pub call: Address,
    /// The digipeaters the node connects through, in order (AX.25 v2.2
    /// 3.12.5); empty for a direct link.
    pub via: Vec<Address>,
    /// The node's link for the destinations routed to it.
    pub link: LinkId,
}

/// A station as links are told apart: callsign and SSID.
type Key = (Callsign, u8);

fn key(address: &Address) -> Key {
    (address.callsign(), address.ssid())
}

/// One AX.25 link and its convergence-layer session.
struct Contact {
    id: SessionId,
    remote: Address,
    session: Session,
    up: bool,
    /// Why the session ended, while its link is being released.
    ended: Option<String>,
    /// Outgoing bundles by the session's tag.
    transfers: BTreeMap<u64, TransmitId>,
    /// Started by a link reset the peer made (DL-ERROR F): a DL-CONNECT
    /// indication for the same reset may follow, and starts nothing new.
    reset: bool,
    /// The incoming bundle's acknowledged octets, on disk.
    spool: Spool,
    /// The node went without storing what this link brought in: the
    /// spool stays for its next start.
    unstored: bool,
}

impl Contact {
    fn new(remote: Address, session: Session, reset: bool, setup: &Ax25Setup) -> Contact {
        Contact {
            id: SessionId::next(),
            remote,
            session,
            up: false,
            ended: None,
            transfers: BTreeMap::new(),
            reset,
            spool: Spool::new(&setup.spool_dir, "ax25", &remote.to_string()),
            unstored: false,
        }
    }
}

/// A configured peer the node has bundles for and no session with.
struct Wanted {
    call: Address,
    /// The digipeaters to connect through.
    via: Vec<Address>,
    /// The wait before the next attempt, after a failed one.
    backoff: Duration,
    /// When to try again; `None` while an attempt is under way.
    retry_at: Option<tokio::time::Instant>,
}

/// The peers to connect to, by station.
type WantedPeers = BTreeMap<Key, Wanted>;

/// Runs the convergence layer for ever: reaches the TNC (again, with
/// backoff, whenever it is lost), then serves AX.25 links. `demand` names
/// the link of a configured peer the node has a bundle for; `stop` turns
/// true when the node stops.
pub async fn run(
    setup: Ax25Setup,
    peers: Vec<Ax25Peer>,
    mut demand: mpsc::UnboundedReceiver<LinkId>,
    mut stop: watch::Receiver<bool>,
    events: mpsc::UnboundedSender<LinkEvent>,
) {
    let mut wait = MIN_BACKOFF;
    let mut wanted = WantedPeers::new();
    loop {
        match setup.options.kiss.connect().await {
            Ok(stream) => {
                wait = MIN_BACKOFF;
                let why = serve(
                    &setup,
                    &peers,
                    stream,
                    &mut demand,
                    &mut stop,
                    &mut wanted,
                    &events,
                )
                .await;
                eprintln!("linklab dtn node: ax25: {why} (reconnecting)");
            }
            Err(e) => eprintln!("linklab dtn node: ax25: {e} (retrying)"),
        }
        if events.is_closed() {
            return;
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(MAX_BACKOFF);
    }
}

/// Serves AX.25 links on one connection to the TNC until it is lost; why.
async fn serve(
    setup: &Ax25Setup,
    peers: &[Ax25Peer],
    stream: Box<dyn linklab_io::KissStream>,
    demand: &mut mpsc::UnboundedReceiver<LinkId>,
    stop: &mut watch::Receiver<bool>,
    wanted: &mut WantedPeers,
    events: &mpsc::UnboundedSender<LinkEvent>,
) -> String {
    let mut station = match Station::new(setup.options.mycall, setup.options.link.clone()) {
        Ok(station) => station,
        Err(e) => return format!("invalid link parameters: {e}"),
    };
    station.set_listening(true);
    station.set_monitor(setup.options.monitor);
    let mut handle = driver::spawn(
        stream,
        station,
        setup.options.params,
        DriverOptions {
            air: setup.options.air,
            ..DriverOptions::default()
        },
    );
    let (command_tx, mut commands) = mpsc::unbounded_channel::<(SessionId, Address, LinkCommand)>();
    let mut contacts: BTreeMap<Key, Contact> = BTreeMap::new();
    let mut next_tag = 0u64;
    // Once the node stops (or is gone), no link is made or accepted.
    let mut stopping = *stop.borrow_and_update();
    if stopping {
        wanted.clear();
    }
    // Peers wanted before the TNC was (re)gained are tried at once.
    for want in wanted.values_mut() {
        want.retry_at = Some(tokio::time::Instant::now());
    }
    let why = loop {
        // A peer is wanted until a session with it is established (a link
        // that fails before that is tried again).
        wanted.retain(|k, _| !contacts.get(k).is_some_and(|c| c.up));
        let retry = wanted.values().filter_map(|w| w.retry_at).min();
        tokio::select! {
            notice = handle.notices.recv() => {
                let Some((_, notice)) = notice else {
                    break match (&mut handle.task).await {
                        Ok(Err(e)) => e.to_string(),
                        _ => "the KISS driver stopped".to_string(),
                    };
                };
                let (remote, event) = match notice {
                    Notice::Station(StationEvent::Link { remote, event }) => (remote, event),
                    Notice::Station(StationEvent::Monitor { direction, bytes, modulus }) => {
                        print_frame(direction, &bytes, modulus);
                        continue;
                    }
                    // A connection asked for while the link is still being
                    // released: tried again later.
                    Notice::Rejected(StationError::AlreadyLinked { remote, .. }) => {
                        connect_failed(wanted, &remote, "the previous link is still being released");
                        continue;
                    }
                    _ => continue,
                };
                // The peer reset the link (SABM on a link up): its stream
                // starts again. A DL-CONNECT indication follows if data
                // was lost; it is the same reset.
                let reset = matches!(event, LinkLayerEvent::Error(LinkError::ResetByPeer));
                match event {
                    LinkLayerEvent::Connected { .. } if stopping && !contacts.contains_key(&key(&remote)) => {
                        // The node is stopping: no new session.
                        let _ = handle.requests.send(Request::Disconnect { remote });
                    }
                    LinkLayerEvent::Connected { .. } | LinkLayerEvent::Error(LinkError::ResetByPeer) => {
                        if let Some(contact) = contacts.get_mut(&key(&remote)).filter(|c| c.reset && !reset) {
                            contact.reset = false;
                            continue;
                        }
                        if let Some(mut old) = contacts.remove(&key(&remote)) {
                            old.session.link_down();
                            drain(&mut old, remote, peers, &command_tx, &handle.requests, events).await;
                            end(old, events);
                        }
                        let mut session = match Session::new(setup.cl.clone()) {
                            Ok(session) => session,
                            Err(e) => break format!("invalid convergence layer parameters: {e}"),
                        };
                        session.link_up();
                        let contact = contacts
                            .entry(key(&remote))
                            .or_insert(Contact::new(remote, session, reset, setup));
                        drain(contact, remote, peers, &command_tx, &handle.requests, events).await;
                    }
                    LinkLayerEvent::Data { data, .. } => {
                        if let Some(contact) = contacts.get_mut(&key(&remote)) {
                            contact.reset = false;
                            contact.session.handle_input(&data);
                            drain(contact, remote, peers, &command_tx, &handle.requests, events).await;
                        }
                    }
                    LinkLayerEvent::Disconnected { reason } => {
                        link_gone(&mut contacts, remote, peers, &command_tx, &handle.requests, events).await;
                        connect_failed(wanted, &remote, &format!("{reason:?}"));
                    }
                    LinkLayerEvent::LinkFailure { reason } => {
                        link_gone(&mut contacts, remote, peers, &command_tx, &handle.requests, events).await;
                        connect_failed(wanted, &remote, &format!("{reason:?}"));
                    }
                    _ => {}
                }
            }
            command = commands.recv() => {
                let Some((session, remote, command)) = command else { continue };
                let contact = contacts.get_mut(&key(&remote)).filter(|c| c.id == session);
                let Some(contact) = contact else {
                    // The session is over, its Down reported or on the way.
                    if let LinkCommand::Send { transmit, .. } = command {
                        let _ = events.send(LinkEvent::Sent {
                            session,
                            transmit,
                            outcome: Err(format!("the AX.25 link with {remote} is gone")),
                        });
                    }
                    continue;
                };
                match command {
                    LinkCommand::Send { transmit, octets } => {
                        next_tag += 1;
                        match contact.session.send_bundle(next_tag, octets) {
                            Ok(()) => {
                                contact.transfers.insert(next_tag, transmit);
                            }
                            Err(e) => {
                                let _ = events.send(LinkEvent::Sent {
                                    session: contact.id,
                                    transmit,
                                    outcome: Err(e.to_string()),
                                });
                            }
                        }
                    }
                    LinkCommand::Close => contact.session.shutdown(),
                }
                drain(contact, remote, peers, &command_tx, &handle.requests, events).await;
            }
            changed = stop.changed(), if !stopping => {
                if changed.is_err() || *stop.borrow_and_update() {
                    stopping = true;
                    wanted.clear();
                }
            }
            Some(link) = demand.recv(), if !stopping => {
                let Some(peer) = peers.iter().find(|p| p.link == link) else { continue };
                let k = key(&peer.call);
                if !contacts.contains_key(&k) && !wanted.contains_key(&k) {
                    wanted.insert(k, Wanted { call: peer.call, via: peer.via.clone(), backoff: MIN_CONNECT_BACKOFF, retry_at: None });
                    let _ = handle.requests.send(Request::Connect { remote: peer.call, via: peer.via.clone() });
                }
            }
            _ = sleep_until(retry), if retry.is_some() => {
                let now = tokio::time::Instant::now();
                for want in wanted.values_mut().filter(|w| w.retry_at.is_some_and(|at| at <= now)) {
                    want.retry_at = None;
                    let _ = handle.requests.send(Request::Connect { remote: want.call, via: want.via.clone() });
                }
            }
        }
    };
    for (_, mut contact) in std::mem::take(&mut contacts) {
        let remote = contact.remote;
        contact.session.link_down();
        drain(
            &mut contact,
            remote,
            peers,
            &command_tx,
            &handle.requests,
            events,
        )
        .await;
        end(contact, events);
    }
    handle.task.abort();
    why
}

/// The link with `remote` is gone: its session ends.
async fn link_gone(
    contacts: &mut BTreeMap<Key, Contact>,
    remote: Address,
    peers: &[Ax25Peer],
    command_tx: &mpsc::UnboundedSender<(SessionId, Address, LinkCommand)>,
    requests: &mpsc::UnboundedSender<Request>,
    events: &mpsc::UnboundedSender<LinkEvent>,
) {
    if let Some(mut contact) = contacts.remove(&key(&remote)) {
        contact.session.link_down();
        drain(&mut contact, remote, peers, command_tx, requests, events).await;
        end(contact, events);
    }
}

/// A connection to `remote` was not made (or a link with it ended) while
/// the node wants one: it is tried again after the peer's backoff.
/// Prints a frame sent (TX) or received (RX) on standard error as a TNC
/// monitor shows it, as `linklab send --monitor` does (at most 32
/// information octets).
fn print_frame(direction: Direction, bytes: &[u8], modulus: Modulus) {
    let dir = match direction {
        Direction::Tx => "TX",
        Direction::Rx => "RX",
    };
    let options = monitor::MonitorOptions { max_info: Some(32) };
    eprintln!(
        "{dir} {}",
        monitor::format_raw_with(bytes, modulus, options)
    );
}

fn connect_failed(wanted: &mut WantedPeers, remote: &Address, why: &str) {
    let Some(want) = wanted.get_mut(&key(remote)) else {
        return;
    };
    if want.retry_at.is_some() {
        return;
    }
    eprintln!(
        "linklab dtn node: ax25: no link with {remote} ({why}); trying again in {:?}",
        want.backoff
    );
    want.retry_at = Some(tokio::time::Instant::now() + want.backoff);
    want.backoff = (want.backoff * 2).min(MAX_CONNECT_BACKOFF);
}

/// Sleeps until `deadline`, or for ever without one.
async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Reports the end of a contact whose link is gone.
fn end(mut contact: Contact, events: &mpsc::UnboundedSender<LinkEvent>) {
    // What arrived of a bundle is stored by now, if anything was and the
    // node is still there.
    if !contact.unstored {
        contact.spool.clear();
    }
    if contact.up {
        let _ = events.send(LinkEvent::Down {
            session: contact.id,
            why: contact
                .ended
                .unwrap_or_else(|| "the AX.25 link went down".into()),
        });
    }
}

/// Whether a message the session sends is an ACK_SEGMENT.
fn is_ack(message: &[u8]) -> bool {
    matches!(
        Message::decode(message, u64::MAX),
        Ok(Decoded::Message {
            message: Message::AckSegment { .. },
            ..
        })
    )
}

/// Passes the session's events to the node and its messages to the link.
async fn drain(
    contact: &mut Contact,
    remote: Address,
    peers: &[Ax25Peer],
    command_tx: &mpsc::UnboundedSender<(SessionId, Address, LinkCommand)>,
    requests: &mpsc::UnboundedSender<Request>,
    events: &mpsc::UnboundedSender<LinkEvent>,
) {
    let id = contact.id;
    let mut release = false;
    let sent = |transmit, outcome| {
        let _ = events.send(LinkEvent::Sent {
            session: id,
            transmit,
            outcome,
        });
    };
    while let Some(event) = contact.session.poll_event() {
        match event {
            Event::Established { peer_eid } => {
                contact.up = true;
                let (commands, mut command_rx) = mpsc::unbounded_channel();
                let forward = command_tx.clone();
                tokio::spawn(async move {
                    while let Some(command) = command_rx.recv().await {
                        if forward.send((id, remote, command)).is_err() {
                            break;
                        }
                    }
                });
                let _ = events.send(LinkEvent::Up {
                    session: id,
                    peer: peer_eid,
                    remote: format!("ax25 {remote}"),
                    configured: peers
                        .iter()
                        .find(|p| key(&p.call) == key(&remote))
                        .map(|p| p.link),
                    mtu: None,
                    commands,
                });
            }
            Event::BundleReceived { data } => {
                // Its ACK_SEGMENT is queued in the session: it goes out
                // below, only once the node has stored the bundle.
                let (stored, done) = oneshot::channel();
                let _ = events.send(LinkEvent::Received {
                    session: id,
                    octets: data,
                    stored,
                });
                if done.await.is_err() {
                    // The node is going and did not store it: never
                    // acknowledged, its spool kept for the next start.
                    contact.unstored = true;
                    let _ = requests.send(Request::Disconnect { remote });
                    return;
                }
                contact.spool.clear();
            }
            Event::BundleSent { id: tag } => {
                if let Some(transmit) = contact.transfers.remove(&tag) {
                    sent(transmit, Ok(()));
                }
            }
            Event::BundleRefused { id: tag, reason } => {
                if let Some(transmit) = contact.transfers.remove(&tag) {
                    // "Completed": the peer has the bundle already.
                    let outcome = match reason {
                        RefuseReason::Completed => Ok(()),
                        other => Err(format!("the peer refused the bundle ({other:?})")),
                    };
                    sent(transmit, outcome);
                }
            }
            Event::TransferInterrupted {
                id: tag,
                acknowledged,
            } => {
                let Some(transmit) = contact.transfers.remove(&tag) else {
                    continue;
                };
                match usize::try_from(acknowledged) {
                    Ok(acknowledged) if acknowledged > 0 => {
                        let _ = events.send(LinkEvent::Interrupted {
                            session: id,
                            transmit,
                            acknowledged,
                        });
                    }
                    _ => sent(
                        transmit,
                        Err("the AX.25 session ended before the peer acknowledged any of the bundle".into()),
                    ),
                }
            }
            Event::PartialReceived { data } => {
                // Kept as a fragment; the sender resumes after what it saw
                // acknowledged.
                let (stored, done) = oneshot::channel();
                let _ = events.send(LinkEvent::PartialReceived {
                    session: id,
                    octets: data,
                    stored,
                });
                match done.await {
                    Ok(()) => contact.spool.clear(),
                    Err(_) => contact.unstored = true,
                }
            }
            Event::SessionEnded { cause } => {
                // Down goes to the node once the link is released too.
                release = cause.release_link();
                contact.ended = Some(format!("{cause:?}"));
            }
        }
    }
    while let Some(data) = contact.session.poll_transmit() {
        if is_ack(&data) {
            // The octets it acknowledges go on disk first.
            let prefix = contact.session.incoming().unwrap_or_default();
            if let Err(e) = contact.spool.keep(prefix).await {
                eprintln!(
                    "linklab dtn node: ax25: cannot keep the bundle coming from {remote} ({e}): releasing the link"
                );
                let _ = requests.send(Request::Disconnect { remote });
                return;
            }
        }
        let _ = requests.send(Request::Send { remote, data });
    }
    if release {
        // Once the SHUTDOWN (or whatever was queued) is acknowledged.
        let _ = requests.send(Request::Release { remote });
    }
}
