//! The co-run of a threaded program's threads as it was recorded: every reference of the
//! chosen threads, in the trace's order, through one shared LRU cache, each thread to its
//! end (threads start and end when they did). [`super::simulate`] deals whole programs by
//! their rates and stops when the first ends; threads of one recording already have their
//! interleaving, so nothing is dealt and nothing is cut.
//!
//! As in [`super::simulate`], each thread's lines are its own (thread `k` of `threads` has
//! line `L + k·2^56`): the co-run model shares the cache, not data, and the check compares
//! like with like. What data shared between threads does is `sharing`'s and `simulate
//! --cores`'s to count.

use hashbrown::{HashMap, HashSet};

use super::{LINE_BITS, SimulatedProgram, invalid};
use crate::access::{AccessKind, ThreadId};
use crate::batch::Batch;
use crate::error::Result;
use crate::reuse::Options;
use crate::sim::{Cache, Geometry, Policy};
use crate::trace::AccessReader;

/// Simulates `threads` of the trace `reader` reads (a program's recording), in the recorded
/// order, in one shared LRU cache of shape `cache`; references of other threads are left
/// out. One result per thread of `threads`, in its order, each marked ended. Errors on no
/// thread or more than 256, a line size other than the cache's, or a line address at or
/// above 2^56.
pub fn simulate_recorded<R: AccessReader + ?Sized>(
    reader: &mut R,
    threads: &[ThreadId],
    cache: Geometry,
    options: Options,
) -> Result<Vec<SimulatedProgram>> {
    if threads.is_empty() || threads.len() > 256 {
        return Err(invalid(
            "co-run",
            format!("{} threads: give 1 to 256", threads.len()),
        ));
    }
    if cache.line_size() != options.line_size {
        return Err(invalid(
            "co-run line size",
            format!(
                "the cache has {} lines, the trace options {}",
                cache.line_size(),
                options.line_size
            ),
        ));
    }
    let index: HashMap<ThreadId, usize> =
        threads.iter().enumerate().map(|(k, &t)| (t, k)).collect();
    let mut c = Cache::new(cache, Policy::Lru)?;
    let mut out = vec![SimulatedProgram::default(); threads.len()];
    // Each thread's lines seen, for its cold misses.
    let mut seen: Vec<HashSet<u64>> = vec![HashSet::new(); threads.len()];
    let mut charge = crate::budget::Charge::default();
    let mut batch = Batch::new();
    let shift = options.line_size.shift();
    while reader.read_batch(&mut batch)? > 0 {
        for (range, thread) in batch.thread_runs() {
            let Some(&k) = index.get(&thread) else {
                continue;
            };
            for i in range {
                if !options.include_instructions && batch.kinds[i] == AccessKind::Instr {
                    continue;
                }
                let line = batch.addrs[i] >> shift;
                if line >> LINE_BITS != 0 {
                    return Err(invalid(
                        "co-run address",
                        format!(
                            "line {line:#x} is at or above 2^56: the simulation keeps each \
                             thread's lines apart in the top 8 bits"
                        ),
                    ));
                }
                let p = &mut out[k];
                p.refs += 1;
                if !c.access(line | (k as u64) << LINE_BITS) {
                    p.misses += 1;
                    if seen[k].insert(line) {
                        p.cold_misses += 1;
                        if seen[k].len() == seen[k].capacity() {
                            // The next new line reallocates: a limit stops the run.
                            charge.set(seen.iter().map(|s| s.allocation_size() * 2).sum());
                        }
                    }
                }
            }
        }
    }
    for p in &mut out {
        p.ended = true;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use crate::access::LineSize;

    /// A reader of one batch.
    struct One(Option<Batch>);

    impl AccessReader for One {
        fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
            match self.0.take() {
                Some(b) => {
                    *batch = b;
                    Ok(batch.len())
                }
                None => {
                    batch.clear();
                    Ok(0)
                }
            }
        }
    }

    /// The same co-run by brute force: a list of (thread, line) most recent first.
    fn brute(refs: &[(ThreadId, u64)], threads: &[ThreadId], lines: usize) -> Vec<(u64, u64, u64)> {
        let mut stack: Vec<(ThreadId, u64)> = Vec::new();
        let mut out = vec![(0, 0, 0); threads.len()];
        let mut seen = std::collections::HashSet::new();
        for &(t, l) in refs {
            let Some(k) = threads.iter().position(|&x| x == t) else {
                continue;
            };
            out[k].0 += 1;
            match stack.iter().position(|&e| e == (t, l)) {
                Some(at) => {
                    stack.remove(at);
                }
                None => {
                    out[k].1 += 1;
                    if seen.insert((t, l)) {
                        out[k].2 += 1;
                    }
                }
            }
            stack.insert(0, (t, l));
            stack.truncate(lines);
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn the_recorded_co_run_is_an_lru_stack_per_thread_kept_apart(
            refs in proptest::collection::vec((1u32..4, 0u64..12), 0..400),
            lines in 1usize..8,
        ) {
            let mut b = Batch::new();
            for &(t, l) in &refs {
                b.set_thread(t);
                b.push(Access::load(l * 64, 8));
            }
            let options = Options { line_size: LineSize::new(64).unwrap(), ..Options::default() };
            let cache = Geometry::fully_associative(lines as u64 * 64, 64).unwrap();
            let threads = [3, 1];
            let got = simulate_recorded(&mut One(Some(b)), &threads, cache, options).unwrap();
            let want = brute(&refs, &threads, lines);
            for (g, w) in got.iter().zip(&want) {
                proptest::prop_assert_eq!((g.refs, g.misses, g.cold_misses), *w);
                proptest::prop_assert!(g.ended);
            }
        }
    }
}
