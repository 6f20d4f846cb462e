//! Output helpers: broken pipes count as success (`cachescope … | head`), files are written
//! under a temporary name and renamed when complete.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// True when `err` comes from writing to a closed pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<cachescope::Error>()
                .is_some_and(|e| e.is_broken_pipe())
    })
}

/// Prints `text` to stdout.
pub fn print(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// A file being written under a temporary name in the same directory; [`Pending::commit`]
/// renames it into place, dropping it uncommitted removes it. A run that is interrupted never
/// leaves a file that looks finished.
pub struct Pending {
    tmp: PathBuf,
    dest: PathBuf,
    committed: bool,
}

impl Pending {
    /// Creates the temporary file for `dest`.
    pub fn create(dest: &Path) -> Result<(Pending, File)> {
        let name = dest
            .file_name()
            .with_context(|| format!("{}: not a file name", dest.display()))?;
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".tmp-{}", std::process::id()));
        let tmp = dest.with_file_name(tmp_name);
        let file =
            File::create(&tmp).with_context(|| format!("cannot create {}", dest.display()))?;
        pending_files().push(tmp.clone());
        Ok((
            Pending {
                tmp,
                dest: dest.to_owned(),
                committed: false,
            },
            file,
        ))
    }

    /// Moves the finished file into place.
    pub fn commit(mut self) -> Result<()> {
        std::fs::rename(&self.tmp, &self.dest).with_context(|| {
            format!(
                "cannot move the output into place at {}",
                self.dest.display()
            )
        })?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
        pending_files().retain(|p| p != &self.tmp);
    }
}

/// Temporary files not yet committed, for a forced exit to remove (see `crate::interrupt`).
fn pending_files() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static FILES: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    FILES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Removes every temporary file not yet committed: the last thing a forced exit does.
pub fn remove_pending_files() {
    for tmp in pending_files().drain(..) {
        let _ = std::fs::remove_file(tmp);
    }
}

/// CSV of `records` (JSON objects, e.g. the `points` of a command's `--json`): a header row,
/// then one row per record. Column names are the JSON field names, those of nested objects
/// joined with `_` (`"predicted": {"miss_ratio"}` → `predicted_miss_ratio`), in the order they
/// first appear; lists inside a record are left out (`--json` has them). A field a record
/// lacks, or a JSON `null`, is an empty cell.
pub fn csv_records(records: &[serde_json::Value]) -> String {
    let rows: Vec<Vec<(String, String)>> = records
        .iter()
        .map(|r| {
            let mut cells = Vec::new();
            flatten("", r, &mut cells);
            cells
        })
        .collect();
    let mut columns: Vec<&str> = Vec::new();
    for row in &rows {
        for (name, _) in row {
            if !columns.contains(&name.as_str()) {
                columns.push(name);
            }
        }
    }
    let mut out = columns
        .iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for row in &rows {
        let line: Vec<String> = columns
            .iter()
            .map(|c| {
                row.iter()
                    .find(|(name, _)| name == c)
                    .map_or_else(String::new, |(_, v)| csv_field(v))
            })
            .collect();
        out += &line.join(",");
        out.push('\n');
    }
    out
}

/// The scalar fields of `v` as (column, text), nested objects prefixed with their name.
fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    let text = match v {
        Value::Object(map) => {
            for (k, child) in map {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}_{k}")
                };
                flatten(&name, child, out);
            }
            return;
        }
        Value::Array(_) => return,
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
    };
    out.push((prefix.to_string(), text));
}

/// Quotes a CSV field when it holds a comma, a quote or a line break (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn csv_flattens_nested_objects_and_quotes() {
        let rows = [
            json!({"program": "a,b.cst", "rate": 1.0, "predicted": {"miss_ratio": 0.5, "share": null}, "list": [1, 2]}),
            json!({"program": "say \"x\"", "rate": 2, "predicted": {"miss_ratio": 0.25}, "extra": true}),
        ];
        assert_eq!(
            super::csv_records(&rows),
            "program,rate,predicted_miss_ratio,predicted_share,extra\n\
             \"a,b.cst\",1.0,0.5,,\n\
             \"say \"\"x\"\"\",2,0.25,,true\n"
        );
        assert_eq!(super::csv_records(&[]), "\n");
    }
}
