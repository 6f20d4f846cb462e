//! A run block decoded for a reader that needs its data references only (the sampled stage,
//! [`crate::trace::Trace::sampled`]): the run rows' instruction fetches, three quarters of a
//! recorded program's accesses, keep their kind and place but not their addresses, sizes and
//! pcs, which copying out of the run dictionary cost most of the decoding; and the batch's
//! data index ([`Batch::data_addrs`]) is written in the same loop, not by a second pass over
//! the batch.

use super::decode::{kind_of, sign_extend, word};
use super::decode_runs::{Dictionary, Rows, is_marked};
use super::encode::{KIND_BITS, LEN_MASK, RUN_META, SLOTS};
use crate::access::AccessKind;
use crate::batch::Batch;

/// Kinds of a run's fetches written per copy.
const KINDS_AT_ONCE: usize = 8;

/// [`expand`](super::decode_runs) with the run rows' fetches elided: their kinds are
/// [`AccessKind::Instr`], their sizes and pcs unspecified, and their addresses too but for
/// each run's last (so a thread's last fetch before a call event is known); every other row is
/// decoded in full (the rows of escaped sizes and explicit pcs listed in `marked` for
/// [`patch`](super::decode_runs)), and the batch is indexed. Returns the accesses written and the address
/// bytes used.
#[inline(never)]
pub(super) fn expand_data(
    rows: &Rows<'_>,
    addr_buf: &[u8],
    addr_bytes: usize,
    dict: &Dictionary,
    batch: &mut Batch,
    marked: &mut Vec<(u32, u32)>,
) -> Result<(usize, usize), String> {
    let n = batch.addrs.len();
    let (mut index_addrs, mut index_places) = batch.take_data_index(n);
    let (out_addrs, out_sizes) = (&mut batch.addrs[..n], &mut batch.sizes[..n]);
    let (out_kinds, out_pcs) = (&mut batch.kinds[..n], &mut batch.pcs[..n]);
    let (data_addrs, data_places) = (&mut index_addrs[..n], &mut index_places[..n]);
    let mut table = [0u64; SLOTS];
    let (mut o, mut at, mut last_instr, mut invalid) = (0usize, 0usize, 0u64, false);
    let mut d = 0usize;
    let rows_iter = rows.meta.iter().zip(rows.sizes).zip(rows.slots);
    for (r, ((&m, &size), &slot)) in rows_iter.enumerate() {
        if m == RUN_META {
            let local = usize::from(size) | usize::from(slot) << 8;
            let &(first, k) = dict.runs.get(local).ok_or("a run row names no run")?;
            let (first, k) = (first as usize, k as usize);
            if k > n - o {
                return Err("the rows hold more accesses than the block".into());
            }
            // Eight at a time where the block has room (the next rows overwrite what a copy
            // writes past the run): a `fill` of a few bytes was a `memset` call per run.
            let mut j = o;
            while j < o + k {
                if j + KINDS_AT_ONCE > n {
                    out_kinds[j..o + k].fill(AccessKind::Instr);
                    break;
                }
                out_kinds[j..j + KINDS_AT_ONCE]
                    .copy_from_slice(&[AccessKind::Instr; KINDS_AT_ONCE]);
                j += KINDS_AT_ONCE;
            }
            last_instr = dict.addrs[first + k - 1];
            table[0] = last_instr;
            // The run's last fetch keeps its address: a call event (never inside a run row)
            // takes its thread's last fetch as its call site (`trace/sampled/places.rs`).
            out_addrs[o + k - 1] = last_instr;
            o += k;
            continue;
        }
        if o == n {
            return Err("the rows hold more accesses than the block".into());
        }
        if is_marked(m, size) {
            marked.push((r as u32, o as u32));
        }
        let len = usize::from(m & LEN_MASK);
        // A length above 8 reads as 0 bytes (`sign_extend`); reported after the loop.
        invalid |= len > 8;
        let delta = sign_extend(word(addr_buf, at.min(addr_bytes)), len);
        at += len;
        let slot = &mut table[usize::from(slot)];
        let a = slot.wrapping_add(delta);
        *slot = a;
        let data = m & KIND_BITS != 0;
        if !data {
            last_instr = a;
        }
        out_addrs[o] = a;
        out_kinds[o] = kind_of(m);
        out_sizes[o] = u32::from(size);
        // Bit 7 (pc = last fetch) sign-extended is the mask.
        out_pcs[o] = last_instr & (m as i8 >> 7) as u64;
        // Written always, kept only for a data reference (`d <= o < n`).
        data_addrs[d] = a;
        data_places[d] = o as u32;
        d += usize::from(data);
        o += 1;
    }
    if invalid {
        return Err("invalid access descriptor".into());
    }
    batch.put_data_index(index_addrs, index_places, d);
    Ok((o, at))
}
