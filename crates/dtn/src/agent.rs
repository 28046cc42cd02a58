//! The bundle protocol agent (RFC 9171 clause 5), sans-IO.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use hardy_bpv7::bundle::{Bundle, Flags, Id};
use hardy_bpv7::eid::{Eid, NodeId};
use hardy_bpv7::status_report::ReasonCode;
use linklab_core::Instant;

use crate::bundle::{self, Draft, StatusKind, StatusReport};
use crate::config::{Config, SendRequest};
use crate::event::{
    AgentError, Delivery, DeliveryId, Event, ReceiveError, Reception, SendError, Transmit,
    TransmitId,
};
use crate::route::{EidPattern, LinkId, Route};
use crate::store::{Batch, Disposition, Store, StoreError, StoredBundle};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting for a route, a link or an endpoint.
    Idle,
    /// A transfer failed; offer it again at this DTN time.
    RetryAt(u64),
    /// With a convergence layer.
    InFlight(TransmitId),
    /// With an application.
    Offered(DeliveryId),
}

#[derive(Debug)]
struct Entry {
    stored: StoredBundle,
    bundle: Bundle,
    state: State,
}

#[derive(Debug)]
struct Flight {
    key: u64,
    link: LinkId,
    /// Length of the octets sent and where their payload data lies.
    length: usize,
    payload: std::ops::Range<usize>,
}

/// Store changes and their consequences, applied together once durable.
#[derive(Default)]
struct Txn {
    batch: Batch,
    added: Vec<(u64, Entry)>,
    events: Vec<Event>,
}

/// A bundle protocol agent: RFC 9171 clause 5 over a persistent [`Store`].
///
/// Sans-IO: the caller passes the time in, hands over what links receive,
/// and drains [`poll_transmit`](Agent::poll_transmit),
/// [`poll_delivery`](Agent::poll_delivery) and
/// [`poll_event`](Agent::poll_event); it calls
/// [`handle_timeout`](Agent::handle_timeout) at
/// [`poll_timeout`](Agent::poll_timeout).
#[derive(Debug)]
pub struct Agent<S: Store> {
    config: Config,
    node_id: NodeId,
    store: S,
    entries: BTreeMap<u64, Entry>,
    by_id: BTreeMap<Id, u64>,
    delivered: BTreeMap<Vec<u8>, u64>,
    next_key: u64,
    next_sequence: u64,
    endpoints: BTreeSet<Eid>,
    routes: Vec<Route>,
    links: BTreeMap<LinkId, Option<usize>>,
    flights: BTreeMap<TransmitId, Flight>,
    next_transmit: u64,
    offered: BTreeMap<DeliveryId, Vec<u64>>,
    deliveries: VecDeque<Delivery>,
    events: VecDeque<Event>,
}

impl<S: Store> Agent<S> {
    /// Starts an agent on `store`, taking up every bundle it holds: bundles
    /// to forward wait for their links, deliveries not confirmed before
    /// are offered again.
    pub fn open(config: Config, mut store: S) -> Result<Agent<S>, AgentError> {
        let node_id = match config.node.to_node_id() {
            Ok(node) if config.node.is_admin_endpoint() => node,
            _ => return Err(AgentError::BadNodeId(config.node.clone())),
        };
        let snapshot = store.load()?;
        let mut entries = BTreeMap::new();
        let mut by_id = BTreeMap::new();
        for (key, stored) in snapshot.bundles {
            let bundle = bundle::decode(&stored.octets)
                .map_err(|e| StoreError::Corrupt(format!("stored bundle {key}: {e}")))?;
            by_id.insert(bundle.id.clone(), key);
            entries.insert(
                key,
                Entry {
                    stored,
                    bundle,
                    state: State::Idle,
                },
            );
        }
        Ok(Agent {
            node_id,
            store,
            next_key: entries.keys().next_back().map_or(1, |k| k + 1),
            entries,
            by_id,
            delivered: snapshot.delivered,
            next_sequence: snapshot.next_sequence,
            endpoints: BTreeSet::new(),
            routes: Vec::new(),
            links: BTreeMap::new(),
            flights: BTreeMap::new(),
            next_transmit: 1,
            offered: BTreeMap::new(),
            deliveries: VecDeque::new(),
            events: VecDeque::new(),
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// How many bundles are stored.
    pub fn stored(&self) -> usize {
        self.entries.len()
    }

    /// Registers an application endpoint (RFC 9171 3.3): bundles for it are
    /// delivered from now on, including those that waited for it.
    pub fn register(&mut self, endpoint: Eid) -> Result<(), AgentError> {
        if !self.is_local(&endpoint) || endpoint.is_admin_endpoint() {
            return Err(AgentError::NotLocal(endpoint));
        }
        self.endpoints.insert(endpoint);
        Ok(())
    }

    /// Ends a registration; its bundles wait for the next one.
    pub fn unregister(&mut self, endpoint: &Eid) {
        self.endpoints.remove(endpoint);
    }

    /// Adds a static route after the existing ones; the first route whose
    /// pattern matches and whose link is up is taken.
    pub fn add_route(&mut self, pattern: EidPattern, link: LinkId) {
        self.routes.push(Route { pattern, link });
    }

    /// A link came up (a contact began). `mtu` is the largest bundle, in
    /// octets, it takes whole; larger ones are fragmented (5.8).
    pub fn link_up(&mut self, link: LinkId, mtu: Option<usize>) {
        self.links.insert(link, mtu);
    }

    /// A link went down: transfers on it that were not reported are taken
    /// back and go again on the next contact.
    pub fn link_down(&mut self, link: LinkId) {
        self.links.remove(&link);
        let lost: Vec<TransmitId> = self
            .flights
            .iter()
            .filter(|(_, flight)| flight.link == link)
            .map(|(id, _)| *id)
            .collect();
        for id in lost {
            if let Some(flight) = self.flights.remove(&id) {
                self.set_state(flight.key, State::Idle);
            }
        }
    }

    /// A contact on `link` began (a session to the next hop is up): every
    /// bundle waiting out [`Config::retry_after`] after a failed or broken
    /// transfer whose route now leads to `link` is offered at once, by the
    /// next [`poll_transmit`](Agent::poll_transmit). Returns how many.
    pub fn retry_now(&mut self, link: LinkId) -> usize {
        let waiting: Vec<u64> = self
            .entries
            .iter()
            .filter(|(_, e)| {
                matches!(e.state, State::RetryAt(_))
                    && self.route(&e.bundle.destination).map(|(l, _)| l) == Some(link)
            })
            .map(|(key, _)| *key)
            .collect();
        for key in &waiting {
            self.set_state(*key, State::Idle);
        }
        waiting.len()
    }

    /// Sends an application data unit (RFC 9171 5.2). When this returns the
    /// bundle is in the store.
    pub fn send(&mut self, now: Instant, request: &SendRequest) -> Result<Id, SendError> {
        if !self.is_local(&request.source) {
            return Err(SendError::NotLocal(request.source.clone()));
        }
        if request.destination.is_null() {
            return Err(SendError::NullDestination);
        }
        let time = self.dtn_time(now);
        let has = |kind| request.reports.contains(&kind);
        let flags = Flags {
            do_not_fragment: !request.may_fragment,
            report_status_time: request.report_status_time,
            receipt_report_requested: has(StatusKind::Received),
            forward_report_requested: has(StatusKind::Forwarded),
            delivery_report_requested: has(StatusKind::Delivered),
            delete_report_requested: has(StatusKind::Deleted),
            ..Flags::default()
        };
        let mut txn = Txn::default();
        let draft = Draft {
            source: request.source.clone(),
            destination: request.destination.clone(),
            report_to: request
                .report_to
                .clone()
                .unwrap_or_else(|| request.source.clone()),
            flags,
            lifetime: request.lifetime,
            crc_type: self.config.crc_type,
            hop_limit: self.config.hop_limit,
            created: (time, 0),
            payload: &request.payload,
        };
        let id = self
            .originate(&mut txn, draft, time)
            .map_err(SendError::Encode)?;
        self.commit(txn)?;
        Ok(id)
    }

    /// A convergence layer received `octets` (RFC 9171 5.6). The
    /// CRCs are checked first, by our own code; a bundle is
    /// [`Accepted`](Reception::Accepted) only once it is durably stored,
    /// and only then may the convergence layer acknowledge it.
    pub fn handle_bundle(
        &mut self,
        now: Instant,
        octets: &[u8],
    ) -> Result<Reception, ReceiveError> {
        let bundle = bundle::decode(octets)?;
        let id = bundle.id.clone();
        let mut txn = Txn::default();
        if self
            .delivered
            .contains_key(&bundle::bundle_key(&bundle::whole(&id)))
        {
            return Ok(Reception::Duplicate(id));
        }
        if let Some(&key) = self.by_id.get(&id) {
            // A fragment's ID names its offset, not its length (RFC 9171
            // 4.3.1): a fragment kept from a transfer cut off here, and the
            // same fragment sent again whole because its sender saw less
            // of it acknowledged, share one. The longer one replaces the
            // shorter, or the octets between them would never come again.
            let entry = &self.entries[&key];
            let held = bundle::payload(&entry.bundle, &entry.stored.octets).len();
            if !bundle.flags.is_fragment || bundle::payload(&bundle, octets).len() <= held {
                return Ok(Reception::Duplicate(id));
            }
            txn.batch.remove.push(key);
        }
        let time = self.dtn_time(now);
        let expires_at = bundle::expires_at(&bundle, time);
        self.report(
            &mut txn,
            &bundle,
            StatusKind::Received,
            ReasonCode::NoAdditionalInformation,
            time,
        );
        let hops_exceeded = bundle
            .hop_count
            .as_ref()
            .is_some_and(|hops| hops.count > hops.limit);
        let discard = if expires_at <= time {
            Some(ReasonCode::LifetimeExpired)
        } else if hops_exceeded {
            Some(ReasonCode::HopLimitExceeded)
        } else {
            None
        };
        if let Some(reason) = discard {
            self.delete(&mut txn, &bundle, reason, time);
            self.commit(txn)?;
            return Ok(Reception::Discarded { bundle: id, reason });
        }
        let local = self.is_local(&bundle.destination);
        if local && bundle.flags.is_admin_record {
            // Administrative records for this node are consumed at once
            // (6.2); a status report becomes an event.
            if let Some(report) = StatusReport::decode(bundle::payload(&bundle, octets)) {
                txn.events.push(Event::StatusReport {
                    to: bundle.destination.clone(),
                    from: bundle.id.source.clone(),
                    report,
                });
            }
            self.commit(txn)?;
            return Ok(Reception::Accepted(id));
        }
        let disposition = match (local, bundle.flags.is_fragment) {
            (false, _) => Disposition::Forward,
            (true, false) => Disposition::Deliver,
            (true, true) => Disposition::Reassemble,
        };
        let stored = StoredBundle {
            disposition,
            received_at: time,
            expires_at,
            octets: octets.to_vec(),
        };
        self.put(&mut txn, stored, bundle);
        self.commit(txn)?;
        Ok(Reception::Accepted(id))
    }

    /// The next bundle to send, if a route leads to a link that is up
    /// (RFC 9171 5.4). Bundles larger than the link's MTU are first
    /// fragmented in the store (5.8).
    pub fn poll_transmit(&mut self, now: Instant) -> Result<Option<Transmit>, StoreError> {
        let time = self.dtn_time(now);
        'scan: loop {
            let ready: Vec<u64> = self
                .entries
                .iter()
                .filter(|(_, e)| {
                    e.stored.disposition == Disposition::Forward
                        && e.stored.expires_at > time
                        && match e.state {
                            State::Idle => true,
                            State::RetryAt(at) => at <= time,
                            State::InFlight(_) | State::Offered(_) => false,
                        }
                })
                .map(|(key, _)| *key)
                .collect();
            for key in ready {
                let entry = &self.entries[&key];
                let Some((link, mtu)) = self.route(&entry.bundle.destination) else {
                    continue;
                };
                let dwell = time.saturating_sub(entry.stored.received_at);
                let (octets, exceeded) = bundle::for_next_hop(
                    &entry.bundle,
                    &entry.stored.octets,
                    &self.config.node,
                    dwell,
                )
                .unwrap_or_else(|_| (entry.stored.octets.clone(), false));
                if exceeded {
                    let mut txn = Txn::default();
                    let bundle = entry.bundle.clone();
                    self.delete(&mut txn, &bundle, ReasonCode::HopLimitExceeded, time);
                    txn.batch.remove.push(key);
                    self.commit(txn)?;
                    continue;
                }
                if let Some(mtu) = mtu.filter(|&mtu| octets.len() > mtu) {
                    if self.fragment(key, mtu, octets.len())? {
                        continue 'scan;
                    }
                    let bundle = self.entries[&key].bundle.id.clone();
                    self.set_state(key, State::RetryAt(time + millis(self.config.retry_after)));
                    self.events.push_back(Event::TooLarge {
                        bundle,
                        link,
                        size: octets.len(),
                    });
                    continue;
                }
                return Ok(Some(self.launch(key, link, octets)));
            }
            return Ok(None);
        }
    }

    /// The convergence layer delivered the whole transfer: the bundle has
    /// left this node (a "forwarded" report goes out if asked for). An
    /// unknown or stale ID (the link went down, the bundle expired) is
    /// ignored.
    pub fn transfer_succeeded(&mut self, now: Instant, id: TransmitId) -> Result<(), StoreError> {
        let Some(flight) = self.flights.remove(&id) else {
            return Ok(());
        };
        let time = self.dtn_time(now);
        let bundle = self.entries[&flight.key].bundle.clone();
        let mut txn = Txn::default();
        txn.batch.remove.push(flight.key);
        self.report(
            &mut txn,
            &bundle,
            StatusKind::Forwarded,
            ReasonCode::NoAdditionalInformation,
            time,
        );
        txn.events.push(Event::Forwarded {
            bundle: bundle.id,
            link: flight.link,
        });
        self.commit(txn).inspect_err(|_| {
            // Still stored: it goes again.
            self.set_state(flight.key, State::Idle);
        })
    }

    /// The transfer failed; the bundle is offered again after
    /// [`Config::retry_after`].
    pub fn transfer_failed(&mut self, now: Instant, id: TransmitId) {
        if let Some(flight) = self.flights.remove(&id) {
            let at = self.dtn_time(now) + millis(self.config.retry_after);
            self.set_state(flight.key, State::RetryAt(at));
        }
    }

    /// Reactive fragmentation (RFC 9171 5.8): the convergence layer got
    /// only the first `sent` octets of the transfer through (and the
    /// receiver kept them as a fragment, see
    /// [`handle_partial_bundle`](Agent::handle_partial_bundle)). The stored
    /// bundle is replaced by a fragment carrying the payload that did not
    /// get through, to be sent again after [`Config::retry_after`] (the
    /// whole bundle, if it must not be fragmented).
    pub fn transfer_partial(
        &mut self,
        now: Instant,
        id: TransmitId,
        sent: usize,
    ) -> Result<(), StoreError> {
        let Some(flight) = self.flights.get(&id) else {
            return Ok(());
        };
        let done = sent
            .saturating_sub(flight.payload.start)
            .min(flight.payload.len());
        if sent >= flight.length || (done == flight.payload.len() && done > 0) {
            return self.transfer_succeeded(now, id);
        }
        let key = flight.key;
        let entry = &self.entries[&key];
        if done == 0 || entry.bundle.flags.do_not_fragment {
            self.transfer_failed(now, id);
            return Ok(());
        }
        self.flights.remove(&id);
        let time = self.dtn_time(now);
        let length = bundle::payload(&entry.bundle, &entry.stored.octets).len();
        let rest = bundle::fragment(
            &entry.bundle,
            &entry.stored.octets,
            done..length,
            length as u64,
        )
        .ok()
        .and_then(|octets| bundle::decode(&octets).ok().map(|b| (octets, b)));
        let Some((octets, fragment)) = rest else {
            self.set_state(key, State::Idle);
            return Ok(());
        };
        let mut txn = Txn::default();
        txn.batch.remove.push(key);
        let stored = StoredBundle {
            octets,
            ..entry.stored.clone()
        };
        let new_key = self.put(&mut txn, stored, fragment);
        self.commit(txn)
            .inspect_err(|_| self.set_state(key, State::Idle))?;
        self.set_state(
            new_key,
            State::RetryAt(time + millis(self.config.retry_after)),
        );
        Ok(())
    }

    /// Reactive fragmentation at the receiver (RFC 9171 5.8): a transfer
    /// broke off after `prefix`, the first octets of a bundle. If the
    /// prefix holds the primary block and every block before the payload
    /// (each intact, by its CRC) and some payload data, that much is kept
    /// as a fragment, exactly as [`handle_bundle`](Agent::handle_bundle)
    /// would keep it; `None` if it holds too little or the bundle must not
    /// be fragmented. The payload data of
    /// the prefix cannot be checked by the payload block's CRC (that is in
    /// the part that was lost): the convergence layer's own check is relied
    /// on.
    pub fn handle_partial_bundle(
        &mut self,
        now: Instant,
        prefix: &[u8],
    ) -> Result<Option<Reception>, ReceiveError> {
        let Some((octets, adu_length)) = crate::partial::complete(prefix) else {
            return Ok(None);
        };
        let bundle = bundle::decode(&octets)?;
        if bundle.flags.do_not_fragment {
            return Ok(None);
        }
        let length = bundle::payload(&bundle, &octets).len();
        let fragment = bundle::fragment(&bundle, &octets, 0..length, adu_length)?;
        self.handle_bundle(now, &fragment).map(Some)
    }

    /// The next application data unit for a registered endpoint (RFC 9171
    /// 5.7, with fragments reassembled, 5.9). It stays stored until
    /// [`delivery_done`](Agent::delivery_done); after a crash it is
    /// offered again.
    pub fn poll_delivery(&mut self) -> Option<Delivery> {
        if self.deliveries.is_empty() {
            self.find_deliveries();
        }
        self.deliveries.pop_front()
    }

    /// The application has kept delivery `id`: the bundle is removed from
    /// the store, remembered as delivered (a copy arriving later is
    /// dropped) and a "delivered" report goes out if asked for, all in one
    /// durable step.
    pub fn delivery_done(&mut self, now: Instant, id: DeliveryId) -> Result<(), AgentError> {
        let keys = self
            .offered
            .get(&id)
            .ok_or(AgentError::UnknownDelivery(id))?
            .clone();
        let time = self.dtn_time(now);
        let first = &self.entries[&keys[0]];
        let mut subject = first.bundle.clone();
        subject.id = bundle::whole(&subject.id);
        let until = keys
            .iter()
            .map(|key| self.entries[key].stored.expires_at)
            .max()
            .unwrap_or(time);
        let mut txn = Txn::default();
        txn.batch.remove.extend(&keys);
        txn.batch
            .delivered
            .push((bundle::bundle_key(&subject.id), until));
        self.report(
            &mut txn,
            &subject,
            StatusKind::Delivered,
            ReasonCode::NoAdditionalInformation,
            time,
        );
        self.commit(txn)?;
        self.offered.remove(&id);
        Ok(())
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When [`handle_timeout`](Agent::handle_timeout) is next due: the
    /// earliest end of a lifetime, a retry wait or a delivery record.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.entries
            .values()
            .filter_map(|e| match e.state {
                State::Offered(_) => None,
                State::RetryAt(at) => Some(at.min(e.stored.expires_at)),
                State::Idle | State::InFlight(_) => Some(e.stored.expires_at),
            })
            .chain(self.delivered.values().copied())
            .min()
            .map(|at| self.instant(at))
    }

    /// Deletes bundles whose lifetime has ended (RFC 9171 5.5, with a
    /// "deleted" report if asked for) and forgets delivery records of
    /// bundles that can no longer arrive. Bundles an application holds are
    /// left until it confirms them.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), StoreError> {
        let time = self.dtn_time(now);
        let mut txn = Txn::default();
        let expired: Vec<u64> = self
            .entries
            .iter()
            .filter(|(_, e)| e.stored.expires_at <= time && !matches!(e.state, State::Offered(_)))
            .map(|(key, _)| *key)
            .collect();
        for key in expired {
            let bundle = self.entries[&key].bundle.clone();
            self.delete(&mut txn, &bundle, ReasonCode::LifetimeExpired, time);
            txn.batch.remove.push(key);
        }
        txn.batch.forget = self
            .delivered
            .iter()
            .filter(|(_, until)| **until <= time)
            .map(|(id, _)| id.clone())
            .collect();
        self.commit(txn)
    }

    /// DTN time at `now`.
    pub fn dtn_time(&self, now: Instant) -> u64 {
        self.config
            .dtn_time_at_zero
            .saturating_add(now.as_micros() / 1000)
    }

    fn instant(&self, dtn_time: u64) -> Instant {
        Instant::from_micros(
            dtn_time
                .saturating_sub(self.config.dtn_time_at_zero)
                .saturating_mul(1000),
        )
    }

    fn is_local(&self, eid: &Eid) -> bool {
        match eid.to_node_id() {
            Ok(NodeId::LocalNode) => true,
            Ok(node) => node == self.node_id,
            Err(_) => false,
        }
    }

    fn route(&self, destination: &Eid) -> Option<(LinkId, Option<usize>)> {
        self.routes
            .iter()
            .filter(|route| route.pattern.matches(destination))
            .find_map(|route| self.links.get(&route.link).map(|mtu| (route.link, *mtu)))
    }

    fn set_state(&mut self, key: u64, state: State) {
        if let Some(entry) = self.entries.get_mut(&key) {
            entry.state = state;
        }
    }

    /// Hands `octets` (bundle `key` edited for the next hop) to `link`; if
    /// the edit cannot be read back, the bundle goes unedited.
    fn launch(&mut self, key: u64, link: LinkId, octets: Vec<u8>) -> Transmit {
        let id = TransmitId(self.next_transmit);
        self.next_transmit += 1;
        let entry = self
            .entries
            .get_mut(&key)
            .expect("launching a stored bundle");
        entry.state = State::InFlight(id);
        let (octets, payload) = match bundle::decode(&octets) {
            Ok(edited) => {
                let payload = bundle::payload_range(&edited);
                (octets, payload)
            }
            Err(_) => (
                entry.stored.octets.clone(),
                bundle::payload_range(&entry.bundle),
            ),
        };
        self.flights.insert(
            id,
            Flight {
                key,
                link,
                length: octets.len(),
                payload,
            },
        );
        Transmit {
            id,
            link,
            bundle: entry.bundle.id.clone(),
            octets,
        }
    }

    /// Replaces stored bundle `key` by fragments that fit `mtu` once edited
    /// for the next hop; `false` if it may not or cannot be split.
    fn fragment(&mut self, key: u64, mtu: usize, edited: usize) -> Result<bool, StoreError> {
        let entry = &self.entries[&key];
        let length = bundle::payload(&entry.bundle, &entry.stored.octets).len();
        if entry.bundle.flags.do_not_fragment || length < 2 {
            return Ok(false);
        }
        // Room for the fragment offset and ADU length and longer length
        // fields; checked below against the real fragments.
        let overhead = edited.saturating_sub(length) + 24;
        let mut chunk = mtu.saturating_sub(overhead);
        let mut pieces = Vec::new();
        while chunk > 0 && pieces.is_empty() {
            let mut made = Vec::new();
            let mut largest = 0;
            for start in (0..length).step_by(chunk) {
                let end = (start + chunk).min(length);
                let Ok(octets) = bundle::fragment(
                    &entry.bundle,
                    &entry.stored.octets,
                    start..end,
                    length as u64,
                ) else {
                    return Ok(false);
                };
                let Ok(fragment) = bundle::decode(&octets) else {
                    return Ok(false);
                };
                let next_hop = bundle::for_next_hop(&fragment, &octets, &self.config.node, 0)
                    .map_or(octets.len(), |(o, _)| o.len());
                largest = largest.max(next_hop);
                made.push((octets, fragment));
            }
            if largest <= mtu {
                pieces = made;
            } else {
                chunk = chunk.saturating_sub(largest - mtu);
            }
        }
        if pieces.is_empty() {
            return Ok(false);
        }
        let original = entry.bundle.id.clone();
        let stored = entry.stored.clone();
        let count = pieces.len();
        let mut txn = Txn::default();
        txn.batch.remove.push(key);
        for (octets, fragment) in pieces {
            let stored = StoredBundle {
                octets,
                ..stored.clone()
            };
            self.put(&mut txn, stored, fragment);
        }
        txn.events.push(Event::Fragmented {
            bundle: original,
            fragments: count,
        });
        self.commit(txn)?;
        Ok(true)
    }

    fn find_deliveries(&mut self) {
        let mut groups: BTreeMap<(Id, u64), Vec<u64>> = BTreeMap::new();
        let mut whole = Vec::new();
        for (key, entry) in &self.entries {
            if entry.state != State::Idle || !self.endpoints.contains(&entry.bundle.destination) {
                continue;
            }
            match entry.stored.disposition {
                Disposition::Deliver => whole.push(*key),
                Disposition::Reassemble => {
                    if let Some(info) = &entry.bundle.id.fragment_info {
                        groups
                            .entry((bundle::whole(&entry.bundle.id), info.total_adu_length))
                            .or_default()
                            .push(*key);
                    }
                }
                Disposition::Forward => {}
            }
        }
        for key in whole {
            let entry = &self.entries[&key];
            let payload = bundle::payload(&entry.bundle, &entry.stored.octets).to_vec();
            self.offer(vec![key], payload);
        }
        for ((_, total), keys) in groups {
            if let Some((used, payload)) = self.reassemble(&keys, total) {
                self.offer(used, payload);
            }
        }
    }

    /// The ADU from fragments `keys` of one bundle, if they cover it all
    /// (RFC 9171 5.9), with every fragment of the group (all are consumed).
    fn reassemble(&self, keys: &[u64], total: u64) -> Option<(Vec<u64>, Vec<u8>)> {
        let total = usize::try_from(total).ok()?;
        let mut pieces: Vec<(usize, &[u8], u64)> = keys
            .iter()
            .filter_map(|key| {
                let entry = &self.entries[key];
                let offset = entry.bundle.id.fragment_info.as_ref()?.offset;
                let data = bundle::payload(&entry.bundle, &entry.stored.octets);
                Some((usize::try_from(offset).ok()?, data, *key))
            })
            .collect();
        pieces.sort_by_key(|(offset, data, _)| (*offset, usize::MAX - data.len()));
        // Which pieces cover the ADU, before allocating it: its length
        // comes from the peer, the pieces are here.
        let mut covered = 0;
        let mut used = Vec::new();
        for (offset, data, key) in &pieces {
            let end = offset.saturating_add(data.len());
            if *offset > covered || end > total {
                continue;
            }
            if end > covered {
                used.push((*offset, *data, *key));
                covered = end;
            }
        }
        if covered != total || used.is_empty() {
            return None;
        }
        let mut adu = Vec::with_capacity(total);
        for (offset, data, _) in &used {
            adu.extend_from_slice(&data[adu.len() - offset..]);
        }
        let keys = pieces.iter().map(|(_, _, key)| *key).collect();
        Some((keys, adu))
    }

    fn offer(&mut self, keys: Vec<u64>, payload: Vec<u8>) {
        let id = DeliveryId(keys[0]);
        let entry = &self.entries[&keys[0]];
        self.deliveries.push_back(Delivery {
            id,
            bundle: bundle::whole(&entry.bundle.id),
            source: entry.bundle.id.source.clone(),
            destination: entry.bundle.destination.clone(),
            payload,
        });
        for key in &keys {
            self.set_state(*key, State::Offered(id));
        }
        self.offered.insert(id, keys);
    }

    /// Makes a bundle here (an application's, or a status report) and adds
    /// it to `txn`.
    fn originate(&mut self, txn: &mut Txn, mut draft: Draft<'_>, time: u64) -> Result<Id, String> {
        let sequence = txn.batch.next_sequence.unwrap_or(self.next_sequence);
        txn.batch.next_sequence = Some(sequence + 1);
        draft.created = (time, sequence);
        let (_, octets) = bundle::build(draft).map_err(|e| e.to_string())?;
        // Read back, as a received bundle would be: the builder's own
        // description lacks the extension blocks' values.
        let bundle = bundle::decode(&octets).map_err(|e| e.to_string())?;
        let id = bundle.id.clone();
        let disposition = if self.is_local(&bundle.destination) {
            Disposition::Deliver
        } else {
            Disposition::Forward
        };
        let stored = StoredBundle {
            disposition,
            received_at: time,
            expires_at: bundle::expires_at(&bundle, time),
            octets: octets.into_vec(),
        };
        self.put(txn, stored, bundle);
        Ok(id)
    }

    fn put(&mut self, txn: &mut Txn, stored: StoredBundle, bundle: Bundle) -> u64 {
        let key = self.next_key;
        self.next_key += 1;
        txn.batch.put.push((key, stored.clone()));
        txn.added.push((
            key,
            Entry {
                stored,
                bundle,
                state: State::Idle,
            },
        ));
        key
    }

    /// A status report about `subject`, if it asked for one of this kind
    /// (RFC 9171 6.2; never about an administrative record).
    fn report(
        &mut self,
        txn: &mut Txn,
        subject: &Bundle,
        kind: StatusKind,
        reason: ReasonCode,
        time: u64,
    ) {
        if subject.flags.is_admin_record
            || !kind.requested(&subject.flags)
            || subject.report_to.is_null()
        {
            return;
        }
        let report = StatusReport {
            subject: subject.id.clone(),
            statuses: vec![(kind, subject.flags.report_status_time.then_some(time))],
            reason,
        };
        if self.is_local(&subject.report_to) {
            txn.events.push(Event::StatusReport {
                to: subject.report_to.clone(),
                from: self.config.node.clone(),
                report,
            });
            return;
        }
        let payload = report.encode();
        let draft = Draft {
            source: self.config.node.clone(),
            destination: subject.report_to.clone(),
            report_to: Eid::Null,
            flags: Flags {
                is_admin_record: true,
                ..Flags::default()
            },
            lifetime: self.config.report_lifetime,
            crc_type: self.config.crc_type,
            hop_limit: self.config.hop_limit,
            created: (time, 0),
            payload: &payload,
        };
        // Encoding a report from well-formed parts does not fail; if it
        // ever did, the report is lost, not the bundle it is about.
        let _ = self.originate(txn, draft, time);
    }

    /// Deletion (RFC 9171 5.10): a "deleted" report if asked for, and the
    /// event.
    fn delete(&mut self, txn: &mut Txn, bundle: &Bundle, reason: ReasonCode, time: u64) {
        self.report(txn, bundle, StatusKind::Deleted, reason, time);
        txn.events.push(Event::Deleted {
            bundle: bundle.id.clone(),
            reason,
        });
    }

    /// Makes `txn` durable, then applies it.
    fn commit(&mut self, txn: Txn) -> Result<(), StoreError> {
        // On failure nothing happened; keys given out are simply not used.
        self.store.commit(&txn.batch)?;
        for key in &txn.batch.remove {
            if let Some(entry) = self.entries.remove(key) {
                self.by_id.remove(&entry.bundle.id);
                if let State::InFlight(id) = entry.state {
                    self.flights.remove(&id);
                }
            }
        }
        for (key, entry) in txn.added {
            self.by_id.insert(entry.bundle.id.clone(), key);
            self.entries.insert(key, entry);
        }
        for id in &txn.batch.forget {
            self.delivered.remove(id);
        }
        for (id, until) in txn.batch.delivered {
            self.delivered.insert(id, until);
        }
        if let Some(next) = txn.batch.next_sequence {
            self.next_sequence = next;
        }
        self.events.extend(txn.events);
        Ok(())
    }
}

fn millis(span: Duration) -> u64 {
    u64::try_from(span.as_millis()).unwrap_or(u64::MAX)
}
