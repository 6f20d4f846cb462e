//! Tests of the simulators: hand-computed traces, brute force, and the laws.

pub(in crate::sim) mod brute;
mod cache;
mod cachegrind;
mod hierarchy;
mod prefetch;
mod rrip;
mod utilization;
mod writeback;
mod writeback_policies;

use crate::access::{Access, AccessKind};
use crate::batch::Batch;

/// A batch of accesses given as (kind, address, size).
pub fn batch(accesses: &[(AccessKind, u64, u32)]) -> Batch {
    accesses
        .iter()
        .map(|&(kind, addr, size)| Access {
            addr,
            size,
            kind,
            pc: None,
        })
        .collect()
}
