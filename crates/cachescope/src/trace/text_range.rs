//! Reading one byte range of an uncompressed text trace: a thread's share of a file cut at
//! line boundaries ([`crate::parallel`]).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::{AccessReader, Format, din, lackey, plain};
use crate::error::{Error, Result, Source};

/// A reader of the whole lines in bytes `range` of the uncompressed text trace at `path`, in
/// `format` (lackey, plain or din): one thread's share of a trace cut at line boundaries
/// (`range.start` is 0 or just after a newline). A lackey range starts with the pc of the last
/// instruction record before it, as a reader of the whole file would have. Errors name `source`
/// and the line number within the range (see [`crate::parallel`] for the fix-up).
pub(crate) fn open_text_range(
    path: &Path,
    source: &Source,
    format: Format,
    range: std::ops::Range<u64>,
) -> Result<Box<dyn AccessReader>> {
    use std::io::{Seek, SeekFrom};
    let io = |e| Error::io(source, e);
    let mut file = File::open(path).map_err(io)?;
    let pc = match format {
        Format::Lackey if range.start > 0 => lackey::pc_before(&mut file, range.start, source)?,
        _ => crate::batch::NO_PC,
    };
    file.seek(SeekFrom::Start(range.start)).map_err(io)?;
    let input = std::io::BufReader::with_capacity(1 << 16, file).take(range.end - range.start);
    let src = source.clone();
    Ok(match format {
        Format::Lackey => {
            Box::new(lackey::Reader::new(input, src, lackey::Options::default()).with_pc(pc))
        }
        Format::Plain(radix) => Box::new(plain::Reader::new(
            input,
            src,
            plain::Options {
                skip_bad_lines: false,
                radix,
            },
        )),
        Format::Din => Box::new(din::Reader::new(input, src, din::Options::default())),
        Format::Binary | Format::Native | Format::Champsim => {
            return Err(Error::InvalidParameter {
                name: "format",
                message: format!("{} traces are not cut at line boundaries", format.name()),
            });
        }
    })
}
