//! What a link has done since it was made: the counters a station's
//! status page and metrics show (frames and octets each way, the frames
//! sent again, the REJ and SREJ of recovery, T1 expiries). They only
//! count; nothing in the procedures reads them.

use linklab_wire::control::{Control, Supervisory};

use crate::framing::Pdu;

/// A link's counters, from its creation on (a reconnection keeps them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct Stats {
    /// I frames sent, those sent again included.
    pub i_frames_sent: u64,
    /// Information octets of the I frames sent (again included).
    pub i_octets_sent: u64,
    /// I frames sent again: after REJ, SREJ, or a T1 recovery's
    /// backtrack (AX.25 v2.2 6.4.6, 6.4.7, 6.4.11).
    pub i_frames_resent: u64,
    /// I frames received, duplicates and out-of-sequence ones included.
    pub i_frames_received: u64,
    /// Information octets of the I frames received.
    pub i_octets_received: u64,
    /// REJ frames sent (6.4.6).
    pub rej_sent: u64,
    /// REJ frames received.
    pub rej_received: u64,
    /// SREJ frames sent (6.4.7).
    pub srej_sent: u64,
    /// SREJ frames received.
    pub srej_received: u64,
    /// Expiries of T1, the acknowledgement timer (6.7.1.1).
    pub t1_expiries: u64,
    /// Changes of state (C4.3: disconnected, awaiting connection,
    /// awaiting release, connected, timer recovery).
    pub state_changes: u64,
    /// Late frames dropped: I and S frames of a modulo-128 link whose
    /// N(R) was behind V(A), overtaken on a path that reorders (AXUDP).
    pub late_frames: u64,
}

impl Stats {
    /// Adds `other`'s counts to these (a port's total of its links).
    pub fn add(&mut self, other: &Stats) {
        self.i_frames_sent += other.i_frames_sent;
        self.i_octets_sent += other.i_octets_sent;
        self.i_frames_resent += other.i_frames_resent;
        self.i_frames_received += other.i_frames_received;
        self.i_octets_received += other.i_octets_received;
        self.rej_sent += other.rej_sent;
        self.rej_received += other.rej_received;
        self.srej_sent += other.srej_sent;
        self.srej_received += other.srej_received;
        self.t1_expiries += other.t1_expiries;
        self.state_changes += other.state_changes;
        self.late_frames += other.late_frames;
    }

    /// Counts a frame handed to the framing for the air.
    pub(super) fn sent(&mut self, pdu: &Pdu) {
        match pdu.control {
            Control::I { .. } => {
                self.i_frames_sent += 1;
                self.i_octets_sent += pdu.info.len() as u64;
            }
            Control::S {
                kind: Supervisory::Rej,
                ..
            } => self.rej_sent += 1,
            Control::S {
                kind: Supervisory::Srej,
                ..
            } => self.srej_sent += 1,
            _ => {}
        }
    }

    /// Counts a frame received for this link.
    pub(super) fn received(&mut self, pdu: &Pdu) {
        match pdu.control {
            Control::I { .. } => {
                self.i_frames_received += 1;
                self.i_octets_received += pdu.info.len() as u64;
            }
            Control::S {
                kind: Supervisory::Rej,
                ..
            } => self.rej_received += 1,
            Control::S {
                kind: Supervisory::Srej,
                ..
            } => self.srej_received += 1,
            _ => {}
        }
    }
}
