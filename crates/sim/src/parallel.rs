//! The one way linklab spreads independent work over threads: replications
//! of a model, points of a sweep, sections of a reproduction.
//!
//! Work items are handed out one at a time to at most `threads` scoped
//! threads and the results come back in item order, so what a caller
//! builds from them does not depend on the thread count. A panic in one
//! item is raised again in the caller.

use std::cell::Cell;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

thread_local! {
    /// CPU time the threads [`map_ordered`] started for this thread have
    /// used, theirs and their own workers', so far.
    static WORKERS_CPU: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// The calling thread's CPU time so far (`CLOCK_THREAD_CPUTIME_ID`); zero
/// where the system cannot tell.
fn thread_cpu() -> Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(Duration::from)
        .unwrap_or_default()
}

/// Runs `f` and returns what it returned with the CPU time it used: on
/// this thread, plus on the threads [`map_ordered`] started for it, at any
/// depth. Several of these may run at once on different threads, each
/// counting its own work only.
pub fn cpu_time_of<R>(f: impl FnOnce() -> R) -> (R, Duration) {
    let own = thread_cpu();
    let workers = WORKERS_CPU.get();
    let result = f();
    let used = thread_cpu().saturating_sub(own) + WORKERS_CPU.get().saturating_sub(workers);
    (result, used)
}

/// The number of threads to use when the user did not say: every core the
/// process may run on (one if that cannot be told).
pub fn available_threads() -> NonZeroUsize {
    std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
}

/// `f(i, &items[i])` for every item, on up to `threads` threads, in item
/// order.
pub fn map_ordered<T, R, F>(threads: NonZeroUsize, items: &[T], f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(usize, &T) -> R + Sync,
{
    let threads = threads.get().min(items.len()).max(1);
    if threads == 1 {
        return items.iter().enumerate().map(|(i, t)| f(i, t)).collect();
    }
    let next = AtomicUsize::new(0);
    let mut spent = Duration::ZERO;
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    cpu_time_of(|| {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(item) = items.get(i) else {
                                break mine;
                            };
                            mine.push((i, f(i, item)));
                        }
                    })
                })
            })
            .collect();
        let mut done = Vec::new();
        for worker in workers {
            match worker.join() {
                Ok((mine, cpu)) => {
                    spent += cpu;
                    done.extend(mine);
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        done
    });
    WORKERS_CPU.set(WORKERS_CPU.get() + spent);
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// As [`map_ordered`] for fallible work: every item runs, and the error of
/// the first failing item in item order (not in time order) is returned,
/// so the outcome does not depend on the thread count either.
///
/// # Errors
/// The first item's error, in item order.
pub fn try_map_ordered<T, R, E, F>(threads: NonZeroUsize, items: &[T], f: F) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
    F: Fn(usize, &T) -> Result<R, E> + Sync,
{
    map_ordered(threads, items, f).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn threads(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    #[test]
    fn results_come_back_in_item_order_on_any_thread_count() {
        let items: Vec<u64> = (0..50).collect();
        let sequential: Vec<u64> = items.iter().map(|x| x * x).collect();
        for n in [1, 2, 3, 64] {
            assert_eq!(map_ordered(threads(n), &items, |_, x| x * x), sequential);
        }
        assert!(map_ordered(threads(2), &[] as &[u8], |_, x| *x).is_empty());
    }

    /// Busy work until this thread has used `millis` of CPU time.
    fn spin(millis: u64) -> u64 {
        let end = thread_cpu() + Duration::from_millis(millis);
        let mut x = 0u64;
        while thread_cpu() < end {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        x
    }

    #[test]
    fn cpu_time_counts_the_workers_too() {
        // Four items on two threads, each spinning two 30 ms pieces on two
        // threads of its own: about 240 ms of CPU whatever the wall time,
        // counted through both levels of the pool.
        let ((), cpu) = cpu_time_of(|| {
            map_ordered(threads(2), &[30u64, 30, 30, 30], |_, &ms| {
                map_ordered(threads(2), &[ms, ms], |_, &m| spin(m));
            });
        });
        assert!(cpu >= Duration::from_millis(200), "{cpu:?}");
        assert!(cpu < Duration::from_secs(5), "{cpu:?}");
    }

    #[test]
    fn the_first_error_in_item_order_wins() {
        let items: Vec<u32> = (0..40).collect();
        for n in [1, 2, 5] {
            let out = try_map_ordered(
                threads(n),
                &items,
                |i, &x| {
                    if x % 7 == 3 {
                        Err(i)
                    } else {
                        Ok(x)
                    }
                },
            );
            assert_eq!(out, Err(3));
        }
        assert_eq!(
            try_map_ordered::<_, _, (), _>(threads(2), &items[..3], |_, &x| Ok(x)),
            Ok(vec![0, 1, 2])
        );
    }
}
