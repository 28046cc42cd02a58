//! What runs above the two engines of a transfer ([`Application`]), and
//! the plainest such software, the message cut into information fields
//! ([`RawMessage`]).

use std::collections::VecDeque;

use linklab_core::Instant;
use linklab_link::{DataLink, Event};

use super::{TransferError, RECEIVER, SENDER};

/// The software above the two engines: it offers the message, consumes
/// what the engines deliver, may answer with data of its own, and says
/// when the sender knows the message is through.
pub(crate) trait Application {
    /// The message is offered to the sender at `now`.
    fn offer(&mut self, now: Instant) -> Result<(), TransferError>;
    /// Engine `station` raised `event` at `now`.
    fn handle_event(&mut self, now: Instant, station: usize, event: Event);
    /// The next data unit (one DL-DATA request) station `station` sends.
    fn poll_send(&mut self, now: Instant, station: usize) -> Option<Vec<u8>>;
    /// Whether the set-up above the connected link is done.
    fn ready(&self) -> bool;
    /// Whether the sender knows the message has arrived (`sender` is its
    /// engine).
    fn complete(&self, sender: &DataLink) -> bool;
    /// Whether the receiver got the message intact.
    fn verify(&self) -> Result<(), TransferError>;
}

/// The message cut into information fields of N1 octets and given to the
/// sender's engine; the receiver says nothing of its own. The sender
/// knows it is through when its engine has every I frame acknowledged.
pub(super) struct RawMessage {
    message: Vec<u8>,
    n1: usize,
    to_send: VecDeque<Vec<u8>>,
    received: Vec<u8>,
    /// The first link failure or reset the sender reported.
    failure: Option<String>,
}

impl RawMessage {
    pub(super) fn new(message: Vec<u8>, n1: usize) -> RawMessage {
        RawMessage {
            message,
            n1: n1.max(1),
            to_send: VecDeque::new(),
            received: Vec::new(),
            failure: None,
        }
    }
}

impl Application for RawMessage {
    fn offer(&mut self, _now: Instant) -> Result<(), TransferError> {
        self.to_send = self.message.chunks(self.n1).map(<[u8]>::to_vec).collect();
        Ok(())
    }

    fn handle_event(&mut self, _now: Instant, station: usize, event: Event) {
        match (station, event) {
            (RECEIVER, Event::Data { data, .. }) => self.received.extend_from_slice(&data),
            (SENDER, Event::LinkFailure { reason, .. }) => {
                self.failure.get_or_insert(format!("{reason:?}"));
            }
            (SENDER, Event::Disconnected { reason, .. }) => {
                self.failure.get_or_insert(format!("{reason:?}"));
            }
            _ => {}
        }
    }

    fn poll_send(&mut self, _now: Instant, station: usize) -> Option<Vec<u8>> {
        match station {
            SENDER => self.to_send.pop_front(),
            _ => None,
        }
    }

    fn ready(&self) -> bool {
        true
    }

    fn complete(&self, sender: &DataLink) -> bool {
        self.to_send.is_empty() && sender.unacked() == 0 && sender.queued() == 0
    }

    fn verify(&self) -> Result<(), TransferError> {
        if self.received == self.message {
            Ok(())
        } else if let Some(reason) = &self.failure {
            Err(TransferError::LinkFailed {
                reason: format!(
                    "{reason}, {} of {} octets delivered",
                    self.received.len(),
                    self.message.len()
                ),
            })
        } else {
            Err(TransferError::Corrupted {
                got: self.received.len(),
                sent: self.message.len(),
            })
        }
    }
}
