//! Parsing the allocation interposer's log (the `cachescope-preload` crate writes it).
//!
//! Records, one per line except the memory map (numbers decimal, addresses hex):
//!
//! ```text
//! H 1 PID SENTINEL_BASE            protocol version 1, once
//! M SEQ NBYTES                     followed by NBYTES of /proc/self/maps
//! A SEQ ADDR SIZE [FRAME…]         an allocation
//! R SEQ OLD NEW SIZE [FRAME…]      realloc: frees OLD (unless 0), allocates NEW (unless 0)
//! F SEQ ADDR                       a free
//! Q 0                              end of the log (written by the recorder, not the interposer)
//! ```
//!
//! Every record but `H` belongs to the sentinel bracket numbered `SEQ`; [`LogReader`] returns
//! them as [`Group`]s, already turned into the [`EventKind`]s of the event log.

use std::io::BufRead;

use crate::attribution::events::{EventKind, Mapping};
use crate::error::{Error, Result, Source};

/// The log protocol version this reader understands.
pub const LOG_VERSION: u32 = 1;

/// The events of one sentinel bracket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The bracket's sequence number.
    pub seq: u64,
    /// Its events, in order.
    pub events: Vec<EventKind>,
}

/// What the `H` record said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogHeader {
    /// The recorded process.
    pub pid: u64,
    /// Where the interposer mapped its sentinel region.
    pub sentinel: u64,
}

/// Reads groups from a log stream.
pub struct LogReader<R> {
    input: R,
    source: Source,
    line: u64,
    text: Vec<u8>,
    /// The `H` record, once read.
    pub header: Option<LogHeader>,
}

impl<R: BufRead> LogReader<R> {
    /// A reader over `input`; `source` names it in errors.
    pub fn new(input: R, source: Source) -> Self {
        LogReader {
            input,
            source,
            line: 0,
            text: Vec::new(),
            header: None,
        }
    }

    /// The next group, `None` at the end of the log.
    pub fn next_group(&mut self) -> Result<Option<Group>> {
        loop {
            self.text.clear();
            let n = self
                .input
                .read_until(b'\n', &mut self.text)
                .map_err(|e| Error::io(&self.source, e))?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            if self.text.last() != Some(&b'\n') {
                return Err(self.bad("record cut off (no end of line)"));
            }
            let text = String::from_utf8_lossy(&self.text[..n - 1]).into_owned();
            let mut f = text.split(' ');
            let tag = f.next().unwrap_or_default();
            if tag == "H" {
                let version: u32 = self.num(f.next(), 10)?;
                if version != LOG_VERSION {
                    return Err(self.bad(&format!(
                        "interposer log version {version} (this build reads {LOG_VERSION}): \
                         rebuild cachescope-preload from the same sources"
                    )));
                }
                let pid = self.num(f.next(), 10)?;
                let sentinel = self.num(f.next(), 16)?;
                self.header = Some(LogHeader { pid, sentinel });
                continue;
            }
            if tag == "Q" {
                return Ok(None);
            }
            let seq = self.num(f.next(), 10)?;
            let events = match tag {
                "A" => {
                    let addr = self.num(f.next(), 16)?;
                    let size = self.num(f.next(), 10)?;
                    let stack = self.frames(f)?;
                    vec![EventKind::Alloc { addr, size, stack }]
                }
                "F" => vec![EventKind::Free {
                    addr: self.num(f.next(), 16)?,
                }],
                "R" => {
                    let old = self.num(f.next(), 16)?;
                    let new = self.num(f.next(), 16)?;
                    let size = self.num(f.next(), 10)?;
                    let stack = self.frames(f)?;
                    let mut v = Vec::with_capacity(2);
                    if old != 0 {
                        v.push(EventKind::Free { addr: old });
                    }
                    if new != 0 {
                        v.push(EventKind::Alloc {
                            addr: new,
                            size,
                            stack,
                        });
                    }
                    v
                }
                "M" => {
                    let len: usize = self.num(f.next(), 10)?;
                    self.maps(len)?
                }
                _ => return Err(self.bad("unknown record (expected H, M, A, R or F)")),
            };
            return Ok(Some(Group { seq, events }));
        }
    }

    fn maps(&mut self, len: usize) -> Result<Vec<EventKind>> {
        let mut body = vec![0; len];
        std::io::Read::read_exact(&mut self.input, &mut body).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Error::Truncated {
                    source_name: self.source.clone(),
                    message: format!("memory map record at line {} cut off", self.line),
                }
            } else {
                Error::io(&self.source, e)
            }
        })?;
        let first = self.line;
        let mut out = Vec::new();
        for (i, line) in body.split(|&c| c == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            match parse_maps_line(&String::from_utf8_lossy(line)) {
                Some(m) => out.push(EventKind::Map(m)),
                None => {
                    return Err(Error::parse(
                        &self.source,
                        first + 1 + i as u64,
                        line,
                        "not a /proc/PID/maps line",
                    ));
                }
            }
        }
        self.line += body.iter().filter(|&&c| c == b'\n').count() as u64;
        Ok(out)
    }

    fn frames<'a>(&self, f: impl Iterator<Item = &'a str>) -> Result<Vec<u64>> {
        f.filter(|s| !s.is_empty())
            .map(|s| self.num(Some(s), 16))
            .collect()
    }

    fn num<T: TryFrom<u64>>(&self, field: Option<&str>, radix: u32) -> Result<T> {
        field
            .and_then(|s| u64::from_str_radix(s, radix).ok())
            .and_then(|v| T::try_from(v).ok())
            .ok_or_else(|| self.bad("missing or malformed number"))
    }

    fn bad(&self, message: &str) -> Error {
        Error::parse(
            &self.source,
            self.line,
            self.text.strip_suffix(b"\n").unwrap_or(&self.text),
            message,
        )
    }
}

/// One line of `/proc/PID/maps`: `start-end perms offset dev inode [path]`.
pub fn parse_maps_line(line: &str) -> Option<Mapping> {
    let mut rest = line;
    let mut field = || {
        let t = rest.trim_start();
        let end = t.find(' ').unwrap_or(t.len());
        let (f, r) = t.split_at(end);
        rest = r;
        f
    };
    let range = field();
    let perms = field().to_string();
    let offset = u64::from_str_radix(field(), 16).ok()?;
    let _dev = field();
    let _inode = field();
    let path = rest.trim().to_string();
    let (a, z) = range.split_once('-')?;
    let start = u64::from_str_radix(a, 16).ok()?;
    let end = u64::from_str_radix(z, 16).ok()?;
    (start < end && perms.len() == 4).then_some(Mapping {
        start,
        end,
        offset,
        perms,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(text: &[u8]) -> Result<Vec<Group>> {
        let mut r = LogReader::new(text, Source::Memory);
        let mut out = Vec::new();
        while let Some(g) = r.next_group()? {
            out.push(g);
        }
        Ok(out)
    }

    #[test]
    fn parses_every_record() {
        let maps = "55d0c0000000-55d0c0001000 r-xp 00001000 08:01 1234   /usr/bin/my prog\n\
                    7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0      [stack]\n";
        let text = format!(
            "H 1 42 3ca7e0000000\nM 0 {}\n{maps}A 1 1000 24 401234 401567\nR 2 1000 2000 48 401300\n\
             R 3 2000 0 0\nF 4 3000\n",
            maps.len()
        );
        let mut r = LogReader::new(text.as_bytes(), Source::Memory);
        let g0 = r.next_group().unwrap().unwrap();
        assert_eq!(
            r.header,
            Some(LogHeader {
                pid: 42,
                sentinel: 0x3ca7_e000_0000
            })
        );
        assert_eq!(g0.seq, 0);
        assert_eq!(
            g0.events[0],
            EventKind::Map(Mapping {
                start: 0x55d0_c000_0000,
                end: 0x55d0_c000_1000,
                offset: 0x1000,
                perms: "r-xp".into(),
                path: "/usr/bin/my prog".into(),
            })
        );
        assert!(matches!(&g0.events[1], EventKind::Map(m) if m.path == "[stack]"));
        let rest = read_all(&text.as_bytes()[text.find("A 1").unwrap()..]).unwrap();
        assert_eq!(
            rest,
            vec![
                Group {
                    seq: 1,
                    events: vec![EventKind::Alloc {
                        addr: 0x1000,
                        size: 24,
                        stack: vec![0x40_1234, 0x40_1567]
                    }]
                },
                Group {
                    seq: 2,
                    events: vec![
                        EventKind::Free { addr: 0x1000 },
                        EventKind::Alloc {
                            addr: 0x2000,
                            size: 48,
                            stack: vec![0x40_1300]
                        }
                    ]
                },
                Group {
                    seq: 3,
                    events: vec![EventKind::Free { addr: 0x2000 }]
                },
                Group {
                    seq: 4,
                    events: vec![EventKind::Free { addr: 0x3000 }]
                },
            ]
        );
    }

    #[test]
    fn bad_records_name_the_line() {
        let err = read_all(b"A 1 1000 24\nA 2 zz 24\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains(":2:") && err.contains("zz"), "{err}");
        let err = read_all(b"H 7 1 0\n").unwrap_err().to_string();
        assert!(err.contains("version 7"), "{err}");
        let err = read_all(b"F 1 10").unwrap_err().to_string();
        assert!(err.contains("cut off"), "{err}");
        let err = read_all(b"M 0 100\nshort\n").unwrap_err().to_string();
        assert!(err.contains("truncated"), "{err}");
        let err = read_all(b"Z 1\n").unwrap_err().to_string();
        assert!(err.contains("unknown record"), "{err}");
    }
}
