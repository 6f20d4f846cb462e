//! Cutting a trace file into parts that threads or ranks read on their own: runs of blocks of a
//! native trace (its block index says where each block is and which accesses it holds), byte
//! ranges of an uncompressed text trace cut at line boundaries. [`super::segments`] reads the
//! parts.

use std::fs::File;
use std::io::BufReader;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result, Source};
use crate::trace::native::{BlockEntry, read_index};
use crate::trace::{Compression, Format, Trace};

/// The file and block index of `trace` when it is a native trace that can be read block by
/// block: a plain file, no outer compression, and an index that reads.
pub(crate) fn indexed(trace: &Trace) -> Option<(PathBuf, Vec<BlockEntry>)> {
    if trace.format() != Some(Format::Native) || trace.compression() != Compression::None {
        return None;
    }
    let Source::File(path) = trace.source() else {
        return None;
    };
    let file = File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    // An index that does not read (a file cut short, damaged) falls back to the streaming
    // reader, which reports the damage where it meets it.
    let (_, index) = read_index(BufReader::new(file), trace.source()).ok()?;
    Some((path.clone(), index.blocks))
}

/// Splits `blocks` into at most `parts` consecutive runs of about equal access counts (each
/// run non-empty; fewer runs when there are fewer blocks).
pub fn split_blocks(blocks: &[BlockEntry], parts: usize) -> Vec<Range<usize>> {
    let total: u64 = blocks.iter().map(|b| u64::from(b.count)).sum();
    let parts = parts.clamp(1, blocks.len().max(1));
    let mut ranges = Vec::with_capacity(parts);
    let mut start = 0;
    let mut seen = 0u64;
    for (i, b) in blocks.iter().enumerate() {
        seen += u64::from(b.count);
        let k = ranges.len() as u64 + 1;
        // Close run k once it holds its share k/parts of the accesses, or when every block
        // left is needed to give each remaining run one.
        let short = (blocks.len() - i - 1) as u64 == parts as u64 - k;
        if k < parts as u64 && (seen * parts as u64 >= total * k || short) {
            ranges.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < blocks.len() {
        ranges.push(start..blocks.len());
    }
    ranges
}

/// The index entries of blocks `range` of the native trace at `path`.
pub(crate) fn index_range(path: &Path, range: Range<usize>) -> Result<Vec<BlockEntry>> {
    let source = Source::File(path.to_owned());
    let file = File::open(path).map_err(|e| Error::io(&source, e))?;
    let (_, mut index) = read_index(BufReader::new(file), &source)?;
    if range.start > range.end || range.end > index.blocks.len() {
        return Err(Error::InvalidParameter {
            name: "block range",
            message: format!(
                "blocks {range:?} are not in a trace of {} blocks",
                index.blocks.len()
            ),
        });
    }
    Ok(index.blocks.drain(range).collect())
}

/// The file, format and length of `trace` when it is an uncompressed text trace (lackey,
/// plain, din) in a regular file that can be cut at line boundaries; not when bad lines are
/// skipped (their count and first one are reported by the trace's own reader).
pub(crate) fn text_file(trace: &Trace) -> Option<(PathBuf, Format, u64)> {
    let format = trace.format()?;
    if !matches!(format, Format::Lackey | Format::Plain(_) | Format::Din)
        || trace.compression() != Compression::None
        || trace.skips_bad_lines()
    {
        return None;
    }
    let Source::File(path) = trace.source() else {
        return None;
    };
    let meta = std::fs::metadata(path).ok()?;
    meta.is_file().then(|| (path.clone(), format, meta.len()))
}

/// Cuts the `len` bytes of the file at `path` into at most `parts` ranges of about equal size,
/// each starting at the start of a line (just after a newline) and ending where the next one
/// starts; empty ranges dropped.
pub(crate) fn line_ranges(
    path: &Path,
    source: &Source,
    len: u64,
    parts: u64,
) -> Result<Vec<Range<u64>>> {
    use std::io::{Read, Seek, SeekFrom};
    let io = |e| Error::io(source, e);
    let mut file = File::open(path).map_err(io)?;
    let mut cuts = vec![0u64];
    let mut buf = vec![0u8; 1 << 12];
    for k in 1..parts.max(1) {
        let nominal = (u128::from(len) * u128::from(k) / u128::from(parts)) as u64;
        let mut at = nominal.max(*cuts.last().expect("non-empty")).max(1) - 1;
        // The first newline at or after `at`: the line after it starts the range.
        let cut = loop {
            if at >= len {
                break len;
            }
            file.seek(SeekFrom::Start(at)).map_err(io)?;
            let got = file.read(&mut buf).map_err(io)?;
            if got == 0 {
                break len;
            }
            match memchr::memchr(b'\n', &buf[..got]) {
                Some(i) => break at + i as u64 + 1,
                None => at += got as u64,
            }
        };
        cuts.push(cut.max(*cuts.last().expect("non-empty")));
    }
    cuts.push(len);
    Ok(cuts
        .windows(2)
        .filter(|w| w[0] < w[1])
        .map(|w| w[0]..w[1])
        .collect())
}

/// `e` with its line number made absolute, for a reader of a range starting at byte `start`
/// of `path`, whose lines it numbered from 1: adds the newlines before `start`. Only a parse
/// error names a line; any other error is returned as it is.
pub(crate) fn absolute_line(e: Error, path: &Path, start: u64) -> Error {
    use std::io::Read;
    let Error::Parse {
        source_name,
        line,
        text,
        message,
    } = e
    else {
        return e;
    };
    let before = (|| -> std::io::Result<u64> {
        let mut file = File::open(path)?.take(start);
        let mut buf = vec![0u8; 1 << 16];
        let mut n = 0u64;
        loop {
            let got = file.read(&mut buf)?;
            if got == 0 {
                return Ok(n);
            }
            n += memchr::memchr_iter(b'\n', &buf[..got]).count() as u64;
        }
    })();
    match before {
        Ok(before) => Error::Parse {
            source_name,
            line: line + before,
            text,
            message,
        },
        Err(err) => Error::Io { source_name, err },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(counts: &[u32]) -> Vec<BlockEntry> {
        let mut first = 0;
        counts
            .iter()
            .enumerate()
            .map(|(i, &count)| {
                let e = BlockEntry {
                    offset: i as u64 * 100,
                    comp_len: 10,
                    first,
                    count,
                };
                first += u64::from(count);
                e
            })
            .collect()
    }

    #[test]
    fn split_blocks_tiles_the_blocks_in_balanced_runs() {
        for counts in [
            vec![10; 8],
            vec![1, 1, 1, 100],
            vec![100, 1, 1, 1],
            vec![5],
            vec![],
            vec![3, 9, 27, 81, 243, 7, 7],
        ] {
            let b = blocks(&counts);
            for parts in 1..=10 {
                let r = split_blocks(&b, parts);
                // Consecutive, non-empty, covering every block, at most `parts` runs.
                assert!(r.len() <= parts.max(1));
                let mut at = 0;
                for x in &r {
                    assert_eq!(x.start, at);
                    assert!(x.end > x.start);
                    at = x.end;
                }
                assert_eq!(at, b.len());
                if counts.len() >= parts {
                    assert_eq!(r.len(), parts, "{counts:?} into {parts}");
                }
            }
        }
        // Equal blocks split evenly.
        let r = split_blocks(&blocks(&[10; 8]), 4);
        assert_eq!(r, vec![0..2, 2..4, 4..6, 6..8]);
    }
}
