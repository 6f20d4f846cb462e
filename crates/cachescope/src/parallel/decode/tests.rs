//! The shared reader against its segments, and what it lets go at the end.

use super::*;
use crate::access::Access;
use crate::parallel::segments::MemorySegments;

#[test]
fn the_end_of_the_trace_stops_the_helpers_and_lets_the_buffers_go() {
    let segments: Vec<Vec<Batch>> = (0..12u64)
        .map(|s| {
            (0..3u64)
                .map(|b| {
                    (0..50u64)
                        .map(|i| Access::load(((s * 3 + b) * 50 + i) * 64, 8))
                        .collect()
                })
                .collect()
        })
        .collect();
    let want: Vec<Access> = segments.iter().flatten().flat_map(|b| b.iter()).collect();
    let mut reader = SharedReader::spawn(MemorySegments(segments), 2, Arc::new(AtomicU64::new(0)));
    let (mut got, mut batch) = (Vec::new(), Batch::new());
    while reader.read_batch(&mut batch).unwrap() > 0 {
        got.extend(batch.iter());
    }
    assert_eq!(got, want);
    assert!(reader.helpers.is_empty(), "helpers still running");
    assert!(reader.spares.is_empty() && reader.early.is_empty());
    assert!(reader.own.is_none() && reader.current.is_none());
    // Asked again, the end stays the end.
    assert_eq!(reader.read_batch(&mut batch).unwrap(), 0);
    assert!(batch.is_empty());
}
