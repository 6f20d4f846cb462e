//! Compression detection (placeholder).

/// A compression wrapper around a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip (one or more members).
    Gzip,
    /// zstd.
    Zstd,
    /// xz.
    Xz,
}
