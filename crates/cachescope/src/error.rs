//! The library's error type. Every message is written for the person who ran the command: it
//! names the file, and for text formats the line number and the line's text.

use std::fmt;
use std::path::PathBuf;

/// Where a trace comes from, for error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A file on disk.
    File(PathBuf),
    /// Standard input (`-`).
    Stdin,
    /// A built-in synthetic workload.
    Workload(String),
    /// An in-memory buffer (tests, benchmarks, library users).
    Memory,
    /// A program being recorded (its command line).
    Program(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::File(p) => write!(f, "{}", p.display()),
            Source::Stdin => f.write_str("<stdin>"),
            Source::Workload(w) => write!(f, "<workload {w}>"),
            Source::Memory => f.write_str("<memory>"),
            Source::Program(p) => write!(f, "<recording of {p}>"),
        }
    }
}

/// Everything that can go wrong in the library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system refused a read or write.
    #[error("{source_name}: {err}")]
    Io {
        /// The file involved.
        source_name: Source,
        /// The underlying error.
        #[source]
        err: std::io::Error,
    },
    /// A line of a text trace that does not parse.
    #[error("{source_name}:{line}: {message}: {text:?}")]
    Parse {
        /// The file.
        source_name: Source,
        /// 1-based line number.
        line: u64,
        /// The line's text (cut to a readable length).
        text: String,
        /// What was expected.
        message: String,
    },
    /// The file holds nothing.
    #[error("{0}: the file is empty; a trace needs at least one access")]
    Empty(Source),
    /// No reader recognised the content.
    #[error("{source_name}: unknown trace format{why} (tried {tried}); use --format to choose one")]
    UnknownFormat {
        /// The file.
        source_name: Source,
        /// The formats that were tried, comma separated.
        tried: String,
        /// What the content looked like, when detection can say (`: binary data, but …`), or
        /// empty.
        why: String,
    },
    /// The input ended in the middle of a record, a block or a compressed stream.
    #[error("{source_name}: truncated: {message}")]
    Truncated {
        /// The file.
        source_name: Source,
        /// What was cut off.
        message: String,
    },
    /// The input is structurally damaged (bad checksum, impossible field, bad compressed data).
    #[error("{source_name}: corrupt: {message}")]
    Corrupt {
        /// The file.
        source_name: Source,
        /// What is wrong.
        message: String,
    },
    /// A parameter outside its valid range.
    #[error("invalid {name}: {message}")]
    InvalidParameter {
        /// The parameter.
        name: &'static str,
        /// What is valid.
        message: String,
    },
    /// The run was stopped by [`crate::interrupt::request`] (Ctrl-C in the CLI).
    #[error("interrupted")]
    Interrupted,
    /// The structures that grow with the distinct lines would pass the memory limit (set with
    /// `budget::set_limit`, which depends on this module and not the other way).
    #[error(
        "memory limit of {} exceeded: holding the trace's distinct lines needs at least {}; \
         raise the limit (--max-memory), use a larger line size, or a sampled model",
        crate::units::format_bytes(*limit, crate::units::Precision::Decimals(1)),
        crate::units::format_bytes(*needed, crate::units::Precision::Decimals(1))
    )]
    MemoryLimit {
        /// The limit, in bytes.
        limit: u64,
        /// The projected total that was refused, in bytes.
        needed: u64,
    },
}

/// Short for `Result<T, cachescope::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Longest line text quoted in a [`Error::Parse`] message.
const MAX_QUOTED: usize = 120;

impl Error {
    /// A parse error for line `line` whose raw bytes are `text`.
    pub fn parse(
        source_name: &Source,
        line: u64,
        text: &[u8],
        message: impl Into<String>,
    ) -> Error {
        let mut t = String::from_utf8_lossy(text).into_owned();
        if t.len() > MAX_QUOTED {
            let mut cut = MAX_QUOTED;
            while !t.is_char_boundary(cut) {
                cut -= 1;
            }
            t.truncate(cut);
            t.push('…');
        }
        Error::Parse {
            source_name: source_name.clone(),
            line,
            text: t,
            message: message.into(),
        }
    }

    /// An I/O error on `source_name`. A decoder's `InvalidData`/`UnexpectedEof` errors (how
    /// flate2, zstd and liblzma report damaged or cut-off streams) become [`Error::Corrupt`] and
    /// [`Error::Truncated`] so users are told what is wrong with the file, not with the disk.
    pub fn io(source_name: &Source, err: std::io::Error) -> Error {
        use std::io::ErrorKind;
        match err.kind() {
            ErrorKind::UnexpectedEof => {
                truncated(source_name, format!("the stream ends early ({err})"))
            }
            ErrorKind::InvalidData | ErrorKind::InvalidInput => {
                corrupt(source_name, err.to_string())
            }
            _ => Error::Io {
                source_name: source_name.clone(),
                err,
            },
        }
    }

    /// True for a write to a closed pipe (`cachescope … | head`), which the CLI treats as success.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io { err, .. } if err.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

impl From<crate::units::ParseError> for Error {
    /// `invalid {what}: {reason}`.
    fn from(e: crate::units::ParseError) -> Error {
        Error::InvalidParameter {
            name: e.what,
            message: e.message,
        }
    }
}

/// [`Error::Corrupt`]: `source` is not what its format says.
pub(crate) fn corrupt(source: &Source, message: impl Into<String>) -> Error {
    Error::Corrupt {
        source_name: source.clone(),
        message: message.into(),
    }
}

/// [`Error::Truncated`]: `source` ends before its format says it does.
pub(crate) fn truncated(source: &Source, message: impl Into<String>) -> Error {
    Error::Truncated {
        source_name: source.clone(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_error_names_file_line_and_text() {
        let e = Error::parse(
            &Source::File("t.txt".into()),
            7,
            b"zz 12",
            "expected an address",
        );
        assert_eq!(e.to_string(), "t.txt:7: expected an address: \"zz 12\"");
    }

    #[test]
    fn long_lines_are_cut_on_a_char_boundary() {
        let text = "é".repeat(200);
        let e = Error::parse(&Source::Stdin, 1, text.as_bytes(), "bad");
        let Error::Parse { text, .. } = e else {
            unreachable!()
        };
        assert!(text.len() <= MAX_QUOTED + '…'.len_utf8());
    }
}
