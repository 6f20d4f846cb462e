//! cachescope: cache-locality analysis (placeholder doc, rewritten at the end of the session).

pub mod access;
pub mod analysis;
pub mod batch;
pub mod error;
pub mod stats;
pub mod trace;
pub mod workloads;

pub use access::{Access, AccessKind, LineAddr, LineSize};
pub use batch::Batch;
pub use error::{Error, Result, Source};
