//! The output directory: `report.html`, `report.json` and `figures/ID.svg|png`. Every file is
//! written under a temporary name and renamed when complete, `report.html` last, so an
//! interrupted run never leaves a file that looks finished.

use std::fs;
use std::path::{Path, PathBuf};

use cachescope::report::Report;

use crate::error::{Error, Result};
use crate::figures::{self, Figure};
use crate::html;

/// What [`write()`] wrote.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Written {
    /// `DIR/report.html`.
    pub html: PathBuf,
    /// `DIR/report.json`.
    pub json: PathBuf,
    /// `DIR/figures/ID.svg` and `.png`, in page order.
    pub figures: Vec<PathBuf>,
}

/// Renders `report` and writes it into `dir` (created if needed).
pub fn write(report: &Report, dir: &Path) -> Result<Written> {
    let figures = figures::render_all(report)?;
    write_rendered(report, &figures, dir)
}

/// Writes an already rendered report into `dir`.
pub fn write_rendered(report: &Report, figures: &[Figure], dir: &Path) -> Result<Written> {
    let fig_dir = dir.join("figures");
    fs::create_dir_all(&fig_dir).map_err(|source| Error::Io {
        path: fig_dir.clone(),
        source,
    })?;
    let mut paths = Vec::new();
    for f in figures {
        for (ext, bytes) in [("svg", f.svg.as_bytes()), ("png", f.png.as_slice())] {
            let path = fig_dir.join(format!("{}.{ext}", f.info.id));
            atomic_write(&path, bytes)?;
            paths.push(path);
        }
    }
    let json = dir.join("report.json");
    let text = serde_json::to_string_pretty(report).expect("the report serialises") + "\n";
    atomic_write(&json, text.as_bytes())?;
    let page = html::render(report, figures)?;
    let html = dir.join("report.html");
    atomic_write(&html, page.as_bytes())?;
    Ok(Written {
        html,
        json,
        figures: paths,
    })
}

/// Reads a `report.json` back.
pub fn read(path: &Path) -> Result<Report> {
    let text = fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| Error::Json {
        path: path.to_owned(),
        source,
    })
}

/// Writes `bytes` to `.NAME.tmp-PID` beside `path`, then renames it into place.
fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    if let Err(e) = fs::write(&tmp, bytes).and_then(|()| fs::rename(&tmp, path)) {
        let _ = fs::remove_file(&tmp);
        return Err(io(e));
    }
    Ok(())
}
