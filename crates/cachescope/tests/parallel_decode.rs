//! `parallel::decode_in_parallel` against a sequential read of the same file: the same batches
//! (every column, the same boundaries), the same error after the same accesses, and a reader
//! dropped half-way that does not hang. Files span several of its segments (2^16 accesses, or
//! 4 MiB of text, each).

mod common;

use cachescope::parallel::decode_in_parallel;
use cachescope::trace::{OpenOptions, Trace};
use cachescope::{Access, AccessKind, Batch};

fn lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    }
}

/// A native trace of `n` accesses of every kind, with pcs, in blocks of `block_len`.
fn native_file(n: usize, block_len: usize) -> tempfile::NamedTempFile {
    let mut next = lcg(7);
    let trace: Vec<Access> = (0..n)
        .map(|i| Access {
            addr: (next() % 50_000) * 8,
            size: [1, 2, 4, 8][i % 4],
            kind: [
                AccessKind::Instr,
                AccessKind::Load,
                AccessKind::Store,
                AccessKind::Modify,
            ][(next() % 4) as usize],
            pc: (i % 3 != 0).then(|| 0x40_0000 + next() % 4096),
        })
        .collect();
    common::native_file(&trace, block_len)
}

/// A lackey trace of about `n` records.
fn lackey_file(n: usize) -> tempfile::NamedTempFile {
    let mut next = lcg(11);
    let mut s = String::from("==1== Lackey, an example Valgrind tool\n");
    let mut i = 0;
    while i < n {
        s += &format!(
            "I  {:08x},{}\n",
            0x0400_0000 + next() % 5000 * 4,
            1 + next() % 7
        );
        i += 1;
        for _ in 0..next() % 4 {
            let kind = ["L", "S", "M"][(next() % 3) as usize];
            s += &format!(" {kind} {:010x},8\n", 0x1f_ff00_0000 + next() % 20_000 * 8);
            i += 1;
        }
    }
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), s).unwrap();
    f
}

fn open(path: &std::path::Path) -> Trace {
    cachescope::trace::open(path, &OpenOptions::default()).unwrap()
}

/// Every batch until the end or the first error, and the error's text.
fn read_all(t: &mut Trace) -> (Vec<Vec<Access>>, Option<String>) {
    let mut batches = Vec::new();
    let mut b = Batch::new();
    loop {
        match t.read_batch(&mut b) {
            Ok(0) => return (batches, None),
            Ok(_) => batches.push(b.iter().collect()),
            Err(e) => return (batches, Some(e.to_string())),
        }
    }
}

/// What must be the same.
#[derive(Clone, Copy, PartialEq)]
enum Same {
    /// Batch for batch (native traces: one batch per block).
    Batches,
    /// Access for access (text segments end batches early).
    Accesses,
    /// Only the error (before a bad text line, the accesses of its batch are dropped, and
    /// batches are cut differently).
    Error,
}

/// The file read by one thread, then by 2, 3 and 4: the same.
fn check_same(path: &std::path::Path, same: Same) -> (Vec<Vec<Access>>, Option<String>) {
    let want = read_all(&mut open(path));
    for threads in [2, 3, 4] {
        let mut t = open(path);
        assert!(decode_in_parallel(&mut t, threads).unwrap(), "{threads}");
        let got = read_all(&mut t);
        match same {
            Same::Batches => {
                assert_eq!(got.0.len(), want.0.len(), "{threads} threads: batch count");
                assert!(got.0 == want.0, "{threads} threads: batches differ");
            }
            Same::Accesses => {
                assert!(
                    got.0.concat() == want.0.concat(),
                    "{threads} threads: accesses differ"
                )
            }
            Same::Error => {}
        }
        assert_eq!(got.1, want.1, "{threads} threads");
        let (done, _) = t.progress();
        assert!(done > std::fs::metadata(path).unwrap().len() / 2, "{done}");
    }
    want
}

#[test]
fn native_traces_decode_to_the_same_batches() {
    // Blocks of 1000 accesses, so segments are runs of blocks; and whole 64 Ki blocks.
    for block_len in [1000, 65_536] {
        let f = native_file(400_000, block_len);
        let (batches, err) = check_same(f.path(), Same::Batches);
        assert_eq!(err, None);
        assert_eq!(batches.iter().map(Vec::len).sum::<usize>(), 400_000);
    }
}

#[test]
fn lackey_traces_decode_to_the_same_batches() {
    let f = lackey_file(700_000);
    assert!(std::fs::metadata(f.path()).unwrap().len() > 9 << 20);
    let (batches, err) = check_same(f.path(), Same::Accesses);
    assert_eq!(err, None);
    assert!(batches.iter().map(Vec::len).sum::<usize>() >= 700_000);
}

#[test]
fn a_damaged_block_fails_after_the_same_accesses() {
    let f = native_file(400_000, 1000);
    let mut bytes = std::fs::read(f.path()).unwrap();
    let at = bytes.len() * 3 / 4;
    bytes[at] ^= 0x55;
    std::fs::write(f.path(), &bytes).unwrap();
    let (batches, err) = check_same(f.path(), Same::Batches);
    let err = err.expect("the damage is found");
    assert!(err.contains(&f.path().display().to_string()), "{err}");
    assert!(batches.len() > 100, "{}", batches.len());
}

#[test]
fn a_bad_line_late_in_a_text_trace_names_its_line() {
    let f = lackey_file(700_000);
    let mut text = std::fs::read_to_string(f.path()).unwrap();
    let lines = text.lines().count();
    let at = text.len() * 7 / 8;
    let at = at + text[at..].find('\n').unwrap() + 1;
    let line = text[..at].lines().count() + 1;
    text.insert_str(at, "this is not lackey\n");
    std::fs::write(f.path(), &text).unwrap();
    let (_, err) = check_same(f.path(), Same::Error);
    let err = err.expect("the bad line is found");
    assert!(
        err.contains(&format!(":{line}")),
        "line {line} of {lines}: {err}"
    );
}

#[test]
fn a_reader_dropped_half_way_stops_its_threads() {
    let f = native_file(400_000, 1000);
    for threads in [2, 4] {
        let mut t = open(f.path());
        assert!(decode_in_parallel(&mut t, threads).unwrap());
        let mut b = Batch::new();
        for _ in 0..3 {
            assert!(t.read_batch(&mut b).unwrap() > 0);
        }
        drop(t);
    }
}

#[test]
fn what_cannot_be_cut_is_read_as_before() {
    let f = native_file(400_000, 1000);
    // One thread; or a trace already started.
    assert!(!decode_in_parallel(&mut open(f.path()), 1).unwrap());
    let mut t = open(f.path());
    let mut b = Batch::new();
    t.read_batch(&mut b).unwrap();
    assert!(!decode_in_parallel(&mut t, 2).unwrap());
    // A compressed file.
    let gz = tempfile::NamedTempFile::new().unwrap();
    let mut enc = flate2::write::GzEncoder::new(gz.reopen().unwrap(), Default::default());
    std::io::copy(&mut std::fs::File::open(f.path()).unwrap(), &mut enc).unwrap();
    enc.finish().unwrap();
    assert!(!decode_in_parallel(&mut open(gz.path()), 2).unwrap());
}

#[test]
fn pcs_carry_across_segments_of_a_lackey_trace_with_sparse_fetches() {
    // An `I` record, then 6 MiB of data records: a later segment's reader finds no `I` record
    // within the 1 MiB it looks back, and its data records must still get that pc.
    let mut s = String::from("I  04000000,4\n");
    let mut i = 0u64;
    while s.len() < 6 << 20 {
        s += &format!(" L {:010x},8\n", 0x1f_ff00_0000 + i % 9000 * 8);
        i += 1;
        if i == 300_000 {
            s += "I  04000010,2\n";
        }
    }
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), s).unwrap();
    let (batches, err) = check_same(f.path(), Same::Accesses);
    assert_eq!(err, None);
    let all = batches.concat();
    assert_eq!(all.last().unwrap().pc, Some(0x0400_0010));
    assert_eq!(all[1].pc, Some(0x0400_0000));
}

/// A native trace whose header counts its accesses tells them ahead
/// (`AccessReader::counts_ahead`, the sampled stage's hint), read by one thread or by the
/// parallel reader that replaces it; one whose header does not, tells nothing.
#[test]
fn the_headers_counts_are_told_ahead_by_either_reader() {
    use cachescope::trace::AccessReader;
    use cachescope::trace::native::{Header, Writer, WriterOptions};
    let accesses = common::lcg_trace(300_000, 5000);
    let file = tempfile::NamedTempFile::new().unwrap();
    let opts = WriterOptions {
        block_len: 4096,
        ..WriterOptions::default()
    };
    let mut w = Writer::with_options(file.reopen().unwrap(), Header::new(), opts).unwrap();
    w.write_batch(&accesses.iter().copied().collect()).unwrap();
    let (_, counts) = w.finish_and_patch_header().unwrap();
    assert_eq!(counts.accesses, 300_000);
    assert_eq!(open(file.path()).counts_ahead(), Some(counts));
    let mut t = open(file.path());
    assert!(decode_in_parallel(&mut t, 2).unwrap());
    assert_eq!(t.counts_ahead(), Some(counts));
    let unpatched = native_file(300_000, 4096);
    assert_eq!(open(unpatched.path()).counts_ahead(), None);
}
