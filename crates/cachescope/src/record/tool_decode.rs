//! Decoding runs of the tool's reference words into [`Batch`] columns: the reader's hot loop,
//! kept apart from the stream's framing (`tool.rs`) and checked against a plain decoder.

use crate::access::AccessKind;
use crate::batch::Batch;

#[cfg(target_arch = "x86_64")]
mod avx2;

/// The kind of a reference's 2-bit kind code: the codes are [`AccessKind`]'s discriminants,
/// so this compiles to nothing (a table lookup cost a load per record).
#[inline(always)]
fn kind_of(code: u64) -> AccessKind {
    match code & 3 {
        0 => AccessKind::Load,
        1 => AccessKind::Store,
        2 => AccessKind::Modify,
        _ => AccessKind::Instr,
    }
}

#[inline]
fn word_at(chunk: &[u8]) -> u64 {
    u64::from_le_bytes(chunk.try_into().expect("8 bytes"))
}

/// The address of a reference word: bits 0-47, sign-extended from bit 47.
#[inline]
fn address(w: u64) -> u64 {
    (((w << 16) as i64) >> 16) as u64
}

/// True when `w` is an escape rather than a reference (its tag, bits 60-63, is not 0).
#[inline]
fn is_escape(w: u64) -> bool {
    w >> 60 != 0
}

/// Decodes the references at the start of `bytes` (whole words) into `batch`, up to the first
/// escape; returns how many. `pc` is the address of the last instruction record, carried from
/// one call to the next. Uses the AVX2 kernel when the CPU has AVX2.
pub(super) fn decode_run(bytes: &[u8], pc: &mut u64, batch: &mut Batch) -> usize {
    decode_run_with(bytes, pc, batch, simd_available())
}

/// Whether the AVX2 kernel can run here (`std` caches the CPU check).
#[inline]
fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::arch::is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// [`decode_run`], with the AVX2 kernel used only if `simd` (tests force it off). The records
/// are written straight into the columns' spare capacity, in one pass: the decoder is bound by
/// memory traffic, and filling the columns first (`resize`) would write every byte twice.
/// (Finding the escape first, over L1-sized tiles, and then decoding without a check per word
/// was 10-15% slower: it reads the input twice.)
#[allow(unsafe_code)]
fn decode_run_with(bytes: &[u8], pc: &mut u64, batch: &mut Batch, simd: bool) -> usize {
    let n = bytes.len() / 8;
    let base = batch.len();
    batch.addrs.reserve(n);
    batch.sizes.reserve(n);
    batch.kinds.reserve(n);
    batch.pcs.reserve(n);
    let mut last = *pc;
    let addrs = &mut batch.addrs.spare_capacity_mut()[..n];
    let sizes = &mut batch.sizes.spare_capacity_mut()[..n];
    let kinds = &mut batch.kinds.spare_capacity_mut()[..n];
    let pcs = &mut batch.pcs.spare_capacity_mut()[..n];
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if simd && simd_available() {
        // SAFETY: the CPU has AVX2 (checked just above).
        done = unsafe { avx2::decode_blocks(bytes, &mut last, addrs, sizes, kinds, pcs) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = simd;
    // The rest (all of it without the kernel): the block holding the escape, and the tail.
    let columns = addrs[done..]
        .iter_mut()
        .zip(&mut sizes[done..])
        .zip(&mut kinds[done..])
        .zip(&mut pcs[done..]);
    for (c, (((a, s), k), p)) in bytes[8 * done..].chunks_exact(8).zip(columns) {
        let w = word_at(c);
        if is_escape(w) {
            break;
        }
        let addr = address(w);
        let kind = (w >> 58) & 3;
        // A data reference's pc is the last instruction record's address (lackey's rule).
        if kind == 3 {
            last = addr;
        }
        a.write(addr);
        s.write(((w >> 48) & 0x3FF) as u32);
        k.write(kind_of(kind));
        p.write(last);
        done += 1;
    }
    // SAFETY: the kernel and the loop initialised the first `done` elements of each column's
    // spare capacity (reserved above for `n >= done`), and the elements are plain values.
    unsafe {
        batch.addrs.set_len(base + done);
        batch.sizes.set_len(base + done);
        batch.kinds.set_len(base + done);
        batch.pcs.set_len(base + done);
    }
    *pc = last;
    done
}

/// The references at the start of `bytes` (whole words), up to the first escape, as
/// `(address, size, kind, pc)`: the same fields [`decode_run`] writes into columns, for an
/// encoder that takes them one at a time. [`Refs::taken`] says how many were read.
pub(super) struct Refs<'a> {
    bytes: &'a [u8],
    at: usize,
    pc: &'a mut u64,
}

impl<'a> Refs<'a> {
    pub(super) fn new(bytes: &'a [u8], pc: &'a mut u64) -> Self {
        Refs { bytes, at: 0, pc }
    }

    /// References read so far.
    pub(super) fn taken(&self) -> usize {
        self.at / 8
    }
}

impl Iterator for Refs<'_> {
    type Item = (u64, u32, AccessKind, u64);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let w = word_at(self.bytes.get(self.at..self.at + 8)?);
        if is_escape(w) {
            return None;
        }
        self.at += 8;
        let addr = address(w);
        let kind = (w >> 58) & 3;
        if kind == 3 {
            *self.pc = addr;
        }
        Some((addr, ((w >> 48) & 0x3FF) as u32, kind_of(kind), *self.pc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KINDS: [AccessKind; 4] = [
        AccessKind::Load,
        AccessKind::Store,
        AccessKind::Modify,
        AccessKind::Instr,
    ];

    /// The plain decoder: one word at a time, stopping at the first escape.
    fn naive(words: &[u64], pc: &mut u64, batch: &mut Batch) -> usize {
        for (i, &w) in words.iter().enumerate() {
            if is_escape(w) {
                return i;
            }
            let kind = KINDS[((w >> 58) & 3) as usize];
            if kind == AccessKind::Instr {
                *pc = address(w);
            }
            batch.push_raw(address(w), ((w >> 48) & 0x3FF) as u32, kind, *pc);
        }
        words.len()
    }

    fn bytes(words: &[u64]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn fields_by_hand() {
        // An instruction at 0x401000 (4 bytes), a load of 8 at a stack address with bit 47
        // set (sign-extended), a store of 1023 bytes, then an escape.
        let stack = 0x0000_ffff_ff00_0010u64;
        let words = [
            0x40_1000 | 4 << 48 | 3 << 58,
            stack | 8 << 48,
            0x60_0000 | 1023 << 48 | 1 << 58,
            0x1 << 60 | 2,
            0x40_1004 | 4 << 48 | 3 << 58,
        ];
        let mut batch = Batch::new();
        let mut pc = 7;
        assert_eq!(decode_run(&bytes(&words), &mut pc, &mut batch), 3);
        assert_eq!(batch.addrs, [0x40_1000, 0xffff_ffff_ff00_0010, 0x60_0000]);
        assert_eq!(batch.sizes, [4, 8, 1023]);
        assert_eq!(
            batch.kinds,
            [AccessKind::Instr, AccessKind::Load, AccessKind::Store]
        );
        assert_eq!(batch.pcs, [0x40_1000; 3]);
        assert_eq!(pc, 0x40_1000);
    }

    /// Decodes `words` run after run, skipping each escape as the reader does, appending to
    /// `batch`; returns the run lengths and the final pc.
    fn runs(words: &[u64], pc: u64, simd: bool, batch: &mut Batch) -> (Vec<usize>, u64) {
        let raw = bytes(words);
        let (mut at, mut pc, mut lens) = (0, pc, Vec::new());
        while at < words.len() {
            let n = decode_run_with(&raw[8 * at..], &mut pc, batch, simd);
            lens.push(n);
            at += n + 1;
        }
        (lens, pc)
    }

    /// Both paths agree with the plain loop on `words`, after `before` records already in the
    /// batch.
    fn check_paths(words: &[u64], pc: u64, before: usize) -> std::result::Result<(), String> {
        let mut slow = Batch::new();
        for i in 0..before {
            slow.push_raw(i as u64, 1, AccessKind::Load, 0);
        }
        let start = slow.clone();
        let (mut lens, mut pc_slow, mut at) = (Vec::new(), pc, 0);
        while at < words.len() {
            let n = naive(&words[at..], &mut pc_slow, &mut slow);
            lens.push(n);
            at += n + 1;
        }
        for simd in [true, false] {
            let mut fast = start.clone();
            let got = runs(words, pc, simd, &mut fast);
            if got != (lens.clone(), pc_slow) || fast != slow {
                return Err(format!("simd={simd} differs on {words:x?}"));
            }
        }
        Ok(())
    }

    #[test]
    fn short_runs_every_escape() {
        // Every length up to three blocks, an escape at every position or none: the kernel's
        // blocks, the block holding the escape and every tail length 0-7.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for len in 0..24 {
            let words: Vec<u64> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x & ((1 << 60) - 1)
                })
                .collect();
            check_paths(&words, 5, 0).unwrap();
            for at in 0..len {
                let mut w = words.clone();
                w[at] |= 0xA << 60;
                check_paths(&w, 5, 3).unwrap();
            }
        }
    }

    proptest! {
        /// The column decoder equals the plain loop, wherever the escapes fall.
        #[test]
        fn equals_naive(
            refs in prop::collection::vec(any::<u64>().prop_map(|w| w & ((1 << 60) - 1)), 0..6000),
            escapes in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
            start_pc in any::<u64>(),
        ) {
            let mut words = refs;
            for i in &escapes {
                if !words.is_empty() {
                    let at = i.index(words.len());
                    words[at] |= 1 << 60;
                }
            }
            let raw = bytes(&words);
            let (mut fast, mut slow) = (Batch::new(), Batch::new());
            let (mut pc_fast, mut pc_slow) = (start_pc, start_pc);
            let mut at = 0;
            // Decode run after run, skipping each escape as the reader does.
            while at < words.len() {
                let a = decode_run(&raw[8 * at..], &mut pc_fast, &mut fast);
                let b = naive(&words[at..], &mut pc_slow, &mut slow);
                prop_assert_eq!(a, b);
                at += a + 1;
            }
            prop_assert_eq!(&fast, &slow);
            prop_assert_eq!(pc_fast, pc_slow);
            // The one-at-a-time reader gives the same accesses.
            let (mut refs, mut pc, mut at) = (Batch::new(), start_pc, 0);
            while at < words.len() {
                let mut run = Refs::new(&raw[8 * at..], &mut pc);
                for (a, s, k, p) in run.by_ref() {
                    refs.push_raw(a, s, k, p);
                }
                at += run.taken() + 1;
            }
            prop_assert_eq!(refs, slow);
        }

        /// The AVX2 kernel and the scalar loop (the kernel forced off) both equal the plain
        /// loop: random words, escapes of any tag anywhere, whole blocks plus every tail 0-7,
        /// instruction records dense or sparse (so blocks with none carry the pc through).
        #[test]
        fn simd_equals_scalar(
            (words, escapes) in (0usize..64, 0usize..8, 0u64..4).prop_flat_map(|(blocks, tail, sparse)| (
                prop::collection::vec(any::<u64>().prop_map(move |w| {
                    let w = w & ((1 << 60) - 1);
                    // With `sparse`, turn most instruction records into loads.
                    if sparse > 0 && w >> 58 == 3 && w % (4 * sparse) != 0 { w & !(3 << 58) } else { w }
                }), 8 * blocks + tail),
                prop::collection::vec((any::<prop::sample::Index>(), 1u64..16), 0..5),
            )),
            start_pc in any::<u64>(),
            before in 0usize..20,
        ) {
            let mut words = words;
            for (i, tag) in &escapes {
                if !words.is_empty() {
                    let at = i.index(words.len());
                    words[at] |= tag << 60;
                }
            }
            prop_assert_eq!(check_paths(&words, start_pc, before), Ok(()));
        }
    }
}
