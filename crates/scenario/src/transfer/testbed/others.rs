//! What else is on the channel besides the two ends: the digipeater
//! between them, other stations' traffic ([`Background`]), and the two
//! ends going out of each other's range for a while ([`LinkDrop`]).
//!
//! [`Background`]: crate::transfer::Background
//! [`LinkDrop`]: crate::transfer::LinkDrop

use core::time::Duration;

use linklab_channel::{Medium, StationId};
use linklab_core::Instant;
use linklab_link::State;
use linklab_wire::ax25::{Address, Frame};

use super::{Testbed, Wake, DIGIPEATER};
use crate::transfer::{RECEIVER, SENDER};

/// Where a run is with its [`LinkDrop`](crate::transfer::LinkDrop).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DropState {
    /// The stations are in range; the drop comes after this many more of
    /// the sender's frames.
    Before { frames_left: u64 },
    /// Out of range, waiting for the sender's link to fail.
    Out,
    /// The sender's link failed; the stations are back in range at the
    /// wake-up [`Wake::BackInRange`].
    Failed,
    /// Back in range: the drop is over.
    Over,
}

/// The digipeater's address.
pub(super) fn digipeater_address() -> Address {
    "N0DIGI".parse().expect("a valid callsign")
}

/// The address of background station `i`: N0BG-i.
fn background_address(i: usize) -> Address {
    Address::new(
        "N0BG".parse().expect("a valid callsign"),
        u8::try_from(i % 16).unwrap_or(0),
    )
    .expect("an SSID below 16")
}

impl Testbed<'_> {
    /// A link drop under way: once the sender's link has failed, the
    /// stations come back in range after
    /// [`LinkDrop::back_after`](crate::transfer::LinkDrop::back_after).
    pub(super) fn follow_link_drop(&mut self, now: Instant) {
        let Some((drop, state)) = self.link_drop.as_mut() else {
            return;
        };
        if *state == DropState::Out && self.links[SENDER].state() == State::Disconnected {
            *state = DropState::Failed;
            if self
                .queue
                .schedule(now + drop.back_after, Wake::BackInRange)
                .is_err()
            {
                let stalled = self.stalled("link drop");
                self.refused.get_or_insert(stalled);
            }
        }
    }

    /// The two ends hear each other (`true`) or not; through a
    /// digipeater, each end and the digipeater.
    pub(super) fn set_in_range(&mut self, in_range: bool) {
        let far = match self.digipeater {
            Some(_) => DIGIPEATER,
            None => RECEIVER,
        };
        for (a, b) in [
            (SENDER, far),
            (far, SENDER),
            (RECEIVER, far),
            (far, RECEIVER),
        ] {
            if a != b {
                self.radio.set_hears(StationId(a), StationId(b), in_range);
            }
        }
    }

    /// One more of the sender's frames on the air: the drop starts when
    /// its count is reached.
    pub(super) fn count_towards_drop(&mut self) {
        let Some((_, state)) = self.link_drop.as_mut() else {
            return;
        };
        if let DropState::Before { frames_left } = state {
            if *frames_left <= 1 {
                *state = DropState::Out;
                self.set_in_range(false);
            } else {
                *frames_left -= 1;
            }
        }
    }

    /// The end of a link drop at `now`: the stations are in range again,
    /// and the sender sets its link up anew.
    pub(super) fn back_in_range(&mut self, now: Instant) {
        self.set_in_range(true);
        if let Some((_, state)) = self.link_drop.as_mut() {
            *state = DropState::Over;
        }
        // AX.25: combined, always honoured.
        let _ = self.links[SENDER].connect(now);
    }

    /// The digipeater got `frame` intact: it sends it again if its path
    /// names the digipeater next.
    pub(super) fn repeat(&mut self, now: Instant, frame: &[u8]) {
        if let Some(again) = self
            .digipeater
            .and_then(|call| linklab_wire::ax25::digipeat(frame, &call))
        {
            self.radio.transmit(now, StationId(DIGIPEATER), again);
            self.measurement.repeated();
        }
    }

    /// Schedules background station `i`'s next frame: exponential gaps
    /// with the mean that gives each station its share of the load.
    pub(super) fn schedule_background(&mut self, now: Instant, i: usize) {
        let Some((b, arrivals)) = self.background.as_mut() else {
            return;
        };
        let bits = linklab_channel::airtime::hdlc_bits(&vec![0x55; b.frame_octets + 16]);
        let air = bits as f64 / f64::from(self.radio.config().bit_rate.max(1));
        let mean_gap = air * f64::from(b.stations) / b.load.clamp(1e-6, 1.0);
        let gap = arrivals[i].exponential(mean_gap);
        let _ = self
            .queue
            .schedule(now + Duration::from_secs_f64(gap), Wake::Background(i));
    }

    /// Background station `i` sends its frame, a UI frame to QST, at
    /// `now`, and draws the time of its next.
    pub(super) fn send_background(&mut self, now: Instant, i: usize) {
        if let Some((b, _)) = &self.background {
            let first = RECEIVER + 1 + usize::from(self.digipeater.is_some());
            let from = background_address(i);
            if let Ok(frame) = Frame::ui(
                "QST".parse().expect("a valid callsign"),
                from,
                &[],
                linklab_wire::ax25::Pid::NoLayer3,
                vec![0x55; b.frame_octets],
            ) {
                self.radio
                    .transmit(now, StationId(first + i), frame.encode());
            }
        }
        self.schedule_background(now, i);
    }
}
