//! The in-place reader ([`ToolReader::from_bytes`]) against the buffered one
//! ([`ToolReader::new`]) fed in pieces of every size: the same records, events and errors.

use std::io::Read;

use proptest::prelude::*;

use super::*;

/// A reader that returns at most `step` bytes per call, so words and escapes are split
/// across reads.
struct Pieces<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// One item of a generated stream.
#[derive(Clone, Debug)]
enum Item {
    Ref(u64),
    Thread(u64),
    Free(u64),
    Alloc(u64, u64, Vec<u64>),
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        20 => any::<u64>().prop_map(|w| Item::Ref(w & ((1 << 60) - 1))),
        1 => (1u64..5).prop_map(Item::Thread),
        1 => (0u64..1 << 47).prop_map(Item::Free),
        1 => (0u64..1 << 47, 0u64..1 << 20, prop::collection::vec(0u64..1 << 47, 0..5))
            .prop_map(|(a, s, st)| Item::Alloc(a, s, st)),
    ]
}

/// The stream's bytes, as the tool writes them: header, items, end record.
fn stream(items: &[Item]) -> Vec<u8> {
    let mut words = vec![TAG_HEADER << 60 | VERSION];
    for it in items {
        match it {
            Item::Ref(w) => words.push(*w),
            Item::Thread(t) => words.push(TAG_THREAD << 60 | t),
            Item::Free(a) => words.extend([TAG_EVENT << 60 | EV_FREE << 16 | 1, *a]),
            Item::Alloc(a, s, st) => {
                let n = 2 + st.len() as u64;
                words.extend([TAG_EVENT << 60 | EV_ALLOC << 16 | n, *a, *s]);
                words.extend(st);
            }
        }
    }
    words.push(TAG_END << 60 | (words.len() as u64 - 1));
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

type Decoded = (Vec<Batch>, Vec<Event>, u32);

fn decode<R: BufRead + Send>(reader: ToolReader<R>) -> std::result::Result<Decoded, String> {
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut reader = reader.with_events(tx);
    let mut batches = Vec::new();
    loop {
        let mut batch = Batch::new();
        match reader.read_batch(&mut batch) {
            Ok(0) => break,
            Ok(_) => batches.push(batch),
            Err(e) => return Err(e.to_string()),
        }
    }
    let threads = reader.threads();
    drop(reader);
    Ok((batches, rx.iter().collect(), threads))
}

proptest! {
    #[test]
    fn in_place_equals_buffered(
        items in prop::collection::vec(item(), 0..3000),
        step in 1usize..2000,
        cut in prop::option::of(0usize..64),
    ) {
        let mut bytes = stream(&items);
        if let Some(cut) = cut {
            bytes.truncate(bytes.len().saturating_sub(cut));
        }
        let in_place = decode(ToolReader::from_bytes(&bytes, Source::Memory));
        let buffered = decode(ToolReader::new(Pieces { data: &bytes, step }, Source::Memory));
        prop_assert_eq!(&in_place, &buffered);
        prop_assert_eq!(in_place.is_ok(), cut.is_none_or(|c| c == 0));
    }
}
