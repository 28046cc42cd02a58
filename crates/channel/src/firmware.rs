//! The processor of a firmware TNC: the controller runs AX.25 itself
//! (TNC2 with TAPR/MFJ or TF firmware, Spirit-2, KPC-9612+, TNC3, TNC7,
//! DLC7; Zieliński 2013, sections 2.2 and 3), so every frame it builds or
//! receives and every character it moves to or from the host costs
//! processor time. How many I frames are ready when the TNC wins the
//! channel (the "real window size", section 3.1) and how long it takes to
//! answer a frame (its turnaround) follow from these costs, the clock and
//! the buffer, rather than being set.
//!
//! Model: one processor serving jobs first come, first served, at
//! `clock_hz` cycles per second. A job's cost is counted in the
//! firmware's own processor cycles ([`FirmwareCosts`]), so the same
//! firmware on a faster clock (TNC2 at 2.4576 MHz, TNC2D at 4.9152 MHz,
//! Table 1) takes proportionally less time. Interrupt handling of the
//! serial port and the HDLC controller is folded into the per-octet costs:
//! the processor does that work once per octet whichever moment it falls
//! in, and what matters for the timing is the total per frame.

use core::time::Duration;
use std::collections::VecDeque;

use linklab_core::Instant;

/// What a firmware spends on its work, in processor cycles, and how much
/// data it can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirmwareCosts {
    /// Fixed cost of handling one frame, sent or received: buffer
    /// allocation, protocol state machine, queueing, HDLC controller
    /// set-up.
    pub frame_cycles: u64,
    /// Cost per octet of a frame built for, or taken from, the HDLC
    /// controller (copy, header and field handling, the controller's
    /// per-octet interrupt).
    pub radio_octet_cycles: u64,
    /// Cost per character moved between the host serial port and the
    /// frame buffers (serial interrupt, command/transparent-mode parsing,
    /// packetising).
    pub serial_octet_cycles: u64,
    /// Capacity of the transmit data buffer in octets: data the host has
    /// written and the peer has not yet acknowledged (AX.25 must keep
    /// every unacknowledged I frame for retransmission). The host is
    /// flow-controlled when it is full.
    pub buffer_octets: usize,
}

/// Which queue a job joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// Work on frames from and to the HDLC controller, done at interrupt
    /// level before any waiting main-loop task.
    Frame,
    /// Main-loop work (packetising host data), done when no frame work
    /// waits.
    Task,
}

/// A processor of `clock_hz` serving jobs of type `J`: frame work first,
/// then main-loop tasks, each in arrival order, a started job running to
/// its end.
#[derive(Debug, Clone)]
pub struct Cpu<J> {
    clock_hz: u64,
    urgent: VecDeque<(J, u64)>,
    waiting: VecDeque<(J, u64)>,
    current: Option<(J, Instant)>,
    done: VecDeque<J>,
    busy: Duration,
}

impl<J> Cpu<J> {
    /// An idle processor clocked at `clock_hz` (a zero clock is taken as
    /// 1 Hz).
    pub fn new(clock_hz: u64) -> Self {
        Cpu {
            clock_hz: clock_hz.max(1),
            urgent: VecDeque::new(),
            waiting: VecDeque::new(),
            current: None,
            done: VecDeque::new(),
            busy: Duration::ZERO,
        }
    }

    /// Time to execute `cycles` cycles.
    pub fn duration(&self, cycles: u64) -> Duration {
        let nanos = u128::from(cycles) * 1_000_000_000 / u128::from(self.clock_hz);
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// Queues a job costing `cycles`.
    pub fn submit(&mut self, now: Instant, job: J, cycles: u64, priority: Priority) {
        match priority {
            Priority::Frame => self.urgent.push_back((job, cycles)),
            Priority::Task => self.waiting.push_back((job, cycles)),
        }
        self.start(now);
    }

    /// Jobs queued or running.
    pub fn pending(&self) -> usize {
        self.urgent.len() + self.waiting.len() + usize::from(self.current.is_some())
    }

    /// Total time spent executing jobs that have finished or started.
    pub fn busy_time(&self) -> Duration {
        self.busy
    }

    /// When the running job finishes.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.current.as_ref().map(|(_, end)| *end)
    }

    /// Advances to `now`: finished jobs become available from
    /// [`poll_done`](Self::poll_done), in completion order.
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some(end) = self.poll_timeout().filter(|&end| end <= now) {
            if let Some((job, _)) = self.current.take() {
                self.done.push_back(job);
            }
            self.start(end);
        }
    }

    /// The next finished job.
    pub fn poll_done(&mut self) -> Option<J> {
        self.done.pop_front()
    }

    fn start(&mut self, now: Instant) {
        if self.current.is_some() {
            return;
        }
        if let Some((job, cycles)) = self.urgent.pop_front().or_else(|| self.waiting.pop_front()) {
            let d = self.duration(cycles);
            self.busy += d;
            self.current = Some((job, now + d));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_one_after_another_at_the_clock_rate() {
        let mut cpu = Cpu::new(2_000_000);
        cpu.submit(Instant::ZERO, 'a', 2_000, Priority::Task);
        cpu.submit(Instant::ZERO, 'b', 4_000, Priority::Task);
        assert_eq!(cpu.poll_timeout(), Some(Instant::from_micros(1_000)));
        cpu.handle_timeout(Instant::from_micros(2_999));
        assert_eq!(cpu.poll_done(), Some('a'));
        assert_eq!(cpu.poll_done(), None);
        cpu.handle_timeout(Instant::from_micros(3_000));
        assert_eq!(cpu.poll_done(), Some('b'));
        assert_eq!(cpu.pending(), 0);
        assert_eq!(cpu.busy_time(), Duration::from_micros(3_000));
    }

    #[test]
    fn frame_work_overtakes_waiting_tasks_but_not_the_running_one() {
        let mut cpu = Cpu::new(1_000_000);
        cpu.submit(Instant::ZERO, 'a', 1_000, Priority::Task);
        cpu.submit(Instant::ZERO, 'b', 1_000, Priority::Task);
        cpu.submit(Instant::ZERO, 'f', 1_000, Priority::Frame);
        cpu.handle_timeout(Instant::from_micros(3_000));
        let order: Vec<char> = core::iter::from_fn(|| cpu.poll_done()).collect();
        assert_eq!(order, ['a', 'f', 'b']);
    }

    #[test]
    fn doubling_the_clock_halves_the_time() {
        let slow: Cpu<()> = Cpu::new(2_457_600);
        let fast: Cpu<()> = Cpu::new(4_915_200);
        assert_eq!(slow.duration(1_000_000), fast.duration(2_000_000));
    }
}
