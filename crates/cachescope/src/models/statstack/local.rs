//! Time-local StatStack: the segmentation of the trace into stretches with one reuse-time
//! distribution each, and the expected stack distance of each reuse sample over the stretches
//! its window crosses. See the [module documentation](super) for the method.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::Range;

use crate::error::{Error, Result};
use crate::sampling::{NextUse, Profile, Sample};

mod distances;
pub use distances::local_stack_distances;

/// How [`segments`] cuts a profile into stretches of one reuse-time distribution each: blocks
/// of `block_samples` consecutive samples, adjacent stretches merged while a penalised
/// likelihood-ratio test finds their reuse-time classes alike (see the
/// [module documentation](super)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segmentation {
    /// Samples per starting block, at least 1: the shortest stretch. Default 50.
    pub block_samples: usize,
    /// Reuse-time classes of the test: the quantiles of all the profile's forward reuse times
    /// at `1/classes, 2/classes, …` cut them (equal quantiles collapse), and dangling samples
    /// are one more class. At least 1. Default 8.
    pub classes: usize,
    /// Weight `λ` of the penalty `λ·(k − 1)·ln n` that the likelihood-ratio statistic of two
    /// adjacent stretches (`n` samples together, `k` classes seen) must exceed to keep them
    /// apart: 1 is the Bayesian information criterion, higher merges more, `f64::INFINITY`
    /// merges everything (the whole-trace model). Default 1.
    pub penalty: f64,
}

impl Default for Segmentation {
    fn default() -> Self {
        Segmentation {
            block_samples: 50,
            classes: 8,
            penalty: 1.0,
        }
    }
}

/// A stretch of the trace with its own reuse-time distribution: counted references
/// `first..=last` (1-based), holding the samples `samples` (indices into
/// [`Profile::samples`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// First position of the stretch.
    pub first: u64,
    /// Last position of the stretch (inclusive).
    pub last: u64,
    /// The samples taken in the stretch, as indices into [`Profile::samples`].
    pub samples: Range<usize>,
}

impl Segment {
    /// References in the stretch.
    pub fn refs(&self) -> u64 {
        self.last + 1 - self.first
    }
}

/// Forward reuse time of a sample: `distance + 1`, `u64::MAX` (∞) when dangling.
fn reuse_time(s: &Sample) -> u64 {
    s.distance().map_or(u64::MAX, |d| d + 1)
}

/// Stretches that cover the profile's references `1..=n`, one per group of consecutive
/// samples; the cut between two groups is halfway between the last sample of one and the
/// first of the next.
fn cover(profile: &Profile, groups: &[Range<usize>]) -> Vec<Segment> {
    let s = profile.samples();
    groups
        .iter()
        .map(|g| Segment {
            first: if g.start == 0 {
                1
            } else {
                (s[g.start - 1].position + s[g.start].position) / 2 + 1
            },
            last: if g.end == s.len() {
                profile.refs()
            } else {
                (s[g.end - 1].position + s[g.end].position) / 2
            },
            samples: g.clone(),
        })
        .collect()
}

/// The stretches of `profile` with one reuse-time distribution each, by
/// [`Segmentation`]: in position order, covering references `1..=n`, each holding at least
/// one sample (at least `block_samples`, unless the profile has fewer). Empty without samples.
/// O(S·classes + B·log B·classes) for `S` samples in `B = S / block_samples` blocks.
pub fn segments(profile: &Profile, options: &Segmentation) -> Vec<Segment> {
    let samples = profile.samples();
    let n = samples.len();
    if n == 0 {
        return Vec::new();
    }
    // Classes: the number of cut points at or below the reuse time; dangling is the last.
    let mut times: Vec<u64> = samples.iter().map(reuse_time).collect();
    times.sort_unstable();
    let q = options.classes.max(1);
    let mut cuts: Vec<u64> = (1..q)
        .map(|i| times[i * n / q])
        .filter(|&t| t != u64::MAX)
        .collect();
    cuts.dedup();
    let dangling_class = cuts.len() + 1;
    let class = |s: &Sample| match s.next {
        NextUse::Reuse { distance } => cuts.partition_point(|&c| c <= distance + 1),
        NextUse::Dangling { .. } => dangling_class,
    };
    let blocks = (n / options.block_samples.max(1)).max(1);
    let mut nodes: Vec<Node> = (0..blocks)
        .map(|b| {
            let range = b * n / blocks..(b + 1) * n / blocks;
            let mut counts = vec![0u32; dangling_class + 1];
            for s in &samples[range.clone()] {
                counts[class(s)] += 1;
            }
            Node {
                range,
                counts,
                version: 0,
                next: b + 1,
                prev: b.wrapping_sub(1),
                alive: true,
            }
        })
        .collect();
    // Greedy bottom-up merging of the cheapest adjacent pair while its cost is at most 0.
    let mut heap = BinaryHeap::new();
    for b in 0..blocks - 1 {
        heap.push(Merge::of(&nodes, b, options.penalty));
    }
    while let Some(m) = heap.pop() {
        if m.cost > 0.0 {
            break;
        }
        let (l, r) = (m.left, nodes[m.left].next);
        if !nodes[l].alive || nodes[l].version != m.versions.0 || r >= blocks {
            continue;
        }
        if nodes[r].version != m.versions.1 {
            continue;
        }
        let right = std::mem::take(&mut nodes[r].counts);
        for (c, x) in nodes[l].counts.iter_mut().zip(right) {
            *c += x;
        }
        nodes[l].range.end = nodes[r].range.end;
        nodes[l].version += 1;
        nodes[l].next = nodes[r].next;
        nodes[r].alive = false;
        if nodes[l].next < blocks {
            let next = nodes[l].next;
            nodes[next].prev = l;
            heap.push(Merge::of(&nodes, l, options.penalty));
        }
        if nodes[l].prev < blocks {
            heap.push(Merge::of(&nodes, nodes[l].prev, options.penalty));
        }
    }
    let groups: Vec<Range<usize>> = nodes
        .iter()
        .filter(|b| b.alive)
        .map(|b| b.range.clone())
        .collect();
    cover(profile, &groups)
}

/// A stretch during merging: its samples and their class counts, in a linked list.
struct Node {
    range: Range<usize>,
    counts: Vec<u32>,
    /// Bumped at every merge into this node, to recognise stale heap entries.
    version: u32,
    next: usize,
    prev: usize,
    alive: bool,
}

/// A candidate merge of `left` with its successor, cheapest first in the heap.
struct Merge {
    cost: f64,
    left: usize,
    versions: (u32, u32),
}

impl Merge {
    /// `2·(ℓ(a) + ℓ(b) − ℓ(a ∪ b)) − λ·(k − 1)·ln n`, `ℓ` the multinomial log-likelihood of
    /// the class counts at their own frequencies, `k ≥ 2` the classes seen in the union of `n`
    /// samples.
    fn of(nodes: &[Node], left: usize, penalty: f64) -> Merge {
        let right = nodes[left].next;
        let (a, b) = (&nodes[left].counts, &nodes[right].counts);
        let (mut la, mut lb, mut lu) = (0.0, 0.0, 0.0);
        let (mut na, mut nb) = (0u64, 0u64);
        let mut k = 0;
        for (&x, &y) in a.iter().zip(b) {
            la += xlogx(x as f64);
            lb += xlogx(y as f64);
            lu += xlogx((x + y) as f64);
            na += x as u64;
            nb += y as u64;
            k += usize::from(x + y > 0);
        }
        let n = (na + nb) as f64;
        let ratio =
            2.0 * ((la - xlogx(na as f64)) + (lb - xlogx(nb as f64)) - (lu - xlogx(n))).max(0.0);
        Merge {
            cost: ratio - penalty * (k.max(2) - 1) as f64 * n.ln(),
            left,
            versions: (nodes[left].version, nodes[right].version),
        }
    }
}

impl PartialEq for Merge {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Merge {}

impl PartialOrd for Merge {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Merge {
    /// Reversed, so that the max-heap pops the cheapest merge (then the leftmost).
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .cost
            .total_cmp(&self.cost)
            .then(other.left.cmp(&self.left))
    }
}

fn xlogx(x: f64) -> f64 {
    if x > 0.0 { x * x.ln() } else { 0.0 }
}

/// The stretches of `profile` that start at position 1 and at each of `starts` (increasing,
/// in `2..=n`), e.g. the profile's time slots. Errors when a stretch holds no sample (its
/// reuse times would be unknown) or `starts` is not increasing within `2..=n`.
pub fn segments_at(profile: &Profile, starts: &[u64]) -> Result<Vec<Segment>> {
    let samples = profile.samples();
    let mut bounds = vec![1];
    bounds.extend_from_slice(starts);
    bounds.push(profile.refs() + 1);
    if bounds.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::InvalidParameter {
            name: "segment starts",
            message: format!("{starts:?} do not increase within 2..={}", profile.refs()),
        });
    }
    let mut out = Vec::with_capacity(bounds.len() - 1);
    let mut i = 0;
    for w in bounds.windows(2) {
        let start = i;
        while i < samples.len() && samples[i].position < w[1] {
            i += 1;
        }
        if i == start {
            return Err(Error::InvalidParameter {
                name: "segment starts",
                message: format!(
                    "references {}..={} hold no sample, so their reuse times are unknown",
                    w[0],
                    w[1] - 1
                ),
            });
        }
        out.push(Segment {
            first: w[0],
            last: w[1] - 1,
            samples: start..i,
        });
    }
    Ok(out)
}
