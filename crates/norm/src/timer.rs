//! The NORM engines' timers in fixed tables (RFC 5740 section 5): the
//! sender's repair aggregation, and each remote sender's timers at a
//! receiver.

use linklab_core::{TimerKind, TimerTable};

/// The sender's timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SenderTimer {
    /// NORM_REPAIR, the repair aggregation (hold-off) timer: NACKs are
    /// gathered for (K + 1)·GRTT on a multicast session before the
    /// repairs they ask for are scheduled (RFC 5740 section 5.4.2);
    /// zero on unicast, as libnorm.
    Repair,
}

impl TimerKind for SenderTimer {
    const ALL: &'static [SenderTimer] = &[SenderTimer::Repair];

    fn index(self) -> usize {
        match self {
            SenderTimer::Repair => 0,
        }
    }
}

/// The timers a receiver keeps for each remote sender. When several are
/// due at once they fire in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RemoteTimer {
    /// The sender activity (inactivity) timer: runs while objects are
    /// pending and the robust factor's checks are not used up; if the
    /// sender stays silent for 2·robust factor·GRTT (at least a second,
    /// as libnorm), the receiver NACKs again for what it lacks (RFC 5740
    /// section 5.3).
    Activity,
    /// The NACK backoff timer: a random wait over [0, K·GRTT] before a
    /// NACK is sent, cancelled if another receiver's NACK asks for the
    /// same (RFC 5740 section 5.3).
    NackBackoff,
    /// The congestion control feedback timer: the wait before answering
    /// a NORM_CMD(CC) with an ACK carrying NORM-CC feedback, none for the
    /// CLR or a listed node, a random backoff for the others (RFC 5740
    /// section 5.5.2).
    CcFeedback,
}

impl TimerKind for RemoteTimer {
    const ALL: &'static [RemoteTimer] = &[
        RemoteTimer::Activity,
        RemoteTimer::NackBackoff,
        RemoteTimer::CcFeedback,
    ];

    fn index(self) -> usize {
        match self {
            RemoteTimer::Activity => 0,
            RemoteTimer::NackBackoff => 1,
            RemoteTimer::CcFeedback => 2,
        }
    }
}

/// The sender's timer table.
pub(crate) type SenderTimers = TimerTable<SenderTimer, 1>;

/// A remote sender's timer table at a receiver.
pub(crate) type RemoteTimers = TimerTable<RemoteTimer, 3>;
