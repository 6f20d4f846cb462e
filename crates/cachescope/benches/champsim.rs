//! ChampSim reader throughput, in references (fetches, loads and stores) per second.
//!
//! The input is 1 M records (64 MiB) generated in memory with a fixed seed, shaped like the Pin
//! tracer's output of an integer program: loops over basic blocks of nearby instructions, about
//! a third of them loading (some twice), a tenth storing, a few read-modify-write operands, a
//! branch ending each block, registers filled in. About 1.5 references a record. 64 MiB is far
//! larger than the last-level cache, so the reader streams from memory as it does from a file
//! (or from xz's decoder thread, for the usual `.champsimtrace.xz`).
//!
//! Run with `cargo bench -p cachescope --bench champsim -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use cachescope::trace::{AccessReader, champsim};
use cachescope::{Batch, Source};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const RECORDS: usize = 1 << 20;

/// xorshift64.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn trace() -> Vec<u8> {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let blocks: Vec<(u64, u64)> = (0..512)
        .map(|_| (0x40_0000 + rng.below(1 << 22), 2 + rng.below(14)))
        .collect();
    let mut out = Vec::with_capacity(RECORDS * champsim::RECORD_LEN);
    let mut block = 0;
    while out.len() < RECORDS * champsim::RECORD_LEN {
        if rng.below(4) == 0 {
            block = rng.below(blocks.len() as u64) as usize;
        }
        let (mut ip, len) = blocks[block];
        for i in 0..len {
            let a = if rng.below(2) == 0 {
                0x7ffc_0000_0000 + rng.below(1 << 14)
            } else {
                0x5555_5000_0000 + rng.below(1 << 24)
            };
            let mut r = champsim::Record {
                ip,
                destination_registers: [1 + rng.below(16) as u8, 0],
                source_registers: [1 + rng.below(16) as u8, 25, 0, 0],
                ..champsim::Record::default()
            };
            match rng.below(30) {
                0..9 => r.source_memory[0] = a,
                9 => r.source_memory[..2].copy_from_slice(&[a, a + 16]),
                10..13 => r.destination_memory[0] = a,
                13 => (r.source_memory[0], r.destination_memory[0]) = (a, a),
                _ => {}
            }
            if i + 1 == len {
                r.is_branch = 1;
                r.branch_taken = u8::from(rng.below(3) > 0);
            }
            out.extend(r.encode());
            ip += 1 + rng.below(7);
        }
    }
    out.truncate(RECORDS * champsim::RECORD_LEN);
    out
}

fn decode(bytes: &[u8]) -> u64 {
    let mut reader = champsim::Reader::new(bytes, Source::Memory, champsim::Options::default());
    let mut batch = Batch::new();
    let mut n = 0;
    loop {
        let k = reader
            .read_batch(&mut batch)
            .expect("the generated trace is whole records");
        if k == 0 {
            return n;
        }
        n += k as u64;
        black_box(&batch);
    }
}

fn bench_champsim(c: &mut Criterion) {
    let bytes = trace();
    let refs = decode(&bytes);
    assert!(refs > RECORDS as u64);
    let mut group = c.benchmark_group("champsim");
    group.throughput(Throughput::Elements(refs));
    // One pass takes tens of milliseconds: ten samples fit in a short measurement time.
    group.sample_size(10);
    group.bench_function("decode_64MiB", |b| b.iter(|| decode(black_box(&bytes))));
    group.finish();
}

criterion_group!(benches, bench_champsim);
criterion_main!(benches);
