//! The stack-distance partial on the wire (format in the [parent](super) documentation).

use hashbrown::HashSet;

use super::{Cursor, Out, Wire, check_counts};
use crate::error::{Result, Source};
use crate::parallel::{StackDistancePartial, StackDistancePlan};

const MAGIC: [u8; 8] = *b"CSSDP\0\0\x02";

impl Wire for StackDistancePlan {
    fn encode(&self, part: &mut StackDistancePartial) -> Vec<u8> {
        part.detach();
        let mut out = Out::with_capacity(64 + 8 * (part.firsts.len() + part.recency.len()));
        out.bytes(&MAGIC);
        out.options(&self.options);
        out.u64(part.refs);
        out.histogram(&part.histogram);
        for list in [&part.firsts, &part.recency] {
            out.u64(list.len() as u64);
            for &l in list.iter() {
                out.u64(l);
            }
        }
        out.0
    }

    fn decode(&self, bytes: &[u8], source: &Source) -> Result<StackDistancePartial> {
        let mut r = Cursor::open(bytes, source, &MAGIC, "stack-distance")?;
        r.options(&self.options)?;
        let refs = r.u64()?;
        let histogram = r.histogram(self.options.layout)?;
        let firsts = r.list()?;
        let recency = r.list()?;
        r.end()?;
        // A rank's run is a whole range of the trace: its unresolved first references are all
        // its lines, the lines of its recency order.
        let mut set: HashSet<u64, foldhash::fast::RandomState> = HashSet::default();
        set.reserve(recency.len());
        if !recency.iter().all(|&l| set.insert(l)) {
            return Err(r.corrupt("a line listed twice in the recency order"));
        }
        if firsts.len() != recency.len() || !firsts.iter().all(|&l| set.remove(&l)) {
            return Err(r.corrupt("the first references are not the lines of the recency order"));
        }
        let max = histogram.bins().last().map(|b| b.start);
        check_counts(
            &r,
            refs,
            histogram.total(),
            firsts.len(),
            max,
            firsts.len() as u64,
        )?;
        Ok(StackDistancePartial::from_parts(
            refs, histogram, firsts, recency,
        ))
    }

    fn refs(&self, part: &StackDistancePartial) -> u64 {
        part.refs
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{
        CUTS, merges_like_one_pass, survives_damage, with_and_without_instructions,
    };
    use super::*;
    use crate::analysis::Analysis;
    use crate::parallel::Chunked;
    use crate::reuse::{Options, StackDistanceAnalysis};
    use crate::{Access, Batch};

    #[test]
    fn round_trips_and_rejects_damage() {
        let plan = StackDistancePlan::default();
        let mut w = plan.worker(1);
        let batch: Batch = [0u64, 64, 0, 128, 64, 1 << 30, 0]
            .map(|a| Access::load(a, 8))
            .into_iter()
            .collect();
        w.observe(&batch);
        let mut p = plan.seal(w);
        let bytes = plan.encode(&mut p);
        let q = plan.decode(&bytes, &Source::Memory).unwrap();
        assert_eq!(
            (q.refs, &q.firsts, &q.recency),
            (7, &vec![0, 1, 2, 1 << 24], &vec![2, 1, 1 << 24, 0])
        );
        assert_eq!(q.histogram, p.histogram);
        let first = || {
            let mut w = plan.worker(0);
            w.observe(&batch);
            plan.seal(w)
        };
        // Almost any damage breaks a total or the set of lines; a distance moved to
        // another valid one decodes, and merges.
        assert!(survives_damage(&plan, &bytes, first) <= 3);
    }

    #[test]
    fn merging_decoded_partials_equals_merging_the_partials() {
        for options in with_and_without_instructions() {
            let one = (
                StackDistanceAnalysis::new(options),
                StackDistanceAnalysis::finish,
            );
            merges_like_one_pass(&StackDistancePlan { options }, 7, &CUTS, one, |got| got);
        }
    }

    #[test]
    fn a_partial_of_other_options_is_refused() {
        let plan = StackDistancePlan::default();
        let mut p = plan.seal(plan.worker(0));
        let bytes = plan.encode(&mut p);
        let other = StackDistancePlan {
            options: Options {
                include_instructions: true,
                ..Options::default()
            },
        };
        let e = other.decode(&bytes, &Source::Memory).err().unwrap();
        assert!(e.to_string().contains("other options"), "{e}");
    }
}
