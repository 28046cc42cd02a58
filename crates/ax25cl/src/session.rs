//! The convergence-layer engine: one entity's side of the byte stream of
//! one AX.25 connected-mode link, from contact header to the link's end,
//! without I/O and without a clock.

use std::collections::VecDeque;

use thiserror::Error;

use crate::config::{Config, ConfigError};
use crate::event::{Cause, Event};
use crate::wire::{
    ContactHeader, Decoded, Message, RefuseReason, END, REACTIVE_FRAGMENTATION, REQUEST_ACK, START,
};

/// Where a session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// No AX.25 link.
    Down,
    /// The link is up and this contact header sent; waiting for the
    /// peer's.
    Contact,
    /// Bundles may flow both ways.
    Established,
    /// The session ended on a link that is still up: release the link
    /// (its [`Event::SessionEnded`] says why); nothing more is read or
    /// sent but what [`Session::poll_transmit`] still holds.
    Closed,
}

/// Why [`Session::send_bundle`] did not queue a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SendError {
    /// The session is not established.
    #[error("the AX.25 convergence layer session is not established")]
    NotEstablished,
    /// A bundle has at least one octet.
    #[error("an empty bundle cannot be sent")]
    Empty,
}

/// An outgoing bundle not yet wholly acknowledged.
#[derive(Debug)]
struct Outgoing {
    id: u64,
    octets: Vec<u8>,
    /// Octets put into DATA_SEGMENTs so far.
    sent: usize,
    /// Octets the peer acknowledged.
    acked: u64,
}

/// The incoming bundle in progress.
#[derive(Debug)]
struct Incoming {
    data: Vec<u8>,
    /// DATA_SEGMENTs since the last ACK_SEGMENT.
    unacked_segments: u32,
    /// Refused: its segments are dropped until the next START.
    refused: bool,
}

/// One entity of the AX.25 connected-mode convergence layer.
///
/// It never owns the link. Tell it when the AX.25 link comes up
/// ([`link_up`](Self::link_up), DL-CONNECT) and goes down
/// ([`link_down`](Self::link_down), DL-DISCONNECT or a link failure); give
/// it the octets the link delivers ([`handle_input`](Self::handle_input),
/// DL-DATA indications, in order, cut anywhere); send on the link each
/// message [`poll_transmit`](Self::poll_transmit) returns (one DL-DATA
/// request each); act on [`poll_event`](Self::poll_event).
#[derive(Debug)]
pub struct Session {
    config: Config,
    state: State,
    peer_eid: Option<String>,
    input: Vec<u8>,
    /// Contact header and control messages, sent before data segments.
    control: VecDeque<Vec<u8>>,
    outgoing: VecDeque<Outgoing>,
    incoming: Option<Incoming>,
    events: VecDeque<Event>,
}

impl Session {
    /// An entity with no link yet.
    pub fn new(config: Config) -> Result<Session, ConfigError> {
        config.validate()?;
        Ok(Session {
            config,
            state: State::Down,
            peer_eid: None,
            input: Vec::new(),
            control: VecDeque::new(),
            outgoing: VecDeque::new(),
            incoming: None,
            events: VecDeque::new(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Where the session is.
    pub fn state(&self) -> State {
        self.state
    }

    /// The peer's endpoint ID, once its contact header arrived.
    pub fn peer_eid(&self) -> Option<&str> {
        self.peer_eid.as_deref()
    }

    /// The octets of the incoming bundle received so far, each segment
    /// checked by its CRC-32 (`None` between bundles and in a refused
    /// one): what an ACK_SEGMENT [`poll_transmit`](Self::poll_transmit)
    /// returns inside a bundle acknowledges, for a user that keeps them
    /// durably before sending it.
    pub fn incoming(&self) -> Option<&[u8]> {
        self.incoming
            .as_ref()
            .filter(|i| !i.refused)
            .map(|i| i.data.as_slice())
    }

    /// Octets of outgoing bundles not yet acknowledged, queued ones
    /// included.
    pub fn unacknowledged(&self) -> u64 {
        self.outgoing
            .iter()
            .map(|o| o.octets.len() as u64 - o.acked)
            .sum()
    }

    /// The AX.25 link came up: a new session starts with this entity's
    /// contact header (both entities send theirs at once, RFC 7242 4.1).
    /// A session still open on an earlier link is ended first.
    pub fn link_up(&mut self) {
        if self.state != State::Down {
            self.link_down();
        }
        self.state = State::Contact;
        let header = ContactHeader {
            flags: REQUEST_ACK | REACTIVE_FRAGMENTATION,
            keepalive_interval: 0,
            local_eid: self.config.local_eid.clone(),
        };
        self.control.push_back(header.encode());
    }

    /// The AX.25 link went down: bundles in flight are reported
    /// ([`Event::TransferInterrupted`], [`Event::PartialReceived`]) and the
    /// session ends with [`Cause::LinkDown`] (if it had not ended before).
    pub fn link_down(&mut self) {
        if matches!(self.state, State::Contact | State::Established) {
            self.end(Cause::LinkDown);
        }
        self.state = State::Down;
        self.control.clear();
        self.input.clear();
        self.peer_eid = None;
    }

    /// Queues `octets` (one encoded bundle) to send, tagged `id` for the
    /// events that report its outcome. Bundles go one after another, each
    /// in DATA_SEGMENTs of at most [`Config::segment_data`] octets.
    pub fn send_bundle(&mut self, id: u64, octets: Vec<u8>) -> Result<(), SendError> {
        if self.state != State::Established {
            return Err(SendError::NotEstablished);
        }
        if octets.is_empty() {
            return Err(SendError::Empty);
        }
        self.outgoing.push_back(Outgoing {
            id,
            octets,
            sent: 0,
            acked: 0,
        });
        Ok(())
    }

    /// Ends the session with SHUTDOWN (RFC 7242 5.6). Bundles not wholly
    /// acknowledged are reported as interrupted; once the SHUTDOWN is sent
    /// ([`poll_transmit`](Self::poll_transmit)), release the link.
    pub fn shutdown(&mut self) {
        if matches!(self.state, State::Contact | State::Established) {
            self.control.push_back(
                Message::Shutdown {
                    reason: None,
                    reconnection_delay: None,
                }
                .to_vec(),
            );
            self.end(Cause::LocalShutdown);
        }
    }

    /// The next message to send on the link, whole (one DL-DATA request):
    /// the contact header, acknowledgements and refusals first, then the
    /// next DATA_SEGMENT.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        if let Some(octets) = self.control.pop_front() {
            return Some(octets);
        }
        if self.state != State::Established {
            return None;
        }
        let limit = self.config.segment_data;
        let bundle = self.outgoing.iter_mut().find(|o| o.sent < o.octets.len())?;
        let end = bundle.octets.len().min(bundle.sent + limit);
        let flags = if bundle.sent == 0 { START } else { 0 }
            | if end == bundle.octets.len() { END } else { 0 };
        let message = Message::DataSegment {
            flags,
            data: bundle.octets[bundle.sent..end].to_vec(),
        };
        bundle.sent = end;
        Some(message.to_vec())
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Octets the link delivered, in order; any cut is fine. Input after
    /// the session ended, or with no link, is ignored.
    pub fn handle_input(&mut self, octets: &[u8]) {
        if !matches!(self.state, State::Contact | State::Established) {
            return;
        }
        let mut input = std::mem::take(&mut self.input);
        input.extend_from_slice(octets);
        let mut used = 0;
        while matches!(self.state, State::Contact | State::Established) {
            match self.decode_one(&input[used..]) {
                Ok(None) => break,
                Ok(Some(len)) => used += len,
                Err(cause) => {
                    self.end(cause);
                    break;
                }
            }
        }
        if self.state != State::Closed {
            input.drain(..used);
            self.input = input;
        }
    }

    /// Decodes and handles one item at the start of `buf`; `Ok(None)` when
    /// it is not all there yet.
    fn decode_one(&mut self, buf: &[u8]) -> Result<Option<usize>, Cause> {
        if buf.is_empty() {
            return Ok(None);
        }
        if self.state == State::Contact {
            return match ContactHeader::decode(buf, self.config.max_eid) {
                Ok(Decoded::Incomplete) => Ok(None),
                Ok(Decoded::Message { message, len }) => {
                    self.state = State::Established;
                    self.peer_eid = Some(message.local_eid.clone());
                    self.events.push_back(Event::Established {
                        peer_eid: message.local_eid,
                    });
                    Ok(Some(len))
                }
                Err(e) => Err(Cause::Malformed(e)),
            };
        }
        match Message::decode(buf, self.config.max_segment_in) {
            Ok(Decoded::Incomplete) => Ok(None),
            Ok(Decoded::Message { message, len }) => {
                self.handle_message(message)?;
                Ok(Some(len))
            }
            Err(e) => Err(Cause::Malformed(e)),
        }
    }

    fn handle_message(&mut self, message: Message) -> Result<(), Cause> {
        match message {
            Message::DataSegment { flags, data } => self.handle_segment(flags, data),
            Message::AckSegment {
                acknowledged_length,
            } => self.handle_ack(acknowledged_length),
            Message::RefuseBundle { reason } => {
                // RFC 7242 5.4: the refusal is of the bundle being sent.
                let bundle = self
                    .outgoing
                    .pop_front()
                    .filter(|o| o.sent > 0)
                    .ok_or(Cause::Protocol("REFUSE_BUNDLE with no bundle being sent"))?;
                self.events.push_back(Event::BundleRefused {
                    id: bundle.id,
                    reason,
                });
                Ok(())
            }
            Message::Keepalive => Ok(()),
            Message::Shutdown { reason, .. } => Err(Cause::PeerShutdown { reason }),
        }
    }

    /// A DATA_SEGMENT (RFC 7242 5.2), acknowledged after every
    /// `ack_window` segments and at the end of its bundle (Ronan et al.,
    /// section V.B).
    fn handle_segment(&mut self, flags: u8, data: Vec<u8>) -> Result<(), Cause> {
        let start = flags & START != 0;
        let end = flags & END != 0;
        let incoming = match (&mut self.incoming, start) {
            (Some(i), true) if !i.refused => {
                return Err(Cause::Protocol("DATA_SEGMENT with S inside a bundle"))
            }
            (Some(i), false) => i,
            (slot, true) => slot.insert(Incoming {
                data: Vec::new(),
                unacked_segments: 0,
                refused: false,
            }),
            (None, false) => return Err(Cause::Protocol("DATA_SEGMENT without S")),
        };
        if incoming.refused {
            if end {
                self.incoming = None;
            }
            return Ok(());
        }
        if incoming.data.len() as u64 + data.len() as u64 > self.config.max_bundle_in {
            incoming.refused = true;
            incoming.data = Vec::new();
            self.control.push_back(
                Message::RefuseBundle {
                    reason: RefuseReason::NoResources,
                }
                .to_vec(),
            );
            if end {
                self.incoming = None;
            }
            return Ok(());
        }
        incoming.data.extend_from_slice(&data);
        incoming.unacked_segments += 1;
        if end || incoming.unacked_segments >= self.config.ack_window {
            incoming.unacked_segments = 0;
            self.control.push_back(
                Message::AckSegment {
                    acknowledged_length: incoming.data.len() as u64,
                }
                .to_vec(),
            );
        }
        if end {
            if let Some(done) = self.incoming.take() {
                self.events
                    .push_back(Event::BundleReceived { data: done.data });
            }
        }
        Ok(())
    }

    /// An ACK_SEGMENT (RFC 7242 5.3): the cumulative length of the oldest
    /// bundle not wholly acknowledged.
    fn handle_ack(&mut self, length: u64) -> Result<(), Cause> {
        let bundle = self
            .outgoing
            .front_mut()
            .ok_or(Cause::Protocol("ACK_SEGMENT with no bundle outstanding"))?;
        if length < bundle.acked || length > bundle.sent as u64 {
            return Err(Cause::Protocol(
                "ACK_SEGMENT length below an earlier one or beyond the data sent",
            ));
        }
        bundle.acked = length;
        if length == bundle.octets.len() as u64 {
            let id = bundle.id;
            self.outgoing.pop_front();
            self.events.push_back(Event::BundleSent { id });
        }
        Ok(())
    }

    /// Ends the session: reports what was in flight, then the cause.
    fn end(&mut self, cause: Cause) {
        for bundle in self.outgoing.drain(..) {
            self.events.push_back(Event::TransferInterrupted {
                id: bundle.id,
                acknowledged: bundle.acked,
            });
        }
        if let Some(incoming) = self.incoming.take() {
            if !incoming.refused && !incoming.data.is_empty() {
                self.events.push_back(Event::PartialReceived {
                    data: incoming.data,
                });
            }
        }
        self.events.push_back(Event::SessionEnded { cause });
        self.state = State::Closed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two established sessions, `ack_window` 2, segments of 100 octets.
    fn pair() -> (Session, Session) {
        let config = |eid: &str| Config {
            ack_window: 2,
            segment_data: 100,
            ..Config::new(eid)
        };
        let mut a = Session::new(config("ipn:1.0")).unwrap();
        let mut b = Session::new(config("ipn:2.0")).unwrap();
        a.link_up();
        b.link_up();
        b.handle_input(&a.poll_transmit().unwrap());
        a.handle_input(&b.poll_transmit().unwrap());
        assert_eq!(
            (a.state(), b.state()),
            (State::Established, State::Established)
        );
        (a, b)
    }

    #[test]
    fn incoming_is_what_each_acknowledgement_covers() {
        let (mut a, mut b) = pair();
        let bundle: Vec<u8> = (0..450u32).map(|i| i as u8).collect();
        a.send_bundle(7, bundle.clone()).unwrap();
        let mut fed = 0;
        let mut acked = Vec::new();
        while let Some(segment) = a.poll_transmit() {
            b.handle_input(&segment);
            fed = (fed + 100).min(bundle.len());
            if fed < bundle.len() {
                assert_eq!(b.incoming(), Some(&bundle[..fed]));
            }
            while let Some(reply) = b.poll_transmit() {
                if let Ok(Decoded::Message {
                    message:
                        Message::AckSegment {
                            acknowledged_length,
                        },
                    ..
                }) = Message::decode(&reply, u64::MAX)
                {
                    let prefix = b.incoming().map_or(bundle.len(), <[u8]>::len);
                    assert_eq!(acknowledged_length, prefix as u64);
                    acked.push(acknowledged_length);
                }
            }
        }
        assert_eq!(acked, [200, 400, 450]);
        assert_eq!(b.incoming(), None, "between bundles");
    }
}
