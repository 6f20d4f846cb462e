//! `cachescope record` on its own Valgrind tool, end to end: programs that fail, crash, fork,
//! exec or kill Valgrind itself, the fallback to lackey, and `simulate --cachegrind` on the
//! tool's recording against Cachegrind. Skips with a printed reason where Valgrind, a C
//! compiler or the tool are missing.

use std::path::Path;
use std::process::{Command, Output};

use assert_cmd::cargo::cargo_bin_cmd;
use cachescope::attribution::events::sidecar_path;

mod common;
use common::{compile_c, tool_or_skip, tools_or_skip};

/// `cachescope record --backend tool EXTRA… -o TRACE -- COMMAND…` (EXTRA's own backend where
/// it names one), whatever it exits with.
fn record(extra: &[&str], trace: &Path, command: &[&std::ffi::OsStr]) -> Output {
    let tool: &[&str] = if extra.contains(&"--backend") {
        &[]
    } else {
        &["--backend", "tool"]
    };
    let args: Vec<&str> = tool.iter().chain(extra).copied().collect();
    cachescope_testkit::record(common::bin(), &args, trace, command)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `stats --json` of a trace.
fn stats(trace: &Path) -> serde_json::Value {
    let out = cargo_bin_cmd!("cachescope")
        .args(["stats", "--json"])
        .arg(trace)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_missing_program_is_named() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.cst");
    let out = record(&[], &trace, &["/nonexistent/prog".as_ref()]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("/nonexistent/prog"), "{err}");
    assert!(err.contains("no trace"), "{err}");
    assert!(!trace.exists() && !sidecar_path(&trace).exists());
}

#[test]
fn failing_and_crashing_programs_leave_complete_traces() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, src, says) in [
        (
            "exit3",
            "int main(void){ return 3; }",
            "exited with status 3",
        ),
        (
            "segv",
            "#include <signal.h>\nint main(void){ raise(SIGSEGV); return 0; }",
            "SIGSEGV",
        ),
    ] {
        let exe = compile_c(dir.path(), name, src, &["-O1"]);
        let trace = dir.path().join(format!("{name}.cst"));
        let out = record(&[], &trace, &[exe.as_os_str()]);
        // Written, but the program failed: exit status 3 (docs/reliability.md).
        assert_eq!(out.status.code(), Some(3));
        let err = stderr(&out);
        assert!(err.contains(says), "{err}");
        assert!(
            err.contains("the results cover its references until then"),
            "{err}"
        );
        assert!(stats(&trace)["instructions"].as_u64().unwrap() > 10_000);
    }
}

#[test]
fn valgrind_killed_leaves_no_trace_that_looks_complete() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Under Valgrind the program is the Valgrind process; a SIGKILL from another process (a
    // forked child here) stops the tool before it writes its end record.
    let exe = compile_c(
        dir.path(),
        "killed",
        "#include <signal.h>\n#include <unistd.h>\nint main(void){ pid_t p = getpid(); \
         if (fork() == 0) { kill(p, SIGKILL); _exit(0); } for (;;) sleep(1); }",
        &["-O1"],
    );
    let trace = dir.path().join("k.cst");
    let out = record(&[], &trace, &[exe.as_os_str()]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("without its end record"), "{err}");
    assert!(!trace.exists(), "a cut trace was left as if complete");
    assert!(!sidecar_path(&trace).exists());
}

#[test]
fn a_forked_child_never_writes_into_the_parents_stream() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(
        dir.path(),
        "fork",
        r#"#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
static long a[100000];
int main(void) {
    pid_t p = fork();
    if (p == 0) { for (int r = 0; r < 20; r++) for (int i = 0; i < 100000; i++) a[i] += i; _exit(0); }
    long s = 0;
    for (int i = 0; i < 100000; i++) s += a[i];
    waitpid(p, 0, 0);
    printf("%ld\n", s);
    return 0;
}"#,
        &["-O1"],
    );
    let trace = dir.path().join("f.cst");
    let out = record(&[], &trace, &[exe.as_os_str()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let s = stats(&trace);
    // The child's 2 M modifies of `a` are not there; the parent's 100,000 loads of it are.
    assert!(s["modifies"].as_u64().unwrap() < 100_000, "{s}");
    assert!(s["loads"].as_u64().unwrap() > 100_000, "{s}");
}

#[test]
fn an_exec_ends_the_stream_with_a_note() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("sh.cst");
    let out = record(
        &[],
        &trace,
        &["sh".as_ref(), "-c".as_ref(), "exec true".as_ref()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--trace-children"),
        "{}",
        stderr(&out)
    );
    assert!(stats(&trace)["instructions"].as_u64().unwrap() > 10_000);
}

#[test]
fn without_the_tool_record_falls_back_to_lackey_and_says_why() {
    if !tools_or_skip(&["valgrind"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.cst");
    let out = cargo_bin_cmd!("cachescope")
        .env("CACHESCOPE_VALGRIND_LIB", dir.path())
        .args(["record", "--no-events", "-o"])
        .arg(&trace)
        .args(["--", "true"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("recording with lackey"), "{err}");
    assert!(err.contains("CACHESCOPE_VALGRIND_LIB"), "{err}");
    assert!(stats(&trace)["instructions"].as_u64().unwrap() > 10_000);
    // Asked for by name, the tool does not fall back: an error saying why, and no trace.
    let named = dir.path().join("named.cst");
    let out = cargo_bin_cmd!("cachescope")
        .env("CACHESCOPE_VALGRIND_LIB", dir.path())
        .args(["record", "--backend", "tool", "-o"])
        .arg(&named)
        .args(["--", "true"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("--backend tool: cachescope's Valgrind tool cannot run"),
        "{err}"
    );
    assert!(err.contains("CACHESCOPE_VALGRIND_LIB"), "{err}");
    assert!(!named.exists());
}

fn run_json(args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let out = cargo_bin_cmd!("cachescope").args(args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout is not JSON: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn analyses_run_on_a_running_program_as_on_its_saved_trace() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(
        dir.path(),
        "loop",
        r#"#include <stdio.h>
#include <stdlib.h>
int main(void) {
    long *a = malloc(1 << 20);
    for (int r = 0; r < 3; r++) for (int i = 0; i < (1 << 17); i += 3) a[i] += i;
    printf("program output %ld\n", a[300]);
    return 0;
}"#,
        &["-O1"],
    );
    let saved = dir.path().join("saved.cst");
    let e = exe.as_os_str();
    let s = |x: &str| std::ffi::OsString::from(x);
    // The program's output goes to stderr: stdout holds the JSON alone.
    let live = run_json(&[
        &s("mrc"),
        &s("--backend"),
        &s("tool"),
        &s("--method"),
        &s("exact"),
        &s("--json"),
        &s("--save"),
        saved.as_os_str(),
        &s("--"),
        e,
    ]);
    let from_file = run_json(&[
        &s("mrc"),
        &s("--method"),
        &s("exact"),
        &s("--json"),
        saved.as_os_str(),
    ]);
    assert_eq!(live["points"], from_file["points"]);
    let live_stats = run_json(&[
        &s("stats"),
        &s("--backend"),
        &s("tool"),
        &s("--json"),
        &s("--"),
        e,
    ]);
    let file_stats = stats(&saved);
    for k in [
        "loads",
        "stores",
        "modifies",
        "instructions",
        "distinct_lines",
    ] {
        // Two runs of a deterministic program under the same tool: the same counts.
        assert_eq!(live_stats[k], file_stats[k], "{k}");
    }
    // phases reads its input twice: the program runs once, its trace kept for the second pass.
    let out = cargo_bin_cmd!("cachescope")
        .args(["phases", "--json", "--interval", "20000", "--"])
        .arg(&exe)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out).matches("program output").count(), 1);
}

#[test]
fn trace_children_follows_exec_but_never_forked_children() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // 300,000 modifies of `a`: easy to tell in a trace.
    let exe = compile_c(
        dir.path(),
        "busy",
        "static long a[100000];\nint main(void){ for (int r = 0; r < 3; r++) \
         for (int i = 0; i < 100000; i++) a[i] += i; return a[5] == 15 ? 0 : 2; }",
        &["-O1"],
    );
    let modifies = |trace: &Path| stats(trace)["modifies"].as_u64().unwrap();
    let exec = format!("exec {}", exe.display());
    let followed = dir.path().join("exec.cst");
    let out = record(
        &["--trace-children"],
        &followed,
        &["sh".as_ref(), "-c".as_ref(), exec.as_ref()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(modifies(&followed) >= 300_000, "{}", modifies(&followed));
    // Without the flag the trace stops at the exec.
    let stopped = dir.path().join("stop.cst");
    let out = record(
        &[],
        &stopped,
        &["sh".as_ref(), "-c".as_ref(), exec.as_ref()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(modifies(&stopped) < 300_000);
    // A child the shell forks (then execs) is never written, even with the flag.
    let forked = dir.path().join("fork.cst");
    let script = format!("{}; true", exe.display());
    let out = record(
        &["--trace-children"],
        &forked,
        &["sh".as_ref(), "-c".as_ref(), script.as_ref()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(modifies(&forked) < 300_000, "{}", modifies(&forked));
    // lackey cannot keep children apart.
    let out = record(
        &["--trace-children", "--backend", "lackey"],
        &dir.path().join("l.cst"),
        &[exe.as_os_str()],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("needs the tool backend"),
        "{}",
        stderr(&out)
    );
}

/// A signal cachescope was started ignoring (SIGHUP under nohup, SIGINT in a script's
/// background job) stays ignored in the recorded program: cachescope's own Ctrl-C handling
/// must not hand the program a default disposition it would not otherwise have.
#[test]
fn ignored_signals_stay_ignored_in_the_recorded_program() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = compile_c(
        dir.path(),
        "disposition",
        r#"#include <signal.h>
#include <stdio.h>
int main(void) {
    struct sigaction hup, term;
    sigaction(SIGHUP, 0, &hup);
    sigaction(SIGTERM, 0, &term);
    printf("hup %s term %s\n", hup.sa_handler == SIG_IGN ? "ignored" : "default",
           term.sa_handler == SIG_IGN ? "ignored" : "default");
    return 0;
}"#,
        &["-O1"],
    );
    let trace = dir.path().join("t.cst");
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"trap '' HUP; exec "$0" record -q --backend tool --no-events -o "$1" -- "$2""#)
        .arg(assert_cmd::cargo::cargo_bin!("cachescope"))
        .arg(&trace)
        .arg(&exe)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "hup ignored term default\n"
    );
}

/// The recorded program's environment is cachescope's, without the variables cachescope
/// hands Valgrind (VALGRIND_LIB) or reads itself (CACHESCOPE_*), in a followed child too.
#[test]
fn the_program_sees_no_recorder_variable() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let env_of = |extra: &[&str], command: &[&str]| {
        let out = cargo_bin_cmd!("cachescope")
            .env("CACHESCOPE_MARKER", "1")
            .env("CS_KEPT", "yes")
            .args(["record", "--backend", "tool"])
            .args(extra)
            .arg("-o")
            .arg(dir.path().join("env.cst"))
            .arg("--")
            .args(command)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for env in [
        env_of(&[], &["/usr/bin/env"]),
        env_of(&["--trace-children"], &["sh", "-c", "exec /usr/bin/env"]),
    ] {
        let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
        assert!(names.contains(&"CS_KEPT"), "{env}");
        assert!(
            names.contains(&"LD_PRELOAD"),
            "Valgrind's own preload: {env}"
        );
        assert!(
            !names
                .iter()
                .any(|n| *n == "VALGRIND_LIB" || n.starts_with("CACHESCOPE_")),
            "{env}"
        );
    }
}
