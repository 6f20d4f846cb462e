//! A user-set memory limit for the structures that grow with the number of distinct lines.
//!
//! Memory in every analysis is proportional to the distinct lines of the trace (line tables,
//! distinct-line sets), never to its length. With a limit set ([`set_limit`], the CLI's
//! `--max-memory`), each such structure asks [`grow`] before it enlarges itself, passing the bytes
//! it holds now and the bytes it would hold after. When the projected total would pass the limit,
//! the growth is refused and the budget is marked exceeded; the pass stops at the next batch read
//! (the analyses of a threaded pass still see the few batches read ahead) with
//! [`Error::MemoryLimit`] (see [`crate::interrupt::check`]), a clear error instead of an abort
//! by the allocator. A refused table keeps working at a higher load until then, and grows
//! anyway only at 7/8 load, where linear probing would slow to a crawl, so the limit is passed by at most the new
//! lines of those last batches.
//!
//! Without a limit (the default) the accounting is one relaxed atomic add per growth.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::error::{Error, Result};

static LIMIT: AtomicU64 = AtomicU64::new(u64::MAX);
static CHARGED: AtomicU64 = AtomicU64::new(0);
static EXCEEDED: AtomicBool = AtomicBool::new(false);
/// The projected total that was refused first, for the error message.
static REFUSED_AT: AtomicU64 = AtomicU64::new(0);

/// Sets the limit in bytes for everything charged to the budget (`None`: no limit).
pub fn set_limit(bytes: Option<u64>) {
    LIMIT.store(bytes.unwrap_or(u64::MAX), Ordering::SeqCst);
}

/// The limit in bytes, if one is set.
pub fn limit() -> Option<u64> {
    let l = LIMIT.load(Ordering::Relaxed);
    (l != u64::MAX).then_some(l)
}

/// Bytes currently charged.
pub fn charged() -> u64 {
    CHARGED.load(Ordering::Relaxed)
}

/// Asks to grow a structure from `from` to `to` bytes. Returns true (and charges the
/// difference) when the total stays within the limit; otherwise marks the budget exceeded and
/// returns false, and the caller should keep its current size if it still can.
pub fn grow(from: usize, to: usize) -> bool {
    let extra = to.saturating_sub(from) as u64;
    let limit = LIMIT.load(Ordering::Relaxed);
    let before = CHARGED.fetch_add(extra, Ordering::Relaxed);
    if before.saturating_add(extra) <= limit {
        return true;
    }
    CHARGED.fetch_sub(extra, Ordering::Relaxed);
    if !EXCEEDED.swap(true, Ordering::SeqCst) {
        REFUSED_AT.store(before.saturating_add(extra), Ordering::SeqCst);
    }
    false
}

/// Charges a growth of `from` to `to` bytes that must happen whatever the limit.
pub fn force(from: usize, to: usize) {
    CHARGED.fetch_add(to.saturating_sub(from) as u64, Ordering::Relaxed);
}

/// Returns `bytes` to the budget (a structure was dropped).
pub fn release(bytes: usize) {
    let _ = CHARGED.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
        Some(c.saturating_sub(bytes as u64))
    });
}

/// [`Error::MemoryLimit`] once a growth was refused, `Ok` otherwise.
pub fn check() -> Result<()> {
    if !EXCEEDED.load(Ordering::Relaxed) {
        return Ok(());
    }
    Err(Error::MemoryLimit {
        limit: LIMIT.load(Ordering::Relaxed),
        needed: REFUSED_AT.load(Ordering::Relaxed),
    })
}

/// What one growing structure has charged to the budget; returned when dropped. For structures
/// that grow on their own (hash sets): report their size after growing with [`Charge::set`].
#[derive(Debug, Default)]
pub struct Charge {
    bytes: usize,
}

impl Charge {
    /// Records that the structure now holds `bytes`; false once the budget is exceeded (the
    /// pass then stops at its next batch).
    pub fn set(&mut self, bytes: usize) -> bool {
        let ok = if bytes > self.bytes {
            grow(self.bytes, bytes) || {
                force(self.bytes, bytes);
                false
            }
        } else {
            release(self.bytes - bytes);
            true
        };
        self.bytes = bytes;
        ok
    }
}

impl Clone for Charge {
    /// A copy of a structure holds its bytes again: charged whatever the limit, like any
    /// allocation the structure cannot refuse.
    fn clone(&self) -> Charge {
        force(0, self.bytes);
        Charge { bytes: self.bytes }
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        release(self.bytes);
    }
}
