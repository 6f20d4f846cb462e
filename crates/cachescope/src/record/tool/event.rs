//! An event escape of the tool's stream (allocation, free, mapping) with its payload words,
//! turned into an [`Event`] and sent on the reader's channel.

use std::io::BufRead;

use super::{EV_ALLOC, EV_FREE, EV_MAP, ToolReader};
use crate::attribution::events::{Event, EventKind, Mapping};
use crate::error::{Result, corrupt, truncated};

impl<R: BufRead + Send> ToolReader<R> {
    /// The event escape at `pos` with its payload.
    pub(super) fn event(&mut self, arg: u64) -> Result<()> {
        let n = (arg & 0xFFFF) as usize;
        let kind = (arg >> 16) & 0xFF;
        if !self.gather(1 + n)? {
            return Err(truncated(
                &self.source,
                format!("an event of {n} words is cut off at word {}", self.words),
            ));
        }
        let p: Vec<u64> = (1..=n).map(|i| self.word(i)).collect();
        let bad = |what: &str| corrupt(&self.source, format!("{what} at word {}", self.words));
        let event = match kind {
            EV_ALLOC if n >= 2 => {
                self.counts.allocs += 1;
                EventKind::Alloc {
                    addr: p[0],
                    size: p[1],
                    stack: p[2..].to_vec(),
                }
            }
            EV_FREE if n == 1 => {
                self.counts.frees += 1;
                EventKind::Free { addr: p[0] }
            }
            EV_MAP if n >= 5 => {
                self.counts.maps += 1;
                let name_len = p[4] as usize;
                if name_len.div_ceil(8) != n - 5 {
                    return Err(bad("a mapping whose name length does not match its size"));
                }
                let mut name: Vec<u8> = p[5..].iter().flat_map(|w| w.to_le_bytes()).collect();
                name.truncate(name_len);
                EventKind::Map(Mapping {
                    start: p[0],
                    end: p[1],
                    offset: p[2],
                    perms: String::from_utf8_lossy(&p[3].to_le_bytes()[..4]).into_owned(),
                    path: String::from_utf8_lossy(&name).into_owned(),
                })
            }
            _ => return Err(bad(&format!("an event of kind {kind} with {n} words"))),
        };
        if let Some(tx) = &self.events {
            let position = self.records;
            // A closed channel means nobody wants the events any more.
            let _ = tx.send(Event {
                position,
                kind: event,
            });
        }
        self.pos += 8 * (1 + n);
        self.words += 1 + n as u64;
        Ok(())
    }
}
