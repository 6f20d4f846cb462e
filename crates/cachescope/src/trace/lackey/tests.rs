//! Example-based tests: records, pcs, whitespace, strictness, errors, skipping, sniffing and the
//! backward pc search.

use super::pc::PC_SEARCH_LIMIT;
use super::*;
use crate::access::Access;
use crate::batch::BATCH_LEN;
use AccessKind::*;

fn acc(kind: AccessKind, addr: u64, size: u32, pc: u64) -> Access {
    Access {
        addr,
        size,
        kind,
        pc: (pc != NO_PC).then_some(pc),
    }
}

fn read_all(input: &[u8], skip: bool) -> Result<(Vec<Access>, Diagnostics)> {
    let mut r = Reader::new(
        input,
        Source::Memory,
        Options {
            skip_bad_lines: skip,
        },
    );
    let mut batch = Batch::new();
    let mut out = vec![];
    while r.read_batch(&mut batch)? > 0 {
        out.extend(batch.iter());
    }
    Ok((out, r.diagnostics()))
}

#[test]
fn reads_records_with_pcs_and_ignores_valgrind_lines() {
    let text = b"==123== Lackey, an example Valgrind tool\n\
                 ==123== \n\
                 I  04000d7d4,3\n \
                 L 1ffefffc48,8\n \
                 S 1ffefffc40,4\n\
                 I  04000d7d7,5\n \
                 M 0401000,16\n\
                 --123-- WARNING: something\n\
                 \n\
                 **123** also noise\n\
                 I  04000d7dc,2\n\
                 ==123== Exit code:       0\n";
    let (got, diag) = read_all(text, false).unwrap();
    assert_eq!(
        got,
        vec![
            acc(Instr, 0x4000d7d4, 3, 0x4000d7d4),
            acc(Load, 0x1ffefffc48, 8, 0x4000d7d4),
            acc(Store, 0x1ffefffc40, 4, 0x4000d7d4),
            acc(Instr, 0x4000d7d7, 5, 0x4000d7d7),
            acc(Modify, 0x401000, 16, 0x4000d7d7),
            acc(Instr, 0x4000d7dc, 2, 0x4000d7dc),
        ]
    );
    assert_eq!(diag, Diagnostics::default());
}

#[test]
fn data_without_instruction_records_has_no_pc() {
    let (got, _) = read_all(b" L 10,8\n S 20,4\n M ffffffffffffffff,1", false).unwrap();
    assert_eq!(
        got,
        vec![
            acc(Load, 0x10, 8, NO_PC),
            acc(Store, 0x20, 4, NO_PC),
            acc(Modify, u64::MAX, 1, NO_PC)
        ]
    );
}

#[test]
fn crlf_and_whitespace_variations() {
    let text =
        b"I  0400,3\r\n L 10,8\r\nI 0500,1\r\n\tL\t20 , 4 \r\nS  30,\t2\r\n  I 0600,7\r\n   \r\n";
    let (got, _) = read_all(text, false).unwrap();
    assert_eq!(
        got,
        vec![
            acc(Instr, 0x400, 3, 0x400),
            acc(Load, 0x10, 8, 0x400),
            acc(Instr, 0x500, 1, 0x500),
            acc(Load, 0x20, 4, 0x500),
            acc(Store, 0x30, 2, 0x500),
            acc(Instr, 0x600, 7, 0x600),
        ]
    );
}

#[test]
fn long_addresses_sizes_and_size_zero() {
    assert_eq!(
        parse(b"I  0000000000000000000400,3"),
        Record::Instr(0x400, 3)
    );
    assert_eq!(parse(b"I  1ffffffffffffffff,3"), Record::Bad);
    assert_eq!(
        parse(b" L AbCdEf,4294967295"),
        Record::Data(Load, 0xabcdef, u32::MAX)
    );
    assert_eq!(parse(b" L 10,4294967296"), Record::Bad);
    assert_eq!(parse(b" L 10,99999999999999999999999"), Record::Bad);
    assert_eq!(parse(b" L 10,0"), Record::Data(Load, 0x10, 1));
}

#[test]
fn strict_about_the_shape() {
    for bad in [
        &b"0x1000"[..],
        b"1000",
        b"L 0x10,8",
        b"L10,8",
        b" L 10",
        b" L 10,",
        b" L ,8",
        b" L 10,8 x",
        b" L 10,8,",
        b" L 10 8",
        b" X 10,8",
        b" l 10,8",
        b"I  0400,-3",
        b"I  0400,+3",
        b"==12a== x",
        b"== 12==",
        b"====",
        b"=-12-=",
        b"--12==",
        b"# comment",
        b"\xff\xfe",
    ] {
        assert_eq!(
            parse(bad),
            Record::Bad,
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
    for ignored in [
        &b""[..],
        b"  \t",
        b"==1==",
        b"--42-- x",
        b"**7** y",
        b"==123== ",
    ] {
        assert_eq!(
            parse(ignored),
            Record::Ignored,
            "{:?}",
            String::from_utf8_lossy(ignored)
        );
    }
}

#[test]
fn bad_line_error_names_line_and_text() {
    let err = read_all(b"I  0400,3\n L 10,8\nhello world\n L 20,8\n", false).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("<memory>:3: {EXPECTED}: \"hello world\"")
    );
}

#[test]
fn skip_bad_lines_counts_them() {
    let (got, diag) = read_all(b"I  0400,3\nhello\n L 10,8\n L zz,8\n S 20,4\n", true).unwrap();
    assert_eq!(
        got,
        vec![
            acc(Instr, 0x400, 3, 0x400),
            acc(Load, 0x10, 8, 0x400),
            acc(Store, 0x20, 4, 0x400)
        ]
    );
    assert_eq!(diag.skipped_lines, 2);
    assert_eq!(
        diag.first_skipped,
        Some(format!("<memory>:2: {EXPECTED}: \"hello\""))
    );
}

#[test]
fn pc_carries_across_batches() {
    let mut text = b"I  0abc,4\n".to_vec();
    for i in 0..BATCH_LEN + 10 {
        text.extend_from_slice(format!(" L {i:x},8\n").as_bytes());
    }
    let mut r = Reader::new(&text[..], Source::Memory, Options::default());
    let mut batch = Batch::new();
    assert_eq!(r.read_batch(&mut batch).unwrap(), BATCH_LEN);
    assert_eq!(r.read_batch(&mut batch).unwrap(), 11);
    assert_eq!(batch.get(10), acc(Load, BATCH_LEN as u64 + 9, 8, 0xabc));
    assert_eq!(r.read_batch(&mut batch).unwrap(), 0);
    assert!(batch.is_empty());
}

#[test]
fn sniff_counts_lines() {
    let s = sniff(b"==1== hi\nI  0400,3\n L 10,8\n\nbad\n S 20,4");
    assert_eq!(
        s,
        Sniff {
            accesses: 3,
            ignored: 2,
            bad: 1
        }
    );
    // Plain and din traces are not lackey.
    let s = sniff(b"0x1000\n0x1008\n4096\n");
    assert_eq!(
        s,
        Sniff {
            accesses: 0,
            ignored: 0,
            bad: 3
        }
    );
    let s = sniff(b"0 1000\n2 400\n");
    assert_eq!(
        s,
        Sniff {
            accesses: 0,
            ignored: 0,
            bad: 2
        }
    );
}

/// Counts the bytes read through it.
struct Counting {
    inner: std::io::Cursor<Vec<u8>>,
    read: u64,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for Counting {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

#[test]
fn pc_before_finds_the_last_instruction_and_stops_looking_after_a_mebibyte() {
    let src = Source::Program("test".into());
    let mut text = b"I  04001000,3\n S 7ff000,8\nI  04001003,2\n L 7ff008,8\n".to_vec();
    let after_two = text.len() as u64;
    assert_eq!(
        pc_before(&mut std::io::Cursor::new(text.clone()), after_two, &src).unwrap(),
        0x0400_1003
    );
    assert_eq!(
        pc_before(&mut std::io::Cursor::new(text.clone()), 14, &src).unwrap(),
        0x0400_1000
    );
    assert_eq!(
        pc_before(&mut std::io::Cursor::new(text.clone()), 0, &src).unwrap(),
        NO_PC
    );
    // 8 MiB of data records after the instructions: the search gives up near 1 MiB back
    // instead of reading to the start.
    while text.len() < 8 << 20 {
        text.extend_from_slice(b" L 7ff010,8\n");
    }
    let end = text.len() as u64;
    let mut file = Counting {
        inner: std::io::Cursor::new(text),
        read: 0,
    };
    assert_eq!(pc_before(&mut file, end, &src).unwrap(), NO_PC);
    assert!(file.read <= 2 * PC_SEARCH_LIMIT, "read {} bytes", file.read);
}
