//! Page-level locality: the miss ratio of a fully associative LRU TLB of every entry count,
//! which is the LRU stack-distance curve of pages (a page is a line of 4096 bytes), keyed by
//! entries and by the bytes they cover.
//!
//! [`PageCurve`] is `mrc --page`'s JSON: any method's curve measured with the page as the line
//! size ([`crate::method`] needs nothing else), with each point's `entries` and
//! `covered_bytes`. [`PageCurves`] is the report's: each thread's exact curve from one pass,
//! cheap enough to run beside everything else because a reference to the page its thread
//! touched last (most references) has stack distance 0 and leaves every other distance as it
//! was, so it is counted without going through the stack.

use crate::access::{LineAddr, LineSize, ThreadId};
use crate::analysis::Analysis;
use crate::batch::Batch;
use crate::reuse::{Layout, LogHistogram, Mrc, StackDistance, StackDistances};

/// One point of a page-level curve.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PagePoint {
    /// TLB entries (pages held).
    pub entries: u64,
    /// The bytes they cover: `entries × page_size`.
    pub covered_bytes: u64,
    /// Misses per counted reference, cold misses included; absent where a model does not
    /// estimate them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub miss_ratio: Option<f64>,
    /// Misses per counted reference, cold misses left out.
    pub miss_ratio_warm: f64,
}

/// A miss-ratio curve at page granularity. Field names are a public contract
/// (`mrc --page --json`): the curve's own (`method`, `policy`, `line_size` = the page, and
/// each point's `size_bytes`, `lines`) plus `page_size` and each point's `entries` and
/// `covered_bytes`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PageCurve {
    /// How the curve was obtained.
    pub method: String,
    /// The policy modelled.
    pub policy: String,
    /// The page size in bytes (the curve's line size).
    pub page_size: u64,
    /// The same, under the name every curve has.
    pub line_size: u64,
    /// The points, in the order of the curve's sizes.
    pub points: Vec<PageCurvePoint>,
}

/// One point of a [`PageCurve`]: entries and bytes covered, beside the curve's own keys.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PageCurvePoint {
    /// TLB entries (= `lines`).
    pub entries: u64,
    /// Bytes they cover (= `size_bytes`).
    pub covered_bytes: u64,
    /// The curve's size in bytes.
    pub size_bytes: u64,
    /// The curve's size in lines (pages).
    pub lines: u64,
    /// Misses per reference, cold included (absent where not estimated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub miss_ratio: Option<f64>,
    /// Misses per reference, cold left out.
    pub miss_ratio_warm: f64,
}

impl From<&Mrc> for PageCurve {
    fn from(m: &Mrc) -> PageCurve {
        PageCurve {
            method: m.method.clone(),
            policy: m.policy.clone(),
            page_size: m.line_size,
            line_size: m.line_size,
            points: m
                .points
                .iter()
                .map(|p| PageCurvePoint {
                    entries: p.lines,
                    covered_bytes: p.lines * m.line_size,
                    size_bytes: p.size_bytes,
                    lines: p.lines,
                    miss_ratio: p.miss_ratio,
                    miss_ratio_warm: p.miss_ratio_warm,
                })
                .collect(),
        }
    }
}

/// Entry counts from `lo` to `hi`, `per_octave` per power of two, as byte sizes of pages of
/// `page` (the sizes a curve is asked at): `mrc --page`'s default sweep is 1 to 65536 entries.
pub fn entry_sizes(page: LineSize, lo: u64, hi: u64, per_octave: u64) -> crate::Result<Vec<u64>> {
    let entries = crate::reuse::sizes_log_range(lo, hi, per_octave)?;
    Ok(entries.into_iter().map(|e| e * page.bytes()).collect())
}

/// Most entries of `mrc --page`'s default sweep (and the report's): 65536 (256 MiB of 4 KiB
/// pages, 128 GiB of 2 MiB ones).
pub const MAX_ENTRIES: u64 = 1 << 16;

/// One thread's page-level stack distances.
#[derive(Clone, Debug)]
struct Stack {
    thread: ThreadId,
    /// The page referenced last, `u64::MAX` before the first.
    last: u64,
    /// References to the page referenced just before: stack distance 0.
    repeats: u64,
    stack: StackDistance,
    histogram: LogHistogram,
    refs: u64,
    cold: u64,
}

/// Each thread's exact page-level LRU curve, from one pass (see the module documentation).
/// Data references only, each on the page of its first byte.
#[derive(Clone, Debug)]
pub struct PageCurves {
    page: LineSize,
    /// Per thread, in order of first appearance.
    threads: Vec<Stack>,
}

impl PageCurves {
    /// Curves of pages of `page`.
    pub fn new(page: LineSize) -> PageCurves {
        PageCurves {
            page,
            threads: Vec::new(),
        }
    }

    fn index_of(&mut self, thread: ThreadId) -> usize {
        if let Some(i) = self.threads.iter().position(|s| s.thread == thread) {
            return i;
        }
        self.threads.push(Stack {
            thread,
            last: u64::MAX,
            repeats: 0,
            stack: StackDistance::new(),
            histogram: LogHistogram::new(Layout::DEFAULT),
            refs: 0,
            cold: 0,
        });
        self.threads.len() - 1
    }

    /// Each thread's stack distances (`line_size` the page), in order of first appearance.
    pub fn finish(&self) -> Vec<(ThreadId, StackDistances)> {
        self.threads
            .iter()
            .map(|s| {
                let mut histogram = s.histogram.clone();
                histogram.record_n(0, s.repeats);
                let d = StackDistances {
                    line_size: self.page.bytes(),
                    refs: s.refs,
                    cold: s.cold,
                    histogram,
                };
                (s.thread, d)
            })
            .collect()
    }
}

impl Analysis for PageCurves {
    fn observe(&mut self, b: &Batch) {
        let shift = self.page.shift();
        for (run, thread) in b.thread_runs() {
            let t = self.index_of(thread);
            let s = &mut self.threads[t];
            for i in run {
                if !b.kinds[i].is_data() {
                    continue;
                }
                let page = b.addrs[i] >> shift;
                s.refs += 1;
                if page == s.last {
                    s.repeats += 1;
                    continue;
                }
                s.last = page;
                match s.stack.access(LineAddr(page)) {
                    Some(d) => s.histogram.record(d),
                    None => s.cold += 1,
                }
            }
        }
    }
}

/// The points of `d`'s curve at `entries` (fully associative LRU TLBs).
pub fn page_points(d: &StackDistances, entries: &[u64]) -> Vec<PagePoint> {
    let sizes: Vec<u64> = entries.iter().map(|e| e * d.line_size).collect();
    d.mrc(&sizes)
        .points
        .iter()
        .map(|p| PagePoint {
            entries: p.lines,
            covered_bytes: p.size_bytes,
            miss_ratio: p.miss_ratio,
            miss_ratio_warm: p.miss_ratio_warm,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Access;
    use crate::reuse::{Options, StackDistanceAnalysis};

    #[test]
    fn repeats_skipped_give_the_same_distances() {
        let mut b = Batch::new();
        let mut x = 7u64;
        for k in 0..5000u64 {
            if k % 700 == 0 {
                b.set_thread(1 + (k / 700 % 3) as u32);
            }
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            // Runs of references within a page, over 40 pages.
            let page = (x >> 40) % 40;
            for r in 0..(x >> 60) {
                b.push(Access::load(page * 4096 + r * 8, 8));
            }
        }
        let mut curves = PageCurves::new(LineSize::PAGE_4K);
        curves.observe(&b);
        let got = curves.finish();
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [1, 2, 3]);
        for (thread, d) in got {
            let mut only = Batch::new();
            for (run, t) in b.thread_runs() {
                if t == thread {
                    run.for_each(|i| only.push(b.get(i)));
                }
            }
            let mut sd = StackDistanceAnalysis::new(Options {
                line_size: LineSize::PAGE_4K,
                ..Options::default()
            });
            sd.observe(&only);
            assert_eq!(d, sd.finish(), "thread {thread}");
        }
    }

    #[test]
    fn page_curve_keys_entries_and_bytes() {
        let m = Mrc {
            method: "exact".into(),
            policy: "lru".into(),
            line_size: 2 << 20,
            points: vec![crate::reuse::MrcPoint {
                size_bytes: 64 << 20,
                lines: 32,
                miss_ratio: Some(0.5),
                miss_ratio_warm: 0.25,
            }],
        };
        let j = serde_json::to_string(&PageCurve::from(&m)).unwrap();
        assert_eq!(
            j,
            r#"{"method":"exact","policy":"lru","page_size":2097152,"line_size":2097152,"points":[{"entries":32,"covered_bytes":67108864,"size_bytes":67108864,"lines":32,"miss_ratio":0.5,"miss_ratio_warm":0.25}]}"#
        );
        let sizes = entry_sizes(LineSize::PAGE_4K, 1, 4, 1).unwrap();
        assert_eq!(sizes, [4096, 8192, 16384]);
    }
}
