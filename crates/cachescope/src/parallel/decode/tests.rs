//! The shared reader against its segments, and what it lets go at the end.

use super::*;
use crate::access::Access;
use crate::parallel::segments::Fill;

/// Segments held in memory, owned (the reader's helpers need `'static`).
struct Owned(Vec<Vec<Batch>>);

impl Segments for Owned {
    type Reader = ();

    fn count(&self) -> usize {
        self.0.len()
    }

    fn open(&self) -> Result<()> {
        Ok(())
    }

    fn read(&self, _: &mut (), i: usize, out: &mut dyn Fill) -> Result<()> {
        for b in &self.0[i] {
            out.batch().clone_from(b);
            if !out.filled() {
                break;
            }
        }
        Ok(())
    }

    fn end_byte(&self, _: usize) -> u64 {
        0
    }
}

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
    let mut reader = SharedReader::spawn(Owned(segments), 2, Arc::new(AtomicU64::new(0)));
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
