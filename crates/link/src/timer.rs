//! The data link's timers in a fixed table (AX.25 v2.2 6.7.1, C4.3).

use linklab_core::{TimerKind, TimerTable};

/// The timers of a data link (AX.25 v2.2 6.7.1.1-6.7.1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Timer {
    /// T1, acknowledgement timer: outstanding I frame or P bit.
    T1,
    /// T2, response delay timer: delayed acknowledgement.
    T2,
    /// T3, inactive link timer: idle supervision.
    T3,
    /// TM201, the management retry timer: XID command outstanding
    /// (Appendix C5.3). Runs for T1V, like Dire Wolf's.
    Tm201,
}

impl TimerKind for Timer {
    const ALL: &'static [Timer] = &[Timer::T1, Timer::T2, Timer::T3, Timer::Tm201];

    fn index(self) -> usize {
        match self {
            Timer::T1 => 0,
            Timer::T2 => 1,
            Timer::T3 => 2,
            Timer::Tm201 => 3,
        }
    }
}

/// The data link's timer table.
pub(crate) type Timers = TimerTable<Timer, 4>;
