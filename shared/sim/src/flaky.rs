//! Seeded random failures: a share of calls fails, picked by a small deterministic generator
//! (same seed, same failures for the same sequence of calls).

use std::sync::Mutex;

/// A failure rate and its generator.
#[derive(Debug)]
pub struct Flaky {
    rate: f64,
    state: Mutex<u64>,
}

impl Flaky {
    /// Fails `rate` (0 to 1) of the calls it is asked about.
    pub fn new(rate: f64, seed: u64) -> Self {
        Flaky {
            rate: rate.clamp(0.0, 1.0),
            state: Mutex::new(seed ^ 0x9e37_79b9_7f4a_7c15),
        }
    }

    fn next(&self) -> u64 {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        // xorshift64*
        let mut x = *s;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *s = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Whether this call fails, and if so which of `kinds` failures it gets.
    pub fn pick(&self, kinds: usize) -> Option<usize> {
        let r = self.next();
        let unit = (r >> 11) as f64 / (1u64 << 53) as f64;
        (unit < self.rate).then(|| (self.next() % kinds.max(1) as u64) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fails_about_the_rate_asked_and_repeats_with_the_seed() {
        let a = Flaky::new(0.2, 7);
        let picks: Vec<Option<usize>> = (0..10_000).map(|_| a.pick(3)).collect();
        let failed = picks.iter().filter(|p| p.is_some()).count();
        assert!((1_800..2_200).contains(&failed), "{failed}");
        assert!(picks.iter().flatten().all(|k| *k < 3));
        let b = Flaky::new(0.2, 7);
        assert_eq!(picks, (0..10_000).map(|_| b.pick(3)).collect::<Vec<_>>());
        assert!((0..1000).all(|_| Flaky::new(0.0, 1).pick(3).is_none()));
    }
}
