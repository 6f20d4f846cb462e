//! `sharing` names a line of a frame's local after the local (`function:local`), as
//! `attribute` does: examples/threads/stack_shared.c hands two workers one element each of a
//! local array of run()'s frame, and the falsely shared line is `run:counts`, not the
//! undivided `stack`. Skips (saying why) where cachescope's Valgrind tool or a C compiler is
//! missing.

mod common;

use common::{json, record_threads_program, threads_example, tool_or_skip};

#[test]
fn a_shared_line_of_a_frames_local_is_named_after_it() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = record_threads_program(dir.path(), &threads_example("stack_shared"));
    let r = json(&["sharing", trace.to_str().unwrap(), "--json"]);
    let top = &r["lines"][0];
    assert_eq!(top["structure"], "run:counts", "{top}");
    assert_eq!(top["kind"], "false", "{top}");
    let parts = top["structures"].as_array().unwrap();
    assert!(
        parts.iter().any(|p| p["structure"] == "run:counts"),
        "{top}"
    );
    // Without the event log nothing places the frames: the line is `other`, as before.
    std::fs::remove_file(trace.with_extension("cst.events")).unwrap();
    let r = json(&["sharing", trace.to_str().unwrap(), "--json"]);
    assert_ne!(
        r["lines"][0]["structure"], "run:counts",
        "{}",
        r["lines"][0]
    );
}
