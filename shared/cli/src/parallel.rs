//! Work split over the machine's cores in order: `map` gives the same result as a sequential
//! map, in the same order, whatever the number of threads.

use std::num::NonZeroUsize;
use std::thread;

/// Below this many items, one thread does the work (threads cost more than they save).
const SMALL: usize = 64;
/// Never more threads than this.
const MAX_THREADS: usize = 8;

/// How many threads to use for `len` items (1: do it inline).
fn threads(len: usize) -> usize {
    if len < SMALL {
        return 1;
    }
    thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(MAX_THREADS)
}

/// `items.iter().map(f).collect()`, in chunks on scoped threads.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads(items.len());
    if threads < 2 {
        return items.iter().map(f).collect();
    }
    let f = &f;
    run(items
        .chunks(items.len().div_ceil(threads))
        .map(|c| move || c.iter().map(f).collect::<Vec<R>>()))
}

/// `items.into_iter().map(f).collect()`, in chunks on scoped threads.
pub fn map_vec<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = threads(items.len());
    if threads < 2 {
        return items.into_iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let mut rest = items.into_iter();
    let mut chunks = Vec::new();
    loop {
        let c: Vec<T> = rest.by_ref().take(chunk).collect();
        if c.is_empty() {
            break;
        }
        chunks.push(c);
    }
    let f = &f;
    run(chunks
        .into_iter()
        .map(|c| move || c.into_iter().map(f).collect::<Vec<R>>()))
}

/// Runs each job on a scoped thread; their results concatenated in order.
fn run<R: Send, J: FnOnce() -> Vec<R> + Send>(jobs: impl Iterator<Item = J>) -> Vec<R> {
    thread::scope(|s| {
        let handles: Vec<_> = jobs.map(|j| s.spawn(j)).collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(v) => v,
                // A panic in a job is a bug; carry it to the caller as it would have been.
                Err(p) => std::panic::resume_unwind(p),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_is_the_sequential_map_in_order() {
        let items: Vec<u64> = (0..10_000).collect();
        let out = map(&items, |x| x * 3 + 1);
        assert_eq!(out, items.iter().map(|x| x * 3 + 1).collect::<Vec<_>>());
        assert_eq!(map(&items[..3], |x| *x), vec![0, 1, 2]);
        assert!(map(&Vec::<u64>::new(), |x| *x).is_empty());
        let owned: Vec<String> = items.iter().map(u64::to_string).collect();
        assert_eq!(
            map_vec(owned.clone(), |s| s.len()),
            owned.iter().map(String::len).collect::<Vec<_>>()
        );
    }
}
