//! Tests: column layouts, both radixes, error messages, skipping, sniffing and radix guessing.

use super::fields::HEX_IN_DECIMAL;
use super::parse::{EXPECTED_DEC, EXPECTED_HEX, MIXED};
use super::*;
use crate::access::{Access, AccessKind};
use AccessKind::*;

fn read_all(input: &[u8], radix: Radix, skip: bool) -> Result<(Vec<Access>, Diagnostics)> {
    let opts = Options {
        skip_bad_lines: skip,
        radix,
    };
    let mut r = Reader::new(input, Source::Memory, opts);
    let mut batch = Batch::new();
    let mut out = vec![];
    while r.read_batch(&mut batch)? > 0 {
        out.extend(batch.iter());
    }
    Ok((out, r.diagnostics()))
}

fn a(kind: AccessKind, addr: u64, size: u32) -> Access {
    Access {
        addr,
        size,
        kind,
        pc: None,
    }
}

fn one(line: &str, radix: Radix) -> Result<Option<(AccessKind, u64, u32)>, &'static str> {
    parse(line.as_bytes(), radix).map(|p| p.map(|p| (p.kind, p.addr, p.size)))
}

#[test]
fn reads_every_column_layout() {
    let text = b"# a comment\n\
                 0x1000\n\
                 1f 8\n  \
                 W 0x20 4\n\
                 0x30 m\n\
                 40,r,2\n\
                 I, 50, 16\r\n\
                 \t\n\
                 0X60\ts\n\
                 70 3 l\n";
    let (got, diag) = read_all(text, Radix::Hex, false).unwrap();
    assert_eq!(
        got,
        vec![
            a(Load, 0x1000, 1),
            a(Load, 0x1f, 8),
            a(Store, 0x20, 4),
            a(Modify, 0x30, 1),
            a(Load, 0x40, 2),
            a(Instr, 0x50, 16),
            a(Store, 0x60, 1),
            a(Load, 0x70, 3),
        ]
    );
    assert_eq!(diag, Diagnostics::default());
}

#[test]
fn decimal_radix() {
    assert_eq!(one("4096 8", Radix::Decimal), Ok(Some((Load, 4096, 8))));
    assert_eq!(one("0x10", Radix::Decimal), Ok(Some((Load, 16, 1))));
    assert_eq!(
        one("18446744073709551615", Radix::Decimal),
        Ok(Some((Load, u64::MAX, 1)))
    );
    assert_eq!(
        one("18446744073709551616", Radix::Decimal),
        Err(ADDR_OVERFLOW)
    );
    assert_eq!(one("1f", Radix::Decimal), Err(HEX_IN_DECIMAL));
    assert_eq!(one("4096 8", Radix::Hex), Ok(Some((Load, 0x4096, 8))));
}

#[test]
fn bad_lines_say_what_is_wrong() {
    let hex = Radix::Hex;
    assert_eq!(one("0x1ffffffffffffffff", hex), Err(ADDR_OVERFLOW));
    assert_eq!(one("1ffffffffffffffff", hex), Err(ADDR_OVERFLOW));
    assert_eq!(one("0000000000000000001", hex), Ok(Some((Load, 1, 1))));
    assert_eq!(one("10 0", hex), Err(BAD_SIZE));
    assert_eq!(one("10 4294967296", hex), Err(BAD_SIZE));
    assert_eq!(one("10 0x8", hex), Err(BAD_SIZE));
    assert_eq!(one(" L 1000,8", hex), Err(MIXED));
    assert_eq!(one("I  04000d7d4,3", hex), Err(MIXED));
    for bad in [
        "0x", "x10", "10,", ",10", "10,,8", "W R 10", "W", "10 8 9", "10 8 W 2", "zz", "-5",
    ] {
        assert_eq!(one(bad, hex), Err(EXPECTED_HEX), "{bad:?}");
    }
    assert_eq!(one("W", Radix::Decimal), Err(EXPECTED_DEC));
}

#[test]
fn bad_line_error_and_skipping() {
    let err = read_all(b"0x10\n0x20\nhello\n", Radix::Hex, false).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("<memory>:3: {EXPECTED_HEX}: \"hello\"")
    );
    let (got, diag) = read_all(b"0x10\nhello\n0x20\n10 0\n", Radix::Hex, true).unwrap();
    assert_eq!(got, vec![a(Load, 0x10, 1), a(Load, 0x20, 1)]);
    assert_eq!(diag.skipped_lines, 2);
    assert_eq!(
        diag.first_skipped,
        Some(format!("<memory>:2: {EXPECTED_HEX}: \"hello\""))
    );
}

#[test]
fn sniff_and_guess_radix() {
    let plain = b"# x\n0x1000\n0x1008 8\nW 0x2000\n";
    assert_eq!(
        sniff(plain, Radix::Hex),
        Sniff {
            accesses: 3,
            ignored: 1,
            bad: 0
        }
    );
    let lackey = b"==1== x\nI  04000d7d4,3\n L 1ffefffc48,8\n";
    assert_eq!(
        sniff(lackey, Radix::Hex),
        Sniff {
            accesses: 0,
            ignored: 0,
            bad: 3
        }
    );
    assert_eq!(
        sniff(b"10\n1f\n", Radix::Decimal),
        Sniff {
            accesses: 1,
            ignored: 0,
            bad: 1
        }
    );

    assert_eq!(guess_radix(b"4096\n4104 8\nW 12\n"), None);
    assert_eq!(guess_radix(b"4096\n0x1000\n"), Some(Radix::Hex));
    assert_eq!(guess_radix(b"4096\nW 7ffd\n"), Some(Radix::Hex));
    assert_eq!(guess_radix(b"4096\nnot a trace\n"), None);
    assert_eq!(guess_radix(b""), None);
}

proptest::proptest! {
    #[test]
    fn never_panics(line in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
        let _ = parse(&line, Radix::Hex);
        let _ = parse(&line, Radix::Decimal);
        let _ = guess_radix(&line);
    }

    #[test]
    fn formatted_accesses_read_back(
        addr in proptest::prelude::any::<u64>(),
        size in 1u32..,
        kind in proptest::sample::select(&AccessKind::ALL[..]),
        layout in 0usize..4,
    ) {
        let k = &kind.name()[..1];
        let line = match layout {
            0 => format!("{k} {addr:#x} {size}"),
            1 => format!("{addr:x},{k},{size}"),
            2 => format!("{addr}\t{size} {k}"),
            _ => format!("  {k} , {addr} , {size}  "),
        };
        let radix = if layout < 2 { Radix::Hex } else { Radix::Decimal };
        proptest::prop_assert_eq!(one(&line, radix), Ok(Some((kind, addr, size))));
    }
}
