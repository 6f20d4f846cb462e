//! cachescope: cache-locality analysis of memory-access traces.
//!
//! # Architecture
//!
//! Data flows one way, in one streaming pass:
//!
//! ```text
//! file/stdin ─▶ trace::open ─▶ AccessReader ─▶ Batch ─▶ pass::Pass::run ─▶ Analysis… ─▶ report
//!               (decompress,   (one per format,  (columns)  (decodes on its   (push: observe
//!                detect)        pulled)                      threads, splits)  every batch)
//! ```
//!
//! - The trace model is in [`access`]: an [`Access`] has a byte address, a size, an
//!   [`AccessKind`] and, where the format gives it, the address of the instruction that made it.
//!   [`LineSize`] maps byte addresses to cache lines ([`LineAddr`]) following
//!   docs/definitions.md.
//! - [`trace`] reads every supported format. Readers are *pulled*:
//!   [`trace::AccessReader::read_batch`] fills a [`Batch`] (structure of arrays) with up to
//!   [`batch::BATCH_LEN`] accesses. [`trace::open`] detects compression and format from the
//!   content and returns a [`trace::Trace`]. Memory is constant in trace length.
//! - Analyses are *pushed to*: [`analysis::Analysis::observe`] sees every batch in order, and
//!   [`pass::Pass::run`], the one way to run a pass, makes one decode feed all of them (on
//!   threads, in chunks, or over MPI ranks through the caller's hooks: see [`pass`]). Each
//!   analysis has its own `finish`.
//! - [`stats`] is the first analysis; [`workloads`] are synthetic traces that behave like any
//!   other reader; [`trace::write`] and [`trace::native`] write traces; [`record`] runs a real
//!   program under cachescope's Valgrind tool (or lackey) and reads its trace as it is
//!   written, or samples it inside the tool ([`record::sample_program`]).
//! - Exact ground truth: [`sim`] (cache simulators, Cachegrind's model, the multi-core model
//!   fed by [`interleave`], which deals a recording's threads in modelled time or round-robin;
//!   [`cores`] runs the two together) and [`reuse`] (reuse
//!   times, LRU stack distances, exact miss-ratio curves, the [`reuse::Mrc`] points model
//!   every method shares).
//! - Models, measured against the exact analyses: [`sampling`] (StatCache's sampler and
//!   profiles) feeding [`models::statcache`] and [`models::statstack`]; [`models::hotl`]
//!   (footprint theory, co-run sharing) and [`models::smith`] (associativity); [`phases`]
//!   (setvectors and the phase classifiers they are compared with).
//!
//! - Scale: [`parallel`] cuts a trace into parts (a native trace by its block index), holds
//!   the plans whose partial results merge exactly and their wire formats for MPI ranks;
//!   [`pass`] runs them. [`threads::map_in_order`] spreads independent computations after a
//!   pass (a model's cache sizes) over threads.
//!
//! Errors ([`Error`]) are typed and name the file, and for text the line number and text.
//!
//! # Example
//!
//! ```
//! use cachescope::pass::{Analyses, Pass};
//! use cachescope::stats::StatsAnalysis;
//! use cachescope::trace::{OpenOptions, Trace};
//! use cachescope::{LineSize, Source};
//!
//! // A plain-text trace: three loads, two of them in the same 64-byte line.
//! let text: &'static [u8] = b"0x1000\n0x1008\n0x2000\n";
//! let mut trace = Trace::from_read(text, Source::Memory, None, &OpenOptions::default())?;
//! let mut stats = StatsAnalysis::new(LineSize::new(64)?);
//! Pass::new(1).run(&mut trace, Analyses(&mut [&mut stats]))?;
//! let s = stats.finish();
//! assert_eq!(trace.format_name(), "plain-hex");
//! assert_eq!((s.refs, s.distinct_lines), (3, 2));
//! # Ok::<(), cachescope::Error>(())
//! ```

pub mod access;
pub mod advice;
pub mod analysis;
pub mod attribution;
pub mod batch;
pub mod budget;
pub mod calls;
pub mod cores;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod interleave;
pub mod interrupt;
pub mod layout;
mod memo;
pub mod method;
pub mod mini;
pub mod models;
pub mod opt;
pub mod parallel;
pub mod pass;
pub mod phases;
mod prefetch;
pub mod record;
pub mod report;
pub mod reuse;
mod rng;
pub mod sampling;
pub mod sharing;
pub mod sim;
pub mod spatial;
pub mod stages;
pub mod stats;
pub mod threads;
pub mod tlb;
pub mod trace;
pub mod units;
pub mod workloads;

pub use access::{Access, AccessKind, LineAddr, LineSize, MAIN_THREAD, ThreadId};
pub use batch::Batch;
pub use error::{Error, Result, Source};
