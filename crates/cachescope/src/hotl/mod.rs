//! Placeholder module, being written in this session.
