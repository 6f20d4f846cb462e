//! Detection (placeholder).
