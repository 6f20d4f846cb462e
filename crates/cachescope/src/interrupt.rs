//! Cooperative stopping: a process-wide flag that every trace read checks.
//!
//! A signal handler (the CLI's Ctrl-C handler) cannot unwind the thread doing the work, so it
//! sets this flag; [`Trace::read_batch`](crate::trace::Trace::read_batch) checks it before each
//! batch and fails with [`Error::Interrupted`], and the same check reports a
//! [memory budget](crate::budget) that an analysis overran while observing the last batch. Every
//! pass over a trace therefore stops within one batch, unwinding normally, so temporary output
//! files are removed by their owners' destructors.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

use crate::error::{Error, Result};

static REQUESTED: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// Asks every running pass to stop at its next batch (safe to call from any thread).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// True once [`request`] has been called.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// The flag itself, for a signal handler to set in the handler (`signal_hook::flag::register`):
/// a flag set later, by a thread woken by the signal, could lose the race with a recorded
/// program that died of the same signal (a terminal's Ctrl-C reaches the whole group), and the
/// run would end as if the program had merely crashed.
pub fn flag() -> Arc<AtomicBool> {
    Arc::clone(&REQUESTED)
}

/// `Err(Error::Interrupted)` after [`request`], the memory budget's error once it is exceeded,
/// `Ok` otherwise. Cheap enough to call once per batch.
pub fn check() -> Result<()> {
    if requested() {
        return Err(Error::Interrupted);
    }
    crate::budget::check()
}
