//! [`Memo`]: a small direct-mapped memo in front of a hash map, for the hot loops that look
//! the same few keys up again and again (the lines a reference touches, the pcs of a loop's
//! loads, the lines a core owns). Those keys hit it every time, and its one compare is
//! cheaper than the map's hash and probe, so the map is consulted rarely; two keys sharing an
//! entry only cost a map lookup.

/// How a key picks its entry of a [`Memo`]: `index(key) % N`. Flipping a key's lowest bit
/// must flip its index's, so the flipped key marks the entry empty (see [`Memo::remove`]).
pub(crate) trait KeyIndex {
    /// The entry of `key`, before it is reduced to the memo's size.
    fn index(key: u64) -> usize;
}

/// The key's low bits: keys next to each other (a walk's lines) take entries next to each
/// other.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LowBits;

impl KeyIndex for LowBits {
    #[inline]
    fn index(key: u64) -> usize {
        key as usize
    }
}

/// The low bits folded with the byte above them: keys alike in their low byte (code
/// addresses) spread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Folded;

impl KeyIndex for Folded {
    #[inline]
    fn index(key: u64) -> usize {
        (key ^ key >> 8) as usize
    }
}

/// Up to `N` (a power of two, at least 2) keys with their values, each key in the one entry
/// `I` picks for it: remembering a key replaces the one there. The map behind it stays the
/// truth: whoever removes a key from it, or changes its value, removes it here too.
#[derive(Clone, Debug)]
pub(crate) struct Memo<V, I, const N: usize> {
    /// `(key, value)`; an empty entry holds a key that `I` puts in another entry, so it never
    /// matches and no key is set aside to mean empty.
    entries: [(u64, V); N],
    index: std::marker::PhantomData<I>,
}

impl<V: Copy + Default, I: KeyIndex, const N: usize> Memo<V, I, N> {
    /// Nothing remembered.
    pub(crate) fn new() -> Self {
        assert!(N >= 2 && N.is_power_of_two(), "a memo of {N} entries");
        // Key 1 in the entry of key 0, key 0 in every other (their entries differ).
        let elsewhere = |at| u64::from(Self::at(0) == at);
        Memo {
            entries: std::array::from_fn(|at| (elsewhere(at), V::default())),
            index: std::marker::PhantomData,
        }
    }

    #[inline]
    fn at(key: u64) -> usize {
        I::index(key) & (N - 1)
    }

    /// The value remembered for `key`, if it is.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<V> {
        let e = &self.entries[Self::at(key)];
        (e.0 == key).then_some(e.1)
    }

    /// Remembers `value` for `key`, in place of the key that shared its entry.
    #[inline]
    pub(crate) fn insert(&mut self, key: u64, value: V) {
        self.entries[Self::at(key)] = (key, value);
    }

    /// Forgets `key`, if it is remembered (the map no longer has it).
    #[inline]
    pub(crate) fn remove(&mut self, key: u64) {
        let at = Self::at(key);
        if self.entries[at].0 == key {
            debug_assert_ne!(Self::at(key ^ 1), at);
            self.entries[at].0 = key ^ 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_misses_collisions_and_removal() {
        let mut m = Memo::<u32, LowBits, 8>::new();
        for k in [0, 1, 7, u64::MAX] {
            assert_eq!(m.get(k), None, "a new memo holds no key, {k} included");
        }
        m.insert(3, 30);
        m.insert(4, 40);
        assert_eq!((m.get(3), m.get(4), m.get(5)), (Some(30), Some(40), None));
        m.insert(11, 110); // 11 and 3 share an entry: 3 goes
        assert_eq!((m.get(3), m.get(11)), (None, Some(110)));
        m.insert(11, 111);
        assert_eq!(m.get(11), Some(111), "a new value replaces the old");
        m.remove(3); // not remembered: 11 stays
        assert_eq!(m.get(11), Some(111));
        m.remove(11);
        assert_eq!((m.get(11), m.get(10), m.get(3)), (None, None, None));
        assert_eq!(m.get(4), Some(40), "other entries stay");
        m.insert(u64::MAX, 9);
        assert_eq!((m.get(u64::MAX), m.get(u64::MAX - 8)), (Some(9), None));
    }

    #[test]
    fn folded_keys_spread_and_flip_with_their_low_bit() {
        let at = Memo::<(), Folded, 256>::at;
        assert_ne!(at(0x1000), at(0x1100), "256 apart: apart");
        assert_eq!(at(0x1000), at(0x10_0010), "the fold sees one byte only");
        for k in [0u64, 1, 255, 256, 0x4011_a7c3, u64::MAX] {
            assert_eq!(at(k ^ 1), at(k) ^ 1);
            assert_eq!(
                Memo::<(), LowBits, 1024>::at(k ^ 1),
                Memo::<(), LowBits, 1024>::at(k) ^ 1
            );
        }
        let mut m = Memo::<(), Folded, 256>::new();
        m.insert(0x1000, ());
        m.insert(0x1100, ());
        m.remove(0x1000);
        assert_eq!(
            (m.get(0x1000), m.get(0x1001), m.get(0x1100)),
            (None, None, Some(()))
        );
    }
}
