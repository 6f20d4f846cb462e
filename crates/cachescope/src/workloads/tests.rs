//! Behaviour of the workloads checked against a brute-force LRU cache and by counting.

use super::kernel::{DATA_BASE, next_array};
use super::*;
use crate::access::{Access, AccessKind};
use crate::batch::BATCH_LEN;
use crate::error::Error;

fn params(f: impl FnOnce(&mut Params)) -> Params {
    let mut p = Params::default();
    f(&mut p);
    p
}

/// The whole trace.
fn collect(w: Workload, p: &Params) -> Vec<Access> {
    let mut g = generator(w, p).unwrap();
    let mut batch = Batch::new();
    let mut out = Vec::new();
    while g.read_batch(&mut batch).unwrap() > 0 {
        out.extend(batch.iter());
    }
    out
}

fn lines_of(trace: &[Access], line_size: u64) -> Vec<u64> {
    trace.iter().map(|a| a.addr / line_size).collect()
}

/// Fully-associative LRU of `cap` lines, by brute force: whether each reference misses.
fn lru_misses(lines: &[u64], cap: usize) -> Vec<bool> {
    let mut stack: Vec<u64> = Vec::with_capacity(cap + 1); // most recent last
    lines
        .iter()
        .map(|&l| {
            let hit = match stack.iter().rposition(|&x| x == l) {
                Some(pos) => {
                    stack.remove(pos);
                    true
                }
                None => false,
            };
            stack.push(l);
            if stack.len() > cap {
                stack.remove(0);
            }
            !hit
        })
        .collect()
}

fn count(misses: &[bool]) -> usize {
    misses.iter().filter(|&&m| m).count()
}

fn distinct(xs: impl IntoIterator<Item = u64>) -> usize {
    xs.into_iter()
        .collect::<std::collections::HashSet<_>>()
        .len()
}

#[test]
fn names_round_trip() {
    for w in Workload::ALL {
        assert_eq!(Workload::from_name(w.name()), Some(w));
        assert!(!w.describe().is_empty() && !w.describe().contains('\n'));
    }
    assert_eq!(Workload::from_name("matmul_tiled"), None);
}

#[test]
fn loop_misses_everything_below_k_lines_and_only_cold_at_k() {
    let k = 64;
    let p = params(|p| {
        p.lines = k;
        p.refs = Some(10 * k);
    });
    let lines = lines_of(&collect(Workload::Loop, &p), 64);
    assert_eq!(lines.len(), 640);
    assert_eq!(count(&lru_misses(&lines, k as usize - 1)), 640);
    let at_k = lru_misses(&lines, k as usize);
    assert_eq!(count(&at_k), k as usize);
    assert!(at_k[..k as usize].iter().all(|&m| m));
    assert_eq!(
        generator(Workload::Loop, &params(|p| p.lines = k))
            .unwrap()
            .data_refs(),
        256 * k
    );
}

#[test]
fn sequential_touches_refs_times_size_over_line_size_lines() {
    for line_size in [32, 64, 128] {
        let p = params(|p| {
            p.lines = 16;
            p.line_size = line_size;
            p.refs = Some(1000);
        });
        let t = collect(Workload::Sequential, &p);
        assert_eq!(t.len(), 1000);
        assert!(t.iter().all(|a| a.size == 8 && a.kind == AccessKind::Load));
        assert!(t.windows(2).all(|w| w[1].addr == w[0].addr + 8));
        assert_eq!(
            distinct(lines_of(&t, line_size)),
            (1000 * 8u64).div_ceil(line_size) as usize
        );
    }
    let natural = generator(Workload::Sequential, &params(|p| p.lines = 16)).unwrap();
    assert_eq!(natural.data_refs(), 16 * 64 / 8);
}

#[test]
fn stride_walks_columns_then_moves_on() {
    // 4 rows of 64 bytes, 8 columns of doubles: 32 loads per sweep, then the next array.
    let p = params(|p| {
        p.lines = 4;
        p.stride = 64;
        p.refs = Some(40);
    });
    let got: Vec<u64> = collect(Workload::Stride, &p)
        .iter()
        .map(|a| a.addr)
        .collect();
    let want: Vec<u64> = (0..2)
        .flat_map(|array| (0..8).flat_map(move |col| (0..4).map(move |row| (array, row, col))))
        .map(|(array, row, col)| DATA_BASE + array * 256 + row * 64 + col * 8)
        .take(40)
        .collect();
    assert_eq!(got, want);

    // A 12-byte stride reads 4-byte elements, 21 rows of a 256-byte array.
    let p = params(|p| {
        p.lines = 4;
        p.stride = 12;
    });
    let t = collect(Workload::Stride, &p);
    assert_eq!(t.len(), 21 * 3);
    assert!(t.iter().all(|a| a.size == 4 && a.addr % 4 == 0));
    assert!((0..21).all(|k| t[k as usize].addr == DATA_BASE + 12 * k));
    assert_eq!(distinct(t.iter().map(|a| a.addr)), 63);
}

#[test]
fn stride_hits_within_a_line_only_when_a_column_fits() {
    // 16 rows of 256 bytes: a column touches 16 lines; 8 columns share each line.
    let p = params(|p| {
        p.lines = 64;
        p.stride = 256;
    });
    let lines = lines_of(&collect(Workload::Stride, &p), 64);
    assert_eq!(lines.len(), 512);
    assert_eq!(count(&lru_misses(&lines, 16)), 64);
    assert_eq!(count(&lru_misses(&lines, 15)), 512);
}

#[test]
fn random_stays_in_and_covers_its_working_set() {
    let p = params(|p| p.lines = 64);
    let t = collect(Workload::Random, &p);
    assert_eq!(t.len(), 256 * 64);
    assert!(
        t.iter()
            .all(|a| (DATA_BASE..DATA_BASE + 64 * 64).contains(&a.addr) && a.addr % 64 == 0)
    );
    let mut per_line = [0u32; 64];
    for a in &t {
        per_line[((a.addr - DATA_BASE) / 64) as usize] += 1;
    }
    assert!(
        per_line.iter().all(|&c| (180..330).contains(&c)),
        "{per_line:?}"
    );
}

#[test]
fn zipf_frequencies_fall_with_rank() {
    let p = params(|p| {
        p.lines = 100;
        p.refs = Some(100_000);
    });
    let t = collect(Workload::Zipf, &p);
    let mut per_line = [0u32; 100];
    for a in &t {
        assert!(a.addr >= DATA_BASE && a.addr % 64 == 0);
        per_line[((a.addr - DATA_BASE) / 64) as usize] += 1;
    }
    let z = zipf::Zipf::new(&p);
    let by_rank: Vec<u32> = (1..=100)
        .map(|r| per_line[z.line_of_rank(r) as usize])
        .collect();
    // s = 1: rank 1 is drawn twice as often as rank 2, three times as often as rank 3.
    assert!(
        f64::from(by_rank[0]) > 1.8 * f64::from(by_rank[1]),
        "{by_rank:?}"
    );
    assert!(by_rank[..8].windows(2).all(|w| w[0] > w[1]), "{by_rank:?}");
    assert!(by_rank[0] > 10 * by_rank[99]);
}

#[test]
fn matmul_naive_and_tiled_make_the_same_references() {
    for (n, tile) in [(8, 4), (8, 8), (8, 1), (10, 4)] {
        let p = params(|p| {
            p.n = n;
            p.tile = tile;
        });
        let key = |a: &Access| (a.addr, a.kind, a.size);
        let mut naive: Vec<_> = collect(Workload::Matmul, &p).iter().map(key).collect();
        let mut tiled: Vec<_> = collect(Workload::MatmulTiled, &p).iter().map(key).collect();
        assert_eq!(naive.len() as u64, 3 * n * n * n);
        assert_eq!(tiled.len(), naive.len());
        // Tiling reorders unless a tile is one element or the whole matrix.
        assert_eq!(naive != tiled, 1 < tile && tile < n, "n {n} tile {tile}");
        naive.sort_unstable();
        tiled.sort_unstable();
        assert_eq!(naive, tiled, "n {n} tile {tile}");
    }
}

#[test]
fn matmul_follows_the_loop_nest() {
    let n = 4;
    let p = params(|p| p.n = n);
    let t = collect(Workload::Matmul, &p);
    let (a, b) = (DATA_BASE, next_array(DATA_BASE, n * n * 8));
    let c = next_array(b, n * n * 8);
    let step = |i: u64, j: u64, k: u64| {
        [
            (a + (i * n + k) * 8, AccessKind::Load),
            (b + (k * n + j) * 8, AccessKind::Load),
            (c + (i * n + j) * 8, AccessKind::Modify),
        ]
    };
    let want: Vec<_> = (0..n)
        .flat_map(|i| (0..n).flat_map(move |j| (0..n).flat_map(move |k| step(i, j, k))))
        .collect();
    let got: Vec<_> = t.iter().map(|a| (a.addr, a.kind)).collect();
    assert_eq!(got, want);
}

#[test]
fn tiling_cuts_lru_misses() {
    let p = params(|p| {
        p.n = 16;
        p.tile = 4;
    });
    let naive = count(&lru_misses(
        &lines_of(&collect(Workload::Matmul, &p), 64),
        16,
    ));
    let tiled = count(&lru_misses(
        &lines_of(&collect(Workload::MatmulTiled, &p), 64),
        16,
    ));
    assert!(naive >= 16 * 16 * 16, "{naive}");
    assert!(3 * tiled < naive, "tiled {tiled} naive {naive}");
}

#[test]
fn stencil_makes_29_references_per_interior_point() {
    let n = 5u64;
    let p = params(|p| p.n = n);
    let t = collect(Workload::Stencil, &p);
    assert_eq!(t.len(), 29 * 27);
    let bytes = n * n * n * 8;
    let u = DATA_BASE;
    let v = next_array(u, bytes);
    let r = next_array(v, bytes);
    let mut centres = Vec::new();
    for point in t.chunks(29) {
        assert!(point.iter().all(|a| a.size == 8));
        let centre = point[0].addr - v;
        assert_eq!(point[0].kind, AccessKind::Load);
        assert_eq!(
            (point[28].addr - r, point[28].kind),
            (centre, AccessKind::Store)
        );
        assert_eq!(
            (point[1].addr - u, point[1].kind),
            (centre, AccessKind::Load)
        );
        let us: Vec<i64> = point[1..28]
            .iter()
            .map(|a| (a.addr - u) as i64 - centre as i64)
            .collect();
        let mut want: Vec<i64> = (-1..=1)
            .flat_map(|d3| {
                (-1..=1).flat_map(move |d2| (-1..=1).map(move |d1| 8 * (d1 + 5 * d2 + 25 * d3)))
            })
            .collect();
        let mut sorted = us.clone();
        sorted.sort_unstable();
        want.sort_unstable();
        assert_eq!(sorted, want);
        assert!(point[1..28].iter().all(|a| a.kind == AccessKind::Load));
        centres.push(centre / 8);
    }
    // I1 fastest, interior points only.
    let want: Vec<u64> = (1..4)
        .flat_map(|i3| (1..4).flat_map(move |i2| (1..4).map(move |i1| i1 + 5 * i2 + 25 * i3)))
        .collect();
    assert_eq!(centres, want);
    assert_eq!(
        generator(Workload::Stencil, &Params::default())
            .unwrap()
            .data_refs(),
        29 * 62 * 62 * 62
    );
}

#[test]
fn phases_have_different_miss_behaviour() {
    let segment = 4096;
    let p = params(|p| {
        p.lines = 256;
        p.refs = Some(6 * segment);
    });
    let t = collect(Workload::Phases, &p);
    let misses = lru_misses(&lines_of(&t, 64), 64);
    let per_segment: Vec<usize> = misses.chunks(segment as usize).map(count).collect();
    // The loop over 16 lines only misses cold; the stream misses 1 in 8; random over 256 lines
    // in 64 misses about 3 in 4.
    assert_eq!(per_segment[0], 16);
    assert_eq!(per_segment[3], 16);
    assert_eq!(per_segment[1], 512);
    assert_eq!(per_segment[4], 512);
    for s in [per_segment[2], per_segment[5]] {
        assert!((2800..3400).contains(&s), "{per_segment:?}");
    }
    assert_eq!(
        generator(Workload::Phases, &params(|p| p.lines = 256))
            .unwrap()
            .data_refs(),
        6 * 64 * 256
    );
    assert_eq!(
        collect(Workload::Phases, &params(|p| p.refs = Some(5))).len(),
        5
    );
}

#[test]
fn seeds_decide_the_randomized_workloads() {
    for w in Workload::ALL {
        let p = |seed| {
            params(|p| {
                p.seed = seed;
                p.lines = 64;
                p.n = 6;
                p.tile = 3;
                p.refs = Some(2000);
            })
        };
        let (a, b, c) = (collect(w, &p(1)), collect(w, &p(1)), collect(w, &p(2)));
        assert_eq!(a, b, "{w}");
        let randomized = matches!(w, Workload::Random | Workload::Zipf | Workload::Phases);
        assert_eq!(a != c, randomized, "{w}");
    }
}

#[test]
fn batches_are_full_and_refs_is_exact() {
    let p = params(|p| p.refs = Some(2 * BATCH_LEN as u64 + 5));
    let mut g = generator(Workload::Sequential, &p).unwrap();
    let mut batch = Batch::new();
    let lens: Vec<usize> = std::iter::from_fn(|| Some(g.read_batch(&mut batch).unwrap()))
        .take(5)
        .collect();
    assert_eq!(lens, [BATCH_LEN, BATCH_LEN, 5, 0, 0]);

    let p = params(|p| {
        p.refs = Some(BATCH_LEN as u64 + 3);
        p.instructions = true;
    });
    let mut g = generator(Workload::Loop, &p).unwrap();
    let (mut data, mut batches) = (0, 0);
    while g.read_batch(&mut batch).unwrap() > 0 {
        assert!(batch.len() <= BATCH_LEN);
        data += batch.kinds.iter().filter(|k| k.is_data()).count();
        batches += 1;
    }
    assert_eq!(data, BATCH_LEN + 3);
    assert!(batches > 5);
}

#[test]
fn refs_cuts_and_extends_loop_nests() {
    let kinds = |t: Vec<Access>| t.iter().map(|a| a.kind).collect::<Vec<_>>();
    use AccessKind::{Load as L, Modify as M, Store as S};
    let p = params(|p| {
        p.n = 4;
        p.refs = Some(7);
    });
    assert_eq!(kinds(collect(Workload::Matmul, &p)), [L, L, M, L, L, M, L]);
    let p = params(|p| {
        p.n = 4;
        p.refs = Some(30);
    });
    let t = collect(Workload::Stencil, &p);
    assert_eq!((t.len(), t[28].kind, t[29].kind), (30, S, L));
    for w in [Workload::Matmul, Workload::MatmulTiled] {
        let p = params(|p| {
            p.n = 4;
            p.tile = 2;
            p.refs = Some(3 * 64 + 6);
        });
        let t = collect(w, &p);
        assert_eq!(t[192..], t[..6], "{w}");
    }
}

#[test]
fn instructions_come_before_each_data_reference() {
    for w in Workload::ALL {
        let base = params(|p| {
            p.lines = 64;
            p.n = 5;
            p.tile = 2;
            p.refs = Some(3000);
        });
        let with = collect(
            w,
            &params(|p| {
                *p = Params {
                    instructions: true,
                    ..base.clone()
                }
            }),
        );
        let without = collect(w, &base);
        let data: Vec<Access> = with.iter().filter(|a| a.kind.is_data()).copied().collect();
        assert_eq!(data.len(), 3000, "{w}");
        assert!(
            data.iter()
                .zip(&without)
                .all(|(a, b)| Access { pc: None, ..*a } == *b),
            "{w}"
        );
        assert!(without.iter().all(|a| a.pc.is_none()));
        for (i, a) in with.iter().enumerate() {
            if a.kind == AccessKind::Instr {
                assert_eq!((a.pc, a.size), (Some(a.addr), 4), "{w}");
            } else {
                let pc = a.pc.expect("data references carry a pc");
                assert_eq!(with[i - 1].kind, AccessKind::Instr, "{w}");
                assert_eq!(with[i - 1].addr, pc, "{w}");
            }
        }
    }
    // The loop body has 5 instructions, one of them the load.
    let t = collect(
        Workload::Loop,
        &params(|p| {
            p.refs = Some(100);
            p.instructions = true;
        }),
    );
    assert_eq!(t.len(), 100 + 1 + 99 * 5);
}

#[test]
fn validate_rejects_absurd_parameters() {
    type Tweak = fn(&mut Params);
    let bad: [(Workload, Tweak, &str); 14] = [
        (Workload::Loop, |p| p.lines = 0, "lines"),
        (Workload::Random, |p| p.lines = (1 << 32) + 1, "lines"),
        (Workload::Zipf, |p| p.line_size = 1 << 30, "lines"),
        (Workload::Matmul, |p| p.n = 0, "n"),
        (Workload::Stencil, |p| p.n = 2, "n"),
        (Workload::MatmulTiled, |p| p.tile = 0, "tile"),
        (Workload::MatmulTiled, |p| p.tile = 65, "tile"),
        (Workload::Sequential, |p| p.line_size = 48, "line size"),
        (Workload::Zipf, |p| p.zipf_s = 0.0, "zipf exponent"),
        (Workload::Zipf, |p| p.zipf_s = f64::NAN, "zipf exponent"),
        (Workload::Stride, |p| p.stride = 0, "stride"),
        (Workload::Stride, |p| p.stride = 4096 * 64 + 1, "stride"),
        (Workload::Loop, |p| p.refs = Some(MAX_REFS + 1), "refs"),
        (Workload::Matmul, |p| p.n = 20_000, "refs"),
    ];
    for (w, f, name) in bad {
        let p = params(f);
        match validate(w, &p) {
            Err(Error::InvalidParameter { name: got, message }) => {
                assert_eq!(got, name, "{w}: {message}");
                assert!(
                    ["from", "than", "above", "between"]
                        .iter()
                        .any(|s| message.contains(s)),
                    "{message}"
                );
            }
            other => panic!("{w} {p:?}: {other:?}"),
        }
        assert!(generator(w, &p).is_err());
    }
    for w in Workload::ALL {
        validate(w, &Params::default()).unwrap();
    }
    // Fields a workload does not use are not its business.
    validate(Workload::Matmul, &params(|p| p.tile = 0)).unwrap();
    validate(Workload::Loop, &params(|p| p.n = 0)).unwrap();
    validate(
        Workload::Matmul,
        &params(|p| {
            p.n = 20_000;
            p.refs = Some(1000);
        }),
    )
    .unwrap();
}
