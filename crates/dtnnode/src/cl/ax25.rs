//! The AX.25 connected-mode convergence layer ([`linklab_ax25cl`], the
//! AX.25CM-CL of Ronan et al.) over a KISS TNC: one station with the
//! node's callsign ([`linklab_io::Station`] run by [`linklab_io::driver`]),
//! accepting AX.25 connections and connecting to configured peers when the
//! node has a bundle routed to them, with one [`Session`] per AX.25 link.
//!
//! Each AX.25 link is one session of the node's contract ([`super`]):
//! `Established` is [`LinkEvent::Up`]; a received bundle is acknowledged
//! only once stored, because the session's queued ACK_SEGMENT goes out
//! after the node answers; an outgoing bundle interrupted by a link loss
//! is reported as a failed transfer and sent again whole on the next
//! contact.

use std::collections::BTreeMap;
use std::time::Duration;

use linklab_ax25cl::wire::RefuseReason;
use linklab_ax25cl::{Event, Session};
use linklab_dtn::{LinkId, TransmitId};
use linklab_io::{
    driver, DriverOptions, KissAddress, KissParams, Notice, Request, Station, StationEvent,
};
use linklab_link::Event as LinkLayerEvent;
use linklab_wire::ax25::{Address, Callsign};
use tokio::sync::{mpsc, oneshot};

use super::{LinkCommand, LinkEvent, SessionId};

pub use linklab_ax25cl::DEFAULT_ACK_WINDOW;

/// The first wait before connecting to the TNC again; it doubles up to
/// [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(250);

/// The longest wait between two attempts to reach the TNC.
const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// How the AX.25 convergence layer is set up.
#[derive(Debug, Clone)]
pub struct Ax25Setup {
    /// The KISS TNC.
    pub kiss: KissAddress,
    /// The node's callsign and SSID.
    pub mycall: Address,
    /// The AX.25 link parameters (N1 sizes the DATA_SEGMENTs).
    pub link: linklab_link::Config,
    /// The convergence layer's parameters (`ack_window`, local EID).
    pub cl: linklab_ax25cl::Config,
}

/// One configured neighbour: its callsign and the node's link to it.
#[derive(Debug, Clone, Copy)]
pub struct Ax25Peer {
    /// Its callsign and SSID.
    pub call: Address,
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
}

/// Runs the convergence layer for ever: reaches the TNC (again, with
/// backoff, whenever it is lost), then serves AX.25 links. `demand` names
/// the link of a configured peer the node has a bundle for.
pub async fn run(
    setup: Ax25Setup,
    peers: Vec<Ax25Peer>,
    mut demand: mpsc::UnboundedReceiver<LinkId>,
    events: mpsc::UnboundedSender<LinkEvent>,
) {
    let mut wait = MIN_BACKOFF;
    loop {
        match setup.kiss.connect().await {
            Ok(stream) => {
                wait = MIN_BACKOFF;
                let why = serve(&setup, &peers, stream, &mut demand, &events).await;
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
    events: &mpsc::UnboundedSender<LinkEvent>,
) -> String {
    let mut station = match Station::new(setup.mycall, setup.link.clone()) {
        Ok(station) => station,
        Err(e) => return format!("invalid link parameters: {e}"),
    };
    station.set_listening(true);
    let mut handle = driver::spawn(
        stream,
        station,
        KissParams::default(),
        DriverOptions::default(),
    );
    let (command_tx, mut commands) = mpsc::unbounded_channel::<(SessionId, Address, LinkCommand)>();
    let mut contacts: BTreeMap<Key, Contact> = BTreeMap::new();
    let mut next_tag = 0u64;
    let why = loop {
        tokio::select! {
            notice = handle.notices.recv() => {
                let Some((_, notice)) = notice else {
                    break match (&mut handle.task).await {
                        Ok(Err(e)) => e.to_string(),
                        _ => "the KISS driver stopped".to_string(),
                    };
                };
                let Notice::Station(StationEvent::Link { remote, event }) = notice else { continue };
                match event {
                    LinkLayerEvent::Connected { .. } => {
                        // A link reset loses data: the stream starts again.
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
                        let contact = contacts.entry(key(&remote)).or_insert(Contact {
                            id: SessionId::next(),
                            remote,
                            session,
                            up: false,
                            ended: None,
                            transfers: BTreeMap::new(),
                        });
                        drain(contact, remote, peers, &command_tx, &handle.requests, events).await;
                    }
                    LinkLayerEvent::Data { data, .. } => {
                        if let Some(contact) = contacts.get_mut(&key(&remote)) {
                            contact.session.handle_input(&data);
                            drain(contact, remote, peers, &command_tx, &handle.requests, events).await;
                        }
                    }
                    LinkLayerEvent::Disconnected { .. } | LinkLayerEvent::LinkFailure { .. } => {
                        if let Some(mut contact) = contacts.remove(&key(&remote)) {
                            contact.session.link_down();
                            drain(&mut contact, remote, peers, &command_tx, &handle.requests, events).await;
                            end(contact, events);
                        }
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
            Some(link) = demand.recv() => {
                let Some(peer) = peers.iter().find(|p| p.link == link) else { continue };
                if !contacts.contains_key(&key(&peer.call)) {
                    // Refused (a connection under way) is harmless.
                    let _ = handle.requests.send(Request::Connect { remote: peer.call, via: Vec::new() });
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

/// Reports the end of a contact whose link is gone.
fn end(contact: Contact, events: &mpsc::UnboundedSender<LinkEvent>) {
    if contact.up {
        let _ = events.send(LinkEvent::Down {
            session: contact.id,
            why: contact
                .ended
                .unwrap_or_else(|| "the AX.25 link went down".into()),
        });
    }
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
                let _ = done.await;
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
                if let Some(transmit) = contact.transfers.remove(&tag) {
                    sent(
                        transmit,
                        Err(format!(
                            "the AX.25 session ended after {acknowledged} acknowledged octets"
                        )),
                    );
                }
            }
            // The node keeps no partial bundles: the sender sends the
            // whole bundle again.
            Event::PartialReceived { .. } => {}
            Event::SessionEnded { cause } => {
                // Down goes to the node once the link is released too.
                release = cause.release_link();
                contact.ended = Some(format!("{cause:?}"));
            }
        }
    }
    while let Some(data) = contact.session.poll_transmit() {
        let _ = requests.send(Request::Send { remote, data });
    }
    if release {
        // Once the SHUTDOWN (or whatever was queued) is acknowledged.
        let _ = requests.send(Request::Release { remote });
    }
}
