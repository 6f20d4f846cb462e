//! No input may cause a panic: arbitrary bytes, and valid traces of every format cut short or
//! with bytes flipped, either read to the end or fail with an error.

use std::io::Write;

use cachescope::batch::Batch;
use cachescope::trace::{OpenOptions, Trace, champsim, native};
use cachescope::{Access, AccessKind, Source};
use proptest::prelude::*;

/// Opens and drains `bytes`; the result is irrelevant, only that it returns.
fn drain(bytes: Vec<u8>, skip_bad_lines: bool) -> Result<u64, cachescope::Error> {
    let opts = OpenOptions {
        skip_bad_lines,
        ..OpenOptions::default()
    };
    let mut trace = Trace::from_read(std::io::Cursor::new(bytes), Source::Memory, None, &opts)?;
    let mut batch = Batch::new();
    let mut n = 0;
    loop {
        let got = trace.read_batch(&mut batch)?;
        if got == 0 {
            return Ok(n);
        }
        n += got as u64;
    }
}

fn sample_accesses() -> Vec<Access> {
    (0..3000u64)
        .map(|i| Access {
            addr: 0x7ff0_0000 + (i * 72) % 5000,
            size: [1, 2, 4, 8][(i % 4) as usize],
            kind: AccessKind::ALL[(i % 4) as usize],
            pc: Some(0x40_1000 + i % 50),
        })
        .collect()
}

fn lackey_text() -> Vec<u8> {
    let mut t = b"==1== Lackey, an example Valgrind tool\n".to_vec();
    for a in sample_accesses() {
        let tag = match a.kind {
            AccessKind::Instr => "I ",
            AccessKind::Load => " L",
            AccessKind::Store => " S",
            AccessKind::Modify => " M",
        };
        writeln!(t, "{tag} {:08x},{}", a.addr, a.size).unwrap();
    }
    t
}

fn native_bytes() -> Vec<u8> {
    let batch: Batch = sample_accesses().into_iter().collect();
    let opts = native::WriterOptions {
        block_len: 500,
        ..Default::default()
    };
    let mut w = native::Writer::with_options(Vec::new(), native::Header::default(), opts).unwrap();
    w.write_batch(&batch).unwrap();
    w.finish().unwrap().0
}

/// The sample as ChampSim records (modifies become a load and a store: 3750 references).
fn champsim_bytes() -> Vec<u8> {
    let batch: Batch = sample_accesses().into_iter().collect();
    let mut w = champsim::Writer::new(Vec::new(), Source::Memory);
    w.write_batch(&batch).unwrap();
    w.finish().unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn valid_inputs_read_completely() {
    assert_eq!(drain(lackey_text(), false).unwrap(), 3000);
    assert_eq!(drain(native_bytes(), false).unwrap(), 3000);
    assert_eq!(drain(gzip(&lackey_text()), false).unwrap(), 3000);
    assert_eq!(
        drain(zstd::encode_all(&native_bytes()[..], 1).unwrap(), false).unwrap(),
        3000
    );
    assert_eq!(drain(champsim_bytes(), false).unwrap(), 3750);
    assert_eq!(drain(gzip(&champsim_bytes()), false).unwrap(), 3750);
}

#[test]
fn every_cut_of_a_champsim_trace_inside_a_record_is_an_error() {
    let full = champsim_bytes();
    // Detection needs one whole record; less is read as another format or refused.
    for cut in (64..full.len()).step_by(7) {
        let got = drain(full[..cut].to_vec(), false);
        assert_eq!(got.is_err(), cut % 64 != 0, "cut at {cut}: {got:?}");
    }
}

#[test]
fn every_cut_of_a_native_trace_is_an_error() {
    let full = native_bytes();
    for cut in (0..full.len()).step_by(7) {
        assert!(
            drain(full[..cut].to_vec(), false).is_err(),
            "cut at {cut} read as complete"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096), skip in any::<bool>()) {
        let _ = drain(bytes, skip);
    }

    #[test]
    fn damaged_traces_never_panic(
        which in 0..6usize,
        cut in 0.0..1.0f64,
        flips in proptest::collection::vec((0.0..1.0f64, 1..=255u8), 0..4),
        skip in any::<bool>(),
    ) {
        let mut bytes = match which {
            0 => lackey_text(),
            1 => native_bytes(),
            2 => gzip(&lackey_text()),
            3 => zstd::encode_all(&native_bytes()[..], 1).unwrap(),
            4 => champsim_bytes(),
            _ => gzip(&champsim_bytes()),
        };
        for (at, x) in flips {
            let i = ((bytes.len() - 1) as f64 * at) as usize;
            bytes[i] ^= x;
        }
        bytes.truncate((bytes.len() as f64 * cut) as usize);
        let _ = drain(bytes, skip);
    }
}
