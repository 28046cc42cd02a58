//! When each end's T1 is held (with
//! [`StackConfig::t1_held_until_sent`], and on the radio directly while
//! the channel is busy) and when a pending acknowledgement seizes the
//! channel ([`StackConfig::ack_at_seize`]).
//!
//! [`StackConfig::t1_held_until_sent`]: crate::transfer::StackConfig::t1_held_until_sent
//! [`StackConfig::ack_at_seize`]: crate::transfer::StackConfig::ack_at_seize

use linklab_core::Instant;

use super::Testbed;
use crate::transfer::RECEIVER;

impl Testbed<'_> {
    /// With the stack's `ack_at_seize`, end `i`'s pending
    /// acknowledgement asks for the channel, clear at `now` (LM-SEIZE
    /// request): the RR is emitted now and waits for the channel's CSMA
    /// like any frame. (The transmitter hint sends a pending
    /// acknowledgement at once and does nothing otherwise.)
    pub(super) fn seize_for_acknowledgement(&mut self, now: Instant, i: usize) {
        if self.ack_at_seize {
            self.links[i].transmitter_keyed(now);
        }
    }

    /// End `i` handed a frame to its host and TNC, or to its modem, at
    /// `now`: with the stack's `t1_held_until_sent`, its T1 is held until
    /// the frame has left the air.
    pub(super) fn handed_over(&mut self, now: Instant, i: usize) {
        if self.t1_held_until_sent {
            self.unsent[i] += 1;
            self.hold_t1(now, i);
        }
    }

    /// A frame of end `i` left the air at `at`: once all it handed over
    /// have (and, on the radio directly, the channel is clear), its T1
    /// runs again.
    pub(super) fn left_the_air(&mut self, at: Instant, i: usize) {
        if self.t1_held_until_sent && i <= RECEIVER && self.unsent[i] > 0 {
            self.unsent[i] -= 1;
            self.hold_t1(at, i);
        }
    }

    /// Holds end `i`'s T1 while it has frames not yet sent or, on the
    /// radio directly, while the channel is busy; lets it run otherwise.
    pub(super) fn hold_t1(&mut self, at: Instant, i: usize) {
        let hold = self.unsent[i] > 0 || self.channel_busy[i];
        if hold != self.held[i] {
            self.held[i] = hold;
            self.links[i].set_channel_busy(at, hold);
        }
    }
}
