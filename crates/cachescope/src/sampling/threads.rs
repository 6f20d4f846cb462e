//! The reuse samplers of a stream's threads (`report --sampled`'s threads section): each
//! thread's positions are its own data references, drawn by [`super::Sampler::decaying`]; and
//! [`ThreadReuses`], what the Valgrind tool reports of the same samplers
//! (`cs_sample_threads.c`), rebuilt into the profiles the in-process samplers make.

use std::collections::BTreeMap;

use super::{NextUse, Profile, Sample, SampleCursor, SamplerOptions, Thinning};
use crate::access::ThreadId;
use crate::error::{Result, Source, corrupt};

/// The profile of `n` counted references whose positions `drawn` draws and thins, given
/// the reuses `(sampled position, reuse position)` the tool reported.
pub(crate) fn rebuild_drawn(
    options: SamplerOptions,
    (mut cursor, thin): (SampleCursor, Thinning),
    reuses: &[(u64, u64)],
    n: u64,
    source: &Source,
) -> Result<Profile> {
    let level = thin.level(options.rate, n);
    // The reuses by sampled position, as a map keeps them (the last of a position), sorted
    // and searched forward as the positions grow: a hash map's lookups were most of this.
    let mut reused: Vec<(u64, u64)> = reuses
        .iter()
        .copied()
        .filter(|&(j, _)| thin.keeps(j, level))
        .collect();
    reused.sort_by_key(|&(j, _)| j);
    reused.reverse();
    reused.dedup_by_key(|&mut (j, _)| j);
    reused.reverse();
    let (mut samples, mut from, mut last) = (Vec::new(), 0, 0);
    while cursor.next() <= n {
        let j = cursor.next();
        if !thin.keeps(j, level) {
            cursor.skip_to(j);
            continue;
        }
        if j < last {
            from = 0;
        }
        last = j;
        from += reused[from..].partition_point(|&(k, _)| k < j);
        let next = match reused.get(from).filter(|&&(k, _)| k == j).map(|&(_, i)| i) {
            Some(i) if i > j && i <= n => NextUse::Reuse {
                distance: i - j - 1,
            },
            Some(_) => {
                return Err(corrupt(
                    source,
                    format!("a reuse of sample {j} out of order"),
                ));
            }
            None => NextUse::Dangling { age: n - j },
        };
        samples.push(Sample { position: j, next });
        cursor.skip_to(j);
    }
    if samples.iter().filter(|s| s.distance().is_some()).count() != reused.len() {
        return Err(corrupt(
            source,
            "a reuse of a position that was not sampled",
        ));
    }
    let options = SamplerOptions {
        rate: thin.kept_rate(options.rate, level),
        ..options
    };
    Ok(Profile::from_sampler(options, n, samples))
}

/// Expected reuse samples each thread's sampler keeps at most ([`Sampler::decaying`]'s cap):
/// every data reference of a thread sampled up to 2^16, then about 2^15 to 2^16 samples.
///
/// [`Sampler::decaying`]: super::Sampler::decaying
pub const THREAD_SAMPLES: u64 = 1 << 16;

/// The options of each thread's reuse sampler given the report's `reuse` sampler: its seed
/// and line size, data references only, drawn by [`Sampler::decaying`] with
/// [`THREAD_SAMPLES`] (the rate is the draws', 1 at first).
///
/// [`Sampler::decaying`]: super::Sampler::decaying
pub fn thread_options(reuse: &SamplerOptions) -> SamplerOptions {
    SamplerOptions {
        rate: 1.0,
        include_instructions: false,
        ..*reuse
    }
}

/// The per-thread reuse records of a tool stream (`cs_sample.c`'s per-thread sampler: each
/// thread's positions are its own data references, drawn as [`Sampler::decaying`] draws
/// them), kept as they came: each thread's `(sampled position, reuse position)` and its
/// count. [`ThreadReuses::profiles`] makes the profile each thread's in-process sampler
/// makes of the same run.
///
/// [`Sampler::decaying`]: super::Sampler::decaying
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadReuses {
    threads: BTreeMap<ThreadId, Records>,
}

/// One thread's `(sampled position, reuse position)` records and its count, once known.
type Records = (Vec<(u64, u64)>, Option<u64>);

impl ThreadReuses {
    /// Thread `thread`'s reference at `i` reused the line of its sample at `j`.
    pub(crate) fn push(&mut self, thread: ThreadId, j: u64, i: u64) {
        self.threads.entry(thread).or_default().0.push((j, i));
    }

    /// Thread `thread` counted `n` data references so far (the last one holds).
    pub(crate) fn count(&mut self, thread: ThreadId, n: u64) {
        self.threads.entry(thread).or_default().1 = Some(n);
    }

    /// True if no thread sent anything.
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }

    /// Each thread's profile, sampled with [`thread_options`] of the run's reuse sampler
    /// (`reuse`): equal to each thread's [`Sampler::decaying`] over the run's trace.
    /// Errors (naming `source`) for a reuse of a position not drawn, or a thread with reuses
    /// and no count.
    ///
    /// [`Sampler::decaying`]: super::Sampler::decaying
    pub fn profiles(
        &self,
        reuse: &SamplerOptions,
        source: &Source,
    ) -> Result<BTreeMap<ThreadId, Profile>> {
        let options = thread_options(reuse);
        let mut out = BTreeMap::new();
        for (&t, (reuses, count)) in &self.threads {
            let Some(n) = *count else {
                return Err(corrupt(
                    source,
                    format!("thread {t}'s reuse records without its count"),
                ));
            };
            let drawn = (
                SampleCursor::decaying(options.seed, THREAD_SAMPLES),
                Thinning::decaying(options.seed, THREAD_SAMPLES),
            );
            let p = rebuild_drawn(options, drawn, reuses, n, source)?;
            out.insert(t, p.with_source(source.to_string()));
        }
        Ok(out)
    }
}
