//! [`PerThreadPlan`], [`Both`] and [`CountPlan`] partials on the wire: each inner partial in its own
//! format, framed by its length (a thread's partial after its id).

use std::collections::BTreeMap;

use super::{Cursor, Out, Wire};
use crate::error::{Result, Source};
use crate::parallel::{Both, CountPlan, PerThreadPlan};

const PER_THREAD: [u8; 8] = *b"CSPTH\0\0\x01";
const BOTH: [u8; 8] = *b"CSBTH\0\0\x01";

impl<P: Wire + Clone + Send + 'static> Wire for PerThreadPlan<P> {
    fn encode(&self, part: &mut Self::Partial) -> Vec<u8> {
        let mut out = Out::default();
        out.bytes(&PER_THREAD);
        out.u64(part.len() as u64);
        for (&t, p) in part.iter_mut() {
            out.u32(t);
            let inner = self.0.encode(p);
            out.u64(inner.len() as u64);
            out.bytes(&inner);
        }
        out.0
    }

    fn decode(&self, bytes: &[u8], source: &Source) -> Result<Self::Partial> {
        let mut r = Cursor::open(bytes, source, &PER_THREAD, "per-thread")?;
        let n = r.len(12)?;
        let mut parts = BTreeMap::new();
        for _ in 0..n {
            let t = r.u32()?;
            let len = r.len(1)?;
            let part = self.0.decode(r.take(len)?, source)?;
            if parts.insert(t, part).is_some() {
                return Err(r.corrupt(format!("thread {t} twice")));
            }
        }
        r.end()?;
        Ok(parts)
    }

    fn refs(&self, part: &Self::Partial) -> u64 {
        part.values().map(|p| self.0.refs(p)).sum()
    }
}

impl<A: Wire, B: Wire> Wire for Both<A, B> {
    fn encode(&self, part: &mut Self::Partial) -> Vec<u8> {
        let mut out = Out::default();
        out.bytes(&BOTH);
        for inner in [self.0.encode(&mut part.0), self.1.encode(&mut part.1)] {
            out.u64(inner.len() as u64);
            out.bytes(&inner);
        }
        out.0
    }

    fn decode(&self, bytes: &[u8], source: &Source) -> Result<Self::Partial> {
        let mut r = Cursor::open(bytes, source, &BOTH, "two-plan")?;
        let len = r.len(1)?;
        let a = self.0.decode(r.take(len)?, source)?;
        let len = r.len(1)?;
        let b = self.1.decode(r.take(len)?, source)?;
        r.end()?;
        Ok((a, b))
    }

    /// The first plan's: both cover the same references.
    fn refs(&self, part: &Self::Partial) -> u64 {
        self.0.refs(&part.0)
    }
}

const COUNT: [u8; 8] = *b"CSCNT\0\0\x01";

impl Wire for CountPlan {
    fn encode(&self, part: &mut u64) -> Vec<u8> {
        let mut out = Out::default();
        out.bytes(&COUNT);
        out.u64(*part);
        out.0
    }

    fn decode(&self, bytes: &[u8], source: &Source) -> Result<u64> {
        let mut r = Cursor::open(bytes, source, &COUNT, "reference count")?;
        let n = r.u64()?;
        r.end()?;
        Ok(n)
    }

    fn refs(&self, part: &u64) -> u64 {
        *part
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{CUTS, merged_through_wire, stream, survives_damage};
    use super::*;
    use crate::analysis::Analysis;
    use crate::batch::Batch;
    use crate::parallel::{Chunked, StackDistancePlan, StatsPlan};
    use crate::reuse::Options;

    /// The test stream, its accesses dealt to threads 1-3 in runs of uneven length.
    fn threaded() -> Batch {
        let flat = stream(20_000, 3000, 7);
        let mut b = Batch::new();
        for i in 0..flat.len() {
            b.set_thread(1 + ((i / 377 + i / 1000) % 3) as u32);
            b.push(flat.get(i));
        }
        b
    }

    /// The plan's partials of `batch` cut at [`CUTS`], threads kept.
    fn partials<P: Chunked>(plan: &P, batch: &Batch) -> Vec<P::Partial> {
        let mut bounds = vec![0];
        bounds.extend_from_slice(&CUTS);
        bounds.push(batch.len());
        bounds
            .windows(2)
            .map(|w| {
                let mut part = Batch::new();
                part.extend_from_range(batch, w[0]..w[1]);
                let mut worker = plan.worker(w[0] as u64);
                worker.observe(&part);
                plan.seal(worker)
            })
            .collect()
    }

    #[test]
    fn per_thread_partials_merge_the_same_through_the_wire() {
        let options = Options::default();
        let stats = StatsPlan {
            line_size: options.line_size,
        };
        let plan = Both(
            PerThreadPlan(StackDistancePlan { options }),
            PerThreadPlan(CountPlan { options }),
        );
        let batch = threaded();
        let mut direct = partials(&plan, &batch).into_iter();
        let mut acc = direct.next().unwrap();
        direct.for_each(|p| plan.merge(&mut acc, p));
        let want = plan.finish(acc);
        assert_eq!(want.0.len(), 3);
        for all in [false, true] {
            let got = merged_through_wire(&plan, partials(&plan, &batch), all);
            assert_eq!(got.0, want.0);
            assert_eq!(got.1, want.1);
        }
        let per = PerThreadPlan(stats);
        let got = merged_through_wire(&per, partials(&per, &batch), true);
        let refs: u64 = got.iter().map(|(_, s)| s.refs).sum();
        assert_eq!(refs, want.1.iter().map(|(_, n)| n).sum::<u64>());
    }

    #[test]
    fn damaged_per_thread_partials_are_errors_not_panics() {
        let options = Options::default();
        let plan = Both(
            PerThreadPlan(CountPlan { options }),
            PerThreadPlan(CountPlan { options }),
        );
        let mut part = partials(&plan, &threaded()).remove(1);
        let bytes = plan.encode(&mut part);
        survives_damage(&plan, &bytes, || partials(&plan, &threaded()).remove(0));
    }
}
