use super::*;
use crate::{Access, Batch};

fn batch(lines: &[u64]) -> Batch {
    lines.iter().map(|&l| Access::load(l * 64, 8)).collect()
}

fn model(lines: &[u64]) -> LocalFootprint {
    model_with(lines, SPAN)
}

fn model_with(lines: &[u64], span: u64) -> LocalFootprint {
    let mut a = LocalFootprintAnalysis::with_span(Options::default(), span);
    // Fed in uneven batches: the stretches settle across batch boundaries.
    for chunk in lines.chunks(777) {
        a.observe(&batch(chunk));
    }
    a.finish()
}

/// A deterministic xorshift stream.
fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

#[test]
fn a_loop_is_exact_whatever_the_span() {
    // Every reuse has rt = 100 and every window 99 other lines: rd = 100.
    let lines: Vec<u64> = (0..6000).map(|i| i % 100).collect();
    let reuses = (6000 - 100) as f64 / 6000.0;
    for span in [1, 8, 64, 1 << 40] {
        let m = model_with(&lines, span);
        let c = m.curve();
        assert_eq!(c.miss_ratio_warm(99.0), reuses, "span {span}");
        assert_eq!(c.miss_ratio_warm(100.0), 0.0, "span {span}");
    }
    assert_eq!(model(&lines).distinct_lines, 100);
}

/// The estimate computed from its definition: each reuse at `i` with reuse time `rt` predicts
/// `rd = mean_v min(RT_v, rt)` over the positions `v` of the stretch picked for it.
fn brute(lines: &[u64], span: u64, c: f64) -> f64 {
    let n = lines.len();
    let next: Vec<u64> = (0..n)
        .map(|v| {
            (v + 1..n)
                .find(|&u| lines[u] == lines[v])
                .map_or(u64::MAX, |u| (u - v) as u64)
        })
        .collect();
    let stretches = n.div_ceil(1 << MIN_STRETCH_BITS);
    let mut misses = 0;
    for i in 0..n {
        let Some(j) = (0..i).rev().find(|&j| lines[j] == lines[i]) else {
            continue;
        };
        let rt = (i - j) as u64;
        let mut len = 1usize << MIN_STRETCH_BITS;
        while len < stretches << MIN_STRETCH_BITS && (len as u64) < span * rt {
            len *= 2;
        }
        let s = i / len;
        let range = s * len..((s + 1) * len).min(n);
        let g: f64 =
            range.clone().map(|v| next[v].min(rt) as f64).sum::<f64>() / range.len() as f64;
        misses += usize::from(g.min(distinct(lines)) > c);
    }
    misses as f64 / n as f64
}

fn distinct(lines: &[u64]) -> f64 {
    let mut v = lines.to_vec();
    v.sort_unstable();
    v.dedup();
    v.len() as f64
}

#[test]
fn short_reuses_match_the_definition_in_every_stretch() {
    // Two phases over different pools, each a run of shuffled blocks of 16 lines, so every
    // reuse time is below 64 (one bin each): the model has nothing to approximate.
    let mut r = rng(7);
    let mut lines = Vec::new();
    for phase in 0..4u64 {
        let pool = if phase % 2 == 0 { 16 } else { 8 };
        for _ in 0..(900 / pool) {
            let mut block: Vec<u64> = (0..pool).map(|l| l + 100 * phase).collect();
            for k in (1..block.len()).rev() {
                block.swap(k, (r() % (k as u64 + 1)) as usize);
            }
            lines.extend(block);
        }
    }
    for span in [8, 64] {
        let curve = model_with(&lines, span).curve();
        for c in 0..40 {
            let want = brute(&lines, span, c as f64);
            let got = curve.miss_ratio_warm(c as f64);
            assert!(
                (got - want).abs() < 1e-12,
                "span {span}, c {c}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn a_long_trace_keeps_its_short_stretches() {
    // 300 Ki references: far more finest stretches than any fixed table would hold. Phases of
    // 3,000 references alternate between pools of 16 and 24 lines, shuffled blocks, so every
    // reuse time is below 2 × 24 (each phase has lines of its own): with span 8 every reuse
    // picks a stretch of 1 Ki references, which the trace has 300 of.
    let mut r = rng(5);
    let mut lines = Vec::new();
    let mut phase = 0u64;
    while lines.len() < 300 << 10 {
        let pool = if phase % 2 == 0 { 16 } else { 24 };
        for _ in 0..3000 / pool {
            let mut block: Vec<u64> = (0..pool).map(|l| l + 100 * phase).collect();
            for k in (1..block.len()).rev() {
                block.swap(k, (r() % (k as u64 + 1)) as usize);
            }
            lines.extend(block);
        }
        phase += 1;
    }
    let curve = model_with(&lines, 8).curve();
    let want = fast_brute(&lines, 8);
    for c in 0..30 {
        let got = curve.miss_ratio_warm(c as f64);
        assert!((got - want(c)).abs() < 1e-12, "c {c}: {got} vs {}", want(c));
    }
}

/// [`brute`] for reuse times below 64 and stretches of 1 Ki references (span · rt ≤ 1024),
/// by prefix sums per stretch: fast enough for long traces.
fn fast_brute(lines: &[u64], span: u64) -> impl Fn(u64) -> f64 {
    let n = lines.len();
    let len = 1usize << MIN_STRETCH_BITS;
    let mut last = std::collections::HashMap::new();
    let mut next = vec![u64::MAX; n];
    let mut rts = vec![None; n];
    for (i, &l) in lines.iter().enumerate() {
        if let Some(j) = last.insert(l, i) {
            next[j] = (i - j) as u64;
            rts[i] = Some((i - j) as u64);
        }
    }
    let mut sd_count = vec![0.0f64; 64];
    for (i, rt) in rts.iter().enumerate() {
        let Some(rt) = *rt else { continue };
        assert!(rt < 64 && span * rt <= len as u64);
        let s = i / len;
        let range = s * len..((s + 1) * len).min(n);
        let g = range.clone().map(|v| next[v].min(rt) as f64).sum::<f64>() / range.len() as f64;
        sd_count[(g.ceil() as usize).max(1) - 1] += 1.0;
    }
    move |c| sd_count[c as usize..].iter().sum::<f64>() / n as f64
}

#[test]
fn predictions_are_kept_per_distance_not_per_stretch() {
    // Memory does not grow with the trace: the predictions are at most one per distance.
    let mut r = rng(9);
    let lines: Vec<u64> = (0..200_000).map(|_| r() % 500).collect();
    let m = model(&lines);
    assert!(m.predicted.iter().count() <= 500);
    assert!(m.curve().miss_ratio_warm(0.0) > 0.0);
    assert_eq!(m.curve().miss_ratio_warm(500.0), 0.0);
}

#[test]
fn an_empty_trace_misses_nothing() {
    let m = model(&[]);
    let c = m.curve();
    assert_eq!(c.miss_ratio_warm(0.0), 0.0);
    assert_eq!(m.mrc(&[4096]).points[0].miss_ratio_warm, 0.0);
}

#[test]
fn the_whole_trace_level_is_the_xiang_footprint() {
    // Reuse times below 64 (exact bins): the footprint is exact, and a span that sends every
    // reuse to the whole trace predicts rd = fp(rt), the paper's reuse-time conversion.
    let mut r = rng(11);
    let mut lines: Vec<u64> = Vec::new();
    while lines.len() < 5000 {
        let mut block: Vec<u64> = (0..16).collect();
        for k in (1..block.len()).rev() {
            block.swap(k, (r() % (k as u64 + 1)) as usize);
        }
        lines.extend(block);
    }
    lines.truncate(5000);
    let m = model_with(&lines, 1 << 40);
    let mut fp = crate::models::hotl::FootprintAnalysis::new(Options::default(), &[]).unwrap();
    fp.observe(&batch(&lines));
    let fp = fp.finish();
    for w in 1..64 {
        let (a, b) = (m.xiang_fp(w as f64), fp.fp(w));
        assert!((a - b).abs() < 1e-9, "w {w}: {a} vs {b}");
    }
    let curve = m.curve();
    let mut rts = Vec::new();
    let mut last = std::collections::HashMap::new();
    for (i, &l) in lines.iter().enumerate() {
        if let Some(j) = last.insert(l, i) {
            rts.push((i - j) as u64);
        }
    }
    assert!(rts.iter().all(|&t| t < 64));
    for c in 0..30 {
        let want = rts.iter().filter(|&&t| fp.fp(t) > c as f64).count() as f64 / 5000.0;
        let got = curve.miss_ratio_warm(c as f64);
        assert!((got - want).abs() < 1e-12, "c {c}: {got} vs {want}");
    }
}

/// Warm miss ratio of an LRU cache of `c` lines, from the exact stack distances.
fn exact_lru(lines: &[u64], c: usize) -> f64 {
    let mut stack: Vec<u64> = Vec::new();
    let mut misses = 0;
    for &l in lines {
        if let Some(d) = stack.iter().rev().position(|&x| x == l) {
            misses += usize::from(d >= c);
            stack.remove(stack.len() - 1 - d);
        }
        stack.push(l);
    }
    misses as f64 / lines.len() as f64
}

#[test]
fn measured_distances_are_the_exact_ones() {
    // Measuring every reuse (per = RING): each distance is the distinct lines of its window.
    let mut r = rng(13);
    let lines: Vec<u64> = (0..20_000).map(|_| r() % 300).collect();
    let mut sampler = windows::Sampler::new(windows::RING);
    let mut table = LineTable::default();
    let mut measured = 0;
    for (i, &l) in lines.iter().enumerate() {
        let now = i as u64 + 1;
        let prev = table.replace(l, now);
        let rd = sampler.access(now, prev);
        let Some(j) = prev else {
            assert_eq!(rd, None);
            continue;
        };
        let rd = rd.expect("every reuse measured");
        // Positions j+1..=now are indices j..now-1.
        assert_eq!(rd as f64, distinct(&lines[j as usize..i + 1]), "at {i}");
        measured += 1;
    }
    assert!(measured > 19_000);
}

#[test]
fn measuring_fixes_windows_fuller_than_average() {
    // Each period of 32: a hot loop of 4 lines twice (reuse time 4, then 28), then a scan of
    // 24 lines (reuse time 32). The hot lines' long reuses hold 28 lines, but the average
    // window of 28 references holds 25 (a quarter of its positions recur after 4): the bare
    // estimate puts those reuses, an eighth of all, below a cache of 26 lines.
    let mut lines = Vec::new();
    for _ in 0..2000 {
        lines.extend((0..4).chain(0..4));
        lines.extend(100..124);
    }
    let bare = model(&lines).curve();
    let measured = {
        let mut a = LocalFootprintAnalysis::new(Options::default());
        a.observe(&batch(&lines));
        a.finish().curve()
    };
    let exact = exact_lru(&lines, 26);
    assert!((bare.miss_ratio_warm(26.0) - exact).abs() > 0.12);
    for c in [1, 4, 5, 20, 25, 26, 27, 28, 29, 40] {
        let want = exact_lru(&lines, c);
        let got = measured.miss_ratio_warm(c as f64);
        // Only the first stretches, before a class has its measures, keep the estimate.
        assert!((got - want).abs() < 0.005, "c {c}: {got} vs {want}");
    }
}

#[test]
fn measuring_keeps_an_exact_estimate() {
    // A loop's estimate is already its distance: the measures agree with it.
    let lines: Vec<u64> = (0..60_000).map(|i| i % 100).collect();
    let mut a = LocalFootprintAnalysis::new(Options::default());
    a.observe(&batch(&lines));
    let c = a.finish().curve();
    assert_eq!(c.miss_ratio_warm(99.0), (60_000 - 100) as f64 / 60_000.0);
    assert_eq!(c.miss_ratio_warm(100.0), 0.0);
}

#[test]
fn reuses_are_sampled_with_probability_per_over_rt() {
    // A loop over `rt` lines: every reference after the first round is a reuse of time `rt`,
    // sampled with probability 2 / rt. 2x off would land far outside the ±10 % band.
    for rt in [3u64, 40, 1000, 10_000] {
        let mut sampler = windows::Sampler::new(windows::SAMPLES);
        let mut table = LineTable::default();
        let reuses = 400_000 * rt / 100;
        let reuses = reuses.clamp(200_000, 4_000_000);
        let mut sampled = 0u64;
        for now in 1..=rt + reuses {
            let prev = table.replace(now % rt, now);
            if let Some(rd) = sampler.access(now, prev) {
                assert_eq!(rd, rt, "a loop's reuse holds all its lines");
                sampled += 1;
            }
        }
        let want = reuses as f64 * windows::SAMPLES as f64 / rt as f64;
        let got = sampled as f64;
        assert!(
            (got - want).abs() < 0.1 * want,
            "rt {rt}: {got} sampled, {want} expected"
        );
    }
}

/// A trace in phases (a random set, a loop, a hot set among a scattered cold one) long enough
/// for a dozen levels, reuses past `windows::RING`, and measured classes.
fn phased(seed: u64) -> Vec<u64> {
    let mut r = rng(seed);
    let mut lines = Vec::new();
    lines.extend((0..60_000).map(|_| r() % 2000));
    lines.extend((0..60_000).map(|i| 10_000 + i % 5000));
    lines.extend((0..120_000).map(|_| {
        let x = r();
        if x % 4 == 0 {
            20_000 + x % 40_000
        } else {
            x % 48
        }
    }));
    lines.extend((0..40_000).map(|_| r() % 3000));
    lines
}

/// FNV-1a over the bits of a model's every prediction and curve point.
fn fingerprint(m: &LocalFootprint) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |v: u64| {
        for byte in v.to_le_bytes() {
            h = (h ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
        }
    };
    let c = m.curve();
    for s in c.stack_distances().masses {
        eat(s.sd);
        eat(s.weight.to_bits());
    }
    for lines in 0..=m.distinct_lines + 1 {
        eat(c.miss_ratio_warm(lines as f64).to_bits());
    }
    h
}

#[test]
fn curves_are_those_of_before_bit_for_bit() {
    // Fingerprints of main d1b8c0a's curves, before the pass was sped up: the faster
    // structures (dense predictions, classes by bin, bounded loops) must not move one bit.
    let want = [
        (1, (0xf594_d9fa_01fa_2508, 0x169c_aed7_4f70_d59a)),
        (2, (0xc554_53ec_1f41_ea1e, 0xbc56_7e02_fa55_02a5)),
    ];
    for (seed, want) in want {
        let lines = phased(seed);
        let mut a = LocalFootprintAnalysis::new(Options::default());
        for chunk in lines.chunks(4099) {
            a.observe(&batch(chunk));
        }
        let measured = a.finish();
        let bare = model(&lines);
        let got = (fingerprint(&measured), fingerprint(&bare));
        assert_eq!(got, want, "seed {seed}: {:#x} {:#x}", got.0, got.1);
    }
}

/// Line numbers in order of first reference (as OPT's spill holds them, which the report
/// feeds) give the model the lines give, whatever the blocks.
#[test]
fn numbered_lines_give_the_same_model() {
    let mut next = rng(7);
    let lines: Vec<u64> = (0..60_000)
        .map(|i| match i % 3 {
            0 => next() % 3_000,
            _ => (i / 3) % 500 + 10_000,
        })
        .collect();
    let ids = crate::opt::numbered(&lines);
    let mut by_number = LocalFootprintAnalysis::new(Options::default());
    for block in ids.chunks(4_099) {
        by_number.observe_numbered(block);
    }
    let mut by_line = LocalFootprintAnalysis::new(Options::default());
    for chunk in lines.chunks(777) {
        by_line.observe(&batch(chunk));
    }
    let (a, b) = (by_line.finish(), by_number.finish());
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let distinct: std::collections::HashSet<u64> = lines.iter().copied().collect();
    assert_eq!(b.distinct_lines, distinct.len() as u64);
}
