//! StatCache's sampler as a job of the pass: one sampler in order, or the sampled pipeline's
//! segments ([`crate::parallel::sample_chunks`] explains its three steps) from enough threads.

use crate::error::Result;
use crate::parallel::{SEGMENT_MAX, file_segments, run_segments};
use crate::sampling::{Profile, Sampler, SamplerOptions};
use crate::trace::Trace;

/// From this many threads a trace file is sampled in segments; below, one sampler reads it,
/// decoded on every thread ([`crate::parallel::decode_in_parallel`]). The split costs about
/// 1.5x the CPU of one pass (each segment is read three times, and waits between the steps),
/// so on `T` threads it gains at most `T / 1.5`; the single sampler gains until its own
/// thread, which samples every reference and decodes a share, is the bottleneck. Measured on 2
/// cores (100 M references, 1 Mi lines, native; `mrc --method statstack`): one thread 0.79 s,
/// the split 0.62 s, one sampler with parallel decoding 0.53 s.
const SPLIT_FROM_THREADS: usize = 4;

/// Samples `trace` with `options` on `threads` threads; the profile is the one
/// [`Sampler::finish`] gives after one sequential pass (the source description empty).
/// `on_progress` is called now and then with the accesses read so far. From 4 threads, a
/// native trace in a plain file is cut into segments of at most `segment` (and
/// [`SEGMENT_MAX`]) accesses that the workers decode themselves, an uncompressed text trace
/// into byte ranges of about as many lines, cut at line boundaries, that the workers parse
/// themselves; any other trace, or fewer threads, is sampled in one pass in order.
pub(super) fn run(
    trace: &mut Trace,
    options: SamplerOptions,
    threads: usize,
    segment: u64,
    on_progress: impl FnMut(u64),
) -> Result<Profile> {
    options.validate()?;
    let threads = threads.max(1);
    if threads >= SPLIT_FROM_THREADS {
        let segment = segment.clamp(1, SEGMENT_MAX);
        // About 16 bytes per text line.
        let text_bytes = (segment * 16).max(1 << 12);
        let parts = |whole: u64, per: u64| whole.div_ceil(per).max(threads as u64);
        if let Some(segments) = file_segments(
            trace,
            |accesses| parts(accesses, segment),
            |bytes| parts(bytes, text_bytes),
        )? {
            return run_segments(&segments, options, threads, on_progress);
        }
    }
    let mut sampler = Sampler::new(options)?;
    super::in_order::run(trace, &mut [&mut sampler], threads, on_progress)?;
    Ok(sampler.finish())
}
