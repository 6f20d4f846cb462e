//! [`Collect`]: the one pass that gathers `advise`'s evidence, and [`Evidence`], what it found.
//!
//! The attribution runs with every option the kinds need (per-field counts, utilization,
//! conflict misses by set, unread store fills, loads' strides, per-structure stack
//! distances) in a cache of the first data level's shape. With cores, the sharing analysis's
//! first pass runs beside it ([`Finder`]: its second pass, the multi-core model, is the
//! caller's), and two more sharing analyses look for latent false sharing as Predator's
//! virtual lines do: lines of twice the size (an adjacent-line prefetcher fetches pairs), and
//! lines of the same size shifted by half a line (the structure at another alignment).

use std::path::Path;

use crate::access::LineSize;
use crate::analysis::Analysis;
use crate::attribution::events::EventReader;
use crate::attribution::{Attribution, EventSource, Options as AttributionOptions, Report};
use crate::batch::Batch;
use crate::error::Result;
use crate::sharing::{Finder, SharedLine, Sharing, SharingAnalysis};

use super::candidates::Options;

/// Lines shared falsely at another line size or alignment, named.
#[derive(Clone, Debug)]
pub struct Latent {
    /// `128-byte lines` or `shifted by 32 bytes`.
    pub variant: String,
    /// The alignment a `move` change would recreate it at: (offset, alignment).
    pub shift: Option<(u64, u64)>,
    /// The line.
    pub line: SharedLine,
}

/// What the evidence pass found.
#[derive(Debug)]
pub struct Evidence {
    /// The attribution, with `structures` and `loads`.
    pub report: Report,
    /// The lines threads share and their coherence misses (with cores, once the caller ran
    /// the model's pass and put it here).
    pub sharing: Option<Sharing>,
    /// Lines falsely shared only at another line size or alignment.
    pub latent: Vec<Latent>,
}

/// A sharing analysis fed every address moved up by `shift` bytes.
struct Shifted {
    shift: u64,
    inner: SharingAnalysis,
    scratch: Batch,
}

impl Analysis for Shifted {
    fn observe(&mut self, batch: &Batch) {
        self.scratch.clone_from(batch);
        for a in &mut self.scratch.addrs {
            *a = a.wrapping_add(self.shift);
        }
        self.inner.observe(&self.scratch);
    }
}

/// The lines one virtual-line analysis found.
struct Variant {
    what: String,
    shift: Option<(u64, u64)>,
    lines: Vec<SharedLine>,
    size: u64,
}

/// The analyses of the evidence pass.
pub struct Collect {
    attribution: Attribution<'static>,
    finder: Option<Finder>,
    wide: Option<SharingAnalysis>,
    shifted: Option<Shifted>,
    line: u64,
}

impl Collect {
    /// The evidence `options` ask for; `events` the trace's event log (needed to name
    /// structures), `exe` the program of a trace without a memory map.
    pub fn new(
        options: &Options,
        events: Option<EventSource<'static>>,
        exe: Option<&Path>,
    ) -> Result<Collect> {
        let attribution = AttributionOptions {
            geometry: options.l1,
            cost: None,
            exe: exe.map(Path::to_path_buf),
            utilization: true,
            fields: true,
            unread_writes: true,
            conflicts: true,
            ..AttributionOptions::default()
        };
        let line = options.l1.line_size().bytes();
        let threaded = options.sharing.is_some();
        Ok(Collect {
            attribution: Attribution::new(attribution, events)?,
            finder: options.sharing.map(Finder::new).transpose()?,
            wide: threaded
                .then(|| SharingAnalysis::new(LineSize::new(2 * line).expect("a power of two"))),
            shifted: threaded.then(|| Shifted {
                shift: line / 2,
                inner: SharingAnalysis::new(options.l1.line_size()),
                scratch: Batch::new(),
            }),
            line,
        })
    }

    /// The analyses the pass feeds.
    pub fn analyses(&mut self) -> Vec<&mut dyn Analysis> {
        let mut v: Vec<&mut dyn Analysis> = vec![&mut self.attribution];
        if let Some(f) = &mut self.finder {
            v.extend(f.analyses());
        }
        if let Some(w) = &mut self.wide {
            v.push(w);
        }
        if let Some(s) = &mut self.shifted {
            v.push(s);
        }
        v
    }

    /// The evidence, and the sharing analysis's first pass for the caller to run its second
    /// (`Finder::machine`); the latent lines named from the event log at `log`.
    pub fn finish(
        self,
        log: Option<&Path>,
        exe: Option<&Path>,
    ) -> Result<(Evidence, Option<Finder>)> {
        let report = self.attribution.finish()?;
        let mut latent = Vec::new();
        let line = self.line;
        // (what, the move that recreates it, its lines, their size)
        let mut variants: Vec<Variant> = Vec::new();
        if let Some(w) = &self.wide {
            variants.push(Variant {
                what: format!("{}-byte lines", 2 * line),
                shift: None,
                lines: w.finish(),
                size: 2 * line,
            });
        }
        if let Some(s) = &self.shifted {
            let mut lines = s.inner.finish();
            for l in &mut lines {
                l.addr = l.addr.wrapping_sub(s.shift);
            }
            variants.push(Variant {
                what: format!("the structure {} bytes further", s.shift),
                shift: Some((s.shift, line)),
                lines,
                size: line,
            });
        }
        for Variant {
            what: variant,
            shift,
            mut lines,
            size,
        } in variants
        {
            lines.retain(|l| l.kind == "false");
            if lines.is_empty() {
                continue;
            }
            if let Some(path) = log {
                crate::sharing::name(&mut lines, EventReader::open(path)?, exe, size)?;
            }
            latent.extend(lines.into_iter().map(|l| Latent {
                variant: variant.clone(),
                shift,
                line: l,
            }));
        }
        Ok((
            Evidence {
                report,
                sharing: None,
                latent,
            },
            self.finder,
        ))
    }
}
