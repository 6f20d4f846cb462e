//! [`Lines`]: a batch's kept references as runs of one line, with their hashes.

/// Runs of references to one line (a line referenced again at once is one entry, a sixth of
/// a real trace's data references): their lines, hashes and lengths.
#[derive(Clone, Debug, Default)]
pub(super) struct Lines {
    pub(super) lines: Vec<u64>,
    pub(super) hashes: Vec<u64>,
    pub(super) runs: Vec<u32>,
}

impl Lines {
    /// The lines of `from` whose hash is below `threshold`, in order; without a branch on
    /// the test (at the report's largest sampled size it keeps one line in two).
    pub(super) fn keep_below(&mut self, from: &Lines, threshold: u64) {
        let len = from.lines.len();
        self.lines.resize(len, 0);
        self.hashes.resize(len, 0);
        self.runs.resize(len, 0);
        let mut n = 0;
        for ((&l, &h), &r) in from.lines.iter().zip(&from.hashes).zip(&from.runs) {
            self.lines[n] = l;
            self.hashes[n] = h;
            self.runs[n] = r;
            n += usize::from(h < threshold);
        }
        self.lines.truncate(n);
        self.hashes.truncate(n);
        self.runs.truncate(n);
    }

    pub(super) fn clear(&mut self) {
        self.lines.clear();
        self.hashes.clear();
        self.runs.clear();
    }

    /// Appends a reference to `line` (of hash `h`): a longer run when it is the last line.
    #[inline]
    pub(super) fn push(&mut self, line: u64, h: u64) {
        match self.runs.last_mut() {
            Some(r) if self.lines.last() == Some(&line) && *r < u32::MAX => *r += 1,
            _ => {
                self.lines.push(line);
                self.hashes.push(h);
                self.runs.push(1);
            }
        }
    }

    /// The references the runs stand for.
    pub(super) fn refs(&self) -> u64 {
        self.runs.iter().map(|&r| u64::from(r)).sum()
    }

    /// Each run as `(line, again)` for [`Cache::access_runs`].
    pub(super) fn steps(&self) -> impl Iterator<Item = (u64, bool)> + '_ {
        self.lines
            .iter()
            .copied()
            .zip(self.runs.iter().map(|&r| r > 1))
    }
}
