//! Data-structure attribution (Buck & Hollingsworth): which variable, heap allocation site and
//! code line misses, and which evicts which.
//!
//! The recording side ([`events`]) captures what a trace alone lacks: the program's memory map
//! and every heap allocation and free, each placed exactly in the reference stream. The
//! analysis side maps every address to a *stat bucket* (global variable, heap allocation site,
//! stack, other) and counts misses and evictions per bucket in an exact cache simulation, beside
//! the sampled view of the paper's proposed hardware monitor.

pub mod events;
