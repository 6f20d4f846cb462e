use super::*;
use crate::access::{Access, AccessKind};
use crate::attribution::events::EventKind;
use crate::spatial::Limit;
use crate::trace::{AccessReader, Trace};
use proptest::prelude::*;

fn bytes(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

const HEADER: u64 = (TAG_HEADER << 60) | SPATIAL | super::super::tool::VERSION;

/// Every line sampled, no fixed size: the reader keeps whatever the stream holds.
fn all_lines() -> SpatialOptions {
    SpatialOptions {
        rate: 1.0,
        max_lines: None,
        ..SpatialOptions::default()
    }
}

/// A reference word: address, size, kind code.
fn word(addr: u64, size: u64, kind: u64) -> u64 {
    (addr & ARG_MASK) | size << 48 | kind << 58
}

/// A sample record: the loads, stores, modifies and instructions since the last record.
fn sample(pc: u64, w: u64, since: [u64; 4]) -> [u64; 3] {
    let delta = (0..4).map(|k| since[k] << (16 * k)).sum();
    [(TAG_SAMPLE << 60) | pc, w, delta]
}

fn position(c: [u64; 4]) -> [u64; 5] {
    [TAG_POSITION << 60, c[0], c[1], c[2], c[3]]
}

/// The stream's words with its end record (which counts the words before it).
fn ended(mut w: Vec<u64>) -> Vec<u64> {
    let n = w.len() as u64;
    w.push((TAG_END << 60) | n);
    w
}

/// Every batch of the stream read with `options`, and the events.
fn read_all(words: &[u64], options: SpatialOptions) -> Result<(Vec<Batch>, Vec<Event>)> {
    let input = bytes(words);
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut r = SpatialReader::new(&input[..], Source::Stdin, options, None)?.with_events(tx);
    let mut batches = Vec::new();
    let mut b = Batch::new();
    while r.read_batch(&mut b)? > 0 {
        assert_eq!(b.check_sampling(), Ok(()));
        batches.push(b.clone());
    }
    // The end: no batch, and the reader stays there.
    assert_eq!(r.read_batch(&mut b)?, 0);
    Ok((batches, rx.try_iter().collect()))
}

#[test]
fn samples_are_placed_by_their_distances_and_the_position_records() {
    let mut w = vec![HEADER];
    // A load after 3 loads, 2 stores and 9 instructions, then a store right after it.
    w.extend(sample(0x40_1000, word(0x7000, 8, 0), [3, 2, 0, 9]));
    w.extend(sample(0x40_1004, word(0x7040, 4, 1), [1, 0, 0, 0]));
    // Thread 2 runs from a position record far on; an allocation after one more store.
    w.extend(position([1 << 40, 3, 0, 3 << 40]));
    w.push((TAG_THREAD << 60) | 2);
    w.extend(sample(0x40_2000, word(0x9000, 2, 2), [0, 0, 0, 2]));
    w.extend(position([1 << 40, 4, 1, (3 << 40) + 2]));
    w.extend([(TAG_EVENT << 60) | 2 | 1 << 16, 0x5000, 64]);
    w.extend(position([(1 << 40) + 5, 4, 1, (3 << 40) + 4]));
    let (batches, events) = read_all(&ended(w), all_lines()).unwrap();
    assert_eq!(batches.len(), 1);
    let b = &batches[0];
    let s = b.sampling().unwrap();
    let got: Vec<(u32, u64, u32, AccessKind, Option<u64>)> = b
        .iter_threaded()
        .map(|(t, a)| (t, a.addr, a.size, a.kind, a.pc))
        .collect();
    assert_eq!(
        got,
        [
            (1, 0x7000, 8, AccessKind::Load, Some(0x40_1000)),
            (1, 0x7040, 4, AccessKind::Store, Some(0x40_1004)),
            (2, 0x9000, 2, AccessKind::Modify, Some(0x40_2000)),
        ]
    );
    assert_eq!(s.data_before, [5, 6, (1 << 40) + 3]);
    assert_eq!(s.instrs_before, [9, 9, (3 << 40) + 2]);
    // The spans: thread 1 up to the switch, thread 2 after it.
    let one = s.thread_span(1);
    assert_eq!(
        (one.loads, one.stores, one.modifies, one.instrs),
        (1 << 40, 3, 0, 3 << 40)
    );
    let two = s.thread_span(2);
    assert_eq!(
        (two.loads, two.stores, two.modifies, two.instrs),
        (5, 1, 1, 4)
    );
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].position, (1 << 40) + 5 + (3 << 40) + 2);
    assert!(matches!(
        events[0].kind,
        EventKind::Alloc {
            addr: 0x5000,
            size: 64,
            ..
        }
    ));
}

/// The tool's stream of a run whose full stream is `records` (thread, kind code, line), as
/// `cs_spatial.c` writes it with `limit` (a superset: every line whose hash is at most it).
fn tool_stream(
    records: &[(ThreadId, u8, u64)],
    hash: &crate::spatial::LineHash,
    limit: u64,
) -> Vec<u64> {
    let mut w = vec![HEADER];
    let (mut c, mut last, mut thread) = ([0u64; 4], [0u64; 4], 1);
    for &(t, k, line) in records {
        if t != thread {
            if c != last {
                w.extend(position(c));
                last = c;
            }
            w.push((TAG_THREAD << 60) | t as u64);
            thread = t;
        }
        if k != 3 && hash.of(line) <= limit {
            let since = [0, 1, 2, 3].map(|i| c[i] - last[i]);
            w.extend(sample(
                0x40_0000 + line,
                word(line * 64 + 3, 4, k as u64),
                since,
            ));
            last = c;
        }
        c[k as usize] += 1;
    }
    if c != last {
        w.extend(position(c));
    }
    ended(w)
}

/// A full stream of the same records.
fn full_trace(records: &[(ThreadId, u8, u64)]) -> Trace {
    let mut b = Batch::new();
    for &(t, k, line) in records {
        b.set_thread(t);
        let kind = AccessKind::from_code(k).unwrap();
        b.push(Access {
            kind,
            pc: Some(0x40_0000 + line),
            ..Access::load(line * 64 + 3, 4)
        });
    }
    Trace::from_reader(Box::new(Once(Some(b))), Source::Stdin)
}

/// A reader of one batch.
struct Once(Option<Batch>);

impl AccessReader for Once {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        batch.clear();
        if let Some(b) = self.0.take() {
            *batch = b;
        }
        Ok(batch.len())
    }
}

/// A reader that does not answer [`AccessReader::sample_itself`]: the stage filters its
/// batches again.
struct Unasked<R>(R);

impl<R: AccessReader> AccessReader for Unasked<R> {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        self.0.read_batch(batch)
    }
}

/// One access of a sampled stream as the analyses see it: (thread, address, pc, data before,
/// instructions before, its limit).
type Seen = (ThreadId, u64, Option<u64>, u64, u64, Limit);

/// Every access of `trace` read as a sampled stream of `options`, and the spans' sums per
/// thread; `None` when it fails (nothing sampled).
#[allow(clippy::type_complexity)]
fn through_the_stage(
    mut trace: Trace,
    options: SpatialOptions,
) -> Option<(Vec<Seen>, std::collections::BTreeMap<ThreadId, ThreadSpan>)> {
    trace.sampled(options, None).unwrap();
    let (mut seen, mut spans) = (Vec::new(), std::collections::BTreeMap::new());
    let mut b = Batch::new();
    loop {
        match trace.read_batch(&mut b) {
            Ok(0) => return Some((seen, spans)),
            Ok(_) => {}
            Err(_) => return None,
        }
        let s = b.sampling().unwrap();
        for (i, (t, a)) in b.iter_threaded().enumerate() {
            seen.push((
                t,
                a.addr,
                a.pc,
                s.data_before[i],
                s.instrs_before[i],
                s.limit_at(i),
            ));
        }
        for span in &s.span {
            let total = spans.entry(span.thread).or_insert(ThreadSpan {
                thread: span.thread,
                ..ThreadSpan::default()
            });
            total.add(span);
        }
    }
}

proptest! {
    /// The tool's stream (a superset: the tool's limit lags), read by the reader and then by
    /// `Trace::sampled` as every `--sampled` command reads it, gives the accesses, positions,
    /// limits and spans that sampling the full stream gives; and the reader's own batches
    /// already hold every access the filter keeps.
    #[test]
    fn the_tool_stream_reads_as_the_full_stream_sampled(
        records in proptest::collection::vec((1u32..4, 0u8..4, 0u64..300), 1..3000),
        rate in 0.05f64..1.0,
        max in proptest::option::of(1u64..40),
        slack in 0u64..4,
    ) {
        let options = SpatialOptions { rate, seed: 7, max_lines: max, ..SpatialOptions::default() };
        let hash = options.hash();
        // The tool's limit lags: it may send lines up to a higher limit.
        let limit = Limit::from_rate(rate).unwrap().0.saturating_add(slack << 60);
        let stream = bytes(&tool_stream(&records, &hash, limit));
        let want = through_the_stage(full_trace(&records), options);
        let reader = SpatialReader::new(std::io::Cursor::new(stream.clone()), Source::Stdin, options, None).unwrap();
        // The stage passes the reader's batches on as they are (it filters for good)…
        let got = through_the_stage(Trace::from_reader(Box::new(reader), Source::Stdin), options);
        prop_assert_eq!(&got, &want);
        // …and filters them again when the reader is not asked to.
        let reader = SpatialReader::new(std::io::Cursor::new(stream), Source::Stdin, options, None).unwrap();
        let again = through_the_stage(Trace::from_reader(Box::new(Unasked(reader)), Source::Stdin), options);
        prop_assert_eq!(&again, &want);
        if let Some((kept, _)) = want {
            let input = bytes(&tool_stream(&records, &hash, limit));
            let (batches, _) = read_all(&input_words(&input), options).unwrap();
            let own: std::collections::HashSet<(u64, u64)> = batches
                .iter()
                .flat_map(|b| b.sampling().unwrap().data_before.clone().into_iter().zip(b.addrs.clone()))
                .collect();
            prop_assert!(kept.iter().all(|k| own.contains(&(k.3, k.1))));
        }
    }
}

/// The words of `bytes`.
fn input_words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn batches_end_where_the_stage_ends_them() {
    // More samples than a batch holds: the first batch ends just before the sample that
    // would pass its half.
    let n = FULL + 10;
    let records: Vec<(ThreadId, u8, u64)> = (0..n as u64).map(|i| (1, 0, i % 7)).collect();
    let stream = tool_stream(&records, &all_lines().hash(), u64::MAX);
    let (got, _) = read_all(&stream, all_lines()).unwrap();
    assert_eq!(got.iter().map(Batch::len).collect::<Vec<_>>(), [FULL, 10]);
    let spans: Vec<u64> = got
        .iter()
        .map(|b| b.sampling().unwrap().total_span().loads)
        .collect();
    assert_eq!(spans, [FULL as u64, 10]);
}

#[test]
fn a_followed_exec_continues_the_counts() {
    let mut w = vec![HEADER];
    w.extend(sample(0x40_1000, word(0x7000, 8, 0), [3, 0, 0, 4]));
    w.extend(position([10, 0, 0, 20]));
    w.push(TAG_EXEC << 60);
    // The new program's stream: its own header, counts from 0, its own end record.
    let mut second = vec![HEADER];
    second.extend(sample(0x40_1000, word(0x9000, 8, 0), [1, 0, 0, 1]));
    second.extend(position([2, 0, 0, 2]));
    w.extend(ended(second));
    let (batches, _) = read_all(&w, all_lines()).unwrap();
    let s = batches[0].sampling().unwrap();
    assert_eq!(s.data_before, [3, 11]);
    assert_eq!(s.instrs_before, [4, 21]);
    assert_eq!(s.total_span().loads, 12);
    assert_eq!(s.total_span().instrs, 22);
}

#[test]
fn the_reuse_samplers_records_make_its_profile() {
    let mut w = vec![HEADER | REUSE_SAMPLING];
    w.extend([TAG_REUSE << 60, 1, 3]);
    w.extend(sample(0x40_1000, word(0x7000, 8, 0), [1, 0, 0, 1]));
    w.extend([TAG_COUNT << 60, 3]);
    w.extend(position([3, 0, 0, 3]));
    let input = bytes(&ended(w));
    let options = SamplerOptions {
        rate: 1.0,
        ..SamplerOptions::default()
    };
    let mut r = SpatialReader::new(&input[..], Source::Stdin, all_lines(), Some(options)).unwrap();
    let mut b = Batch::new();
    while r.read_batch(&mut b).unwrap() > 0 {}
    let profile = r.reuse_profile().expect("a profile");
    assert_eq!(profile.samples().len(), 3);
    assert_eq!(profile.samples()[0].distance(), Some(1));
    // Asked for without the reuse records in the stream: an error.
    let plain = bytes(&ended(vec![HEADER]));
    let mut r = SpatialReader::new(&plain[..], Source::Stdin, all_lines(), Some(options)).unwrap();
    assert!(r.read_batch(&mut b).is_err());
}

#[test]
fn a_bad_stream_is_an_error_naming_what_is_wrong() {
    let msg = |w: &[u64]| read_all(w, all_lines()).unwrap_err().to_string();
    // Cut before the end record.
    let mut w = vec![HEADER];
    w.extend(sample(0x40_1000, word(0x7000, 8, 0), [1, 0, 0, 1]));
    assert!(msg(&w).contains("without its end record"), "{}", msg(&w));
    // Cut inside a sample.
    assert!(msg(&w[..3]).contains("cut off"), "{}", msg(&w[..3]));
    // The end record's count is wrong.
    let mut bad = w.clone();
    bad.push((TAG_END << 60) | 3);
    assert!(msg(&bad).contains("end record counts 3"), "{}", msg(&bad));
    // A full stream's header, or an older version.
    let full = (TAG_HEADER << 60) | super::super::tool::VERSION;
    assert!(msg(&ended(vec![full])).contains("not a spatially sampled stream"));
    assert!(msg(&ended(vec![(TAG_HEADER << 60) | SPATIAL | 2])).contains("version"));
    // A position going back, an instruction fetch as a sample, an unknown tag.
    let mut back = vec![HEADER];
    back.extend(position([5, 0, 0, 5]));
    back.extend(position([4, 0, 0, 9]));
    assert!(msg(&ended(back)).contains("going back"));
    let mut fetch = vec![HEADER];
    fetch.extend(sample(0x40_1000, word(0x40_1000, 3, 3), [0, 0, 0, 1]));
    assert!(msg(&ended(fetch)).contains("a sample holding"));
    assert!(msg(&ended(vec![HEADER, 0x9 << 60])).contains("tag 0x9"));
    // References, none sampled: the stage's error.
    let none = ended(vec![HEADER, TAG_POSITION << 60, 5, 0, 0, 5]);
    assert!(msg(&none).contains("no line"), "{}", msg(&none));
    // Empty input.
    assert!(read_all(&[], all_lines()).is_err());
}

#[test]
fn a_stream_cut_at_an_exec_that_was_not_followed_is_complete() {
    let mut w = vec![HEADER];
    w.extend(sample(0x40_1000, word(0x7000, 8, 0), [1, 0, 0, 1]));
    w.extend(position([4, 0, 0, 4]));
    w.push(TAG_EXEC << 60);
    let (batches, _) = read_all(&w, all_lines()).unwrap();
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0].sampling().unwrap().total_span().loads, 4);
}

#[test]
fn call_events_are_placed_by_their_threads_counts_and_sites() {
    use super::calls::{TAG_ENTER, TAG_LEAVE};
    use crate::batch::{CallOp, CallPlace, EnterKind};
    const CALLS: u64 = 1 << 19;
    let enter = |key: u64, kind: u64| (TAG_ENTER << 60) | key | kind << 48;
    let mut w = vec![HEADER | CALLS];
    // Thread 1's root (no fetch yet), a sample, then a call from 0x40_1020.
    w.extend([enter(0x40_1000, 3), 0]);
    w.extend(sample(0x40_1010, word(0x7000, 8, 0), [2, 0, 0, 5]));
    w.extend(position([3, 1, 0, 9]));
    w.extend([enter(0x40_2000, 0), 0x40_1020]);
    // Thread 2 makes a load and 3 instructions, and returns; then thread 1 returns.
    w.push((TAG_THREAD << 60) | 2);
    w.extend(position([4, 1, 0, 12]));
    w.extend([(TAG_LEAVE << 60) | 1, 0x40_3000]);
    w.push((TAG_THREAD << 60) | 1);
    w.extend([(TAG_LEAVE << 60) | 1, 0x40_2010]);
    let (batches, _) = read_all(&ended(w.clone()), all_lines()).unwrap();
    let b = &batches[0];
    let span = |thread, loads, stores, instrs| ThreadSpan {
        thread,
        loads,
        stores,
        modifies: 0,
        instrs,
    };
    let place = |before, pc| CallPlace { before, pc };
    let got: Vec<_> = b
        .calls()
        .iter()
        .map(|e| (e.at, e.thread, e.op))
        .zip(b.sampling().unwrap().calls.iter().copied())
        .collect();
    let (root, call) = (EnterKind::ALL[3], EnterKind::ALL[0]);
    let thread1 = span(1, 3, 1, 9);
    assert_eq!(
        got,
        [
            (
                (
                    0,
                    1,
                    CallOp::Enter {
                        key: 0x40_1000,
                        kind: root
                    }
                ),
                place(span(1, 0, 0, 0), 0)
            ),
            (
                (
                    1,
                    1,
                    CallOp::Enter {
                        key: 0x40_2000,
                        kind: call
                    }
                ),
                place(thread1, 0x40_1020)
            ),
            (
                (1, 2, CallOp::Leave { frames: 1 }),
                place(span(2, 1, 0, 3), 0x40_3000)
            ),
            (
                (1, 1, CallOp::Leave { frames: 1 }),
                place(thread1, 0x40_2010)
            ),
        ]
    );
    // Without the header's bit, a call word is not this stream's; cut before its site, the
    // stream is truncated.
    w[0] = HEADER;
    let e = read_all(&ended(w.clone()), all_lines()).unwrap_err();
    assert!(e.to_string().contains("unexpected record tag 0x9"), "{e}");
    w[0] = HEADER | CALLS;
    let e = read_all(&w[..2], all_lines()).unwrap_err();
    assert!(e.to_string().contains("site"), "{e}");
}
