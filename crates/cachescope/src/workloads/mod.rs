//! Placeholder while the synthetic workloads are written (being replaced in this session).
