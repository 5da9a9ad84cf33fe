//! Seeded random failures: a share of calls fails, picked by a small deterministic generator.
//!
//! Each draw is keyed by what is called (an operation, a method and path) and how many times
//! that key was drawn before, so the same seed fails the same calls whatever order concurrent
//! calls reach the simulator in.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// A failure rate and its generator.
#[derive(Debug)]
pub struct Flaky {
    rate: f64,
    seed: u64,
    drawn: Mutex<BTreeMap<String, u64>>,
}

/// FNV-1a: a stable hash of the key (std's hasher is seeded per process).
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// splitmix64's finalizer: spreads the bits of a combined key.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Flaky {
    /// Fails `rate` (0 to 1) of the calls it is asked about.
    pub fn new(rate: f64, seed: u64) -> Self {
        Flaky {
            rate: rate.clamp(0.0, 1.0),
            seed,
            drawn: Mutex::new(BTreeMap::new()),
        }
    }

    /// Whether the next call under `key` fails, and if so which of `kinds` failures it gets.
    pub fn pick(&self, key: &str, kinds: usize) -> Option<usize> {
        let n = {
            let mut drawn = self.drawn.lock().unwrap_or_else(|e| e.into_inner());
            let n = drawn.entry(key.to_string()).or_default();
            *n += 1;
            *n
        };
        let r = mix(self.seed ^ mix(fnv1a(key) ^ mix(n)));
        let unit = (r >> 11) as f64 / (1u64 << 53) as f64;
        (unit < self.rate).then(|| (mix(r) % kinds.max(1) as u64) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fails_about_the_rate_asked_and_repeats_with_the_seed() {
        let a = Flaky::new(0.2, 7);
        let picks: Vec<Option<usize>> = (0..10_000).map(|_| a.pick("GET /x", 3)).collect();
        let failed = picks.iter().filter(|p| p.is_some()).count();
        assert!((1_800..2_200).contains(&failed), "{failed}");
        assert!(picks.iter().flatten().all(|k| *k < 3));
        assert!(picks.iter().flatten().any(|k| *k == 2));
        let b = Flaky::new(0.2, 7);
        assert_eq!(
            picks,
            (0..10_000).map(|_| b.pick("GET /x", 3)).collect::<Vec<_>>()
        );
        let c = Flaky::new(0.2, 8);
        assert_ne!(
            picks,
            (0..10_000).map(|_| c.pick("GET /x", 3)).collect::<Vec<_>>()
        );
        assert!((0..1000).all(|_| Flaky::new(0.0, 1).pick("k", 3).is_none()));
    }

    #[test]
    fn calls_under_other_keys_do_not_shift_a_keys_draws() {
        let a = Flaky::new(0.3, 11);
        let alone: Vec<Option<usize>> = (0..500).map(|_| a.pick("PUT /a", 3)).collect();
        let b = Flaky::new(0.3, 11);
        let interleaved: Vec<Option<usize>> = (0..500)
            .map(|i| {
                for _ in 0..(i % 4) {
                    b.pick("GET /b", 2);
                }
                b.pick("PUT /a", 3)
            })
            .collect();
        assert_eq!(alone, interleaved);
    }
}
