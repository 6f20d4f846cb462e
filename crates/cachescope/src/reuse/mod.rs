//! Exact reuse and stack distances (being written).
