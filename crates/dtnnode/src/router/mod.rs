//! The node's logic, sans-IO: the [`Router`] owns the bundle agent
//! (RFC 9171) and what the node knows around it — its neighbours and the
//! links they carry, the applications and their endpoints, the bundles
//! handed to sessions, and the orderly stop.
//!
//! It does no I/O and reads no clock, in the manner of the protocol
//! engines (docs/architecture.md, "the one rule"): every input is a call that
//! takes `now` ([`Router::handle_session_up`], [`Router::handle_received`],
//! [`Router::handle_client_request`], [`Router::handle_timeout`], ...),
//! and everything it wants done is drained by the driver
//! ([`crate::node`]): commands for sessions
//! ([`Router::poll_link_command`]), connections wanted
//! ([`Router::poll_dial`]), messages for applications
//! ([`Router::poll_client_message`]), lines for the log
//! ([`Router::poll_notice`]), and when to call it next
//! ([`Router::poll_timeout`]). Each input hands the agent's new
//! transmissions, deliveries and events out before it returns. Like the
//! agent's, its calls return the store's errors, after which the node
//! cannot go on; that is why it is not a [`linklab_core::Engine`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use linklab_core::{earliest, Instant};
use linklab_dtn::{
    Agent, Delivery, DeliveryId, Eid, EidPattern, Event, LinkId, ReceiveError, Reception, Store,
    StoreError, TransmitId,
};

use crate::app::Message;
use crate::cl::{LinkCommand, SessionId};
use crate::report;
use crate::watch::NodeWatch;

mod notice;
mod request;
mod session;
#[cfg(test)]
mod tests;

pub use notice::Notice;
pub use session::{Received, SessionUp};

/// How long sessions get to end cleanly at shutdown.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// How long, within [`SHUTDOWN_GRACE`], a session with a bundle on the
/// wire is left to have it acknowledged before it is asked to end.
pub const FINISH_GRACE: Duration = Duration::from_secs(1);

/// An application connection within the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ClientId(pub u64);

/// A convergence-layer session the node knows.
struct Neighbour {
    peer: String,
    remote: String,
    links: Vec<LinkId>,
}

/// An orderly stop: no bundle is handed to a session any more and no
/// convergence layer dials; each session ends once the bundles on it are
/// acknowledged, or at `finish_by`; the node exits when all have ended, or
/// at `exit_by`. A bundle not acknowledged stays in the store for the next
/// start.
struct Stop {
    finish_by: Instant,
    exit_by: Instant,
    /// The sessions asked to end.
    closed: BTreeSet<SessionId>,
    /// Set at `exit_by`: the node exits with sessions still up.
    given_up: bool,
}

/// A transmission handed to a session.
struct Flight {
    session: SessionId,
    link: LinkId,
    /// The bundle's length in octets.
    length: usize,
}

/// The node's logic: see the module documentation.
pub struct Router<S: Store> {
    agent: Agent<S>,
    next_link: u32,
    /// Links named by a neighbour's node ID (with the route to its
    /// endpoints).
    by_node: BTreeMap<String, LinkId>,
    /// The sessions carrying each link that is up.
    carriers: BTreeMap<LinkId, Vec<SessionId>>,
    sessions: BTreeMap<SessionId, Neighbour>,
    /// Links whose convergence layer connects when told it is wanted: the
    /// agent sees them up, and a transmission on one with no session asks
    /// for a connection at once ([`Router::poll_dial`]) and waits in
    /// `waiting`.
    dialled: BTreeSet<LinkId>,
    /// Transmissions on a dialled link while no session carries it, in
    /// the order the agent gave them: handed to the first session up.
    waiting: BTreeMap<LinkId, Vec<(TransmitId, Vec<u8>)>>,
    flights: BTreeMap<TransmitId, Flight>,
    /// Application connections and the endpoints each registered.
    clients: BTreeMap<ClientId, BTreeSet<Eid>>,
    registrations: BTreeMap<Eid, ClientId>,
    /// Deliveries handed out and not yet confirmed, with the connection
    /// holding each (none while its endpoint has no receiver).
    unconfirmed: BTreeMap<DeliveryId, (Delivery, Option<ClientId>)>,
    /// When the agent's timers last ran, so a deadline already passed (a
    /// retry waiting for a link) does not spin.
    last_timeout: Option<Instant>,
    /// The `now` of the latest call.
    now: Instant,
    /// The orderly stop under way, once [`Router::begin_stop`] was called.
    stop: Option<Stop>,
    forwarded: u64,
    delivered: u64,
    link_commands: VecDeque<(SessionId, LinkCommand)>,
    dials: VecDeque<LinkId>,
    client_messages: VecDeque<(ClientId, Message)>,
    notices: VecDeque<Notice>,
}

impl<S: Store> Router<S> {
    /// A router around `agent`, with no links yet.
    pub fn new(agent: Agent<S>) -> Router<S> {
        Router {
            agent,
            next_link: 1,
            by_node: BTreeMap::new(),
            carriers: BTreeMap::new(),
            sessions: BTreeMap::new(),
            dialled: BTreeSet::new(),
            waiting: BTreeMap::new(),
            flights: BTreeMap::new(),
            clients: BTreeMap::new(),
            registrations: BTreeMap::new(),
            unconfirmed: BTreeMap::new(),
            last_timeout: None,
            now: Instant::ZERO,
            stop: None,
            forwarded: 0,
            delivered: 0,
            link_commands: VecDeque::new(),
            dials: VecDeque::new(),
            client_messages: VecDeque::new(),
            notices: VecDeque::new(),
        }
    }

    /// Bundles in the store.
    pub fn stored(&self) -> usize {
        self.agent.stored()
    }

    /// What a program watching the node sees of it now.
    pub fn watch(&self) -> NodeWatch {
        NodeWatch {
            stored: self.agent.stored(),
            contacts: self.sessions.values().map(|n| n.peer.clone()).collect(),
            forwarded: self.forwarded,
            delivered: self.delivered,
        }
    }

    /// A static route: bundles for `pattern` go to the neighbour with node
    /// ID `next_hop`, over whichever session it comes up on.
    pub fn add_route(&mut self, pattern: EidPattern, next_hop: &str) {
        let link = self.neighbour_link(next_hop);
        self.agent.add_route(pattern, link);
    }

    /// A new link for a configured peer, with bundles for `pattern` routed
    /// to it.
    pub fn add_peer_link(&mut self, pattern: Option<EidPattern>) -> LinkId {
        let link = self.new_link();
        if let Some(pattern) = pattern {
            self.agent.add_route(pattern, link);
        }
        link
    }

    /// A new link whose convergence layer connects on demand, with bundles
    /// for `pattern` routed to it: up for the agent while no session
    /// carries it, so that bundles routed there come out and ask for a
    /// connection ([`Router::poll_dial`]).
    pub fn add_dialled_link(&mut self, pattern: EidPattern) -> LinkId {
        let link = self.new_link();
        self.agent.add_route(pattern, link);
        self.agent.link_up(link, None);
        self.dialled.insert(link);
        link
    }

    /// Keeps as a fragment the first octets of a bundle that a session was
    /// bringing in when the node last stopped, which its sender was told it
    /// need not send again ([`crate::cl::spooled`]). The driver removes the
    /// spool once this returns.
    pub fn keep_spooled(&mut self, now: Instant, octets: &[u8]) -> Result<(), StoreError> {
        let length = octets.len();
        match self.agent.handle_partial_bundle(now, octets) {
            Ok(Some(Reception::Accepted(id))) => {
                self.notices.push_back(Notice::SpoolKept { length, id })
            }
            Ok(_) => {}
            Err(ReceiveError::Store(e)) => return Err(e),
            Err(error) => self
                .notices
                .push_back(Notice::SpoolRefused { length, error }),
        }
        self.settle(now)
    }

    /// Hands out what the store holds for the links set up so far: call
    /// once, when the links and routes are in place.
    pub fn start(&mut self, now: Instant) -> Result<(), StoreError> {
        self.settle(now)
    }

    /// Starts an orderly stop ([`FINISH_GRACE`], [`SHUTDOWN_GRACE`]). The
    /// driver tells the convergence layers that make links of their own
    /// accord to make and accept none any more.
    pub fn begin_stop(&mut self, now: Instant) -> Result<(), StoreError> {
        self.notices.push_back(Notice::Stopping);
        self.stop = Some(Stop {
            finish_by: now + FINISH_GRACE,
            exit_by: now + SHUTDOWN_GRACE,
            closed: BTreeSet::new(),
            given_up: false,
        });
        self.settle(now)
    }

    /// Whether an orderly stop is under way.
    pub fn is_stopping(&self) -> bool {
        self.stop.is_some()
    }

    /// Whether the node may exit: stopping, and every session ended or
    /// [`SHUTDOWN_GRACE`] over.
    pub fn is_finished(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|stop| stop.given_up || self.sessions.is_empty())
    }

    /// Runs the agent's timers and the stop's deadlines that are due.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), StoreError> {
        // Due as `poll_timeout` said, before `now` moves it.
        let due = self.agent_timeout().is_some_and(|at| at <= now);
        self.now = now;
        if due {
            self.agent.handle_timeout(now)?;
            self.last_timeout = Some(now);
        }
        if let Some(stop) = &mut self.stop {
            if now >= stop.exit_by && !stop.given_up {
                stop.given_up = true;
                for neighbour in self.sessions.values() {
                    self.notices.push_back(Notice::SessionLeft {
                        peer: neighbour.peer.clone(),
                        remote: neighbour.remote.clone(),
                    });
                }
                return Ok(());
            }
        }
        self.settle(now)
    }

    /// When to call [`Router::handle_timeout`] next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let stop = self.stop.as_ref().filter(|stop| !stop.given_up);
        let finish_by = stop
            .filter(|stop| self.sessions.keys().any(|s| !stop.closed.contains(s)))
            .map(|stop| stop.finish_by);
        let exit_by = stop.map(|stop| stop.exit_by);
        earliest([self.agent_timeout(), finish_by, exit_by])
    }

    /// A command for a session: the driver passes it on, or reports it
    /// with [`Router::handle_undelivered`] if the session is gone.
    pub fn poll_link_command(&mut self) -> Option<(SessionId, LinkCommand)> {
        self.link_commands.pop_front()
    }

    /// A dialled link ([`Router::add_dialled_link`]) a bundle waits for:
    /// its convergence layer should connect.
    pub fn poll_dial(&mut self) -> Option<LinkId> {
        self.dials.pop_front()
    }

    /// A message for an application connection.
    pub fn poll_client_message(&mut self) -> Option<(ClientId, Message)> {
        self.client_messages.pop_front()
    }

    /// A line for the node's log.
    pub fn poll_notice(&mut self) -> Option<Notice> {
        self.notices.pop_front()
    }

    /// The agent's next deadline. One already handled at or after it (a
    /// bundle waiting to be retried when no link is up) is looked at again
    /// once a second.
    fn agent_timeout(&self) -> Option<Instant> {
        let at = self.agent.poll_timeout()?;
        Some(match self.last_timeout {
            Some(last) if at <= last => self.now.max(last) + Duration::from_secs(1),
            _ => at,
        })
    }

    fn new_link(&mut self) -> LinkId {
        let link = LinkId(self.next_link);
        self.next_link += 1;
        link
    }

    /// The link to the neighbour with node ID `node`, made on first use
    /// with a route to every endpoint of that node.
    fn neighbour_link(&mut self, node: &str) -> LinkId {
        let key = canonical(node);
        if let Some(link) = self.by_node.get(&key) {
            return *link;
        }
        let link = self.new_link();
        if let Ok(eid) = key.parse::<Eid>() {
            if let Ok(node_id) = eid.to_node_id() {
                self.agent.add_route(EidPattern::Node(node_id), link);
            }
        }
        self.by_node.insert(key, link);
        link
    }

    /// After every input: hands out what the agent has, and during a stop
    /// asks the sessions that are done to end.
    fn settle(&mut self, now: Instant) -> Result<(), StoreError> {
        self.now = now;
        self.pump(now)?;
        self.close_finished(now);
        Ok(())
    }

    /// During a stop, asks each session to end once no bundle handed to it
    /// waits for the peer's acknowledgement, or when the time to finish
    /// them is up.
    fn close_finished(&mut self, now: Instant) {
        let Some(stop) = &mut self.stop else {
            return;
        };
        let late = now >= stop.finish_by;
        for id in self.sessions.keys() {
            let busy = self.flights.values().any(|flight| flight.session == *id);
            if (late || !busy) && stop.closed.insert(*id) {
                self.link_commands.push_back((*id, LinkCommand::Close));
            }
        }
    }

    /// Hands the agent's transmissions to sessions (none during a stop:
    /// they stay in the store), its deliveries to applications, and
    /// reports its events.
    fn pump(&mut self, now: Instant) -> Result<(), StoreError> {
        while self.stop.is_none() {
            let Some(transmit) = self.agent.poll_transmit(now)? else {
                break;
            };
            let carrier = self
                .carriers
                .get(&transmit.link)
                .and_then(|sessions| sessions.first())
                .copied();
            match (carrier, self.dialled.contains(&transmit.link)) {
                (Some(session), _) => {
                    self.hand_over(session, transmit.link, transmit.id, transmit.octets)
                }
                (None, true) => {
                    // The convergence layer connects at once; the bundle
                    // goes as soon as the session is up.
                    self.dials.push_back(transmit.link);
                    self.waiting
                        .entry(transmit.link)
                        .or_default()
                        .push((transmit.id, transmit.octets));
                }
                (None, false) => self.agent.transfer_failed(now, transmit.id),
            }
        }
        while let Some(delivery) = self.agent.poll_delivery() {
            let owner = self.registrations.get(&delivery.destination).copied();
            if let Some(client) = owner {
                self.offer(client, &delivery);
            }
            self.unconfirmed.insert(delivery.id, (delivery, owner));
        }
        while let Some(event) = self.agent.poll_event() {
            self.on_agent_event(event);
        }
        Ok(())
    }

    /// Gives transmission `transmit` on `link` to `session`.
    fn hand_over(
        &mut self,
        session: SessionId,
        link: LinkId,
        transmit: TransmitId,
        octets: Vec<u8>,
    ) {
        let length = octets.len();
        self.link_commands
            .push_back((session, LinkCommand::Send { transmit, octets }));
        self.flights.insert(
            transmit,
            Flight {
                session,
                link,
                length,
            },
        );
    }

    /// Offers `delivery` to the application connection `client`.
    fn offer(&mut self, client: ClientId, delivery: &Delivery) {
        let id = report::BundleRef::of(&delivery.bundle);
        let message = id
            .fields(Message::new("BUNDLE").with("delivery", delivery.id.0))
            .with("dest", &delivery.destination)
            .with_body(delivery.payload.clone());
        self.tell(client, message);
    }

    /// Queues `message` for `client` if it is still connected.
    fn tell(&mut self, client: ClientId, message: Message) {
        if self.clients.contains_key(&client) {
            self.client_messages.push_back((client, message));
        }
    }

    fn on_agent_event(&mut self, event: Event) {
        let notice = match event {
            Event::StatusReport { to, from, report } => {
                let client = self.registrations.get(&to).copied();
                match client.filter(|c| self.clients.contains_key(c)) {
                    Some(client) => {
                        let message = report::encode(&to, &from, &report);
                        self.tell(client, message);
                        return;
                    }
                    None => Notice::ReportUnclaimed { from, to },
                }
            }
            Event::Forwarded { bundle, link } => Notice::Forwarded { bundle, link },
            Event::Fragmented { bundle, fragments } => Notice::Fragmented { bundle, fragments },
            Event::TooLarge { bundle, link, size } => Notice::TooLarge { bundle, link, size },
            Event::Deleted { bundle, reason } => Notice::Deleted { bundle, reason },
        };
        self.notices.push_back(notice);
    }
}

/// A node ID as the node keys its neighbours: parsed and printed again if
/// it is an endpoint ID (so `dtn://a` and `dtn://a/` are one node).
fn canonical(node: &str) -> String {
    node.parse::<Eid>()
        .ok()
        .and_then(|eid| eid.to_node_id().ok().map(|n| Eid::from(n).to_string()))
        .unwrap_or_else(|| node.to_string())
}
