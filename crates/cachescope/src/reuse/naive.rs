//! Brute-force references for the tests: every distance straight from its definition in
//! docs/definitions.md, and a fully-associative LRU cache simulated with a recency list.

use std::collections::HashSet;

/// Reuse time of each reference (`i − j`), `None` for first references. O(n²).
pub fn reuse_times(trace: &[u64]) -> Vec<Option<u64>> {
    (0..trace.len())
        .map(|i| {
            (0..i)
                .rev()
                .find(|&j| trace[j] == trace[i])
                .map(|j| (i - j) as u64)
        })
        .collect()
}

/// Stack distance of each reference: distinct lines other than `x_i` referenced strictly
/// between the previous reference to `x_i` and `i`; `None` for first references. O(n²).
pub fn stack_distances(trace: &[u64]) -> Vec<Option<u64>> {
    reuse_times(trace)
        .iter()
        .enumerate()
        .map(|(i, rt)| {
            rt.map(|rt| {
                let between = &trace[i + 1 - rt as usize..i];
                between.iter().collect::<HashSet<_>>().len() as u64
            })
        })
        .collect()
}

/// Misses (cold included) of a fully-associative LRU cache of `capacity` lines: a recency list,
/// most recent first, cut to `capacity`. O(n · capacity).
pub fn lru_misses(trace: &[u64], capacity: usize) -> u64 {
    let mut stack: Vec<u64> = Vec::with_capacity(capacity + 1);
    let mut misses = 0;
    for &line in trace {
        match stack.iter().position(|&l| l == line) {
            Some(p) => {
                stack.remove(p);
            }
            None => misses += 1,
        }
        stack.insert(0, line);
        stack.truncate(capacity);
    }
    misses
}

/// Mattson's LRU stack: the depth at which each reference finds its line (its stack distance),
/// `None` when absent. O(n · distinct lines).
pub fn lru_stack_depths(trace: &[u64]) -> Vec<Option<u64>> {
    let mut stack: Vec<u64> = Vec::new();
    trace
        .iter()
        .map(|&line| {
            let depth = stack.iter().position(|&l| l == line);
            if let Some(p) = depth {
                stack.remove(p);
            }
            stack.insert(0, line);
            depth.map(|d| d as u64)
        })
        .collect()
}
