//! Decode throughput benchmarks (placeholder).
fn main() {}
