//! Exact cache simulators (being written).
