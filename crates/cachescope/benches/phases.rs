//! Placeholder benchmark, being written in this session.
fn main() {}
