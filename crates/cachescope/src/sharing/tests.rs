use super::*;
use crate::access::Access;

fn run(refs: &[(ThreadId, Access)]) -> Vec<SharedLine> {
    let mut b = Batch::new();
    for &(t, a) in refs {
        b.set_thread(t);
        b.push(a);
    }
    let mut s = SharingAnalysis::new(LineSize::DEFAULT);
    s.observe(&b);
    s.finish()
}

fn store(addr: u64, size: u32, pc: u64) -> Access {
    Access {
        pc: Some(pc),
        ..Access::store(addr, size)
    }
}

#[test]
fn disjoint_fields_written_by_two_threads_are_false_sharing() {
    let mut refs = Vec::new();
    for _ in 0..10 {
        refs.push((2, store(0x1000, 8, 0x400)));
        refs.push((3, store(0x1008, 8, 0x500)));
    }
    let lines = run(&refs);
    assert_eq!(lines.len(), 1);
    let l = &lines[0];
    assert_eq!(
        (l.line.as_str(), l.kind.as_str(), l.writes),
        ("0x1000", "false", 20)
    );
    assert_eq!(l.threads[0].written_bytes, "0-7");
    assert_eq!(l.threads[1].written_bytes, "8-15");
    assert!(
        l.fix
            .as_ref()
            .unwrap()
            .contains("thread 2 uses bytes 0-7, thread 3 uses bytes 8-15")
    );
    assert_eq!(l.code, ["0x400", "0x500"]);
}

#[test]
fn a_write_another_thread_reads_is_true_sharing() {
    let refs = [
        (1, store(0x2010, 4, 0x400)),
        (2, Access::load(0x2012, 2)),
        // Another line: read by two threads, never written: not shared.
        (1, Access::load(0x3000, 8)),
        (2, Access::load(0x3000, 8)),
        // Written by one thread alone: not shared.
        (1, store(0x4000, 8, 0x401)),
    ];
    let lines = run(&refs);
    assert_eq!(lines.len(), 1);
    // True sharing gets its advice too: pass less data (issue 58).
    assert_eq!(lines[0].kind, "true");
    let fix = lines[0].fix.as_deref().unwrap();
    assert!(
        fix.starts_with("thread 1 writes data other threads use") && fix.contains("accumulate"),
        "{fix}"
    );
    assert_eq!(lines[0].threads[1].read_bytes, "18-19");
}

#[test]
fn byte_masks_cover_the_access_within_its_line() {
    let ls = LineSize::DEFAULT;
    assert_eq!(line::byte_mask(0x1000, 1, ls), 1);
    assert_eq!(
        line::byte_mask(0x103c, 8, ls),
        0xf << 60,
        "clipped at the line's end"
    );
    assert_eq!(line::byte_mask(0x1000, 64, ls), u64::MAX);
    let wide = LineSize::new(128).unwrap();
    assert_eq!(line::byte_mask(0x1002, 4, wide), 0b110, "2-byte granules");
}

#[test]
fn ranking_puts_coherence_cost_first() {
    let mut lines = run(&[
        (1, store(0x1000, 8, 1)),
        (2, store(0x1008, 8, 2)),
        (1, store(0x2000, 8, 1)),
        (2, store(0x2000, 8, 2)),
        (2, store(0x2000, 8, 2)),
    ]);
    assert_eq!(lines[0].line, "0x2000", "most writes first");
    lines[1].coherence_misses = 5;
    rank(&mut lines);
    assert_eq!(lines[0].line, "0x1000");
}

#[test]
fn a_thread_with_a_few_accesses_does_not_make_disjoint_workers_true_sharing() {
    let mut refs = vec![(1, Access::load(0x1000, 16))];
    for _ in 0..200 {
        refs.push((2, store(0x1000, 8, 0x400)));
        refs.push((3, store(0x1008, 8, 0x500)));
    }
    let lines = run(&refs);
    assert_eq!(lines[0].kind, "false");
    assert_eq!(lines[0].threads.len(), 3, "the main thread is still listed");
}

/// A namer of fixed structures by byte range and no field names beyond the bytes.
struct Ranges(Vec<(u64, &'static str)>);

impl Namer for Ranges {
    fn structure(&mut self, _line: u64, offset: u64) -> String {
        self.0
            .iter()
            .rev()
            .find(|(start, _)| offset >= *start)
            .unwrap()
            .1
            .into()
    }

    fn field(&mut self, _line: u64, from: u64, _to: u64) -> Option<String> {
        Some(format!("{}{from}", self.structure(0, from)))
    }
}

#[test]
fn a_line_of_two_structures_names_each_with_its_kind_and_threads() {
    // Threads 2 and 3 each write their slot (bytes 0-7, 8-15); both take the lock at 16-23.
    let mut refs = Vec::new();
    for _ in 0..50 {
        refs.push((2, store(0x1000, 8, 0x400)));
        refs.push((3, store(0x1008, 8, 0x401)));
        refs.push((2, store(0x1010, 8, 0x402)));
        refs.push((3, store(0x1010, 8, 0x402)));
    }
    let mut lines = run(&refs);
    let l = &mut lines[0];
    l.structures = parts::parts(l, 1, &mut Ranges(vec![(0, "slots"), (16, "lock")]));
    let kinds: Vec<(&str, &str, Vec<u32>)> = l
        .structures
        .iter()
        .map(|p| (p.structure.as_str(), p.kind.as_str(), p.threads.clone()))
        .collect();
    assert_eq!(
        kinds,
        [("slots", "false", vec![2, 3]), ("lock", "true", vec![2, 3])]
    );
    assert_eq!(l.structures[0].fields.len(), 2);
    assert_eq!(l.structures[0].fields[1].name, "slots8");
    assert_eq!(l.structures[0].fields[1].writers, [3]);
    let fix = parts::layout_fix(l).unwrap();
    assert!(
        fix.starts_with("slots0 (thread 2) and slots8 (thread 3) are each written by one thread, beside lock16 (written by threads 2, 3)"),
        "{fix}"
    );
}
