//! Format detection from the first bytes of the (decompressed) content.
//!
//! The answer is yes / no / need-more-bytes in spirit (inferno's `guess`): the opener hands over
//! up to [`SNIFF_LEN`] bytes, or fewer when the input ends. Native traces are known by their
//! magic; ChampSim by records that pass [`champsim::sniff`]; raw binary by bytes no text trace
//! contains and words that look like addresses ([`plausible_addresses`]); text by sniffing each
//! text format over the
//! sample's whole lines and taking the one under which the most lines hold an access, ties going
//! to the stricter format (lackey, then din, then plain).

use super::{Format, Radix, Sniff, champsim, din, lackey, native, plain};

/// Bytes of content examined.
pub(crate) const SNIFF_LEN: usize = 64 * 1024;

/// What detection decided and, when it had to guess, what it assumed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Detected {
    pub(crate) format: Format,
    pub(crate) note: Option<String>,
}

/// The formats tried, for "unknown format" errors.
pub(crate) const TRIED: &str = "native, champsim, lackey, din, plain (hex and decimal), binary";

/// Detects the format of `head`; `at_eof` says whether `head` is the whole input.
/// `None`: nothing matched.
pub(crate) fn detect(head: &[u8], at_eof: bool) -> Option<Detected> {
    if head.starts_with(&native::MAGIC) {
        return Some(Detected {
            format: Format::Native,
            note: None,
        });
    }
    if champsim::sniff(head) {
        return Some(Detected {
            format: Format::Champsim,
            note: None,
        });
    }
    if looks_binary(head) {
        // Binary data that is not addresses is no text trace either.
        return plausible_addresses(head).then_some(Detected {
            format: Format::Binary,
            note: None,
        });
    }
    let sample = whole_lines(head, at_eof);
    let candidates = [
        (Format::Lackey, lackey::sniff(sample)),
        (Format::Din, din::sniff(sample)),
        (Format::Plain(Radix::Hex), plain::sniff(sample, Radix::Hex)),
    ];
    // Stable max: earlier (stricter) candidates win ties.
    let mut best: Option<(Format, Sniff)> = None;
    for (f, s) in candidates {
        if s.accesses > 0 && best.is_none_or(|(_, b)| s.accesses > b.accesses) {
            best = Some((f, s));
        }
    }
    let (format, _) = best?;
    if format != Format::Plain(Radix::Hex) {
        return Some(Detected { format, note: None });
    }
    Some(plain_radix(sample))
}

/// Plain text's radix: hex when some address is certainly hex, else decimal with a note saying
/// so (bare digits are ambiguous). `sample` is whole lines.
pub(crate) fn plain_radix(sample: &[u8]) -> Detected {
    match plain::guess_radix(sample) {
        Some(radix) => Detected { format: Format::Plain(radix), note: None },
        None => Detected {
            format: Format::Plain(Radix::Decimal),
            note: Some(
                "addresses are bare digits: read as decimal (use --format plain-hex if they are hex)"
                    .into(),
            ),
        },
    }
}

/// Text traces hold no NUL and few control bytes; binary address traces are full of zero bytes
/// (the high bytes of every address).
fn looks_binary(head: &[u8]) -> bool {
    let odd = head
        .iter()
        .filter(|&&b| b == 0 || (b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c)))
        .count();
    head.contains(&0) || odd * 20 > head.len()
}

/// Whether the little-endian 64-bit words of `head` look like a program's addresses. Any
/// binary file has bytes no text has; read as addresses, a file of random bytes gives a few
/// hundred references no program made. Plausible: some word is not zero, at most 1 word in 16
/// lies beyond user space (2^47 and up, where x86-64 and AArch64 user addresses end), and the
/// words fall in few 4-GiB regions (a program's code, heap, libraries and stack make a handful;
/// random words spread over thousands).
fn plausible_addresses(head: &[u8]) -> bool {
    let words: Vec<u64> = head
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
        .collect();
    if words.iter().all(|&w| w == 0) {
        return false;
    }
    let beyond = words.iter().filter(|&&w| w >> USER_BITS != 0).count();
    let mut regions: Vec<u64> = words.iter().map(|w| w >> 32).collect();
    regions.sort_unstable();
    regions.dedup();
    beyond * 16 <= words.len() && regions.len() <= (words.len() / 8).max(8)
}

/// Bits of a user-space address on x86-64 and AArch64 (4-level page tables).
const USER_BITS: u32 = 47;

/// Why `head` matched no format, when detection can say more than that.
pub(crate) fn why_unknown(head: &[u8]) -> Option<String> {
    if !looks_binary(head) || plausible_addresses(head) {
        return None;
    }
    Some(
        "binary data, but its 8-byte words are not a program's addresses (--format binary \
         reads them anyway)"
            .into(),
    )
}

/// `head` cut after its last newline, unless it is the whole input.
pub(crate) fn whole_lines(head: &[u8], at_eof: bool) -> &[u8] {
    if at_eof {
        return head;
    }
    match memchr::memrchr(b'\n', head) {
        Some(i) => &head[..=i],
        None => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(head: &[u8]) -> Option<Format> {
        detect(head, true).map(|d| d.format)
    }

    #[test]
    fn recognises_each_format() {
        assert_eq!(
            fmt(b"==12== Lackey\nI  04000,3\n L 1ff0,8\n"),
            Some(Format::Lackey)
        );
        assert_eq!(fmt(b" S 1ff0,8\n M 1ff8,4\n"), Some(Format::Lackey));
        assert_eq!(fmt(b"0 1000\n1 2000\n2 400\n"), Some(Format::Din));
        assert_eq!(fmt(b"0x1000\n0x2000\n"), Some(Format::Plain(Radix::Hex)));
        assert_eq!(
            fmt(b"7ffe12a0 R 8\n7ffe12a8 W 8\n"),
            Some(Format::Plain(Radix::Hex))
        );
        assert_eq!(fmt(&[0x00, 0x10, 0, 0, 0, 0, 0, 0]), Some(Format::Binary));
        let champsim = champsim::Record {
            ip: 0x40_1000,
            source_memory: [0x7ffd_0000, 0, 0, 0],
            ..Default::default()
        };
        assert_eq!(fmt(&champsim.encode()), Some(Format::Champsim));
        let mut native = native::MAGIC.to_vec();
        native.extend([0; 16]);
        assert_eq!(fmt(&native), Some(Format::Native));
    }

    #[test]
    fn bare_digits_are_decimal_and_say_so() {
        let d = detect(b"4096\n8192\n", true).unwrap();
        assert_eq!(d.format, Format::Plain(Radix::Decimal));
        assert!(d.note.unwrap().contains("decimal"));
    }

    #[test]
    fn binary_is_detected_only_when_it_looks_like_addresses() {
        let words = |w: &[u64]| -> Vec<u8> { w.iter().flat_map(|a| a.to_le_bytes()).collect() };
        // A program's few regions: code, heap, libraries, stack.
        let real = words(&[
            0x40_1000,
            0x5555_5555_9000,
            0x7f12_3456_7000,
            0x7ffd_0000_1ff0,
        ]);
        assert_eq!(fmt(&real.repeat(50)), Some(Format::Binary));
        // Random bytes: a seeded generator's 2000 bytes, as `head -c 2000 /dev/urandom`.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let random: Vec<u64> = (0..250)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect();
        assert_eq!(fmt(&words(&random)), None);
        assert!(
            why_unknown(&words(&random))
                .unwrap()
                .contains("--format binary")
        );
        // Random user-space addresses spread over the whole range: none is a program's.
        let spread: Vec<u64> = random.iter().map(|r| r >> 17).collect();
        assert_eq!(fmt(&words(&spread)), None);
        // Zeros alone, or fewer than 8 bytes.
        assert_eq!(fmt(&[0; 64]), None);
        assert_eq!(fmt(&[0x10, 0, 0, 0]), None);
        assert_eq!(why_unknown(b"hello\n"), None);
    }

    #[test]
    fn nothing_recognisable_is_none() {
        assert_eq!(fmt(b"hello world\nthis is prose\n"), None);
        assert_eq!(fmt(b"==1== Lackey, an example Valgrind tool\n"), None);
    }

    #[test]
    fn a_partial_last_line_is_not_sniffed() {
        // Cut mid-record: only the whole first line counts.
        let d = detect(b" L 1000,8\n L 20", false).unwrap();
        assert_eq!(d.format, Format::Lackey);
    }
}
