//! Trusting cachescope as a user (issue 40): a signal to cachescope's pid alone while a program
//! runs under it stops the program and what it forked and leaves nothing behind; an error
//! says its cause once; a crashing program's fault is shown and one exit status says the
//! program failed; the live-program flags mean the same on every command; a failed report
//! leaves no directory it created; random bytes are no trace; and an event log is refused
//! beside another recording's trace. Tests that need Valgrind, a C compiler or cachescope's
//! tool skip with a printed reason.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin;

mod common;
use common::{compile_c, cs, tool_or_skip, tools_or_skip, with_default_signals};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The running processes (not zombies) whose command line holds `needle`: the program under
/// Valgrind, whose command line names it.
fn running_with(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s[s.rfind(')').unwrap_or(0) + 1..]
                .trim_start()
                .starts_with('Z')
        });
        if !zombie
            && String::from_utf8_lossy(&cmdline).contains(needle)
            && pid != std::process::id()
        {
            found.push(pid);
        }
    }
    found
}

/// How long a process may take to start or stop before the test calls it a hang: long, so that
/// a loaded machine and a debug build never fail a test that checks a mechanism.
const HANG: Duration = Duration::from_secs(120);

/// Polls `done` every 20 ms for at most `limit`; whether it came true.
fn within(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// A program that forks, then both processes spin: only a kill stops either.
const SPIN: &str = "#include <unistd.h>\nint main(void) { volatile unsigned long x = 0; \
                    fork(); for (;;) x++; }";

/// Where a signal goes.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// cachescope's pid alone (`kill -TERM PID`).
    Pid(&'static str, i32),
    /// cachescope's process group, as a terminal's Ctrl-C.
    Group,
}

/// Runs `cachescope ARGS -- spin` in `dir`, waits until the program and its forked child run,
/// sends the signal, and checks: the exit status, no process of the program left, nothing left
/// in `dir` but the program, no temporary directory of the recording.
fn stopped_by_a_signal(dir: &Path, spin: &Path, args: &[&str], target: Target) {
    let mut command = Command::new(cargo_bin("cachescope"));
    with_default_signals(&mut command)
        .current_dir(dir)
        .args(args)
        .arg("--")
        .arg(spin)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if matches!(target, Target::Group) {
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
    }
    let mut child: Child = command.spawn().unwrap();
    let needle = spin.to_str().unwrap();
    // cachescope's command line names the program too: the program's processes are the others.
    let cachescope = child.id();
    let program = || {
        let mut pids = running_with(needle);
        pids.retain(|&p| p != cachescope);
        pids
    };
    let started = within(HANG, || program().len() >= 2);
    assert!(started, "{args:?}: the program and its fork never ran");
    // Let the output start: the temporary files exist when the signal lands.
    std::thread::sleep(Duration::from_millis(500));
    let (pid, number) = match target {
        Target::Pid(name, number) => (child.id() as i32, (name, number)),
        Target::Group => (-(child.id() as i32), ("INT", 2)),
    };
    let ok = Command::new("kill")
        .arg(format!("-{}", number.0))
        .arg("--")
        .arg(pid.to_string())
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let mut status = None;
    // A hang guard, not a speed limit: what is checked is the status and the message.
    let exited = within(HANG, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    if !exited {
        let _ = child.kill();
        panic!("{args:?} {target:?}: cachescope still runs {HANG:?} after the signal: a hang");
    }
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(
        status.unwrap().code(),
        Some(128 + number.1),
        "{args:?} {target:?}: {err}"
    );
    assert!(err.contains("interrupted"), "{args:?} {target:?}: {err}");
    // Killed: gone, or zombies until their new parent reaps them.
    let gone = within(HANG, || program().is_empty());
    assert!(
        gone,
        "{args:?} {target:?}: the program still runs: {:?}",
        program()
    );
    assert_eq!(files_in(dir), ["spin", "spin.c"], "{args:?} {target:?}");
    let prefix = format!("cachescope-record-{}-", child.id());
    let left: Vec<String> = files_in(&std::env::temp_dir())
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "{args:?} {target:?}: {left:?} left");
}

#[test]
fn a_signal_to_cachescope_alone_stops_the_program_and_leaves_nothing() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spin = compile_c(dir.path(), "spin", SPIN, &["-g", "-O0"]);
    let commands: [&[&str]; 4] = [
        &["record", "-q", "-o", "spin.cst"],
        &["report", "-q", "-o", "rep"],
        &["mrc", "-q", "--sizes", "4K"],
        &["mrc", "-q", "--sizes", "4K", "--method", "statstack"],
    ];
    let signals = [
        Target::Pid("INT", 2),
        Target::Pid("TERM", 15),
        Target::Pid("HUP", 1),
    ];
    for (i, args) in commands.iter().enumerate() {
        // Every signal on record; one each on the others (the stopping is the same code).
        for target in if i == 0 {
            &signals[..]
        } else {
            &signals[i - 1..i]
        } {
            stopped_by_a_signal(dir.path(), &spin, args, *target);
        }
    }
    // A terminal's Ctrl-C reaches the whole group: as clean.
    stopped_by_a_signal(dir.path(), &spin, commands[0], Target::Group);
}

#[test]
fn the_signal_helper_undoes_an_inherited_ignore() {
    use std::os::unix::process::CommandExt;
    // As under `nohup … &`: SIGINT ignored before the helper runs.
    let mut command = Command::new("grep");
    #[allow(unsafe_code)]
    // SAFETY: signal(2) is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = with_default_signals(&mut command)
        .args(["SigIgn", "/proc/self/status"])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout);
    let mask = u64::from_str_radix(line.trim().trim_start_matches("SigIgn:").trim(), 16).unwrap();
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        assert_eq!(mask & (1 << (sig - 1)), 0, "signal {sig} ignored: {line}");
    }
}

/// `text` holds `part` exactly once.
fn once(text: &str, part: &str) {
    assert_eq!(text.matches(part).count(), 1, "{part:?} in {text:?}");
}

#[test]
fn an_error_says_its_cause_once_naming_the_users_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = cs()
        .current_dir(d)
        .args(["stats", "missing.cst"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    once(&stderr(&out), "No such file or directory");
    once(&stderr(&out), "missing.cst");
    // --save's file is created before the program runs, under the name the user gave.
    if tools_or_skip(&["valgrind"]) {
        let out = cs()
            .current_dir(d)
            .args(["mrc", "--save", "nodir/x.cst", "--", "/bin/true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        once(&err, "No such file or directory");
        assert!(
            err.contains("nodir/x.cst") && !err.contains("partial"),
            "{err}"
        );
    }
    // A report directory below a file.
    std::fs::write(d.join("afile"), "").unwrap();
    let out = cs()
        .current_dir(d)
        .args([
            "report",
            "--workload",
            "zipf",
            "--refs",
            "1000",
            "-q",
            "-o",
            "afile/r",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    once(&stderr(&out), "Not a directory");
    // A full disk, as /dev/full gives it.
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    match full {
        Ok(full) => {
            let out = Command::new(cargo_bin("cachescope"))
                .args([
                    "generate",
                    "zipf",
                    "--refs",
                    "100000",
                    "--to",
                    "plain-hex",
                    "-o",
                    "-",
                ])
                .stdout(full)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(1));
            once(&stderr(&out), "No space left on device");
        }
        Err(e) => common::skip(
            "dev-full",
            &format!("no full disk to write to: /dev/full: {e}"),
        ),
    }
    // A directory that cannot be written (not for root, whom permissions do not stop).
    let ro = d.join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    if std::fs::write(ro.join("probe"), "").is_ok() {
        common::skip(
            "non-root",
            "no read-only directory: permissions do not stop this user (root)",
        );
    } else {
        let out = cs()
            .current_dir(d)
            .args([
                "report",
                "--workload",
                "zipf",
                "--refs",
                "1000",
                "-q",
                "-o",
                "ro/r",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        once(&stderr(&out), "Permission denied");
    }
}

#[test]
fn a_crash_is_shown_and_every_command_exits_3_with_its_results() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let segv = compile_c(
        d,
        "segv",
        "#include <stdio.h>\nint main(void) {\n  int *p = 0;\n  puts(\"about to crash\");\n  \
         fflush(stdout);\n  *p = 1;\n  return 0;\n}\n",
        &["-g", "-O0"],
    );
    let commands: [&[&str]; 5] = [
        &["record", "-o", "s.cst"],
        &["mrc", "--sizes", "4K"],
        &["mrc", "--sizes", "4K", "--method", "statstack"],
        &["stats", "--json"],
        &["report", "-q", "-o", "rep"],
    ];
    for args in commands {
        let out = cs()
            .current_dir(d)
            .args(args)
            .arg("--")
            .arg(&segv)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        for says in [
            "was killed by signal 11 (SIGSEGV)",
            "Access not within mapped region at address 0x0",
            "main (segv.c:6)",
        ] {
            once(&err, says);
        }
    }
    // The results for the references made are there.
    assert!(d.join("s.cst").exists() && d.join("rep/report.html").exists());
    // A program that exits non-zero: the same status, its own words.
    let out = cs()
        .current_dir(d)
        .args(["stats", "-q", "--", "sh", "-c", "exit 7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    once(&stderr(&out), "exited with status 7");
}

#[test]
fn every_command_that_runs_a_program_takes_the_same_flags() {
    for command in [
        "record",
        "report",
        "stats",
        "mrc",
        "sample",
        "footprint",
        "hotl",
        "simulate",
        "l2",
        "phases",
        "attribute",
    ] {
        let out = cs().args([command, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        for flag in [
            "--save",
            "--backend",
            "--trace-children",
            "--no-events",
            "--program-output",
        ] {
            assert!(help.contains(flag), "`{command} --help` lacks {flag}");
        }
    }
    // The same rule everywhere: lackey cannot follow execs.
    let dir = tempfile::tempdir().unwrap();
    for command in ["record", "mrc", "report"] {
        let out = cs()
            .current_dir(dir.path())
            .args([
                command,
                "--backend",
                "lackey",
                "--trace-children",
                "--",
                "true",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert!(stderr(&out).contains("needs the tool backend"), "{command}");
    }
    assert!(
        files_in(dir.path()).is_empty(),
        "{:?}",
        files_in(dir.path())
    );
}

#[test]
fn the_programs_output_goes_where_it_is_told() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |args: &[&str]| {
        cs().current_dir(d)
            .args(args)
            .args(["--", "/bin/echo", "hello from the program"])
            .output()
            .unwrap()
    };
    // A line of its own: the command line, which holds the words too, is in the JSON's source.
    let said = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes)
            .lines()
            .any(|l| l == "hello from the program")
    };
    // An analysis: stderr by default, so stdout is the JSON alone.
    let out = run(&["mrc", "--sizes", "4K", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("stdout is the JSON alone");
    assert!(said(&out.stderr));
    let out = run(&["stats", "--json", "--program-output", "null"]);
    assert!(!said(&out.stdout) && !said(&out.stderr));
    let out = run(&[
        "report",
        "-q",
        "-o",
        "rep",
        "--json",
        "--program-output",
        "prog.out",
    ]);
    serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("stdout is the JSON alone");
    assert!(said(&std::fs::read(d.join("prog.out")).unwrap()));
    // record into a file leaves the program the terminal's stdout; into stdout, not.
    let out = run(&["record", "-q", "-o", "t.cst"]);
    assert!(said(&out.stdout));
    let out = run(&["record", "-q", "-o", "-"]);
    assert!(!said(&out.stdout) && said(&out.stderr));
    assert!(out.stdout.starts_with(&cachescope::trace::native::MAGIC));
}

#[test]
fn a_wrapper_that_execs_is_noted_naming_trace_children() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("wrapper");
    std::fs::write(&wrapper, "#!/bin/sh\nexec /bin/true \"$@\"\n").unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    for args in [
        &["stats"][..],
        &["record", "-o", "w.cst"],
        &["mrc", "--method", "statstack"],
    ] {
        let out = cs()
            .current_dir(dir.path())
            .args(args)
            .arg("--")
            .arg(&wrapper)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("give --trace-children to follow it"),
            "{args:?}: {}",
            stderr(&out)
        );
        // Followed, nothing to say.
        let out = cs()
            .current_dir(dir.path())
            .args(args)
            .arg("--trace-children")
            .arg("--")
            .arg(&wrapper)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(
            !stderr(&out).contains("--trace-children"),
            "{}",
            stderr(&out)
        );
    }
}

/// A command that reads a running program twice (`phases -- PROGRAM`) keeps its trace in a
/// temporary file between the reads, and removes it when it ends.
#[test]
fn a_second_reads_temporary_trace_is_removed() {
    if !tools_or_skip(&["valgrind"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = cs()
        .env("TMPDIR", tmp.path())
        .args(["phases", "-q", "--", "/bin/ls", "/"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(files_in(tmp.path()), Vec::<String>::new());
}

/// A recording made for one command's own use, in a file removed at its end, is not named:
/// `report --backend lackey -- PROGRAM` and `attribute -- PROGRAM` without `--save` say what
/// they recorded "for the analysis"; with `--save` they name the file kept.
#[test]
fn a_temporary_recording_is_not_named() {
    if !tools_or_skip(&["valgrind"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |args: &[&str]| {
        let out = cs().current_dir(d).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stderr(&out)
    };
    let lackey = [
        "report",
        "--backend",
        "lackey",
        "-o",
        "r",
        "--",
        "/bin/true",
    ];
    let err = run(&lackey);
    assert!(
        err.contains("recorded <recording of /bin/true> for the analysis"),
        "{err}"
    );
    assert!(!err.contains("cachescope-report-"), "{err}");
    let err = run(&["attribute", "--backend", "lackey", "--", "/bin/true"]);
    assert!(err.contains("for the analysis"), "{err}");
    assert!(!err.contains("program.cst"), "{err}");
    let err = run(&[
        "report",
        "--backend",
        "lackey",
        "--save",
        "t.cst",
        "-o",
        "s",
        "--",
        "/bin/true",
    ]);
    assert!(err.contains("into t.cst"), "{err}");
}

#[test]
fn a_failed_report_leaves_no_directory_it_created() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = cs()
        .current_dir(d)
        .args([
            "report",
            "-q",
            "-o",
            "new/deeper",
            "--",
            "/nonexistent/program",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!d.join("new").exists(), "{:?}", files_in(d));
    // A directory that was there stays, with what it held.
    std::fs::create_dir(d.join("old")).unwrap();
    std::fs::write(d.join("old/keep"), "").unwrap();
    let out = cs()
        .current_dir(d)
        .args(["report", "-q", "-o", "old", "--", "/nonexistent/program"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(files_in(&d.join("old")), ["keep"]);
}

#[test]
fn random_bytes_are_no_trace_unless_read_as_binary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("random.bin");
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let bytes: Vec<u8> = (0..250)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_le_bytes()
        })
        .collect();
    std::fs::write(&path, bytes).unwrap();
    let out = cs().arg("stats").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("unknown trace format"), "{err}");
    assert!(err.contains("binary data"), "{err}");
    let v = common::stats_json(&["--format", "binary", path.to_str().unwrap()]);
    assert_eq!(v["refs"], 250);
}

#[test]
fn an_event_log_is_refused_beside_another_recordings_trace() {
    if !tool_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, program) in [("a", "/bin/true"), ("b", "/bin/echo")] {
        let out = cs()
            .current_dir(d)
            .args(["record", "-q", "-o", &format!("{name}.cst"), "--", program])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let attribute = |trace: &str, extra: &[&str]| {
        cs().current_dir(d)
            .args(["attribute", "--no-cost", "--no-mrc", trace])
            .args(extra)
            .output()
            .unwrap()
    };
    // Its own log: no word about it.
    let out = attribute("a.cst", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("run id"), "{}", stderr(&out));
    // Another's: refused, naming both.
    let out = attribute("b.cst", &["--events", "a.cst.events"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("a.cst.events belongs to another recording than b.cst"),
        "{err}"
    );
    // report finds TRACE.events beside the trace: the same check.
    std::fs::copy(d.join("a.cst.events"), d.join("b.cst.events")).unwrap();
    let out = cs()
        .current_dir(d)
        .args(["report", "-q", "b.cst", "-o", "rep"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("belongs to another recording"));
    // A trace without a run id (a generated one, as older recordings): a warning only.
    common::generate(d, "g.cst", &["zipf", "--refs", "1000"]);
    std::fs::copy(d.join("a.cst.events"), d.join("g.cst.events")).unwrap();
    let out = attribute("g.cst", &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the trace has no run id"),
        "{}",
        stderr(&out)
    );
}
