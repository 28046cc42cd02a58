//! The one way linklab spreads independent work over threads: replications
//! of a model, points of a sweep, sections of a reproduction.
//!
//! Work items are handed out one at a time to at most `threads` scoped
//! threads and the results come back in item order, so what a caller
//! builds from them does not depend on the thread count. A panic in one
//! item is raised again in the caller.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
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
            .collect();
        workers
            .into_iter()
            .flat_map(|w| match w.join() {
                Ok(mine) => mine,
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
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
