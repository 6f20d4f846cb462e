//! The stream's escape words: stream headers, thread switches, exec marks, the end record,
//! and the events and run definitions with their payloads.

use std::io::Read;

use super::{
    ARG_MASK, State, TAG_END, TAG_EVENT, TAG_EXEC, TAG_FORK, TAG_HEADER, TAG_RUNDEF, TAG_THREAD,
    ToolReader, VERSION,
};
use crate::attribution::events::{Event, EventKind, Mapping};
use crate::error::{Result, corrupt, truncated};
use crate::record::tool_decode::{TAG_RUN, address};

const EV_ALLOC: u64 = 1;
const EV_FREE: u64 = 2;
const EV_MAP: u64 = 3;
const EV_HUGE: u64 = 4;

impl<R: Read + Send> ToolReader<R> {
    /// Handles the escape at `pos`.
    pub(super) fn escape(&mut self, w: u64) -> Result<()> {
        let arg = w & ARG_MASK;
        match w >> 60 {
            TAG_HEADER if self.exec_seen && arg & 0xFFFF == VERSION => {
                // The program the recorded process exec'd, followed (--trace-children): its
                // tool's stream continues this one.
                self.exec_seen = false;
                self.execs += 1;
                self.instance_start = self.words;
                // The new program numbers its runs from 0.
                self.runs.clear();
            }
            TAG_HEADER if self.child_header && arg & 0xFFFF == VERSION => {
                // A forked child's stream (--trace-children): it goes on with a copy of its
                // parent's runs (`fork.rs`).
                self.child_header = false;
                self.exec_seen = false;
                self.instance_start = self.words;
            }
            TAG_HEADER => {
                return Err(corrupt(
                    &self.source,
                    format!("a second stream header at word {}", self.words),
                ));
            }
            TAG_THREAD => {
                let tid = self.thread_base + arg as u32;
                if tid > self.threads {
                    self.threads = tid;
                }
                self.thread = tid;
            }
            TAG_EXEC => self.exec_seen = arg == 0,
            TAG_END => {
                let words = self.words - self.instance_start;
                if arg != words & ARG_MASK {
                    return Err(corrupt(
                        &self.source,
                        format!("the end record counts {arg} words before it, but {words} arrived"),
                    ));
                }
                if !self.child_end() {
                    self.state = State::Ended;
                }
            }
            TAG_FORK => self.fork_mark(arg)?,
            TAG_EVENT => return self.event(arg),
            TAG_RUNDEF => return self.run_definition(arg),
            TAG_RUN => {
                return Err(corrupt(
                    &self.source,
                    format!(
                        "run {arg} is used at word {} before it is defined",
                        self.words
                    ),
                ));
            }
            tag => {
                return Err(corrupt(
                    &self.source,
                    format!("unknown record tag {tag:#x} at word {}", self.words),
                ));
            }
        }
        self.pos += 8;
        self.words += 1;
        Ok(())
    }

    /// The event escape at `pos` with its payload.
    fn event(&mut self, arg: u64) -> Result<()> {
        let n = (arg & 0xFFFF) as usize;
        let kind = (arg >> 16) & 0xFF;
        if !self.fill(1 + n)? {
            return Err(truncated(
                &self.source,
                format!("an event of {n} words is cut off at word {}", self.words),
            ));
        }
        let p: Vec<u64> = (1..=n).map(|i| self.word(i)).collect();
        let event = decode_event(kind, &p)
            .map_err(|what| corrupt(&self.source, format!("{what} at word {}", self.words)))?;
        match event {
            EventKind::Alloc { .. } => self.counts.allocs += 1,
            EventKind::Free { .. } => self.counts.frees += 1,
            EventKind::Map(_) => self.counts.maps += 1,
            EventKind::HugePages { .. } => {}
        }
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

    /// The run definition at `pos` with its payload: the run's id, then its instruction
    /// records.
    fn run_definition(&mut self, arg: u64) -> Result<()> {
        let n = (arg & 0xFFFF) as usize;
        if !self.fill(1 + n)? {
            return Err(truncated(
                &self.source,
                format!(
                    "a run definition of {n} words is cut off at word {}",
                    self.words
                ),
            ));
        }
        let bad = |what: String| corrupt(&self.source, format!("{what} at word {}", self.words));
        if n < 2 {
            return Err(bad(format!("a run definition of {n} words")));
        }
        let id = self.word(1);
        if id != self.runs.len() as u64 {
            return Err(bad(format!(
                "run {id} defined where run {} was expected",
                self.runs.len()
            )));
        }
        // Each payload word must be an instruction record of 1-255 bytes (the templates keep
        // sizes in a byte).
        let mut fetches = Vec::with_capacity(n - 1);
        for w in (2..=n).map(|i| self.word(i)) {
            let size = ((w >> 48) & 0x3FF) as u32;
            if w >> 58 != 3 || !(1..=255).contains(&size) {
                return Err(bad(format!(
                    "a run holding {w:#018x}, not an instruction record"
                )));
            }
            fetches.push((address(w), size));
        }
        // Keyed apart from every run of the recording's other programs and processes.
        self.runs.push_keyed(fetches, self.run_keys);
        self.run_keys += 1;
        self.pos += 8 * (1 + n);
        self.words += 1 + n as u64;
        Ok(())
    }
}

/// The event of `kind` (`CS_EV_*`) with the payload `p`, or what is wrong with it.
pub(in crate::record) fn decode_event(
    kind: u64,
    p: &[u64],
) -> std::result::Result<EventKind, String> {
    let n = p.len();
    Ok(match kind {
        EV_ALLOC if n >= 2 => EventKind::Alloc {
            addr: p[0],
            size: p[1],
            stack: p[2..].to_vec(),
        },
        EV_FREE if n == 1 => EventKind::Free { addr: p[0] },
        EV_MAP if n >= 5 => {
            let name_len = p[4] as usize;
            if name_len.div_ceil(8) != n - 5 {
                return Err("a mapping whose name length does not match its size".into());
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
        EV_HUGE if n == 3 => EventKind::HugePages {
            start: p[0],
            end: p[1],
            bytes: p[2],
        },
        _ => return Err(format!("an event of kind {kind} with {n} words")),
    })
}
