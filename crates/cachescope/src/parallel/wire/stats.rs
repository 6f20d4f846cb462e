//! The trace-statistics partial ([`StatsAnalysis`]) on the wire (format in the
//! [parent](super) documentation).

use super::{Cursor, Out, Wire};
use crate::error::{Result, Source};
use crate::parallel::StatsPlan;
use crate::stats::{LineSet, StatsAnalysis};

const MAGIC: [u8; 8] = *b"CSSTP\0\0\x01";

impl Wire for StatsPlan {
    fn encode(&self, part: &mut StatsAnalysis) -> Vec<u8> {
        let mut out = Out::with_capacity(96 + 8 * (part.data_lines.len() + part.instr_lines.len()));
        out.bytes(&MAGIC);
        out.u64(part.line_size.bytes());
        part.by_kind.iter().for_each(|&n| out.u64(n));
        for v in [
            part.data_bytes,
            part.straddling,
            part.min_addr,
            part.max_addr,
        ] {
            out.u64(v);
        }
        for set in [&part.data_lines, &part.instr_lines] {
            out.u64(set.len() as u64);
            set.iter().for_each(|&l| out.u64(l));
        }
        out.0
    }

    fn decode(&self, bytes: &[u8], source: &Source) -> Result<StatsAnalysis> {
        let mut r = Cursor::open(bytes, source, &MAGIC, "statistics")?;
        let line = r.u64()?;
        if line != self.line_size.bytes() {
            return Err(r.corrupt(format!(
                "made with {line}-byte lines, this run has {}",
                self.line_size.bytes()
            )));
        }
        let mut s = StatsAnalysis::new(self.line_size);
        for n in s.by_kind.iter_mut() {
            *n = r.u64()?;
        }
        let [loads, stores, modifies, instructions] = s.by_kind;
        let refs = loads
            .checked_add(stores)
            .and_then(|n| n.checked_add(modifies));
        let Some(refs) = refs.filter(|n| n.checked_add(instructions).is_some()) else {
            return Err(r.corrupt("reference counts overflow"));
        };
        (s.data_bytes, s.straddling) = (r.u64()?, r.u64()?);
        (s.min_addr, s.max_addr) = (r.u64()?, r.u64()?);
        let range_ok = if refs == 0 {
            (s.min_addr, s.max_addr) == (u64::MAX, 0) && s.data_bytes == 0
        } else {
            s.min_addr <= s.max_addr
        };
        if !range_ok
            || s.straddling > refs
            || u128::from(s.data_bytes) > u128::from(refs) * u128::from(u32::MAX)
        {
            return Err(r.corrupt(format!(
                "{refs} data references cannot have {} bytes, {} straddling, addresses \
                 {:#x}..{:#x}",
                s.data_bytes, s.straddling, s.min_addr, s.max_addr
            )));
        }
        let shift = self.line_size.shift();
        s.data_lines = lines(&mut r, refs, shift, "data")?;
        s.instr_lines = lines(&mut r, instructions, shift, "instruction")?;
        r.end()?;
        s.recharge();
        Ok(s)
    }

    fn refs(&self, part: &StatsAnalysis) -> u64 {
        part.by_kind.iter().sum()
    }
}

/// A set of at most `refs` distinct lines of `64 − shift` bits.
fn lines(r: &mut Cursor<'_>, refs: u64, shift: u32, what: &str) -> Result<LineSet> {
    let n = r.len(8)?;
    if n as u64 > refs {
        return Err(r.corrupt(format!("{n} {what} lines from {refs} references")));
    }
    let mut set = LineSet::default();
    set.reserve(n);
    for _ in 0..n {
        let l = r.u64()?;
        if shift > 0 && l >> (64 - shift) != 0 {
            return Err(r.corrupt(format!("{l:#x} is not a line address")));
        }
        if !set.insert(l) {
            return Err(r.corrupt(format!("{what} line {l:#x} listed twice")));
        }
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{CUTS, merges_like_one_pass, partials, stream, survives_damage};
    use super::*;
    use crate::access::LineSize;
    use crate::parallel::Chunked;

    #[test]
    fn merging_decoded_partials_equals_merging_the_partials() {
        for bytes in [1, 64, 4096] {
            let plan = StatsPlan {
                line_size: LineSize::new(bytes).unwrap(),
            };
            for cuts in [&CUTS[..], &[]] {
                let one = (StatsAnalysis::new(plan.line_size), StatsAnalysis::finish);
                merges_like_one_pass(&plan, 13, cuts, one, |got| got);
            }
        }
    }

    #[test]
    fn damage_is_an_error_never_a_panic() {
        let plan = StatsPlan {
            line_size: LineSize::DEFAULT,
        };
        let batch = stream(300, 40, 3);
        let mut second = partials(&plan, &batch, &[150]).pop().unwrap();
        let bytes = plan.encode(&mut second);
        // Damage to a line address or a count often leaves a valid partial: it merges.
        let decoded = survives_damage(&plan, &bytes, || partials(&plan, &batch, &[150]).remove(0));
        assert!(decoded > 0);
        // An empty partial: no data references, no address range.
        let mut empty = plan.seal(plan.worker(0));
        let bytes = plan.encode(&mut empty);
        let back = plan.decode(&bytes, &Source::Memory).unwrap();
        assert_eq!(back.finish(), empty.finish());
        let other = StatsPlan {
            line_size: LineSize::new(32).unwrap(),
        };
        assert!(other.decode(&bytes, &Source::Memory).is_err());
    }
}
