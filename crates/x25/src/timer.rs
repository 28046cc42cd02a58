//! The packet layer's time-limits in fixed tables (X.25 (10/96) Annex D,
//! Table D-1): T20 for the DTE's restart procedure, T21, T22 and T23 on
//! each logical channel.

use linklab_core::{TimerKind, TimerTable};

/// The DTE's own time-limit (Annex D, Table D-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LayerTimer {
    /// T20, restart request response (180 s): started by RESTART REQUEST
    /// (state r2), stopped by RESTART CONFIRMATION or INDICATION; on
    /// expiry RESTART REQUEST is repeated R20 times.
    T20,
}

impl TimerKind for LayerTimer {
    const ALL: &'static [LayerTimer] = &[LayerTimer::T20];

    fn index(self) -> usize {
        match self {
            LayerTimer::T20 => 0,
        }
    }
}

/// The time-limits of one logical channel (Annex D, Table D-1). The
/// channel's phase tells which one runs; at most one does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChannelTimer {
    /// T21, call request response (200 s): started by CALL REQUEST (state
    /// p2), stopped by CALL CONNECTED or CLEAR INDICATION; on expiry the
    /// call is cleared.
    T21,
    /// T22, reset request response (180 s): started by RESET REQUEST
    /// (state d2), stopped by RESET CONFIRMATION or INDICATION; on expiry
    /// RESET REQUEST is repeated R22 times, then the call is cleared.
    T22,
    /// T23, clear request response (180 s): started by CLEAR REQUEST
    /// (state p6), stopped by CLEAR CONFIRMATION or INDICATION; on expiry
    /// CLEAR REQUEST is repeated R23 times, then the channel is freed.
    T23,
}

impl TimerKind for ChannelTimer {
    const ALL: &'static [ChannelTimer] = &[ChannelTimer::T21, ChannelTimer::T22, ChannelTimer::T23];

    fn index(self) -> usize {
        match self {
            ChannelTimer::T21 => 0,
            ChannelTimer::T22 => 1,
            ChannelTimer::T23 => 2,
        }
    }
}

/// The DTE's timer table.
pub(crate) type LayerTimers = TimerTable<LayerTimer, 1>;

/// A logical channel's timer table.
pub(crate) type ChannelTimers = TimerTable<ChannelTimer, 3>;
