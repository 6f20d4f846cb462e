//! Heap sites told apart only by their call instruction: a helper without debug information
//! that allocates for two calls in `main` gives two sites of one name, `make-main#1` and
//! `make-main#2`, with no pointer and no `file:line` to name them by. `attribute --fields`
//! gives each its `call`, `NAME@0xPC,0xPC` (the call instructions its name comes from); a `whatif` change naming one that way moves that site's
//! references and no other's, and `advise` proposes changes on them instead of listing them in
//! a note. Skips (saying why) where cachescope's Valgrind tool is missing.

mod common;

use common::{bin, compile_c, json, structure, tool_or_skip};

const SOURCE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#define N 65536
struct pair { double used; double unused; };
__attribute__((noinline)) struct pair *make(long n) { return malloc(n * sizeof(struct pair)); }
int main(void) {
    struct pair *a = make(N);
    struct pair *b = make(N);
    for (long i = 0; i < N; i++) { a[i].used = i; a[i].unused = 0; b[i].used = -i; b[i].unused = 0; }
    double s = 0;
    for (int r = 0; r < 4; r++)
        for (long i = 0; i < N; i++) s += a[i].used;
    for (long i = 0; i < N; i++) s += b[i].used;
    printf("%f\n", s);
    return 0;
}
"#;

#[test]
fn numbered_heap_sites_are_named_by_their_call_instruction() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(dir.path(), "sites", SOURCE, &["-O1"]);
    let trace = dir.path().join("sites.cst");
    cachescope_testkit::record_ok(bin(), &["-q", "--program-output", "null"], &trace, &[&exe]);
    let t = trace.to_str().unwrap();
    let report = json(&["attribute", t, "--fields", "--json"]);
    let (one, two) = (
        structure(&report, "make-main#1"),
        structure(&report, "make-main#2"),
    );
    let (c1, c2) = (one["call"].as_str().unwrap(), two["call"].as_str().unwrap());
    assert!(
        c1.starts_with("make-main@0x") && c2.starts_with("make-main@0x"),
        "{c1} {c2}"
    );
    assert_ne!(c1, c2);
    // Padding one site's 16-byte elements to 32 moves exactly its references.
    let change = format!("pad:{c1}@16=32");
    let v = json(&[
        "whatif", t, "--json", "--change", &change, "--cache", "32K,8,64",
    ]);
    let applied = &v["applied"][0];
    // The padded blocks grow, so they move to a region of their own: every reference of that
    // site moves, and none of the other's.
    assert_eq!(applied["moved"], one["refs"], "{v:#}");
    // advise no longer leaves them to a note.
    let advice = json(&["advise", t, "--json"]);
    let notes = advice["notes"].to_string();
    assert!(!notes.contains("make-main#1"), "{notes}");
    assert!(advice["findings"].to_string().contains(c1), "{advice:#}");
}
