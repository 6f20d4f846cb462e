//! Errors of the report: analysis errors from the library, and the report's own.

use std::path::PathBuf;

/// What can go wrong making a report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An analysis failed (bad input names its file and line).
    #[error(transparent)]
    Analysis(#[from] cachescope::Error),
    /// A figure could not be drawn.
    #[error("drawing figure {figure}: {message}")]
    Plot {
        /// The figure's id.
        figure: String,
        /// What the plotting library said.
        message: String,
    },
    /// The HTML template failed.
    #[error("rendering report.html: {0}")]
    Template(String),
    /// Writing an output file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// report.json could not be read back.
    #[error("{}: not a cachescope report: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
}

/// The report's result type.
pub type Result<T> = std::result::Result<T, Error>;
