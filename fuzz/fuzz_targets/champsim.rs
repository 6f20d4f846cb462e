#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| cachescope::fuzzing::run("champsim", data));
