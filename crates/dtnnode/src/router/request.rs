//! The router's inputs from application connections: the requests of the
//! line protocol in [`crate::app`] (REGISTER, SEND, DONE).

use std::collections::BTreeSet;
use std::time::Duration;

use linklab_core::Instant;
use linklab_dtn::{DeliveryId, Eid, SendRequest, Store, StoreError};

use super::{ClientId, Notice, Router};
use crate::app::{self, Message};
use crate::report;

/// Why a request got no answer but an error.
enum RequestError {
    /// The request is refused; the node goes on.
    Refused(String),
    /// The store failed: the node cannot go on.
    Store(StoreError),
}

impl From<app::ProtocolError> for RequestError {
    fn from(e: app::ProtocolError) -> RequestError {
        RequestError::Refused(e.0)
    }
}

impl<S: Store> Router<S> {
    /// An application connected as `client`.
    pub fn handle_client_opened(
        &mut self,
        now: Instant,
        client: ClientId,
    ) -> Result<(), StoreError> {
        self.clients.insert(client, BTreeSet::new());
        self.settle(now)
    }

    /// `client` asks something: the answer comes from
    /// [`Router::poll_client_message`]. A refused request is answered with
    /// an error; only a store failure is returned.
    pub fn handle_client_request(
        &mut self,
        now: Instant,
        client: ClientId,
        message: &Message,
    ) -> Result<(), StoreError> {
        let answer = match self.on_request(now, client, message) {
            Ok(answer) => answer,
            Err(RequestError::Refused(text)) => Some(Message::error(text)),
            Err(RequestError::Store(e)) => return Err(e),
        };
        if let Some(answer) = answer {
            self.tell(client, answer);
        }
        self.settle(now)
    }

    /// `client`'s connection ended (`why`, if on an error): its endpoints
    /// are free again, and the deliveries it held wait for a receiver.
    pub fn handle_client_closed(
        &mut self,
        now: Instant,
        client: ClientId,
        why: Option<String>,
    ) -> Result<(), StoreError> {
        if let Some(why) = why {
            self.notices.push_back(Notice::ClientFailed { why });
        }
        if let Some(endpoints) = self.clients.remove(&client) {
            for endpoint in endpoints {
                self.registrations.remove(&endpoint);
                self.agent.unregister(&endpoint);
            }
        }
        for (_, owner) in self.unconfirmed.values_mut() {
            if *owner == Some(client) {
                *owner = None;
            }
        }
        self.settle(now)
    }

    fn on_request(
        &mut self,
        now: Instant,
        id: ClientId,
        message: &Message,
    ) -> Result<Option<Message>, RequestError> {
        match message.verb.as_str() {
            "REGISTER" => self.register(id, message.parsed("endpoint")?),
            "SEND" => self.send(now, message).map(Some),
            "DONE" => {
                let delivery = DeliveryId(message.parsed("delivery")?);
                match self.unconfirmed.get(&delivery) {
                    Some((_, Some(owner))) if *owner == id => {
                        self.agent
                            .delivery_done(now, delivery)
                            .map_err(|e| match e {
                                linklab_dtn::AgentError::Store(e) => RequestError::Store(e),
                                other => RequestError::Refused(other.to_string()),
                            })?;
                        self.unconfirmed.remove(&delivery);
                        self.delivered += 1;
                        Ok(None)
                    }
                    _ => Err(RequestError::Refused(format!(
                        "no delivery {} is waiting for this application",
                        delivery.0
                    ))),
                }
            }
            other => Err(RequestError::Refused(format!(
                "unknown request {other} (REGISTER, SEND, DONE)"
            ))),
        }
    }

    /// REGISTER: `id` receives the bundles for `endpoint`, starting with
    /// those that waited for a receiver.
    fn register(&mut self, id: ClientId, endpoint: Eid) -> Result<Option<Message>, RequestError> {
        if let Some(holder) = self.registrations.get(&endpoint) {
            if *holder != id {
                return Err(RequestError::Refused(format!(
                    "{endpoint} is registered by another application"
                )));
            }
        }
        self.agent
            .register(endpoint.clone())
            .map_err(|e| RequestError::Refused(e.to_string()))?;
        self.registrations.insert(endpoint.clone(), id);
        if let Some(endpoints) = self.clients.get_mut(&id) {
            endpoints.insert(endpoint.clone());
        }
        // Deliveries that waited for a receiver.
        let waiting: Vec<DeliveryId> = self
            .unconfirmed
            .iter()
            .filter(|(_, (d, owner))| owner.is_none() && d.destination == endpoint)
            .map(|(k, _)| *k)
            .collect();
        self.tell(id, Message::new("OK"));
        for delivery in waiting {
            let entry = self.unconfirmed.get_mut(&delivery).expect("listed");
            entry.1 = Some(id);
            let delivery = entry.0.clone();
            self.offer(id, &delivery);
        }
        Ok(None)
    }

    /// SEND: a bundle from an application, with the status reports it asks
    /// for (RFC 9171 6.1).
    fn send(&mut self, now: Instant, message: &Message) -> Result<Message, RequestError> {
        let destination: Eid = message.parsed("dest")?;
        let source: Eid = match message.get("source") {
            Some(_) => message.parsed("source")?,
            None => self.agent.config().node.clone(),
        };
        let mut request = SendRequest::new(source, destination, message.body.clone());
        if message.get("lifetime").is_some() {
            let seconds: u64 = message.parsed("lifetime")?;
            request.lifetime = Duration::from_secs(seconds);
        }
        if let Some(kinds) = message.get("reports").filter(|k| !k.is_empty()) {
            for kind in kinds.split(',') {
                request
                    .reports
                    .push(report::parse_kind(kind).ok_or_else(|| {
                        RequestError::Refused(format!(
                            "unknown report {kind:?} (received, forwarded, delivered, deleted)"
                        ))
                    })?);
            }
            request.report_status_time = true;
        }
        match self.agent.send(now, &request) {
            Ok(bundle) => Ok(report::BundleRef::of(&bundle).fields(Message::new("SENT"))),
            Err(linklab_dtn::SendError::Store(e)) => Err(RequestError::Store(e)),
            Err(e) => Err(RequestError::Refused(e.to_string())),
        }
    }
}
