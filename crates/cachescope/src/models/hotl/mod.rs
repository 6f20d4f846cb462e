//! Being written in this session.
