//! `own-line`'s placement (docs/advice.md, the SPEC table): each thread's elements of an instance
//! packed on lines of their own, in the order the threads first touch them.

use hashbrown::HashMap;

use crate::access::ThreadId;

/// own-line's state for one instance: each element's new offset, each thread's next place.
#[derive(Debug, Default)]
pub(super) struct Lines {
    placed: HashMap<u64, u64>,
    threads: HashMap<ThreadId, (u64, u64)>,
}

/// own-line: element `offset / element` goes to its first toucher's lines: after the tail
/// (kept first, on a line of its own), each thread a run of `round_up(n × element, line)` bytes
/// in the order threads first touch the instance, its elements packed in touching order.
pub(super) fn own_line(
    lines: &mut Lines,
    offset: u64,
    len: u64,
    element: u64,
    line: u64,
    thread: ThreadId,
) -> u64 {
    let n = len / element;
    let tail = len % element;
    if offset >= n * element {
        return offset - n * element;
    }
    let region = (n * element).next_multiple_of(line);
    let first = tail.next_multiple_of(line);
    let i = offset / element;
    if let Some(&at) = lines.placed.get(&i) {
        return at + offset % element;
    }
    let slots = lines.threads.len() as u64;
    let (slot, next) = lines.threads.entry(thread).or_insert((slots, 0));
    let at = first + *slot * region + *next * element;
    *next += 1;
    lines.placed.insert(i, at);
    at + offset % element
}
