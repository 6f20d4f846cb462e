//! Decoding a version 3 block with run rows: a row is one access, as in version 2, or a run
//! of instruction fetches named in the block's run dictionary (`docs/native-format.md`).
//!
//! Rows and accesses no longer line up, so the columns are decoded row by row into the
//! accesses ([`expand`]; a run row copies its fetches from the parsed dictionary), which lists
//! the rows of the rare escaped sizes and explicit pcs; [`patch`] then puts those in place. Reads are clamped and every count is
//! checked at the end, so damaged columns are reported, never read out of bounds.

use super::decode::{kind_of, sign_extend, word};
use super::decode_data::expand_data;
use super::encode::{
    KIND_BITS, LEN_MASK, PC_EXPLICIT, PC_LAST_INSTR, RUN_META, SLOTS, THREAD_SWITCH_LEN,
    read_switches, unzigzag,
};
use super::u32_at;
use crate::access::AccessKind;
use crate::batch::Batch;

/// Bytes of a run block's column directory: six u32.
pub(super) const RUN_DIRECTORY_LEN: usize = 24;

/// Most raw bytes a run block of `n` accesses can take: per row at most 24 bytes of columns
/// and a thread switch; the dictionary at most 21 bytes per fetch it defines (a run of `k`
/// fetches takes at most 11k + 10: a LEB128 count and first address of up to 10 bytes each,
/// then a size and a LEB128 gap per fetch; it may define no more fetches than the block has).
pub(super) fn max_run_raw_len(n: usize) -> usize {
    RUN_DIRECTORY_LEN + (24 + THREAD_SWITCH_LEN + 11 + 10) * n
}

/// The runs of a block's dictionary: each one's first fetch in `addrs`/`sizes` and its length.
#[derive(Debug, Default)]
pub(super) struct Dictionary {
    pub(super) runs: Vec<(u32, u32)>,
    pub(super) addrs: Vec<u64>,
    sizes: Vec<u32>,
}

/// A run row's fetches are copied this many at a time: a fixed-size copy is a few vector
/// moves, where a copy of the run's length was a `memcpy` call per column and run.
const CHUNK: usize = 4;

/// Reads a LEB128 value at `*at`, or `None` past the end or beyond 64 bits.
pub(super) fn leb128(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return (shift < 63 || b <= 1).then_some(v);
        }
    }
    None
}

impl Dictionary {
    /// Parses `bytes` exactly; at most `n` fetches in all (a block names each run it defines).
    fn parse(bytes: &[u8], n: usize) -> Result<Dictionary, String> {
        let bad = || "the run dictionary is damaged".to_string();
        let mut d = Dictionary::default();
        let (mut at, mut prev_first) = (0, 0u64);
        while at < bytes.len() {
            let k = leb128(bytes, &mut at).ok_or_else(bad)?;
            if k == 0 || k > (n - d.addrs.len()) as u64 {
                return Err(bad());
            }
            let k = k as usize;
            let sizes = bytes.get(at..at + k).ok_or_else(bad)?;
            at += k;
            let first = d.addrs.len();
            let mut addr =
                prev_first.wrapping_add(unzigzag(leb128(bytes, &mut at).ok_or_else(bad)?));
            prev_first = addr;
            for (i, &size) in sizes.iter().enumerate() {
                if i > 0 {
                    let gap = unzigzag(leb128(bytes, &mut at).ok_or_else(bad)?);
                    addr = addr.wrapping_add(u64::from(sizes[i - 1])).wrapping_add(gap);
                }
                d.addrs.push(addr);
                d.sizes.push(u32::from(size));
            }
            d.runs.push((first as u32, k as u32));
        }
        // Room for a copy of `CHUNK` fetches from any run's start.
        d.addrs.extend([0; CHUNK]);
        d.sizes.extend([0; CHUNK]);
        Ok(d)
    }
}

/// Decodes the `n` accesses of a run block's columns in `buf[..raw_len]` (followed by at least
/// 8 padding bytes) into `batch`, replacing its contents. With `elide`, the instruction fetches
/// of run rows keep only their kind ([`expand_data`]), and the batch its data index.
pub(super) fn decode_run_columns(
    buf: &[u8],
    raw_len: usize,
    n: usize,
    batch: &mut Batch,
    elide: bool,
) -> Result<(), String> {
    let dir: [usize; 6] = std::array::from_fn(|i| u32_at(buf, 4 * i) as usize);
    let [
        addr_bytes,
        escapes,
        explicit_pcs,
        pc_bytes,
        rows,
        dict_bytes,
    ] = dir;
    let total = RUN_DIRECTORY_LEN as u64
        + 3 * rows as u64
        + addr_bytes as u64
        + 4 * escapes as u64
        + explicit_pcs as u64
        + pc_bytes as u64
        + dict_bytes as u64;
    let switch_bytes = (raw_len as u64)
        .checked_sub(total)
        .filter(|b| b % THREAD_SWITCH_LEN as u64 == 0)
        .ok_or("column lengths do not add up to the block length")? as usize;
    if rows == 0 || rows > n || dict_bytes == 0 {
        return Err("impossible run block directory".into());
    }
    let cols = &buf[RUN_DIRECTORY_LEN..];
    let (meta, rest) = cols.split_at(rows);
    let (sizes, rest) = rest.split_at(rows);
    let (slots, rest) = rest.split_at(rows);
    let (addr_col, rest) = rest.split_at(addr_bytes);
    let (escape_col, rest) = rest.split_at(4 * escapes);
    let (pc_lens, rest) = rest.split_at(explicit_pcs);
    let rest = &rest[pc_bytes..];
    let (dict_col, rest) = rest.split_at(dict_bytes);
    let switches = &rest[..switch_bytes];
    let dict = Dictionary::parse(dict_col, n)?;
    // The address and pc columns are followed by other bytes and the padding, so an 8-byte
    // read at any in-bounds start stays in `buf`; reads past a column are clamped to its end.
    let addr_buf = &cols[3 * rows..];
    let pc_buf = &cols[3 * rows + addr_bytes + 4 * escapes + explicit_pcs..];

    // Exactly `n`: one more would double a batch's capacity.
    batch.addrs.resize(n, 0);
    batch.sizes.resize(n, 0);
    batch.kinds.resize(n, AccessKind::Load);
    batch.pcs.resize(n, 0);
    let rows_in = Rows { meta, sizes, slots };
    // The rows with an escaped size or an explicit pc, `(row, access)`, for `patch`.
    let mut marked = Vec::new();
    let (o, at) = if elide {
        expand_data(&rows_in, addr_buf, addr_bytes, &dict, batch, &mut marked)?
    } else {
        expand(&rows_in, addr_buf, addr_bytes, &dict, batch, &mut marked)?
    };
    if o != n {
        return Err("the rows hold fewer accesses than the block".into());
    }
    if at != addr_col.len() {
        return Err("address deltas do not fill their column".into());
    }
    if escapes > 0 || explicit_pcs > 0 {
        let wide = Wide {
            escapes: escape_col,
            pc_lens,
            pc_buf,
            pc_bytes,
        };
        patch(&rows_in, &marked, &wide, batch)?;
    } else if !marked.is_empty() {
        return Err("the column directory disagrees with the columns".into());
    }
    batch.set_thread_switches(&read_switches(switches))
}

/// The one-byte-per-row columns.
pub(super) struct Rows<'a> {
    pub(super) meta: &'a [u8],
    pub(super) sizes: &'a [u8],
    pub(super) slots: &'a [u8],
}

/// The escaped sizes and the explicit pcs' columns (`pc_buf` is the pc bytes, `pc_bytes` long,
/// followed by at least 8 more bytes).
struct Wide<'a> {
    escapes: &'a [u8],
    pc_lens: &'a [u8],
    pc_buf: &'a [u8],
    pc_bytes: usize,
}

/// Writes every row's accesses into `batch` (`n` long): addresses, kinds, sizes as their size
/// bytes and pcs as the last fetch or 0, which [`patch`] corrects for escaped sizes and
/// explicit pcs, whose rows it lists in `marked` as `(row, access)`. Returns the accesses
/// written and the address bytes used. Kept out of line and lean, with the rare cases left to
/// [`patch`]: the loop's state fits the registers.
#[inline(never)]
fn expand(
    rows: &Rows<'_>,
    addr_buf: &[u8],
    addr_bytes: usize,
    dict: &Dictionary,
    batch: &mut Batch,
    marked: &mut Vec<(u32, u32)>,
) -> Result<(usize, usize), String> {
    let n = batch.addrs.len();
    // One length for all four, so one check covers a row's writes to each.
    let (out_addrs, out_sizes) = (&mut batch.addrs[..n], &mut batch.sizes[..n]);
    let (out_kinds, out_pcs) = (&mut batch.kinds[..n], &mut batch.pcs[..n]);
    let mut table = [0u64; SLOTS];
    let (mut o, mut at, mut last_instr, mut invalid) = (0usize, 0usize, 0u64, false);
    let rows_iter = rows.meta.iter().zip(rows.sizes).zip(rows.slots);
    for (r, ((&m, &size), &slot)) in rows_iter.enumerate() {
        if m == RUN_META {
            let local = usize::from(size) | usize::from(slot) << 8;
            let &(first, k) = dict.runs.get(local).ok_or("a run row names no run")?;
            let (first, k) = (first as usize, k as usize);
            if k > n - o {
                return Err("the rows hold more accesses than the block".into());
            }
            // Whole chunks (the dictionary has `CHUNK` spare entries, and what a chunk writes
            // past the run the next rows overwrite), but fetch by fetch at the block's end.
            let mut j = 0;
            while j < k {
                let (from, to) = (first + j, o + j);
                if to + CHUNK > n {
                    for (f, t) in (from..first + k).zip(to..) {
                        out_addrs[t] = dict.addrs[f];
                        out_pcs[t] = dict.addrs[f];
                        out_sizes[t] = dict.sizes[f];
                        out_kinds[t] = AccessKind::Instr;
                    }
                    break;
                }
                let src = &dict.addrs[from..from + CHUNK];
                out_addrs[to..to + CHUNK].copy_from_slice(src);
                out_pcs[to..to + CHUNK].copy_from_slice(src);
                out_sizes[to..to + CHUNK].copy_from_slice(&dict.sizes[from..from + CHUNK]);
                out_kinds[to..to + CHUNK].copy_from_slice(&[AccessKind::Instr; CHUNK]);
                j += CHUNK;
            }
            last_instr = dict.addrs[first + k - 1];
            table[0] = last_instr;
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
        if m & KIND_BITS == 0 {
            last_instr = a;
        }
        out_addrs[o] = a;
        out_kinds[o] = kind_of(m);
        out_sizes[o] = u32::from(size);
        // Bit 7 (pc = last fetch) sign-extended is the mask.
        out_pcs[o] = last_instr & (m as i8 >> 7) as u64;
        o += 1;
    }
    if invalid {
        return Err("invalid access descriptor".into());
    }
    Ok((o, at))
}

/// Whether an access row has an escaped size or an explicit pc ([`patch`] puts them in place).
#[inline(always)]
pub(super) fn is_marked(m: u8, size: u8) -> bool {
    (size == 0) | (m & PC_EXPLICIT != 0)
}

/// Puts the escaped sizes and explicit pcs in place at the `(row, access)` pairs `marked`
/// lists (in order), rather than walking every row again; checks both columns are used up
/// exactly.
fn patch(
    rows: &Rows<'_>,
    marked: &[(u32, u32)],
    wide: &Wide<'_>,
    batch: &mut Batch,
) -> Result<(), String> {
    let (mut esc, mut xp, mut pat, mut prev_pc) = (0usize, 0usize, 0usize, 0u64);
    for &(r, o) in marked {
        let (m, size, o) = (rows.meta[r as usize], rows.sizes[r as usize], o as usize);
        if m & PC_EXPLICIT != 0 {
            if m & PC_LAST_INSTR != 0 {
                return Err("invalid access descriptor".into());
            }
            let plen = wide.pc_lens.get(xp).map_or(9, |&l| usize::from(l));
            xp += 1;
            if plen > 8 || pat + plen > wide.pc_bytes {
                return Err("explicit pcs do not match their columns".into());
            }
            prev_pc = prev_pc.wrapping_add(sign_extend(word(wide.pc_buf, pat), plen));
            pat += plen;
            batch.pcs[o] = prev_pc;
        }
        if size == 0 {
            let w = wide
                .escapes
                .get(4 * esc..4 * esc + 4)
                .ok_or("escaped sizes do not match their column")?;
            esc += 1;
            batch.sizes[o] = u32_at(w, 0);
        }
    }
    if 4 * esc != wide.escapes.len() {
        return Err("escaped sizes do not match their column".into());
    }
    if xp != wide.pc_lens.len() || pat != wide.pc_bytes {
        return Err("explicit pcs do not match their columns".into());
    }
    Ok(())
}
