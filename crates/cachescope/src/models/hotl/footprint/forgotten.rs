//! [`Forgotten`]: the last positions of the lines a sampled footprint forgot.
//!
//! A fixed-size sample drops lines as its limit falls, and a dropped line is never sampled
//! again, so its table entry (its last position) is final: the footprint takes it out of the
//! table ([`crate::spatial::Forgetting`]) and keeps only the position, for the last-position
//! term at the end (`l = n + 1 − p` needs the final `n`). Each sweep's positions are sorted
//! and stored as LEB128 varints of their zigzagged differences: a sweep's positions are spread
//! over the stream so far, one to three bytes each where the table took 21 to 43, and the
//! sums at the end are those of keeping every entry.

/// See the module documentation.
#[derive(Clone, Debug, Default)]
pub(super) struct Forgotten {
    bytes: Vec<u8>,
    /// Positions held.
    len: u64,
    /// The last position appended (the next difference's base).
    last: u64,
}

impl Forgotten {
    /// Adds one sweep's positions (in any order).
    pub fn add(&mut self, mut positions: Vec<u64>) {
        positions.sort_unstable();
        for p in positions {
            let d = p.wrapping_sub(self.last) as i64;
            let mut z = ((d << 1) ^ (d >> 63)) as u64;
            while z >= 0x80 {
                self.bytes.push(z as u8 | 0x80);
                z >>= 7;
            }
            self.bytes.push(z as u8);
            self.last = p;
            self.len += 1;
        }
    }

    /// Positions held.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Calls `f` with every position held, sweep by sweep.
    pub fn for_each(&self, mut f: impl FnMut(u64)) {
        let (mut last, mut z, mut shift) = (0u64, 0u64, 0);
        for &b in &self.bytes {
            z |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b < 0x80 {
                let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
                last = last.wrapping_add(d as u64);
                f(last);
                (z, shift) = (0, 0);
            }
        }
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_back_every_position_in_few_bytes() {
        let mut f = Forgotten::default();
        let sweeps = [
            vec![900, 5, 5, 1 << 40, 0, 77],
            vec![3, u64::MAX, 12],
            (1..=10_000u64).map(|i| i * 97 % 100_003).collect(),
        ];
        for s in &sweeps {
            f.add(s.clone());
        }
        let mut want: Vec<u64> = Vec::new();
        for s in &sweeps {
            let mut s = s.clone();
            s.sort_unstable();
            want.extend(s);
        }
        let mut got = Vec::new();
        f.for_each(|p| got.push(p));
        assert_eq!(got, want);
        assert_eq!(f.len(), want.len() as u64);
        // Sorted differences of about 10 and 100: one or two bytes each.
        assert!(f.heap_bytes() < 3 * want.len(), "{} bytes", f.heap_bytes());
    }
}
