//! The pc at a cut in the middle of a trace: the last `I` record before it, found by reading
//! backwards.

use std::io::Read;

use super::parse::{Record, parse};
use crate::batch::NO_PC;
use crate::error::{Result, Source};

/// How far back [`pc_before`] looks for an `I` record.
pub(super) const PC_SEARCH_LIMIT: u64 = 1 << 20;

/// The address of the last `I` record that ends before byte `end` of `file` ([`NO_PC`] if
/// none within [`PC_SEARCH_LIMIT`] bytes): the pc of the data records right after `end`. Reads
/// backwards from `end` in growing windows; `end` is at a line start.
///
/// The limit keeps cutting a trace linear: without it, a trace with no `I` records (a data-only
/// trace) would be read back to its start for every cut. Valgrind's traces hold an `I` record
/// every few lines; a trace whose `I` records lie more than 1 MiB apart gets [`NO_PC`] for the
/// data records before a range's first `I` record, which only the pc field shows (no chunked
/// analysis reads it).
pub(crate) fn pc_before<F: Read + std::io::Seek>(
    file: &mut F,
    end: u64,
    source: &Source,
) -> Result<u64> {
    let io = |e| crate::error::Error::io(source, e);
    let mut window = 1u64 << 12;
    loop {
        window = window.min(PC_SEARCH_LIMIT);
        let start = end.saturating_sub(window);
        file.seek(std::io::SeekFrom::Start(start)).map_err(io)?;
        let mut buf = vec![0; (end - start) as usize];
        file.read_exact(&mut buf).map_err(io)?;
        // The window's first line may be cut, unless the window starts the file.
        let whole = if start == 0 {
            &buf[..]
        } else {
            match memchr::memchr(b'\n', &buf) {
                Some(i) => &buf[i + 1..],
                None => &[][..],
            }
        };
        for line in whole.split(|&b| b == b'\n').rev() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if let Record::Instr(addr, _) = parse(line) {
                return Ok(addr);
            }
        }
        if start == 0 || window == PC_SEARCH_LIMIT {
            return Ok(NO_PC);
        }
        window *= 4;
    }
}
