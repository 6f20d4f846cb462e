//! A block's call events (version 4): the [`CallEvent`]s between its accesses, after all its
//! other columns (`docs/native-format.md`).
//!
//! A block with call events has bit 1 of its header flags set, and its raw bytes end with the
//! events' section and then the section's length (u32 LE): the columns before them are laid
//! out exactly as in a block without events, so the decoders of versions 1-3 read them after
//! the section is cut off. Per event, in order:
//!
//! * the access index it precedes, as a LEB128 difference from the previous event's (from 0);
//! * a code byte: bits 0-2 the operation (0-4 entering a function by a call, a jump, a
//!   signal boundary, as a thread's root or a PLT stub; 5 leaving frames; 6 every stack
//!   reset), bit 7 set
//!   when the thread is written (otherwise it is the thread of the access at that index, or of
//!   the block's last access for an event after it); other bits 0;
//! * with bit 7, the thread (LEB128);
//! * entering: the key as a zigzag LEB128 difference from the previous entering event's key
//!   in the block (from 0); leaving: the frames left (LEB128, at least 1).
//!
//! A few bytes an event, a call every few hundred instructions: about 1 % of a recording.

use super::decode_runs::leb128;
use super::encode::unzigzag;
use crate::access::{MAIN_THREAD, ThreadId};
use crate::batch::{Batch, CallEvent, CallOp, EnterKind, ThreadRun};

/// Block header byte 17, bit 1 (version 4): the block ends with call events.
pub(super) const BLOCK_CALLS: u8 = 2;

/// Most bytes of a block's call section (a sanity bound for the block header's raw length;
/// a writer starts a new block long before).
pub(super) const MAX_CALL_BYTES: usize = 64 << 20;

/// Events after which a writer ends a block early, if it has accesses: keeps its section far
/// below [`MAX_CALL_BYTES`] (an event takes at most 21 bytes).
pub(super) const MAX_BLOCK_CALLS: usize = 1 << 20;

const OP_LEAVE: u8 = 5;
const OP_RESET: u8 = 6;
const EXPLICIT_THREAD: u8 = 0x80;

/// Writes `v` as LEB128 at `out[*at..]` (room for 10 bytes), advancing `at`.
#[inline(always)]
fn put_leb128(out: &mut [u8], at: &mut usize, mut v: u64) {
    while v >= 0x80 {
        out[*at] = (v as u8) | 0x80;
        *at += 1;
        v >>= 7;
    }
    out[*at] = v as u8;
    *at += 1;
}

fn zigzag(d: u64) -> u64 {
    (d << 1) ^ ((d as i64 >> 63) as u64)
}

/// Most bytes an event takes: the index (5), the code (1), the thread (5), the key (10).
const MAX_EVENT_BYTES: usize = 21;

/// Appends the section of `events` (the events of a block of `n` accesses, in the order of
/// their index, whose threads `switches` give: the block's canonical thread runs) and its
/// length.
///
/// `record` lays out one event every few dozen accesses (awk: 5.6 M in a 2 MB run), on the
/// compression thread: the section is written into room reserved once, and each event's
/// implicit thread found by walking the switches along with the events, not by a search per
/// event (which, with a `Vec` push per byte, was most of what call events cost that thread).
pub(super) fn lay_out(events: &[CallEvent], switches: &[ThreadRun], n: usize, raw: &mut Vec<u8>) {
    let start = raw.len();
    raw.resize(start + events.len() * MAX_EVENT_BYTES, 0);
    let out = &mut raw[start..];
    let mut pos = 0;
    let (mut last_at, mut last_key) = (0u32, 0u64);
    // The switch in force at the current event's access: the last one starting at or
    // before it (none: the main thread).
    let mut next_switch = 0;
    let mut thread = MAIN_THREAD;
    for e in events {
        put_leb128(out, &mut pos, u64::from(e.at - last_at));
        last_at = e.at;
        let code = match e.op {
            CallOp::Enter { kind, .. } => kind as u8,
            CallOp::Leave { .. } => OP_LEAVE,
            CallOp::Reset => OP_RESET,
        };
        let index = (e.at as usize).min(n - 1);
        while let Some(r) = switches
            .get(next_switch)
            .filter(|r| r.start as usize <= index)
        {
            thread = r.thread;
            next_switch += 1;
        }
        if e.thread == thread {
            out[pos] = code;
            pos += 1;
        } else {
            out[pos] = code | EXPLICIT_THREAD;
            pos += 1;
            put_leb128(out, &mut pos, u64::from(e.thread));
        }
        match e.op {
            CallOp::Enter { key, .. } => {
                put_leb128(out, &mut pos, zigzag(key.wrapping_sub(last_key)));
                last_key = key;
            }
            CallOp::Leave { frames } => put_leb128(out, &mut pos, u64::from(frames)),
            CallOp::Reset => {}
        }
    }
    raw.truncate(start + pos);
    raw.extend_from_slice(&(pos as u32).to_le_bytes());
}

/// The length of the columns before a call section at the end of `raw` (`raw_len` bytes),
/// and the section.
pub(super) fn split(raw: &[u8], raw_len: usize) -> Result<(usize, &[u8]), String> {
    let bad = || "the call events' length does not fit the block".to_string();
    let tail = raw_len.checked_sub(4).ok_or_else(bad)?;
    let len = u32::from_le_bytes(raw[tail..raw_len].try_into().expect("4 bytes")) as usize;
    let start = tail.checked_sub(len).ok_or_else(bad)?;
    Ok((start, &raw[start..tail]))
}

/// Decodes a call section into `batch`'s call events; `batch` already holds the block's `n`
/// accesses and their threads.
pub(super) fn decode(section: &[u8], batch: &mut Batch) -> Result<(), String> {
    let bad = || "the call events are damaged".to_string();
    let n = batch.len();
    let mut events = Vec::new();
    let (mut at, mut last_at, mut last_key) = (0usize, 0u64, 0u64);
    while at < section.len() {
        let delta = leb128(section, &mut at).ok_or_else(bad)?;
        let index = last_at
            .checked_add(delta)
            .filter(|&i| i <= n as u64)
            .ok_or_else(bad)?;
        last_at = index;
        let code = *section.get(at).ok_or_else(bad)?;
        at += 1;
        let thread = if code & EXPLICIT_THREAD != 0 {
            let t = leb128(section, &mut at).ok_or_else(bad)?;
            ThreadId::try_from(t).map_err(|_| bad())?
        } else {
            batch.thread_at((index as usize).min(n - 1))
        };
        let op = match code & !EXPLICIT_THREAD {
            c @ 0..=4 => {
                let key =
                    last_key.wrapping_add(unzigzag(leb128(section, &mut at).ok_or_else(bad)?));
                last_key = key;
                CallOp::Enter {
                    key,
                    kind: EnterKind::ALL[c as usize],
                }
            }
            OP_LEAVE => {
                let frames = leb128(section, &mut at).ok_or_else(bad)?;
                CallOp::Leave {
                    frames: u32::try_from(frames)
                        .ok()
                        .filter(|&f| f > 0)
                        .ok_or_else(bad)?,
                }
            }
            OP_RESET => CallOp::Reset,
            _ => return Err(bad()),
        };
        events.push(CallEvent {
            at: index as u32,
            thread,
            op,
        });
    }
    batch.set_calls(&events)
}
