//! Programs analysed as they run, and `--sampled`: the note an exact `report -- PROGRAM`
//! prints when it runs long (how long `--sampled` would have taken). Skips, saying so (see
//! cachescope-testkit), where Valgrind, a C compiler or the tool are missing.

mod common;
use common::{compile_c, cs, tool_or_skip};

/// A loop over 2 MB, long enough to cross several batches.
const PROGRAM: &str = r#"#include <stdio.h>
static long a[250000];
int main(void) {
    long s = 0;
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < 250000; i += 1 + r) { a[(i * 7) % 250000] += i; s += a[i]; }
    printf("%ld\n", s);
    return 0;
}"#;

#[test]
fn a_long_exact_report_says_once_how_long_sampled_would_take() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "kernel", PROGRAM, &["-O1"]);
    let report = |after: &str| {
        let out = cs()
            .env("CACHESCOPE_SAMPLED_NOTE_AFTER", after)
            .args(["report", "-o"])
            .arg(dir.path().join(format!("r{after}")))
            .arg("--")
            .arg(&exe)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // "After a minute" made 0 s: the note comes with the first batch, once.
    let err = report("0");
    let said = "`report --sampled` would have got as far in about";
    assert_eq!(err.matches(said).count(), 1, "{err}");
    assert!(err.contains("of CPU"), "{err}");
    // The default minute: this run is over long before.
    let err = report("60");
    assert!(!err.contains(said), "{err}");
}
