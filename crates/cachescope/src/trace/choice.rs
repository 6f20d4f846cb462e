//! How to open a trace: which format ([`FormatChoice`]), and whether bad lines are skipped.

use super::Format;
use crate::error::{Error, Result};

/// Which format to read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FormatChoice {
    /// Detect from the content (the default).
    #[default]
    Detect,
    /// Plain text, radix detected.
    Plain,
    /// Exactly this format.
    Exactly(Format),
}

impl std::str::FromStr for FormatChoice {
    type Err = Error;
    fn from_str(s: &str) -> Result<FormatChoice> {
        match s {
            "auto" => Ok(FormatChoice::Detect),
            "plain" => Ok(FormatChoice::Plain),
            _ => Format::from_name(s)
                .map(FormatChoice::Exactly)
                .ok_or_else(|| Error::InvalidParameter {
                    name: "format",
                    message: format!(
                        "{s:?} is not a format; expected one of auto, lackey, plain, plain-hex, \
                         plain-dec, din, binary, native, champsim"
                    ),
                }),
        }
    }
}

/// How to open a trace.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// The format; detected from the content by default.
    pub format: FormatChoice,
    /// Skip text lines that do not parse (counted, see [`Trace::diagnostics`]) instead of failing.
    pub skip_bad_lines: bool,
}
