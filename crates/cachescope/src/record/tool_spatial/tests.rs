use super::*;
use crate::access::AccessKind;
use crate::attribution::events::EventKind;

fn bytes(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

const HEADER: u64 = (TAG_HEADER << 60) | SPATIAL | super::super::tool::VERSION;

/// A reference word: address, size, kind code.
fn word(addr: u64, size: u64, kind: u64) -> u64 {
    (addr & ARG_MASK) | size << 48 | kind << 58
}

fn sample(pc: u64, w: u64, data: u64, instrs: u64) -> [u64; 3] {
    [(TAG_SAMPLE << 60) | pc, w, data << 32 | instrs]
}

/// Reads the whole stream: every sample as (thread, address, size, kind, pc, data before,
/// instructions before), the events and the ending.
#[allow(clippy::type_complexity)]
fn read_all(
    words: &[u64],
) -> Result<(
    Vec<(u32, u64, u32, AccessKind, u64, u64, u64)>,
    Vec<Event>,
    Ending,
)> {
    let input = bytes(words);
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut r = SpatialReader::new(&input[..], Source::Stdin).with_events(tx);
    let mut out = SampledRefs::default();
    let mut got = Vec::new();
    while r.read(&mut out)? > 0 {
        for (k, (t, a)) in out.batch.iter_threaded().enumerate() {
            got.push((
                t,
                a.addr,
                a.size,
                a.kind,
                a.pc.expect("a pc"),
                out.data_before[k],
                out.instrs_before[k],
            ));
        }
    }
    let ending = r.finish()?;
    Ok((got, rx.try_iter().collect(), ending))
}

/// The stream's words with its end record (which counts the words before it).
fn ended(mut w: Vec<u64>) -> Vec<u64> {
    let n = w.len() as u64;
    w.push((TAG_END << 60) | n);
    w
}

#[test]
fn samples_are_placed_by_their_distances_and_the_position_records() {
    let mut w = vec![HEADER];
    // A load 5 data references and 9 instructions in, then a store one further on.
    w.extend(sample(0x40_1000, word(0x7000, 8, 0), 5, 9));
    w.extend(sample(0x40_1004, word(0x7040, 4, 1), 1, 0));
    // Thread 2 runs; a position record jumps far, then an instruction is sampled.
    w.push((TAG_THREAD << 60) | 2);
    w.extend([TAG_POSITION << 60, 1 << 40, 3 << 40]);
    w.extend(sample(0x40_2000, word(0x40_2000, 3, 3), 0, 2));
    // An allocation at the position record before it.
    w.extend([TAG_POSITION << 60, (1 << 40) + 7, (3 << 40) + 2]);
    w.extend([(TAG_EVENT << 60) | 2 | 1 << 16, 0x5000, 64]);
    w.extend([TAG_POSITION << 60, (1 << 40) + 9, (3 << 40) + 4]);
    let (got, events, ending) = read_all(&ended(w)).unwrap();
    assert_eq!(
        got,
        [
            (1, 0x7000, 8, AccessKind::Load, 0x40_1000, 5, 9),
            (1, 0x7040, 4, AccessKind::Store, 0x40_1004, 6, 9),
            (
                2,
                0x40_2000,
                3,
                AccessKind::Instr,
                0x40_2000,
                1 << 40,
                (3 << 40) + 2
            ),
        ]
    );
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].position, (4 << 40) + 9);
    assert!(matches!(
        events[0].kind,
        EventKind::Alloc {
            addr: 0x5000,
            size: 64,
            ..
        }
    ));
    assert_eq!((ending.data, ending.instrs), ((1 << 40) + 9, (3 << 40) + 4));
    assert!(!ending.exec);
    assert!(ending.profile(SamplerOptions::default()).unwrap().is_none());
}

#[test]
fn a_followed_exec_continues_the_counts() {
    let mut w = vec![HEADER];
    w.extend(sample(0x40_1000, word(0x7000, 8, 0), 3, 4));
    w.extend([TAG_POSITION << 60, 10, 20, TAG_EXEC << 60]);
    // The new program's stream: its own header, counts from 0, its own end record.
    let mut second = vec![HEADER];
    second.extend(sample(0x40_1000, word(0x9000, 8, 0), 1, 1));
    second.extend([TAG_POSITION << 60, 2, 2]);
    w.extend(ended(second));
    let (got, _, ending) = read_all(&w).unwrap();
    assert_eq!(got[1].5, 11);
    assert_eq!(got[1].6, 21);
    assert_eq!((ending.data, ending.instrs), (12, 22));
}

#[test]
fn the_reuse_samplers_records_make_its_profile() {
    let mut w = vec![HEADER | REUSE_SAMPLING];
    w.extend([TAG_REUSE << 60, 1, 3]);
    w.extend(sample(0x40_1000, word(0x7000, 8, 0), 1, 1));
    w.extend([TAG_COUNT << 60, 3, TAG_POSITION << 60, 3, 3]);
    let (got, _, ending) = read_all(&ended(w)).unwrap();
    assert_eq!(got.len(), 1);
    let options = SamplerOptions {
        rate: 1.0,
        ..SamplerOptions::default()
    };
    let profile = ending.profile(options).unwrap().expect("a profile");
    assert_eq!(profile.samples().len(), 3);
    assert_eq!(profile.samples()[0].distance(), Some(1));
}

#[test]
fn a_bad_stream_is_an_error_naming_what_is_wrong() {
    let msg = |w: &[u64]| read_all(w).unwrap_err().to_string();
    // Cut before the end record.
    let mut w = vec![HEADER];
    w.extend(sample(0x40_1000, word(0x7000, 8, 0), 1, 1));
    assert!(msg(&w).contains("without its end record"), "{}", msg(&w));
    // Cut inside a sample.
    assert!(msg(&w[..3]).contains("cut off"), "{}", msg(&w[..3]));
    // The end record's count is wrong.
    let mut bad = w.clone();
    bad.push((TAG_END << 60) | 3);
    assert!(msg(&bad).contains("end record counts 3"), "{}", msg(&bad));
    // A full stream's header, or an older version.
    let full = (TAG_HEADER << 60) | super::super::tool::VERSION;
    assert!(msg(&ended(vec![full])).contains("not a spatially sampled stream"));
    assert!(msg(&ended(vec![(TAG_HEADER << 60) | SPATIAL | 2])).contains("version"));
    // A position going back, an unknown tag.
    let back = ended(vec![
        HEADER,
        TAG_POSITION << 60,
        5,
        5,
        TAG_POSITION << 60,
        4,
        9,
    ]);
    assert!(msg(&back).contains("going back"), "{}", msg(&back));
    assert!(msg(&ended(vec![HEADER, 0xC << 60])).contains("tag 0xc"));
    // Empty input.
    assert!(read_all(&[]).is_err());
}

#[test]
fn a_stream_cut_at_an_exec_that_was_not_followed_is_complete() {
    let mut w = vec![HEADER];
    w.extend(sample(0x40_1000, word(0x7000, 8, 0), 1, 1));
    w.extend([TAG_POSITION << 60, 4, 4, TAG_EXEC << 60]);
    let (got, _, ending) = read_all(&w).unwrap();
    assert_eq!(got.len(), 1);
    assert!(ending.exec);
    assert_eq!((ending.data, ending.instrs), (4, 4));
}
