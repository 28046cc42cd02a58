//! One station's host and KISS TNC ([`HostAndTnc`]): the delay lines of
//! the host, the TNC's serial link and processor, and the carrier hold
//! before the TNC keys up (Ronan, Long and Walsh, section IV).

use core::time::Duration;
use std::collections::VecDeque;

use linklab_channel::{Medium, RadioChannel, StationId, Tnc};
use linklab_core::{earliest, Engine, Instant};

use super::config::KissPath;
/// A received frame on its way to an engine, tagged with the number of
/// the transmission that carried it.
pub type Tagged = (Vec<u8>, u64);

/// One station's host and TNC (see [`KissPath`]): what lies between the
/// software that emits and consumes frames (an AX.25 engine in the
/// transfer's testbed, an IP host over AX.25 in [`crate::ronan::tcpip`])
/// and the radio. Frames are
/// tagged with a number the caller chooses (the transmission that carried
/// a received frame, in [`super::run_transfer`]).
pub struct HostAndTnc {
    tnc: Tnc,
    latency: Duration,
    /// Frames the engine emitted, leaving the host at the given time.
    outgoing: VecDeque<(Instant, Vec<u8>)>,
    /// Transmission tags of frames inside the TNC's receive path (its
    /// receive path is first in, first out).
    in_tnc: VecDeque<u64>,
    /// Frames out of the TNC, reaching the engine at the given time.
    incoming: VecDeque<(Instant, Tagged)>,
    /// See [`KissPath::carrier_hold`].
    carrier_hold: Duration,
    /// The other station is keyed.
    other_keyed: bool,
    /// End of the hold after the other station's last transmission.
    clear_at: Instant,
    /// Frames out of the TNC's processor waiting for the hold to end.
    held: VecDeque<Vec<u8>>,
}

impl HostAndTnc {
    /// A host and TNC set up as `path` says, idle.
    pub fn new(path: &KissPath) -> HostAndTnc {
        HostAndTnc {
            tnc: Tnc::new(path.tnc),
            latency: path.host.latency,
            outgoing: VecDeque::new(),
            in_tnc: VecDeque::new(),
            incoming: VecDeque::new(),
            carrier_hold: path.carrier_hold,
            other_keyed: false,
            clear_at: Instant::ZERO,
            held: VecDeque::new(),
        }
    }

    /// The host's stack emitted `frame` at `now`: it reaches the serial
    /// port after the host latency.
    pub fn send(&mut self, now: Instant, frame: Vec<u8>) {
        self.outgoing.push_back((now + self.latency, frame));
    }

    /// The radio delivered `frame` (tagged `tag`) to this station's TNC.
    pub fn receive(&mut self, now: Instant, frame: Vec<u8>, tag: u64) {
        self.in_tnc.push_back(tag);
        self.tnc.handle_radio_frame(now, frame);
    }

    /// A received frame that has crossed the TNC and the host by `now`.
    pub fn poll_delivery(&mut self, now: Instant) -> Option<Tagged> {
        pop_due(&mut self.incoming, now)
    }

    /// Moves frames due at `now` along the path: host to TNC, TNC to the
    /// radio (as `id`, once the carrier hold allows), TNC to host; `true`
    /// when anything moved.
    pub fn shuttle(&mut self, now: Instant, id: StationId, radio: &mut RadioChannel) -> bool {
        let mut busy = false;
        while let Some(frame) = pop_due(&mut self.outgoing, now) {
            self.tnc.host_send(now, frame);
            busy = true;
        }
        self.tnc.handle_timeout(now);
        while let Some(frame) = self.tnc.poll_transmit(now) {
            self.held.push_back(frame);
            busy = true;
        }
        if self.may_transmit(now) {
            while let Some(frame) = self.held.pop_front() {
                radio.transmit(now, id, frame);
            }
        }
        while let Some(frame) = self.tnc.poll_host_delivery() {
            let tag = self.in_tnc.pop_front().unwrap_or_default();
            self.incoming.push_back((now + self.latency, (frame, tag)));
            busy = true;
        }
        busy
    }

    /// The other station keyed up.
    pub fn other_keyed(&mut self) {
        self.other_keyed = true;
    }

    /// The other station's transmission ended at `at`: the carrier hold
    /// runs from there.
    pub fn other_unkeyed(&mut self, at: Instant) {
        self.other_keyed = false;
        self.clear_at = at + self.carrier_hold;
    }

    /// A transmission this station does not hear ended (the stations went
    /// out of range while it was on): no carrier is left to hold for.
    pub fn other_out_of_range(&mut self) {
        self.other_keyed = false;
    }

    /// This station's radio sent a frame of `octets` (the TNC frees its
    /// buffer).
    pub fn frame_sent(&mut self, now: Instant, octets: usize) {
        self.tnc.handle_frame_sent(now, octets);
    }

    /// When the TNC's processor or the host's delay lines next need
    /// attention.
    pub fn next_wake(&self) -> Option<Instant> {
        earliest([self.tnc.poll_timeout(), self.poll_timeout()])
    }

    /// When the TNC's processor next needs attention.
    pub(super) fn tnc_timeout(&self) -> Option<Instant> {
        self.tnc.poll_timeout()
    }

    /// The TNC's processor's wake-up at `now`.
    pub(super) fn handle_tnc_timeout(&mut self, now: Instant) {
        self.tnc.handle_timeout(now);
    }

    /// When the host's delay lines or the end of the carrier hold next
    /// need attention.
    pub(super) fn poll_timeout(&self) -> Option<Instant> {
        let next_out = self.outgoing.front().map(|(t, _)| *t);
        let next_in = self.incoming.front().map(|(t, _)| *t);
        let release = (!self.held.is_empty() && !self.other_keyed).then_some(self.clear_at);
        next_out.into_iter().chain(next_in).chain(release).min()
    }

    /// The held frames may go to the radio at `now`.
    fn may_transmit(&self, now: Instant) -> bool {
        !self.other_keyed && now >= self.clear_at
    }
}

/// The first entry of a delay line if it is due at `now`.
fn pop_due<T>(line: &mut VecDeque<(Instant, T)>, now: Instant) -> Option<T> {
    if line.front().is_some_and(|(t, _)| *t <= now) {
        line.pop_front().map(|(_, x)| x)
    } else {
        None
    }
}
