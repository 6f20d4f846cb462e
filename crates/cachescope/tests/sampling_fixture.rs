//! The kept version-1 profile, `tests/fixtures/sampling-v1.csprof`, must decode to exactly the
//! profile below, forever, and the writer must still produce it byte for byte. Never regenerate
//! the file; a new format version adds `sampling-v2.csprof` next to it. It was written once by
//! `write_fixture` (ignored; run it only to create the fixture of a new version).
//!
//! The samples cover each encoding path: one-byte and two-byte varints in both fields, reuses
//! at distance 0, dangling samples (one at the last reference, age 0), and a sample whose reuse
//! is the last reference.

use std::path::PathBuf;

use cachescope::sampling::{MAGIC, NextUse, Profile, Sample, SamplerOptions, VERSION};
use cachescope::{LineSize, Source};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sampling-v1.csprof")
}

/// The fixture's profile, written out by hand.
fn expected() -> Profile {
    let options = SamplerOptions {
        rate: 0.5,
        seed: 7,
        slot_refs: 100,
        line_size: LineSize::new(32).unwrap(),
        include_instructions: true,
    };
    let reuse = |position, distance| Sample {
        position,
        next: NextUse::Reuse { distance },
    };
    let dangling = |position, age| Sample {
        position,
        next: NextUse::Dangling { age },
    };
    let samples = vec![
        reuse(1, 0),
        reuse(2, 200),
        reuse(130, 869),
        dangling(131, 869),
        reuse(500, 3),
        dangling(999, 1),
        dangling(1000, 0),
    ];
    Profile::new(options, 1000, samples)
        .unwrap()
        .with_source("fixture: hand-made samples, format v1")
}

#[test]
fn fixture_decodes_exactly() {
    let bytes = std::fs::read(fixture()).unwrap();
    assert_eq!(
        VERSION, 1,
        "a new version keeps this test and adds its own fixture"
    );
    assert!(Profile::looks_like(&bytes));
    assert_eq!(bytes[..8], MAGIC);
    assert_eq!(bytes[8..12], 1u32.to_le_bytes());
    let p = Profile::read(&bytes[..], &Source::File(fixture())).unwrap();
    assert_eq!(p, expected());
    assert_eq!((p.reuses(), p.dangling(), p.slot_count()), (4, 3, 10));
    // 68-byte header, the description, 7 samples in 19 bytes, the CRC.
    assert_eq!(bytes.len(), 68 + p.source().len() + 19 + 4);
}

#[test]
fn writer_still_writes_the_fixture() {
    let mut out = Vec::new();
    expected().write(&mut out, &Source::Memory).unwrap();
    assert_eq!(out, std::fs::read(fixture()).unwrap());
}

#[test]
#[ignore = "writes the fixture; run only for a new format version"]
fn write_fixture() {
    let file = std::fs::File::create(fixture()).unwrap();
    expected().write(file, &Source::File(fixture())).unwrap();
}
