//! The output layer every command prints through: a command's result implements [`Output`]
//! (the table, `--json`, `--csv`), and [`emit`] prints the form the flags ask for. Broken
//! pipes count as success (`cachescope … | head`); files are written under a temporary name
//! and renamed when complete ([`Pending`]); directories a failed run created go
//! ([`CreatedDir`]).

mod created;
mod csv;
mod pending;
mod sampled;

use std::io::{self, Write};

use anyhow::Result;

pub use created::{CreatedDir, remove_created_dirs};
pub use csv::{csv_field, csv_records};
pub use pending::{Pending, remove_pending_files};
pub use sampled::emit_sampled;

/// How results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// An aligned table for people.
    Table,
    /// One JSON object.
    Json,
    /// Comma-separated values with a header row.
    Csv,
}

impl Format {
    /// The format of a command's `--json` and `--csv` flags (clap keeps them exclusive).
    pub fn from_flags(json: bool, csv: bool) -> Format {
        match (json, csv) {
            (true, _) => Format::Json,
            (_, true) => Format::Csv,
            _ => Format::Table,
        }
    }
}

/// A command's result, printable each way its flags ask for.
pub trait Output {
    /// The aligned table for people.
    fn table(&self) -> String;
    /// The `--json` document ([`json`]: pretty, with a final newline).
    fn json(&self) -> Result<String>;
    /// The `--csv` text: a header row, then the records.
    fn csv(&self) -> Result<String>;

    /// The text in `format`.
    fn render(&self, format: Format) -> Result<String> {
        match format {
            Format::Table => Ok(self.table()),
            Format::Json => self.json(),
            Format::Csv => self.csv(),
        }
    }
}

/// A result whose `--json` is its serialisation and whose table is headed with the name of what
/// was read: the commands that print one (`footprint`, `hotl`, `phases`) write only its CSV and
/// its table, and print it as a [`Sourced`].
pub trait SourcedDocument: serde::Serialize {
    /// The `--csv` text: a header row, then the records.
    fn csv(&self) -> Result<String>;
    /// The aligned table for people, headed with `source`.
    fn table(&self, source: &str) -> String;
}

/// A [`SourcedDocument`] and the name of what was read.
pub struct Sourced<D> {
    /// The result.
    pub doc: D,
    /// What was read, as the table's heading names it.
    pub source: String,
}

impl<D: SourcedDocument> Output for Sourced<D> {
    fn table(&self) -> String {
        self.doc.table(&self.source)
    }

    fn json(&self) -> Result<String> {
        json(&self.doc)
    }

    fn csv(&self) -> Result<String> {
        self.doc.csv()
    }
}

/// Prints `out` on stdout in `format`.
pub fn emit(out: &impl Output, format: Format) -> Result<()> {
    print(&out.render(format)?)
}

/// Prints the summary of what a command wrote: `--json` or `--csv` on stdout, or on stderr
/// when the data itself went to stdout; the table form is a note on stderr unless `quiet`.
pub fn emit_summary(
    out: &impl Output,
    format: Format,
    data_on_stdout: bool,
    quiet: bool,
) -> Result<()> {
    if format == Format::Table {
        if !quiet {
            eprint!("{}", out.table());
        }
        return Ok(());
    }
    let text = out.render(format)?;
    if data_on_stdout {
        io::stderr().write_all(text.as_bytes())?;
        return Ok(());
    }
    print(&text)
}

/// `value` as pretty JSON with a final newline: the shape of every `--json`.
pub fn json(value: &impl serde::Serialize) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

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
