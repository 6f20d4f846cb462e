//! The addresses of a batch's data references, and their places in it, as columns of their own.
//!
//! Most analyses count data references only, and a recorded program's batches are three
//! quarters instruction fetches. Each analysis used to filter the fetches out of every batch
//! itself, so a report's eight such analyses scanned every record eight times. The pass now
//! computes the column once per batch ([`Batch::index_data`], on the thread that reads the
//! trace) and the analyses read it ([`Batch::data_addrs`]); a batch that was not indexed
//! (built by hand, or read outside a pass) gives `None` and they filter it themselves.

use super::Batch;
use crate::access::AccessKind;

/// The column and the batch length it was computed for.
#[derive(Clone, Debug, Default)]
pub(super) struct DataIndex {
    /// At least as long as the batch when indexed; only `len` entries count.
    addrs: Vec<u64>,
    /// Each one's index in the batch.
    positions: Vec<u32>,
    len: usize,
    /// The batch's length when indexed, or `None`.
    of: Option<usize>,
}

impl DataIndex {
    pub(super) fn forget(&mut self) {
        self.of = None;
    }
}

impl Batch {
    /// Computes [`Batch::data_addrs`] for the batch as it is now. Clearing or truncating the
    /// batch, or adding to it, forgets the column; a reader writing the columns directly
    /// runs under [`crate::trace::Trace::read_batch`], which forgets it first.
    pub fn index_data(&mut self) {
        let n = self.len();
        let index = &mut self.data;
        if u32::try_from(n).is_err() {
            // Positions would not fit: the analyses filter such a batch themselves.
            index.of = None;
            return;
        }
        if index.addrs.len() < n {
            index.addrs.resize(n, 0);
            index.positions.resize(n, 0);
        }
        let (out, at) = (&mut index.addrs[..n], &mut index.positions[..n]);
        let mut k = 0;
        for (i, (&addr, &kind)) in self.addrs.iter().zip(&self.kinds).enumerate() {
            // Write unconditionally, keep only data references: no branch per record.
            out[k.min(n - 1)] = addr;
            at[k.min(n - 1)] = i as u32;
            k += usize::from(kind != AccessKind::Instr);
        }
        index.len = k;
        index.of = Some(n);
    }

    /// The addresses of the data references (every kind but instruction fetches), in order,
    /// when [`Batch::index_data`] computed them for the batch's present accesses.
    #[inline]
    pub fn data_addrs(&self) -> Option<&[u64]> {
        (self.data.of == Some(self.len())).then(|| &self.data.addrs[..self.data.len])
    }

    /// The index in the batch of each of [`Batch::data_addrs`], when it has them.
    #[inline]
    pub fn data_positions(&self) -> Option<&[u32]> {
        (self.data.of == Some(self.len())).then(|| &self.data.positions[..self.data.len])
    }

    /// The column's buffers, at least `n` long, for a decoder that computes the column as it
    /// decodes the batch; the column is forgotten until [`Batch::put_data_index`] returns them.
    pub(crate) fn take_data_index(&mut self, n: usize) -> (Vec<u64>, Vec<u32>) {
        let index = &mut self.data;
        index.of = None;
        if index.addrs.len() < n {
            index.addrs.resize(n, 0);
            index.positions.resize(n, 0);
        }
        (
            std::mem::take(&mut index.addrs),
            std::mem::take(&mut index.positions),
        )
    }

    /// Gives back [`Batch::take_data_index`]'s buffers holding the batch's `len` data
    /// references, in order, with their places: the column of the batch as it is now.
    pub(crate) fn put_data_index(&mut self, addrs: Vec<u64>, positions: Vec<u32>, len: usize) {
        debug_assert!(len <= self.len() && len <= addrs.len() && len <= positions.len());
        let n = self.len();
        self.data = DataIndex {
            addrs,
            positions,
            len,
            of: Some(n),
        };
    }

    /// Forgets the column (before a reader refills the batch through its columns).
    #[inline]
    pub(crate) fn forget_data(&mut self) {
        self.data.forget();
    }
}
