//! Property tests: the byte parser against a `str`-based reference grammar, the SWAR hex step
//! against digit-by-digit conversion, and sniffing on arbitrary bytes.

use super::digits::swar_hex8;
use super::*;
use AccessKind::*;

/// The grammar written with `str` methods, to check the byte-level parser against.
fn reference(line: &[u8]) -> Record {
    let line = String::from_utf8_lossy(line);
    for c in ['=', '-', '*'] {
        let fence = format!("{c}{c}");
        if let Some(rest) = line.strip_prefix(&fence) {
            return match rest.split_once(&fence) {
                Some((d, _)) if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => {
                    Record::Ignored
                }
                _ => Record::Bad,
            };
        }
    }
    let blank = [' ', '\t'];
    let t = line.trim_start_matches(blank);
    if t.is_empty() {
        return Record::Ignored;
    }
    let mut chars = t.chars();
    let kind = match chars.next() {
        Some('I') => Instr,
        Some('L') => Load,
        Some('S') => Store,
        Some('M') => Modify,
        _ => return Record::Bad,
    };
    let rest = chars.as_str();
    if !rest.starts_with(blank) {
        return Record::Bad;
    }
    let Some((a, s)) = rest.split_once(',') else {
        return Record::Bad;
    };
    let (a, s) = (a.trim_matches(blank), s.trim_matches(blank));
    let digits = |x: &str, hex: bool| {
        !x.is_empty()
            && x.bytes().all(|b| {
                if hex {
                    b.is_ascii_hexdigit()
                } else {
                    b.is_ascii_digit()
                }
            })
    };
    if !digits(a, true) || !digits(s, false) {
        return Record::Bad;
    }
    let (Ok(addr), Ok(size)) = (u64::from_str_radix(a, 16), s.parse::<u32>()) else {
        return Record::Bad;
    };
    match kind {
        Instr => Record::Instr(addr, size.max(1)),
        k => Record::Data(k, addr, size.max(1)),
    }
}

/// Lines that are mostly valid records, with a mutation now and then.
fn near_record() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let blanks = "[ \t]{0,2}";
    (
        blanks,
        prop_oneof![4 => "[ILSM]", 1 => "(X|l|==|--|\\*\\*)"],
        prop_oneof![4 => "[ \t]{1,2}", 1 => ""],
        prop_oneof![4 => "[0-9a-fA-F]{1,18}", 1 => "(0x)?[0-9a-fA-F]{0,20}"],
        blanks,
        prop_oneof![4 => ",", 1 => ";?"],
        blanks,
        prop_oneof![4 => "[0-9]{1,10}", 1 => "[+-]?[0-9]{0,12}"],
        blanks,
        prop_oneof![4 => "", 1 => "(==|a|,|\r)"],
    )
        .prop_map(|p| [p.0, p.1, p.2, p.3, p.4, p.5, p.6, p.7, p.8, p.9].concat())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    #[test]
    fn never_panics_and_matches_the_reference_on_bytes(line in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)) {
        proptest::prop_assert_eq!(parse(&line), reference(&line));
    }

    #[test]
    fn matches_the_reference_on_near_records(line in near_record()) {
        proptest::prop_assert_eq!(parse(line.as_bytes()), reference(line.as_bytes()));
    }

    #[test]
    fn swar_hex_matches_digit_by_digit(
        bytes in proptest::array::uniform8(proptest::sample::select(&b"0123456789abcdefABCDEFgG/:@`,\x80\xff"[..]))
    ) {
        let scalar = bytes.iter().try_fold(0u64, |v, &b| {
            char::from(b).to_digit(16).map(|d| (v << 4) | u64::from(d))
        });
        proptest::prop_assert_eq!(swar_hex8(u64::from_le_bytes(bytes)), scalar);
    }

    #[test]
    fn sniff_never_panics(sample in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
        let s = sniff(&sample);
        proptest::prop_assert!(s.accesses + s.ignored + s.bad <= sample.len() + 1);
    }
}
