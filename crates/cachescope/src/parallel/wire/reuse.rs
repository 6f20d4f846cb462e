//! The reuse-time partial on the wire (format in the [parent](super) documentation).

use super::{Cursor, Out, Wire, check_counts};
use crate::error::{Result, Source};
use crate::parallel::{ReuseTimePartial, ReuseTimePlan};
use crate::reuse::ReuseTime;

const MAGIC: [u8; 8] = *b"CSRTP\0\0\x01";

impl Wire for ReuseTimePlan {
    fn encode(&self, part: &mut ReuseTimePartial) -> Vec<u8> {
        let mut out = Out::with_capacity(64 + 24 * part.firsts.len());
        out.bytes(&MAGIC);
        out.options(&self.options);
        out.u64(part.times.position());
        out.histogram(&part.reuse_time);
        let times = &part.times;
        out.lines(part.firsts.iter().map(|&(l, f)| {
            let last = times
                .last_of(l)
                .expect("every first-referenced line has a last");
            (l, f, last)
        }));
        out.0
    }

    fn decode(&self, bytes: &[u8], source: &Source) -> Result<ReuseTimePartial> {
        let mut r = Cursor::open(bytes, source, &MAGIC, "reuse-time")?;
        r.options(&self.options)?;
        let refs = r.u64()?;
        let reuse_time = r.histogram(self.options.layout)?;
        let mut times = ReuseTime::with_lines(r.peek_len(24));
        let firsts = r.lines(refs, |l, p| times.set_last(l, p).is_none())?;
        r.end()?;
        let max = reuse_time.bins().last().map(|b| b.start);
        check_counts(&r, refs, reuse_time.total(), firsts.len(), max, refs)?;
        times.advance(refs);
        Ok(ReuseTimePartial {
            times,
            reuse_time,
            firsts,
        })
    }

    fn refs(&self, part: &ReuseTimePartial) -> u64 {
        part.times.position()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{
        CUTS, merges_like_one_pass, partials, stream, survives_damage,
        with_and_without_instructions,
    };
    use super::*;
    use crate::reuse::ReuseTimeAnalysis;

    #[test]
    fn merging_decoded_partials_equals_merging_the_partials() {
        for options in with_and_without_instructions() {
            let one = (ReuseTimeAnalysis::new(options), ReuseTimeAnalysis::finish);
            merges_like_one_pass(&ReuseTimePlan { options }, 11, &CUTS, one, |got| got);
        }
    }

    #[test]
    fn damage_is_an_error_never_a_panic() {
        let plan = ReuseTimePlan::default();
        let batch = stream(300, 40, 3);
        let mut parts = partials(&plan, &batch, &[150]);
        let mut second = parts.pop().unwrap();
        let bytes = plan.encode(&mut second);
        let back = plan.decode(&bytes, &Source::Memory).unwrap();
        assert_eq!(back.firsts, second.firsts);
        assert_eq!(back.reuse_time, second.reuse_time);
        // Damage to a line address or a count often leaves a valid partial: it merges.
        let decoded = survives_damage(&plan, &bytes, || partials(&plan, &batch, &[150]).remove(0));
        assert!(decoded > 0);
    }
}
