//! What-if layouts: a layout change applied to a trace's addresses before any simulator reads
//! it (`cachescope whatif`, the predictions of `cachescope advise`, [`crate::advice`]).
//!
//! A change ([`Change`], parsed from `whatif --change SPEC`) names a structure (a global
//! variable, a heap allocation site or the pointer it is stored in) and what to do to it:
//! split its fields into arrays of their own, reorder them, pad or align its elements, pad the
//! rows of a two-dimensional array, give each thread's elements lines of their own, move it to
//! another alignment, or let its stores stream past the caches. [`Relayout`] applies the
//! changes to each batch as the trace streams, following the event log as the attribution
//! does (which bucket and which instance every reference falls in); [`relay`] puts it in
//! front of a [`Trace`], so every analysis, simulator and the multi-core model read the changed
//! trace unchanged. Only addresses change; the references stay in their order (the stores a
//! `nontemporal` change streams are taken out: they would not enter the caches).
//!
//! | module | concern |
//! | --- | --- |
//! | `spec` | [`Change`]: the SPEC syntax, parsed and printed back |
//! | `shape` | [`Shape`] (an element's fields and padding) and [`Mapping`] (a change as a one-to-one function of offsets) |
//! | `targets` | which change a bucket gets, made concrete for its element |
//! | `relayout` | [`Relayout`]: the changes applied batch by batch, instances placed |
//! | `movnt` | the program's non-temporal store instructions (`nontemporal:@movnt`) |
//! | `reader` | [`Relaid`]: a trace read through a [`Relayout`] |
//! | `compare` | [`Misses`] per level, before and after ([`LevelChange`]) |
//!
//! ```
//! use cachescope::layout::{Change, Kind};
//!
//! let c: Change = "split:particles=x,y/vx".parse()?;
//! assert_eq!(c.structure, "particles");
//! assert!(matches!(c.kind, Kind::Split(Some(ref groups)) if groups.len() == 2));
//! assert_eq!(c.to_string(), "split:particles=x,y/vx");
//! # Ok::<(), cachescope::Error>(())
//! ```

mod compare;
mod movnt;
mod own_line;
mod reader;
mod relayout;
mod shape;
mod spec;
mod targets;

#[cfg(test)]
mod tests;

pub use compare::{LevelChange, Misses, geometry_label, whatif_json};
pub use movnt::non_temporal_store;
pub use reader::{Outcome, Relaid};
pub use relayout::{Applied, Relayout};
pub use shape::{Mapping, Piece, Shape};
pub use spec::{Change, FieldRef, Kind, MOVNT};

use crate::trace::Trace;

/// Reads `trace` through `relayout` from now on; the changes' outcome (what each applied to,
/// or the error of a change that named nothing) appears in the returned handle at its end.
pub fn relay(trace: &mut Trace, relayout: Relayout<'static>) -> Outcome {
    let mut outcome = None;
    trace.wrap(|inner| {
        let r = Relaid::new(inner, relayout);
        outcome = Some(r.outcome());
        Box::new(r)
    });
    outcome.expect("wrapped")
}
