//! Decode throughput of the Valgrind tool's record stream, in records per second.
//!
//! The input is 8 M records (64 MiB) generated in memory with a fixed seed, shaped like a
//! real program's stream: about 65% instruction records at nearby pcs, then loads, stores and
//! a few modifies on stack and heap addresses, a thread switch every ~100,000 records; the header first
//! and the end record last, as the tool writes them. 64 MiB is far larger than the last-level
//! cache, so the reader streams from memory as it does from the pipe.
//! The decoder takes its AVX2 kernel when the CPU has AVX2, as it does when recording.
//!
//! Also `tool_encode`: the same records, decoded once into batches, encoded into a native trace
//! as `record` does (the bench thread encodes; zstd runs on the writer's helper thread, whose
//! time this does not count): the encoder's share of `record`.
//!
//! And `tool_record`: the same stream encoded straight into a native trace by
//! `ToolReader::write_native`, `record`'s direct path (decoding and encoding on the bench
//! thread; zstd again on the writer's helper thread).
//!
//! And `tool_trace_decode`: reading that native trace back (`native::Reader`): the `records`
//! stream's blocks have a row per access, the `runs` stream's are run blocks (format version
//! 3, each run of fetches one row), so the two compare the decoders; `…_elided` reads them as
//! the sampled stage does (`AccessReader::elide_fetches`: run rows' fetches keep only their
//! kind, the data index is written by the decoder), in the same accesses per second.
//!
//! Each group also reads `runs`: a stream shaped as the tool writes real programs now, where
//! consecutive instructions are one word naming a run defined once (256 runs of 2-8
//! instructions, each run followed by one or two data references), so that a word stands for
//! about two records.
//!
//! Measured in CPU time of the bench thread (`support/cpu_time.rs`), so that other work on a
//! shared machine does not count. Run with
//! `cargo bench -p cachescope --bench tool_decode -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use cachescope::record::tool::ToolReader;
use cachescope::trace::AccessReader;
use cachescope::trace::native::{Header, Reader, Writer};
use cachescope::{Batch, Source};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/cpu_time.rs"]
mod cpu_time;
use cpu_time::CpuTime;

const RECORDS: usize = 8 << 20;

fn stream() -> (Vec<u8>, u64) {
    let mut words: Vec<u64> = Vec::with_capacity(RECORDS + 64);
    words.push((0xE << 60) | cachescope::record::tool::VERSION | (1 << 16));
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut pc = 0x40_1000u64;
    let mut refs = 0;
    while words.len() < RECORDS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let r = x % 100;
        let (kind, addr, size) = if r < 65 {
            pc = if r < 5 {
                0x40_1000 + (x >> 20) % 0x10000
            } else {
                pc + 4
            };
            (3u64, pc, 4u64)
        } else if r < 85 {
            (0, 0x1f_ff00_0000 + (x >> 24) % 0x4000, 8)
        } else if r < 97 {
            (1, 0x4a_0000 + (x >> 24) % 0x10_0000, 8)
        } else if r < 99 || (x >> 40) % 1000 != 0 {
            (2, 0x4a_0000 + (x >> 24) % 0x10_0000, 4)
        } else {
            words.push((0x1 << 60) | ((x >> 32) % 4 + 1));
            continue;
        };
        words.push(addr | (size << 48) | (kind << 58));
        refs += 1;
    }
    let before = words.len() as u64;
    words.push((0xF << 60) | before);
    (words.iter().flat_map(|w| w.to_le_bytes()).collect(), refs)
}

/// The `runs` stream: 256 runs defined after the header, then run words each followed by one
/// or two data references, until about [`RECORDS`] records.
fn stream_with_runs() -> (Vec<u8>, u64) {
    let mut words: Vec<u64> = vec![(0xE << 60) | cachescope::record::tool::VERSION | (1 << 16)];
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut lens = Vec::new();
    for id in 0..256u64 {
        let len = 2 + next() % 7;
        let start = 0x40_1000 + (next() >> 20) % 0x10000;
        words.push((0x8 << 60) | (1 + len));
        words.push(id);
        words.extend((0..len).map(|i| (start + 4 * i) | (4 << 48) | (3 << 58)));
        lens.push(len);
    }
    let mut refs = 0;
    while refs < RECORDS as u64 {
        let r = next();
        let id = (r % 256) & ((r >> 8) % 256); // skewed towards low ids, as hot loops are
        words.push((0x7 << 60) | id);
        refs += lens[id as usize];
        for d in 0..1 + (r >> 40) % 2 {
            words.push((0x1f_ff00_0000 + (r >> 24) % 0x4000 + 8 * d) | (8 << 48));
            refs += 1;
        }
    }
    let before = words.len() as u64;
    words.push((0xF << 60) | before);
    (words.iter().flat_map(|w| w.to_le_bytes()).collect(), refs)
}

/// Both streams, by name.
fn streams() -> [(&'static str, (Vec<u8>, u64)); 2] {
    [("records", stream()), ("runs", stream_with_runs())]
}

fn decode(c: &mut Criterion<CpuTime>) {
    let mut group = c.benchmark_group("tool_decode");
    group.sample_size(10);
    for (name, (bytes, refs)) in streams() {
        group.throughput(Throughput::Elements(refs));
        group.bench_function(name, |b| {
            let mut batch = Batch::new();
            b.iter(|| {
                let mut r = ToolReader::new(bytes.as_slice(), Source::Memory);
                let mut n = 0;
                while r.read_batch(&mut batch).unwrap() > 0 {
                    n += batch.len();
                }
                assert_eq!(n as u64, refs);
                black_box(n)
            })
        });
    }
    group.finish();
}

fn encode(c: &mut Criterion<CpuTime>) {
    let (bytes, refs) = stream();
    let mut r = ToolReader::new(bytes.as_slice(), Source::Memory);
    let mut batches = Vec::new();
    loop {
        let mut batch = Batch::new();
        if r.read_batch(&mut batch).unwrap() == 0 {
            break;
        }
        batches.push(batch);
    }
    drop(bytes);
    let mut group = c.benchmark_group("tool_encode");
    group.throughput(Throughput::Elements(refs));
    group.sample_size(10);
    group.bench_function("records", |b| {
        b.iter(|| {
            let mut w = Writer::new(Vec::with_capacity(16 << 20), Header::new()).unwrap();
            for batch in &batches {
                w.write_batch(batch).unwrap();
            }
            black_box(w.finish().unwrap())
        })
    });
    group.finish();
}

fn record(c: &mut Criterion<CpuTime>) {
    let mut group = c.benchmark_group("tool_record");
    group.sample_size(10);
    for (name, (bytes, refs)) in streams() {
        group.throughput(Throughput::Elements(refs));
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut r = ToolReader::new(bytes.as_slice(), Source::Memory);
                let mut w = Writer::new(Vec::with_capacity(16 << 20), Header::new()).unwrap();
                let n = r.write_native(&mut w, |_| {}).unwrap();
                assert_eq!(n, refs);
                black_box(w.finish().unwrap())
            })
        });
    }
    group.finish();
}

fn read_back(c: &mut Criterion<CpuTime>) {
    let mut group = c.benchmark_group("tool_trace_decode");
    group.sample_size(10);
    for (name, (bytes, refs)) in streams() {
        let mut w = Writer::new(Vec::with_capacity(16 << 20), Header::new()).unwrap();
        ToolReader::new(bytes.as_slice(), Source::Memory)
            .write_native(&mut w, |_| {})
            .unwrap();
        let trace = w.finish().unwrap().0;
        drop(bytes);
        group.throughput(Throughput::Elements(refs));
        for elide in [false, true] {
            let id = if elide {
                format!("{name}_elided")
            } else {
                name.to_string()
            };
            group.bench_function(id, |b| {
                let mut batch = Batch::new();
                b.iter(|| {
                    let mut r = Reader::new(trace.as_slice(), Source::Memory).unwrap();
                    if elide {
                        r.elide_fetches();
                    }
                    let mut n = 0;
                    while r.read_batch(&mut batch).unwrap() > 0 {
                        n += batch.len() as u64;
                    }
                    assert_eq!(n, refs);
                    black_box(n)
                })
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(CpuTime);
    targets = decode, encode, record, read_back
}
criterion_main!(benches);
