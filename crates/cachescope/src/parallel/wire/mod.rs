//! Partial results as bytes, to send between processes (MPI ranks): [`Wire`] gives every
//! [`Chunked`] plan whose partials cross process boundaries an encoder and a checking decoder.
//!
//! ## Common rules
//! Every integer is little-endian, every line address a `u64`. A partial starts with an 8-byte
//! magic whose last byte is the format's version. A count is followed by that many items and
//! is checked against the bytes left before anything is allocated. Decoding checks everything
//! a merge or a result relies on (options equal to the receiving plan's, positions inside the
//! run, every line once, histogram bins that start bins, in increasing order, counts that add
//! up to the run's references, nothing after the end) and answers [`Error::Corrupt`](crate::error::Error::Corrupt) naming
//! the sender, never a panic, on any bytes. Histograms are sent as their non-empty bins only.
//!
//! `options` below is: line size in bytes (`u64`), whether instruction fetches count (`u8`,
//! 0 or 1), the histogram layout's exact bits (`u32`). `histogram` is: bin count (`u64`), then
//! per non-empty bin, by increasing distance, its first distance and its count (`u64` each).
//!
//! ## Formats
//! - Stack distances ([`super::StackDistancePartial`]): `"CSSDP\0\0\x02"`, options, refs
//!   (`u64`), histogram, first references (`u64` count, lines in order of first reference),
//!   recency (`u64` count, the same lines, least recently referenced first).
//! - Reuse times ([`super::ReuseTimePartial`]): `"CSRTP\0\0\x01"`, options, refs (`u64`),
//!   reuse-time histogram, lines (`u64` count, then per line in order of first reference:
//!   line, 1-based position of its first and of its last reference, `u64` each).
//! - Footprint ([`crate::models::hotl::FootprintAnalysis`] as a chunk): `"CSFPP\0\0\x01"`,
//!   options, listed windows (`u64` count, sorted `u64`s), refs (`u64`), last counted line
//!   (`u64`), the reuse-time sums (exact region: `u64` count, then value and count, `u64` each,
//!   by increasing value; binned region: `u64` count, then bin index and count (`u64`) and sum
//!   of values (`u128`), by increasing index; listed-window partial sums: `u64` count, one
//!   `u128` per listed window inside a bin), then the lines as for reuse times. The sender
//!   settles the chunk first (writes the position of a line referenced several times in a row,
//!   folds its dense counts into the sums); the receiver rebuilds the first-position sums from
//!   the lines' first positions.
//! - Trace statistics ([`crate::stats::StatsAnalysis`]): `"CSSTP\0\0\x01"`, line size
//!   (`u64`), references by kind (loads, stores, modifies, instruction fetches: `u64` each),
//!   data bytes, straddling references, lowest and highest data address (`u64` each), data
//!   lines and instruction lines (`u64` count, `u64` lines, each). The line sets' memory is
//!   charged to [`crate::budget`] on arrival.
//! - A run's StatCache samples ([`super::RangeSamples`], not a [`Wire`] plan: sampling over
//!   ranks takes three steps, see [`super::SampledRange`]): `"CSSMP\0\0\x01"`, the sampler
//!   options (rate as `f64` bits, seed, slot length, line size: `u64` each; instruction fetches
//!   counted: `u8`), counted references before the run and in it (`u64` each), the samples that
//!   found their reuse in the run (`u64` count, then position and reuse distance, `u64` each),
//!   the watchpoints left at its end (`u64` count, then line and sampled position), the first
//!   references in the run to lines watched before it (`u64` count, then line and position, in
//!   order of position). Every position must fall in the run.

mod bytes;
mod footprint;
mod per_thread;
mod reuse;
mod sampled;
mod stack;
mod stats;

pub use sampled::{decode_samples, encode_samples};

use super::Chunked;
use crate::error::{Result, Source};

use bytes::{Cursor, Out, check_counts};

/// A [`Chunked`] plan whose partials can be sent to another process and merged there.
pub trait Wire: Chunked {
    /// The bytes of `part` (which may be put in a settled form first; no result changes).
    fn encode(&self, part: &mut Self::Partial) -> Vec<u8>;

    /// The partial [`Wire::encode`] wrote, checked against this plan (a partial made with
    /// other options is an error); `source` names the sender in errors.
    fn decode(&self, bytes: &[u8], source: &Source) -> Result<Self::Partial>;

    /// References the partial covers (a receiver checks that the sum of its partials' fits).
    fn refs(&self, part: &Self::Partial) -> u64;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analysis::Analysis;
    use crate::{Access, AccessKind, Batch};

    /// `n` accesses of a skewed stream over about `lines` lines: loads, stores, modifies and
    /// instruction fetches, runs of the same line, a few straddling accesses, and the largest
    /// line addresses.
    pub fn stream(n: usize, lines: u64, seed: u64) -> Batch {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let hot = (x % lines) * (x % 3) / 2;
                let line = match i % 97 {
                    0 => u64::MAX >> 6,
                    1 => i as u64 / 10,
                    _ => hot,
                };
                let kind = match x >> 62 {
                    0 => AccessKind::Load,
                    1 => AccessKind::Store,
                    2 => AccessKind::Modify,
                    _ => AccessKind::Instr,
                };
                Access {
                    addr: (line << 6) + (x >> 20) % 64,
                    size: [1, 4, 8, 16][(x >> 40) as usize % 4],
                    kind,
                    pc: None,
                }
            })
            .collect()
    }

    /// The partials of `plan` for consecutive chunks of `batch` cut at `cuts`.
    pub fn partials<P: Chunked>(plan: &P, batch: &Batch, cuts: &[usize]) -> Vec<P::Partial> {
        let mut bounds = vec![0];
        bounds.extend_from_slice(cuts);
        bounds.push(batch.len());
        bounds
            .windows(2)
            .map(|w| {
                let mut worker = plan.worker(w[0] as u64);
                let part: Batch = (w[0]..w[1]).map(|i| batch.get(i)).collect();
                worker.observe(&part);
                plan.seal(worker)
            })
            .collect()
    }

    /// Merges `parts` in order, sending every partial but the first through the wire (all of
    /// them when `all`).
    pub fn merged_through_wire<P: Wire>(plan: &P, parts: Vec<P::Partial>, all: bool) -> P::Output {
        let mut acc: Option<P::Partial> = None;
        for (i, mut p) in parts.into_iter().enumerate() {
            if all || i > 0 {
                let bytes = plan.encode(&mut p);
                p = plan.decode(&bytes, &Source::Memory).unwrap();
            }
            match acc.as_mut() {
                None => acc = Some(p),
                Some(a) => plan.merge(a, p),
            }
        }
        plan.finish(acc.unwrap())
    }

    /// Where the merge tests cut their stream: a one-access chunk, a one-access gap, uneven rest.
    pub const CUTS: [usize; 4] = [1, 4000, 4001, 13_000];

    /// Line-size-default options without and with instruction fetches counted.
    pub fn with_and_without_instructions() -> [crate::reuse::Options; 2] {
        let with = crate::reuse::Options {
            include_instructions: true,
            ..Default::default()
        };
        [Default::default(), with]
    }

    /// Checks `plan` on `stream(20_000, 3000, seed)` cut at `cuts` against `one`, the same
    /// analysis over the whole stream (its result taken by `finish`): the partials merged
    /// directly, through the wire after the first, and all through the wire, each compared as
    /// `key` makes it. One check for every plan: each plan's test only names its analysis.
    pub fn merges_like_one_pass<P: Wire, A: Analysis, T: PartialEq + std::fmt::Debug>(
        plan: &P,
        seed: u64,
        cuts: &[usize],
        (mut one, finish): (A, impl FnOnce(&A) -> T),
        key: impl Fn(P::Output) -> T,
    ) {
        let batch = stream(20_000, 3000, seed);
        one.observe(&batch);
        let want = finish(&one);
        let mut it = partials(plan, &batch, cuts).into_iter();
        let mut acc = it.next().unwrap();
        it.for_each(|p| plan.merge(&mut acc, p));
        assert_eq!(key(plan.finish(acc)), want);
        for all in [false, true] {
            let got = merged_through_wire(plan, partials(plan, &batch, cuts), all);
            assert_eq!(key(got), want, "all through the wire: {all}");
        }
    }

    /// Cuts every prefix (each must be an error), adds a trailing byte (an error), and flips
    /// every byte with a few masks: decoding never panics, and whatever decodes merges after
    /// `first` and finishes without a panic. Returns how many damaged copies decoded.
    pub fn survives_damage<P: Wire>(
        plan: &P,
        bytes: &[u8],
        first: impl Fn() -> P::Partial,
    ) -> usize {
        let mut decoded = 0;
        for cut in 0..bytes.len() {
            assert!(
                plan.decode(&bytes[..cut], &Source::Memory).is_err(),
                "cut {cut}"
            );
        }
        let mut long = bytes.to_vec();
        long.push(0);
        assert!(plan.decode(&long, &Source::Memory).is_err());
        let mut damaged = bytes.to_vec();
        for i in 0..bytes.len() {
            for mask in [0x01u8, 0x80, 0xff] {
                damaged[i] ^= mask;
                if let Ok(p) = plan.decode(&damaged, &Source::Memory) {
                    decoded += 1;
                    let mut acc = first();
                    plan.merge(&mut acc, p);
                    let _ = plan.finish(acc);
                }
                damaged[i] ^= mask;
            }
        }
        decoded
    }

    #[test]
    fn a_wrong_magic_or_version_is_named() {
        let bytes = *b"CSSDP\0\0\x09";
        let e = Cursor::open(&bytes, &Source::Memory, b"CSSDP\0\0\x02", "stack-distance")
            .err()
            .unwrap();
        assert!(e.to_string().contains("format version 9"), "{e}");
        let e = Cursor::open(b"CSXXP\0\0\x02", &Source::Memory, b"CSSDP\0\0\x02", "x")
            .err()
            .unwrap();
        assert!(e.to_string().contains("bad magic"), "{e}");
    }
}
