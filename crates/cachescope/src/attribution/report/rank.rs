//! Ranks and shares of the report's rows: actual beside sampled, 1-based by count, ties
//! broken by key.

use hashbrown::HashMap;

pub(super) fn pct(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        100.0 * n as f64 / d as f64
    }
}

/// Ranks of `counts` (1-based, by count descending then key; 0 for a zero count).
fn ranks<K: Ord + Clone + std::hash::Hash>(items: &[(K, u64)]) -> HashMap<K, u32> {
    let mut v: Vec<&(K, u64)> = items.iter().filter(|x| x.1 > 0).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.into_iter()
        .enumerate()
        .map(|(i, x)| (x.0.clone(), i as u32 + 1))
        .collect()
}

/// The actual and the sampled ranks of the same keys, each as [`ranks`] gives them.
pub(super) struct Ranks<K> {
    actual: HashMap<K, u32>,
    sampled: HashMap<K, u32>,
}

impl<K: Ord + Clone + std::hash::Hash> Ranks<K> {
    /// From `(key, actual count, sampled count)` rows.
    pub(super) fn new(rows: impl Iterator<Item = (K, u64, u64)>) -> Self {
        let (mut act, mut smp) = (Vec::new(), Vec::new());
        for (k, a, s) in rows {
            act.push((k.clone(), a));
            smp.push((k, s));
        }
        Ranks {
            actual: ranks(&act),
            sampled: ranks(&smp),
        }
    }

    /// The actual and the sampled rank of `k` (0 where its count is zero).
    pub(super) fn of(&self, k: &K) -> (u32, u32) {
        let get = |m: &HashMap<K, u32>| m.get(k).copied().unwrap_or(0);
        (get(&self.actual), get(&self.sampled))
    }
}
