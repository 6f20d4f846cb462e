//! Runs of instruction fetches known in advance.
//!
//! cachescope's Valgrind tool defines each run of consecutive instructions of a translated
//! block once and then names it by its id every time the block runs
//! (`record::tool`; docs/recording.md). The encoder writes such a run as one row of its
//! block, naming the run in the block's run dictionary ([`super::encode`]), and the decoder
//! expands it again. Memory grows with the program's translated code, not with the trace.

/// One run's place in the table's flat arrays.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Index of its first fetch in `addrs` and `sizes`.
    first: u32,
    /// Fetches (at least 1).
    len: u32,
    /// The key the encoder knows it by ([`InstrRun::id`]).
    key: u32,
}

/// The runs defined so far, in id order.
#[derive(Clone, Debug, Default)]
pub(crate) struct InstrRuns {
    entries: Vec<Entry>,
    addrs: Vec<u64>,
    sizes: Vec<u32>,
}

/// A run, borrowed from its table: its id and its fetches' addresses and sizes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InstrRun<'a> {
    /// Its key: its id in the table (ids are dense, from 0), unless it was defined with
    /// [`InstrRuns::push_keyed`], whose caller keeps keys unique over every table of a
    /// recording (a block's run dictionary is keyed by them).
    pub(crate) id: u32,
    pub(crate) addrs: &'a [u64],
    pub(crate) sizes: &'a [u32],
}

impl InstrRun<'_> {
    /// Fetches in the run.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.addrs.len()
    }

    /// The address of its last fetch: the pc of the data references after it.
    #[inline]
    pub(crate) fn last(&self) -> u64 {
        self.addrs[self.addrs.len() - 1]
    }
}

impl InstrRuns {
    /// Runs defined.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Forgets every run (a new program's stream numbers its runs from 0 again).
    pub(crate) fn clear(&mut self) {
        *self = InstrRuns::default();
    }

    /// Defines the next run: fetches at `addrs` of `sizes` bytes (1-255 each, at least one),
    /// its key its id.
    #[cfg(test)]
    pub(crate) fn push(&mut self, fetches: impl IntoIterator<Item = (u64, u32)>) {
        let key = u32::try_from(self.entries.len()).expect("too many runs");
        self.push_keyed(fetches, key);
    }

    /// `InstrRuns::push` with the run known to the encoder by `key`: a stream whose run ids
    /// start again (an exec'd program, a forked child's runs beside its parent's) gives each
    /// run a key no other run of the recording has.
    pub(crate) fn push_keyed(&mut self, fetches: impl IntoIterator<Item = (u64, u32)>, key: u32) {
        let first = self.addrs.len();
        for (addr, size) in fetches {
            debug_assert!((1..=255).contains(&size), "an instruction of {size} bytes");
            self.addrs.push(addr);
            self.sizes.push(size);
        }
        let len = self.addrs.len() - first;
        assert!(len > 0, "a run of no instructions");
        assert!(self.entries.len() < u32::MAX as usize, "too many runs");
        self.entries.push(Entry {
            first: first as u32,
            len: len as u32,
            key,
        });
    }

    /// Run `id`, if defined.
    #[inline(always)]
    pub(crate) fn get(&self, id: u64) -> Option<InstrRun<'_>> {
        let e = *self.entries.get(usize::try_from(id).ok()?)?;
        let (first, len) = (e.first as usize, e.len as usize);
        Some(InstrRun {
            id: e.key,
            addrs: &self.addrs[first..first + len],
            sizes: &self.sizes[first..first + len],
        })
    }
}
