//! Opening a trace (placeholder).

/// Options.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {}
/// An open trace.
pub struct Trace {}
/// Opens a trace.
pub fn open() {}
