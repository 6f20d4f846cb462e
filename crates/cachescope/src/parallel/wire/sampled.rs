//! A run's StatCache samples ([`RangeSamples`]) on the wire (format in the [parent](super)
//! documentation).

use std::collections::HashSet;

use super::{Cursor, Out};
use crate::error::{Result, Source};
use crate::parallel::RangeSamples;
use crate::sampling::{NextUse, Sample, SamplerOptions, SamplerParts};

const MAGIC: [u8; 8] = *b"CSSMP\0\0\x01";

/// The bytes of `run`, sampled with `options`.
pub fn encode_samples(options: &SamplerOptions, run: &RangeSamples) -> Vec<u8> {
    let p = &run.parts;
    let mut out = Out::with_capacity(96 + 16 * (p.done.len() + p.active.len() + run.firsts.len()));
    out.bytes(&MAGIC);
    sampler_options(&mut out, options);
    out.u64(run.offset);
    out.u64(run.refs);
    out.u64(p.done.len() as u64);
    for s in &p.done {
        let NextUse::Reuse { distance } = s.next else {
            unreachable!("a run's finished samples found their reuse in it")
        };
        out.u64(s.position);
        out.u64(distance);
    }
    for list in [&p.active, &run.firsts] {
        out.u64(list.len() as u64);
        for &(line, position) in list {
            out.u64(line);
            out.u64(position);
        }
    }
    out.0
}

fn sampler_options(out: &mut Out, o: &SamplerOptions) {
    out.u64(o.rate.to_bits());
    out.u64(o.seed);
    out.u64(o.slot_refs);
    out.u64(o.line_size.bytes());
    out.u8(u8::from(o.include_instructions));
}

/// What [`encode_samples`] wrote, checked against `options` (samples taken with others are
/// an error) and against the run's bounds; `source` names the sender in errors.
pub fn decode_samples(
    options: &SamplerOptions,
    bytes: &[u8],
    source: &Source,
) -> Result<RangeSamples> {
    let mut r = Cursor::open(bytes, source, &MAGIC, "sample")?;
    let sent = (r.u64()?, r.u64()?, r.u64()?, r.u64()?, r.u8()?);
    let want = (
        options.rate.to_bits(),
        options.seed,
        options.slot_refs,
        options.line_size.bytes(),
        u8::from(options.include_instructions),
    );
    if sent != want {
        return Err(r.corrupt(format!(
            "samples taken with other options (rate {}, seed {}, slot {}, line size {}, \
             instructions {}) than this run's ({}, {}, {}, {}, {})",
            f64::from_bits(sent.0),
            sent.1,
            sent.2,
            sent.3,
            sent.4,
            options.rate,
            options.seed,
            options.slot_refs,
            options.line_size.bytes(),
            u8::from(options.include_instructions)
        )));
    }
    let (offset, refs) = (r.u64()?, r.u64()?);
    let Some(end) = offset.checked_add(refs) else {
        return Err(r.corrupt(format!("a run of {refs} references after {offset}")));
    };
    let inside = |p: u64| p > offset && p <= end;
    let n = r.len(16)?;
    let mut done = Vec::with_capacity(n);
    for _ in 0..n {
        let (position, distance) = (r.u64()?, r.u64()?);
        let reused = position
            .checked_add(distance)
            .and_then(|p| p.checked_add(1));
        if !inside(position) || !reused.is_some_and(inside) {
            return Err(r.corrupt(format!(
                "a sample at {position} reused after {distance} outside the run {}..={end}",
                offset + 1
            )));
        }
        done.push(Sample {
            position,
            next: NextUse::Reuse { distance },
        });
    }
    let mut lists = [Vec::new(), Vec::new()];
    for (k, list) in lists.iter_mut().enumerate() {
        let n = r.len(16)?;
        let mut seen = HashSet::with_capacity(n);
        let mut prev = 0;
        for _ in 0..n {
            let (line, position) = (r.u64()?, r.u64()?);
            // First references come in order of position.
            if !inside(position) || (k == 1 && position <= prev) || !seen.insert(line) {
                return Err(r.corrupt(format!(
                    "line {line:#x} at {position}: outside the run {}..={end}, out of order or \
                     listed twice",
                    offset + 1
                )));
            }
            prev = position;
            list.push((line, position));
        }
    }
    r.end()?;
    let [active, firsts] = lists;
    Ok(RangeSamples {
        offset,
        refs,
        parts: SamplerParts { done, active },
        firsts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::{SampleMerge, SampledRange};
    use crate::trace::native::{Header, Writer, WriterOptions};
    use crate::{Access, AccessKind};

    fn options(seed: u64) -> SamplerOptions {
        SamplerOptions {
            rate: 0.05,
            seed,
            ..SamplerOptions::default()
        }
    }

    /// A native trace of 20 000 accesses (every fifth a fetch) over 700 lines, in blocks of 500.
    fn trace_file() -> (tempfile::NamedTempFile, Vec<Access>) {
        let mut x = 5u64;
        let trace: Vec<Access> = (0..20_000)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                Access {
                    addr: (x >> 33) % 700 * 64,
                    size: 8,
                    kind: if i % 5 == 0 {
                        AccessKind::Instr
                    } else {
                        AccessKind::Load
                    },
                    pc: None,
                }
            })
            .collect();
        let file = tempfile::NamedTempFile::new().unwrap();
        let opts = WriterOptions {
            block_len: 500,
            ..WriterOptions::default()
        };
        let mut w = Writer::with_options(file.reopen().unwrap(), Header::new(), opts).unwrap();
        w.write_batch(&trace.iter().copied().collect()).unwrap();
        w.finish().unwrap();
        (file, trace)
    }

    /// The runs `cuts` (block boundaries) of the file, sampled, resolved, sent and merged as
    /// the ranks of an MPI run do.
    fn by_runs(path: &std::path::Path, o: SamplerOptions, cuts: &[usize]) -> Vec<Vec<u8>> {
        let runs: Vec<_> = cuts
            .windows(2)
            .map(|w| SampledRange::open(path, w[0]..w[1], o, 2).unwrap())
            .collect();
        let counts: Vec<u64> = runs.iter().map(|r| r.count().unwrap()).collect();
        let mut offset = 0;
        let mut watched: Vec<u64> = Vec::new();
        let mut sent = Vec::new();
        for (run, &n) in runs.iter().zip(&counts) {
            let mut s = run.sample(offset, n).unwrap();
            let mut lines = watched.clone();
            lines.sort_unstable();
            lines.dedup();
            run.resolve(&mut s, &lines).unwrap();
            watched.extend(s.watched_lines());
            sent.push(encode_samples(&o, &s));
            offset += n;
        }
        sent
    }

    #[test]
    fn runs_merged_from_the_wire_give_the_sequential_profile() {
        let (file, trace) = trace_file();
        for seed in [1, 2, 3] {
            let o = options(seed);
            let mut sampler = crate::sampling::Sampler::new(o).unwrap();
            crate::analysis::Analysis::observe(&mut sampler, &trace.iter().copied().collect());
            let want = sampler.finish();
            assert!(want.samples().len() > 200, "{}", want.samples().len());
            for cuts in [vec![0, 40], vec![0, 20, 40], vec![0, 1, 13, 14, 39, 40]] {
                let mut m = SampleMerge::new(o);
                for (k, bytes) in by_runs(file.path(), o, &cuts).iter().enumerate() {
                    let run = decode_samples(&o, bytes, &Source::Memory).unwrap();
                    assert_eq!(encode_samples(&o, &run), *bytes, "round trip");
                    m.absorb(run, &Source::Program(format!("run {k}"))).unwrap();
                }
                assert_eq!(m.finish(), want, "{cuts:?}");
            }
        }
    }

    #[test]
    fn damage_is_an_error_never_a_panic() {
        let (file, _) = trace_file();
        let o = options(4);
        let sent = by_runs(file.path(), o, &[0, 15, 40]);
        let bytes = &sent[1];
        for cut in 0..bytes.len() {
            assert!(decode_samples(&o, &bytes[..cut], &Source::Memory).is_err());
        }
        for i in 0..bytes.len() {
            for flip in [0x01, 0x80] {
                let mut b = bytes.clone();
                b[i] ^= flip;
                // Either rejected or (a flip in a value the checks cannot see) decoded.
                let _ = decode_samples(&o, &b, &Source::Memory);
            }
        }
        assert!(decode_samples(&options(5), bytes, &Source::Memory).is_err());
        // A run merged out of order is an error.
        let mut m = SampleMerge::new(o);
        let second = decode_samples(&o, &sent[1], &Source::Memory).unwrap();
        assert!(m.absorb(second, &Source::Memory).is_err());
    }
}
