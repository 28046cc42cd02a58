//! The router's inputs from convergence-layer sessions: the events of the
//! contract in [`crate::cl`], without its channels (the driver keeps
//! those).

use linklab_core::Instant;
use linklab_dtn::{LinkId, ReceiveError, Reception, Store, StoreError, TransmitId};

use super::{Neighbour, Notice, Router};
use crate::cl::{LinkCommand, SessionId};

/// What arrived on a session ([`Router::handle_received`]).
#[derive(Debug, Clone, Copy)]
pub enum Received<'a> {
    /// A whole encoded bundle ([`crate::cl::LinkEvent::Received`]).
    Bundle(&'a [u8]),
    /// The first octets of an encoded bundle whose session ended inside
    /// it ([`crate::cl::LinkEvent::PartialReceived`]).
    Prefix(&'a [u8]),
}

/// A session that is established ([`crate::cl::LinkEvent::Up`]).
#[derive(Debug, Clone)]
pub struct SessionUp {
    /// The neighbour's node ID, as it gave it.
    pub peer: String,
    /// Where the session goes, for the log (`tcpcl 127.0.0.1:4556`).
    pub remote: String,
    /// The link of a configured peer this session was opened for.
    pub configured: Option<LinkId>,
    /// The largest bundle, in octets, the session takes whole.
    pub mtu: Option<usize>,
}

impl<S: Store> Router<S> {
    /// Session `session` is established: the links it carries are up, and
    /// the bundles waiting for them go on it. During a stop it is asked to
    /// end at once.
    pub fn handle_session_up(
        &mut self,
        now: Instant,
        session: SessionId,
        up: SessionUp,
    ) -> Result<(), StoreError> {
        if let Some(stop) = &mut self.stop {
            self.link_commands.push_back((session, LinkCommand::Close));
            stop.closed.insert(session);
        }
        let mut links = vec![self.neighbour_link(&up.peer)];
        links.extend(up.configured);
        for link in &links {
            let carriers = self.carriers.entry(*link).or_default();
            if carriers.is_empty() {
                self.agent.link_up(*link, up.mtu);
            }
            carriers.push(session);
            // Bundles whose transfer failed or broke off go now, not when
            // their retry wait runs out.
            self.agent.retry_now(*link);
        }
        self.notices.push_back(Notice::SessionUp {
            peer: up.peer.clone(),
            remote: up.remote.clone(),
        });
        let waiting: Vec<(LinkId, TransmitId, Vec<u8>)> = links
            .iter()
            .flat_map(|link| {
                let queued = self.waiting.remove(link).unwrap_or_default();
                queued.into_iter().map(|(t, o)| (*link, t, o))
            })
            .collect();
        self.sessions.insert(
            session,
            Neighbour {
                peer: up.peer,
                remote: up.remote,
                links,
            },
        );
        for (link, transmit, octets) in waiting {
            self.hand_over(session, link, transmit, octets);
        }
        self.settle(now)
    }

    /// Octets arrived on `session`: a bundle (RFC 9171 5.6), or the first
    /// octets of one whose session ended inside it, kept as a fragment
    /// (reactive fragmentation, RFC 9171 5.8). Once this returns `Ok` they
    /// are stored (or refused for good), and the session may acknowledge
    /// them; on `Err` it must not.
    pub fn handle_received(
        &mut self,
        now: Instant,
        session: SessionId,
        received: Received<'_>,
    ) -> Result<(), StoreError> {
        let from = self.peer_name(session);
        let notice = match received {
            Received::Bundle(octets) => match self.agent.handle_bundle(now, octets) {
                Ok(Reception::Accepted(_) | Reception::Duplicate(_)) => None,
                Ok(Reception::Discarded { bundle, reason }) => Some(Notice::Discarded {
                    bundle,
                    from,
                    reason,
                }),
                Err(ReceiveError::Store(e)) => return Err(e),
                Err(error) => Some(Notice::Refused { from, error }),
            },
            Received::Prefix(octets) => Some(self.keep_prefix(now, from, octets)?),
        };
        self.notices.extend(notice);
        self.settle(now)
    }

    /// Stores the first octets of an interrupted bundle from `from` as a
    /// fragment; what the log says of it.
    fn keep_prefix(
        &mut self,
        now: Instant,
        from: String,
        octets: &[u8],
    ) -> Result<Notice, StoreError> {
        let length = octets.len();
        Ok(match self.agent.handle_partial_bundle(now, octets) {
            Ok(Some(Reception::Accepted(id))) => Notice::PrefixKept { from, length, id },
            Ok(Some(Reception::Duplicate(id))) => Notice::PrefixDuplicate { from, id },
            Ok(Some(Reception::Discarded { bundle, reason })) => Notice::Discarded {
                bundle,
                from,
                reason,
            },
            Ok(None) => Notice::PrefixTooShort { from, length },
            Err(ReceiveError::Store(e)) => return Err(e),
            Err(error) => Notice::PrefixRefused {
                from,
                length,
                error,
            },
        })
    }

    /// The session ended with only the first `acknowledged` octets of
    /// `transmit` acknowledged: the rest goes again as a fragment, or the
    /// whole bundle if nothing of its payload got through (RFC 9171 5.8).
    pub fn handle_interrupted(
        &mut self,
        now: Instant,
        transmit: TransmitId,
        acknowledged: usize,
    ) -> Result<(), StoreError> {
        if let Some(flight) = self.flights.remove(&transmit) {
            self.notices.push_back(Notice::TransferBroken {
                to: self.peer_name(flight.session),
                acknowledged,
                length: flight.length,
            });
            self.agent.transfer_partial(now, transmit, acknowledged)?;
        }
        self.settle(now)
    }

    /// The outcome of the [`LinkCommand::Send`] of `transmit`: `Ok` once
    /// the peer acknowledged the whole bundle.
    pub fn handle_sent(
        &mut self,
        now: Instant,
        transmit: TransmitId,
        outcome: Result<(), String>,
    ) -> Result<(), StoreError> {
        if self.flights.remove(&transmit).is_some() {
            match outcome {
                Ok(()) => {
                    self.forwarded += 1;
                    self.agent.transfer_succeeded(now, transmit)?
                }
                Err(why) if self.stop.is_some() => {
                    self.notices.push_back(Notice::TransferStopped { why });
                    self.agent.transfer_failed(now, transmit);
                }
                Err(why) => {
                    self.notices.push_back(Notice::TransferFailed { why });
                    self.agent.transfer_failed(now, transmit);
                }
            }
        }
        self.settle(now)
    }

    /// `session` is over: its links are down unless another session
    /// carries them, and its transmissions not reported go again.
    pub fn handle_session_down(
        &mut self,
        now: Instant,
        session: SessionId,
        why: String,
    ) -> Result<(), StoreError> {
        let Some(neighbour) = self.sessions.remove(&session) else {
            return self.settle(now);
        };
        self.notices.push_back(Notice::SessionDown {
            peer: neighbour.peer,
            remote: neighbour.remote,
            why,
        });
        let stopping = self.stop.is_some();
        let lost: Vec<(TransmitId, LinkId)> = self
            .flights
            .iter()
            .filter(|(_, flight)| flight.session == session)
            .map(|(t, flight)| (*t, flight.link))
            .collect();
        for link in &neighbour.links {
            if let Some(carriers) = self.carriers.get_mut(link) {
                carriers.retain(|s| *s != session);
                if carriers.is_empty() {
                    self.carriers.remove(link);
                    // Its transfers go again on the next contact.
                    self.agent.link_down(*link);
                    if self.dialled.contains(link) && !stopping {
                        // The convergence layer connects on demand, pacing
                        // its attempts: the rest of a broken transfer asks
                        // at once.
                        self.agent.link_up(*link, None);
                        self.agent.retry_now(*link);
                    }
                }
            }
        }
        for (transmit, link) in lost {
            self.flights.remove(&transmit);
            if self.carriers.contains_key(&link) {
                self.agent.transfer_failed(now, transmit);
            }
        }
        self.settle(now)
    }

    /// The driver could not pass `command` on: `session`'s task has ended
    /// (its [`crate::cl::LinkEvent::Down`] is on the way). A bundle it was
    /// to carry goes back to the agent.
    pub fn handle_undelivered(
        &mut self,
        now: Instant,
        session: SessionId,
        command: LinkCommand,
    ) -> Result<(), StoreError> {
        if let LinkCommand::Send { transmit, .. } = command {
            if self
                .flights
                .get(&transmit)
                .is_some_and(|flight| flight.session == session)
            {
                self.flights.remove(&transmit);
                self.agent.transfer_failed(now, transmit);
            }
        }
        self.settle(now)
    }

    /// The neighbour on `session`, for the log.
    fn peer_name(&self, session: SessionId) -> String {
        self.sessions
            .get(&session)
            .map_or_else(|| "a peer".to_string(), |n| n.peer.clone())
    }
}
