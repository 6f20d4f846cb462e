//! `corun --simulate`: the programs interleaved in one simulated cache, each compared with
//! the prediction for the prefix it ran.

use super::*;

/// Simulates the interleaved programs and compares each with the prediction for the prefix
/// it ran.
pub(super) fn simulate(
    args: &CorunArgs,
    sources: &[Input],
    options: Options,
    cache: Geometry,
    rates: &[f64],
    rows: &mut [Row],
) -> Result<()> {
    let mut traces = Vec::new();
    for p in sources {
        if saved_footprint(&p.path)?.is_some() {
            bail!(
                "--simulate needs every program's trace; {} is a footprint",
                p.path.display()
            );
        }
        traces.push(p.open(&args.read)?);
    }
    let progress = crate::progress::Progress::spinner(args.run.quiet, "interleaved simulation");
    let total = std::sync::atomic::AtomicU64::new(0);
    let mut counted: Vec<_> = traces
        .into_iter()
        .map(|inner| crate::progress::Counted {
            inner,
            total: &total,
            progress: &progress,
        })
        .collect();
    let sims = cachescope::models::hotl::corun::simulate(&mut counted, rates, cache, options);
    progress.finish();
    let sims = sims?;
    let mut prefixed = Vec::new();
    for (p, s) in sources.iter().zip(&sims) {
        prefixed.push(CorunProgram {
            footprint: profile(p, options, args, Some(s.refs))?,
            rate: 0.0,
        });
    }
    for (c, &r) in prefixed.iter_mut().zip(rates) {
        c.rate = r;
    }
    let again = cachescope::models::hotl::corun::predict(&prefixed, cache)?;
    for ((row, s), pred) in rows.iter_mut().zip(&sims).zip(again) {
        let actual = s.miss_ratio();
        let model = pred.miss_ratio.unwrap_or(pred.miss_ratio_warm);
        row.simulated = Some(Simulated {
            refs: s.refs,
            miss_ratio: actual,
            miss_ratio_warm: s.miss_ratio_warm(),
            relative_error: if actual > 0.0 {
                (model - actual) / actual
            } else {
                0.0
            },
            predicted_for_prefix: pred,
        });
    }
    Ok(())
}

/// Passes on only the first `left` counted references (data references, or all with
/// instructions counted).
pub(super) struct Prefix<'a, A> {
    pub(super) inner: &'a mut A,
    pub(super) left: u64,
    pub(super) options: Options,
}

impl<A: Analysis> Analysis for Prefix<'_, A> {
    fn observe(&mut self, batch: &Batch) {
        if self.left == 0 {
            return;
        }
        let counted = |k: AccessKind| self.options.include_instructions || k != AccessKind::Instr;
        let total = batch.kinds.iter().filter(|&&k| counted(k)).count() as u64;
        if total <= self.left {
            self.left -= total;
            self.inner.observe(batch);
            return;
        }
        // The last batch of the prefix: cut after the `left`-th counted reference.
        let mut cut = batch.clone();
        cut.keep_counted(self.left, counted);
        self.left = 0;
        self.inner.observe(&cut);
    }
}
