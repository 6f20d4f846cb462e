//! Lackey decode throughput, in bytes of text per second.
//!
//! The input is ~64 MiB of synthetic lackey text generated in memory with a fixed seed, shaped
//! like `valgrind --tool=lackey --trace-mem=yes ls /usr/bin` (see [`lackey_text`]): loops over
//! basic blocks, about 65% `I` records, then loads, stores and a few modifies on stack
//! (10 digits) and heap (8 digits) addresses, and a Valgrind `==1==` line now and then. 64 MiB is far larger than the last-level
//! cache, so the reader streams from memory as it does from a file.
//!
//! Run with `cargo bench -p cachescope --bench lackey -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::io::Write;

use cachescope::trace::{AccessReader, lackey};
use cachescope::{Batch, Source};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Bytes of text to generate.
const TEXT_BYTES: usize = 64 << 20;

/// SplitMix64: a fixed, dependency-free generator, so the text is the same everywhere.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n.
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Picks an index with probability proportional to `weights`.
fn pick(rng: &mut SplitMix, weights: &[u64]) -> usize {
    let mut r = rng.below(weights.iter().sum());
    for (i, &w) in weights.iter().enumerate() {
        if r < w {
            return i;
        }
        r -= w;
    }
    weights.len() - 1
}

/// One static record of a basic block: its kind (0 = `I`, then `L`, `S`, `M`) and size, and for
/// data whether it addresses the stack.
struct StaticRecord {
    kind: usize,
    size: u64,
    stack: bool,
}

/// Deterministic lackey text of about `bytes` bytes.
///
/// Real traces replay the same code again and again, so the text is built the same way: 256
/// basic blocks of 4 to 40 records, run in loops (a block repeats with probability 3/4) with
/// fresh data addresses each time. Record kinds follow a Markov chain and sizes and address
/// lengths follow distributions measured on `valgrind --tool=lackey --trace-mem=yes ls /usr/bin`
/// (3.1 M `I`, 0.95 M `L`, 0.6 M `S`, 7.5 k `M` records): after an `I` come 52% `I`, 35% `L`,
/// 12% `S`; after an `L` 57% `I`, 43% `S`; after an `S` or `M`, an `I`.
fn lackey_text(bytes: usize) -> Vec<u8> {
    // Rows: from I, L, S, M; columns: to I, L, S, M (per mille).
    const NEXT: [[u64; 4]; 4] = [
        [517, 358, 121, 4],
        [570, 0, 428, 2],
        [998, 0, 0, 2],
        [1000, 0, 0, 0],
    ];
    // Instruction sizes 1..=11 and data sizes, weighted as measured.
    const INSTR_SIZE_WEIGHTS: [u64; 11] = [215, 776, 718, 553, 324, 308, 149, 31, 34, 9, 2];
    const DATA_SIZES: [u64; 6] = [1, 2, 4, 8, 16, 32];
    const DATA_SIZE_WEIGHTS: [u64; 6] = [528, 7, 93, 889, 11, 24];

    let mut rng = SplitMix(0x5EED);
    let blocks: Vec<(u64, Vec<StaticRecord>)> = (0..256)
        .map(|_| {
            let start = 0x0400_0000 + rng.below(0x0100_0000);
            let mut kind = 0;
            let records = (0..4 + rng.below(37))
                .map(|i| {
                    kind = if i == 0 {
                        0
                    } else {
                        pick(&mut rng, &NEXT[kind])
                    };
                    let size = if kind == 0 {
                        1 + pick(&mut rng, &INSTR_SIZE_WEIGHTS) as u64
                    } else {
                        DATA_SIZES[pick(&mut rng, &DATA_SIZE_WEIGHTS)]
                    };
                    // 46% of data accesses go to the stack (10 digits), the rest to the heap (8).
                    StaticRecord {
                        kind,
                        size,
                        stack: rng.below(100) < 46,
                    }
                })
                .collect();
            (start, records)
        })
        .collect();

    let mut out = Vec::with_capacity(bytes + 4096);
    out.extend_from_slice(
        b"==1== Lackey, an example Valgrind tool\n==1== Command: bench\n==1== \n",
    );
    let mut block = 0;
    while out.len() < bytes {
        if rng.below(4) == 0 {
            block = rng.below(blocks.len() as u64) as usize;
        }
        let (mut pc, records) = (blocks[block].0, &blocks[block].1);
        for r in records {
            if r.kind == 0 {
                writeln!(out, "I  {pc:08x},{}", r.size).unwrap();
                pc += r.size;
            } else {
                let addr = if r.stack {
                    0x1f_fefff000 + rng.below(0x1000)
                } else {
                    0x04a0_0000 + rng.below(0x0040_0000)
                };
                writeln!(
                    out,
                    " {} {addr:08x},{}",
                    ['L', 'S', 'M'][r.kind - 1],
                    r.size
                )
                .unwrap();
            }
        }
        if rng.below(1000) == 0 {
            out.extend_from_slice(b"==1== \n");
        }
    }
    out
}

fn decode(text: &[u8]) -> usize {
    let mut reader = lackey::Reader::new(text, Source::Memory, lackey::Options::default());
    let mut batch = Batch::new();
    let mut n = 0;
    loop {
        let k = reader
            .read_batch(&mut batch)
            .expect("the generated text is valid lackey");
        if k == 0 {
            return n;
        }
        n += k;
        black_box(&batch);
    }
}

fn bench_lackey(c: &mut Criterion) {
    let text = lackey_text(TEXT_BYTES);
    let records = text
        .split(|&b| b == b'\n')
        .filter(|l| l.first().is_some_and(|&b| b != b'='))
        .count();
    assert_eq!(decode(&text), records);
    let mut group = c.benchmark_group("lackey");
    group.throughput(Throughput::Bytes(text.len() as u64));
    // One pass takes a few hundred milliseconds: ten samples fit in a short measurement time.
    group.sample_size(10);
    group.bench_function("decode_64MiB", |b| b.iter(|| decode(black_box(&text))));
    group.finish();
}

criterion_group!(benches, bench_lackey);
criterion_main!(benches);
