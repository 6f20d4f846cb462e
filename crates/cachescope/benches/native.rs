//! Native-format decode throughput (accesses per second) on a lackey-like stream of 10 M
//! accesses, encoded in memory with the default writer options.
//!
//! The stream mimics what Valgrind lackey records for a loop-heavy program: a run of loops whose
//! code lies at slowly increasing pcs; each static instruction (1–8 bytes) makes 0–4 data
//! accesses (one instruction fetch every ~3 accesses), each going to a strided array stream, a
//! stack slot, or a random place in a 64 MiB table; data-dependent branches skip parts of a loop
//! body. Every data access carries the pc of its instruction, as lackey's do.
//!
//! Also the encoding throughput of the same stream (`encode_lackey_like_10M`).
//!
//! Run: `cargo bench -p cachescope --bench native -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use cachescope::trace::AccessReader;
use cachescope::trace::native::{Header, Reader, Writer};
use cachescope::{AccessKind, Batch, Source};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

const ACCESSES: usize = 10_000_000;

/// Where one data operand of a static instruction goes.
#[derive(Clone, Copy)]
enum Target {
    /// `base + iteration × stride`.
    Stream { base: u64, stride: u64 },
    /// A fixed stack slot.
    Stack(u64),
    /// A random address in a table.
    Random { base: u64, mask: u64 },
}

struct Operand {
    kind: AccessKind,
    size: u32,
    target: Target,
}

struct Instr {
    pc: u64,
    size: u32,
    operands: Vec<Operand>,
}

fn random_loop(rng: &mut Pcg64, pc: &mut u64) -> Vec<Instr> {
    let arrays: Vec<u64> = (0..4)
        .map(|_| 0x5555_0000_0000 + (rng.random_range(0..4096u64) << 24))
        .collect();
    let stack = 0x7ffe_f000_0000 - (rng.random_range(0..256u64) << 6);
    (0..rng.random_range(8..48))
        .map(|_| {
            let size = rng.random_range(1..=8);
            let here = *pc;
            *pc += u64::from(size);
            let operands = (0..[0, 1, 1, 2, 2, 2, 3, 3, 4][rng.random_range(0..9)])
                .map(|_| {
                    let elem = [1u32, 2, 4, 8, 8, 8, 4][rng.random_range(0..7)];
                    let kind = match rng.random_range(0..10) {
                        0..6 => AccessKind::Load,
                        6..9 => AccessKind::Store,
                        _ => AccessKind::Modify,
                    };
                    let target = match rng.random_range(0..20) {
                        0..11 => Target::Stream {
                            base: arrays[rng.random_range(0..4)] + 8 * rng.random_range(0..16u64),
                            stride: u64::from(elem) * rng.random_range(1..=4u64),
                        },
                        11..19 => Target::Stack(stack + 8 * rng.random_range(0..32u64)),
                        _ => Target::Random {
                            base: 0x7f00_0000_0000,
                            mask: (64 << 20) - 1,
                        },
                    };
                    Operand {
                        kind,
                        size: elem,
                        target,
                    }
                })
                .collect();
            Instr {
                pc: here,
                size,
                operands,
            }
        })
        .collect()
}

/// The benchmark stream, in batches.
fn lackey_like(n: usize) -> Vec<Batch> {
    let mut rng = Pcg64::seed_from_u64(0x5eed);
    let mut pc = 0x40_1000;
    let mut batches = vec![Batch::new()];
    let mut total = 0;
    'outer: loop {
        let body = random_loop(&mut rng, &mut pc);
        pc += rng.random_range(0..512);
        let (skip_at, skip_len) = (rng.random_range(0..body.len()), rng.random_range(1..6));
        for iter in 0..rng.random_range(100..5000u64) {
            let skip = rng.random_bool(0.3);
            for (i, ins) in body.iter().enumerate() {
                if skip && (skip_at..skip_at + skip_len).contains(&i) {
                    continue;
                }
                let mut emit = |addr, size, kind, pc| {
                    let b = batches.last_mut().unwrap();
                    b.push_raw(addr, size, kind, pc);
                    if b.is_full() {
                        batches.push(Batch::new());
                    }
                };
                emit(ins.pc, ins.size, AccessKind::Instr, ins.pc);
                for op in &ins.operands {
                    let addr = match op.target {
                        Target::Stream { base, stride } => base + iter * stride,
                        Target::Stack(a) => a,
                        Target::Random { base, mask } => base + (rng.random::<u64>() & mask & !7),
                    };
                    emit(addr, op.size, op.kind, ins.pc);
                }
                total += 1 + ins.operands.len();
                if total >= n {
                    break 'outer;
                }
            }
        }
    }
    batches
}

fn native_decode(c: &mut Criterion) {
    let batches = lackey_like(ACCESSES);
    encode(c, &batches);
    let n: usize = batches.iter().map(Batch::len).sum();
    let mut w = Writer::new(Vec::new(), Header::new()).unwrap();
    for b in &batches {
        w.write_batch(b).unwrap();
    }
    let (bytes, _) = w.finish().unwrap();
    drop(batches);
    println!(
        "native: {n} accesses in {} bytes = {:.3} bytes/access",
        bytes.len(),
        bytes.len() as f64 / n as f64
    );

    let mut g = c.benchmark_group("native");
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(10);
    g.bench_function("decode_lackey_like_10M", |b| {
        let mut batch = Batch::new();
        b.iter(|| {
            let mut r = Reader::new(&bytes[..], Source::Memory).unwrap();
            let mut total = 0;
            loop {
                let got = r.read_batch(&mut batch).unwrap();
                if got == 0 {
                    break;
                }
                total += got;
                black_box(&batch);
            }
            assert_eq!(total, n);
        })
    });
    g.finish();
}

/// Writing the same stream: encoding on the caller's thread, zstd on the writer's helper
/// thread one block behind (wall time, so both cores count).
fn encode(c: &mut Criterion, batches: &[Batch]) {
    let n: usize = batches.iter().map(Batch::len).sum();
    let mut g = c.benchmark_group("native");
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(10);
    g.bench_function("encode_lackey_like_10M", |b| {
        b.iter(|| {
            let mut w = Writer::new(Vec::with_capacity(4 << 20), Header::new()).unwrap();
            for batch in batches {
                w.write_batch(batch).unwrap();
            }
            black_box(w.finish().unwrap())
        })
    });
    g.finish();
}

criterion_group!(benches, native_decode);
criterion_main!(benches);
