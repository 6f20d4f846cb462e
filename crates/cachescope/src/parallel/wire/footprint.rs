//! The footprint partial (a chunk's [`FootprintAnalysis`]) on the wire (format in the
//! [parent](super) documentation).

use super::{Cursor, Out, Wire, check_counts};
use crate::error::{Result, Source};
use crate::models::hotl::FootprintAnalysis;
use crate::models::hotl::sums::{WindowSums, binned_bounds, binned_index, binned_limit};
use crate::parallel::FootprintPlan;
use crate::reuse::Layout;
use crate::reuse::table::LineTable;

const MAGIC: [u8; 8] = *b"CSFPP\0\0\x01";

impl Wire for FootprintPlan {
    fn encode(&self, part: &mut FootprintAnalysis) -> Vec<u8> {
        let p = part.settle();
        let exact: Vec<(usize, u64)> = (p.reuse.exact_counts().iter().enumerate())
            .filter(|(_, c)| **c > 0)
            .map(|(x, &c)| (x, c))
            .collect();
        let binned: Vec<_> = p.reuse.binned().collect();
        let partials = p.reuse.partials();
        let mut out = Out::with_capacity(
            96 + 8 * p.listed.len()
                + 16 * exact.len()
                + 32 * binned.len()
                + 16 * partials.len()
                + 24 * p.first_lines.len(),
        );
        out.bytes(&MAGIC);
        out.options(&p.options);
        out.u64(p.listed.len() as u64);
        p.listed.iter().for_each(|&w| out.u64(w));
        out.u64(p.now);
        out.u64(p.prev);
        out.u64(exact.len() as u64);
        for (x, c) in exact {
            out.u64(x as u64);
            out.u64(c);
        }
        out.u64(binned.len() as u64);
        for (b, c, s) in binned {
            out.u64(b as u64);
            out.u64(c);
            out.u128(s);
        }
        out.u64(partials.len() as u64);
        partials.iter().for_each(|q| out.u128(q.excess));
        let table = p.table;
        out.lines(p.first_lines.iter().map(|&(l, f)| {
            let last = table
                .get(l)
                .expect("every first-referenced line has a last");
            (l, f, last)
        }));
        out.0
    }

    fn decode(&self, bytes: &[u8], source: &Source) -> Result<FootprintAnalysis> {
        let mut r = Cursor::open(bytes, source, &MAGIC, "footprint")?;
        r.options(&self.options)?;
        let listed = r.list()?;
        if listed != self.windows {
            return Err(r.corrupt(format!(
                "made for the windows {listed:?}, this run lists {:?}",
                self.windows
            )));
        }
        let refs = r.u64()?;
        let prev = r.u64()?;
        let layout = self.options.layout;
        let (reuse, reuses, max) = sums(&mut r, layout, &listed)?;
        let mut table = LineTable::with_lines(r.peek_len(24));
        let mut last_is_prev = refs == 0;
        let first_lines = r.lines(refs, |l, p| {
            last_is_prev |= p == refs && l == prev;
            table.replace(l, p).is_none()
        })?;
        r.end()?;
        check_counts(&r, refs, reuses, first_lines.len(), max, refs)?;
        if !last_is_prev {
            return Err(r.corrupt(format!(
                "the last line referenced, {prev:#x}, is not last referenced at {refs}"
            )));
        }
        Ok(FootprintAnalysis::from_chunk_parts(
            self.options,
            listed,
            refs,
            prev,
            reuse,
            table,
            first_lines,
        ))
    }

    fn refs(&self, part: &FootprintAnalysis) -> u64 {
        part.refs()
    }
}

/// The reuse-time sums, their count of values and the smallest value of their highest bin.
fn sums(
    r: &mut Cursor<'_>,
    layout: Layout,
    listed: &[u64],
) -> Result<(WindowSums, u64, Option<u64>)> {
    let mut sums = WindowSums::new(layout, listed);
    let mut total = 0u64;
    let mut max = None;
    let mut add = |r: &Cursor<'_>, n: u64| {
        total = total
            .checked_add(n)
            .ok_or_else(|| r.corrupt("reuse counts overflow"))?;
        Ok::<_, crate::Error>(())
    };
    let n = r.len(16)?;
    for _ in 0..n {
        let (x, c) = (r.u64()?, r.u64()?);
        if x >= layout.exact_limit() || max.is_some_and(|m| x <= m) || c == 0 {
            return Err(r.corrupt(format!(
                "reuse time {x} out of order, empty, or not below the exact limit"
            )));
        }
        add(r, c)?;
        sums.add_exact(x, c);
        max = Some(x);
    }
    let n = r.len(32)?;
    let mut binned = Vec::with_capacity(n);
    for _ in 0..n {
        let (b, c, s) = (r.u64()?, r.u64()?, r.u128()?);
        if b >= binned_limit(layout) as u64
            || binned.last().is_some_and(|&(p, _)| b <= p as u64)
            || c == 0
        {
            return Err(r.corrupt(format!("reuse-time bin {b} out of order, range or empty")));
        }
        let b = b as usize;
        let (lo, hi) = binned_bounds(layout, b);
        let c128 = u128::from(c);
        if s < u128::from(lo) * c128 || s > u128::from(hi) * c128 {
            return Err(r.corrupt(format!("{c} reuse times in {lo}..={hi} cannot sum to {s}")));
        }
        add(r, c)?;
        sums.add_binned(b, c, s);
        binned.push((b, c));
        max = Some(lo);
    }
    let n = r.len(16)?;
    if n != sums.partials().len() {
        return Err(r.corrupt(format!(
            "{n} listed-window sums for {} windows inside bins",
            sums.partials().len()
        )));
    }
    for i in 0..n {
        let excess = r.u128()?;
        let w = sums.partials()[i].window;
        let b = binned_index(layout, w);
        let count = binned
            .binary_search_by_key(&b, |&(b, _)| b)
            .map_or(0, |k| binned[k].1);
        let (_, hi) = binned_bounds(layout, b);
        if excess > u128::from(count) * u128::from(hi - w) {
            return Err(r.corrupt(format!(
                "the sum at window {w} is larger than its bin allows"
            )));
        }
        sums.add_partial(i, excess);
    }
    Ok((sums, total, max))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{CUTS, merges_like_one_pass, partials, stream, survives_damage};
    use super::*;
    use crate::reuse::Options;

    /// The footprint at every point and listed window, as comparable numbers.
    fn curve(fp: &crate::models::hotl::Footprint) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = fp
            .points(64)
            .unwrap()
            .iter()
            .chain(&fp.listed())
            .map(|p| (p.window, p.footprint.to_bits()))
            .collect();
        v.push((fp.refs, fp.distinct_lines));
        v
    }

    #[test]
    fn merging_decoded_partials_equals_merging_the_partials() {
        let layout = Layout::new(8).unwrap();
        for (options, windows) in [
            (Options::default(), vec![]),
            (
                Options {
                    include_instructions: true,
                    layout,
                    ..Options::default()
                },
                // Listed windows inside bins of the 8-bit layout, where partial sums are kept.
                vec![3, 300, 301, 999, 5001],
            ),
        ] {
            let plan = FootprintPlan::new(options, &windows).unwrap();
            let one = FootprintAnalysis::new(options, &windows).unwrap();
            let one = (one, |one: &FootprintAnalysis| curve(&one.finish()));
            merges_like_one_pass(&plan, 5, &CUTS, one, |got| curve(&got));
        }
    }

    #[test]
    fn damage_is_an_error_never_a_panic() {
        let layout = Layout::new(8).unwrap();
        let options = Options {
            layout,
            ..Options::default()
        };
        let plan = FootprintPlan::new(options, &[280, 290]).unwrap();
        // Long enough for reuse times in the binned region (≥ 256) and in the listed
        // windows' bin.
        let batch = stream(1200, 150, 9);
        let mut second = partials(&plan, &batch, &[400]).pop().unwrap();
        let bytes = plan.encode(&mut second);
        assert!(second.settle().reuse.binned().count() > 0);
        // Damage to a line address or a count often leaves a valid partial: it merges.
        let decoded = survives_damage(&plan, &bytes, || partials(&plan, &batch, &[400]).remove(0));
        assert!(decoded > 0);
        let other = FootprintPlan::new(options, &[280]).unwrap();
        let e = other.decode(&bytes, &Source::Memory).err().unwrap();
        assert!(e.to_string().contains("windows"), "{e}");
    }
}
