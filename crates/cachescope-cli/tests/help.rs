//! `--help` as a user reads it: each flag under a heading that says what it is for, the
//! runtime `--threads` default said once; and the renamed flags (one spelling per meaning)
//! still accepting their old spellings with the same output.

use std::collections::BTreeMap;

mod common;
use common::cs;

/// `cachescope COMMAND --help` as heading → the flags and arguments listed under it.
fn sections(command: &str) -> BTreeMap<String, Vec<String>> {
    let out = cs().args([command, "--help"]).assert().success();
    let help = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let mut sections = BTreeMap::new();
    let mut current = String::new();
    for line in help.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            current = line.trim_end_matches(':').to_string();
        } else {
            // Flags sit 2 or 6 columns in, their descriptions (and `[default: …]`) 10.
            let item = line.trim_start();
            let indent = line.len() - item.len();
            if (2..=6).contains(&indent) && (item.starts_with('-') || item.starts_with('[')) {
                // `-o, --output <DIR>` is listed by its long name.
                let mut words = item.split(' ');
                let first = words.next().unwrap();
                let name = match first.strip_suffix(',') {
                    Some(_) => words.next().unwrap(),
                    None => first,
                }
                .to_string();
                sections
                    .entry(current.clone())
                    .or_insert_with(Vec::new)
                    .push(name);
            }
        }
    }
    sections
}

fn heading_of(sections: &BTreeMap<String, Vec<String>>, flag: &str) -> String {
    sections
        .iter()
        .find(|(_, flags)| flags.iter().any(|f| f == flag))
        .map(|(h, _)| h.clone())
        .unwrap_or_else(|| panic!("{flag} is in no section: {sections:?}"))
}

#[test]
fn help_headings_name_what_each_flag_is_for() {
    let expect: &[(&str, &[(&str, &str)])] = &[
        (
            "mrc",
            &[
                ("--method", "Analysis"),
                ("--policy", "Analysis"),
                ("--rate", "Sampling"),
                ("--sizes", "Cache sizes"),
                ("--json", "Output"),
                ("--threads", "Run"),
                ("--quiet", "Run"),
                ("--format", "Input"),
                ("--seed", "Workload parameters"),
                ("[TRACE]", "Arguments"),
            ],
        ),
        (
            "report",
            &[
                ("[PROGRAM]...", "Arguments"),
                ("--output", "Output"),
                ("--interval", "Report"),
                ("--save", "Running a program (-- PROGRAM ARGS…)"),
            ],
        ),
        (
            "simulate",
            &[
                ("--cache", "Cache"),
                ("--L2", "Cache"),
                ("--3c", "Analysis"),
            ],
        ),
        (
            "attribute",
            &[
                ("--sample-period", "Sampling"),
                ("--events", "Input"),
                ("--cachegrind-out", "Output"),
            ],
        ),
        ("phases", &[("--k", "Analysis"), ("--L2", "Cache")]),
    ];
    for (command, flags) in expect {
        let s = sections(command);
        for (flag, heading) in *flags {
            assert_eq!(heading_of(&s, flag), *heading, "`{command} --help`: {flag}");
        }
        let workload = &s["Workload parameters"];
        assert!(
            workload.iter().all(|f| [
                "--seed",
                "--refs",
                "--lines",
                "--stride",
                "--n",
                "--tile",
                "--zipf-s",
                "--instructions"
            ]
            .contains(&f.as_str())),
            "`{command} --help` workload parameters: {workload:?}"
        );
    }
}

#[test]
fn threads_default_is_said_once() {
    let out = cs().args(["stats", "--help"]).assert().success();
    let help = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let text: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.contains("--threads"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    let text = text.join(" ");
    assert_eq!(text.matches("default").count(), 1, "{text}");
    let cores = std::thread::available_parallelism().unwrap().get();
    assert!(
        text.contains(&format!("every core, {cores} here")),
        "{text}"
    );
}

/// Runs `cachescope ARGS` and returns its JSON with the timings (which differ run to run)
/// taken out.
fn stdout(args: &[&str]) -> serde_json::Value {
    fn untimed(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.retain(|k, _| {
                    !(k.ends_with("_ms") || k.contains("ns_per") || k.contains("measured"))
                });
                m.values_mut().for_each(untimed);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(untimed),
            _ => {}
        }
    }
    let out = cs().args(args).assert().success();
    let mut v = serde_json::from_slice(&out.get_output().stdout).unwrap();
    untimed(&mut v);
    v
}

#[test]
fn old_spellings_are_aliases_with_the_same_output() {
    const ZIPF: [&str; 6] = ["--workload", "zipf", "--lines", "2048", "--refs", "100000"];
    let pairs: &[(&[&str], &[&str])] = &[
        (
            &["l2", "--json", "--l1", "4K", "--l2", "16K,64K"],
            &["l2", "--json", "--l1-size", "4K", "--l2-sizes", "16K,64K"],
        ),
        (
            &[
                "phases",
                "--json",
                "--interval",
                "10000",
                "--l2",
                "64K,8,64",
                "--l1",
                "8K,2,64",
            ],
            &[
                "phases",
                "--json",
                "--interval",
                "10000",
                "--L2",
                "64K,8,64",
                "--L1",
                "8K,2,64",
            ],
        ),
        (
            &["hotl", "--json", "--sizes", "8K,32K", "--sample", "20000"],
            &[
                "hotl",
                "--json",
                "--sizes",
                "8K,32K",
                "--sample-period",
                "20000",
            ],
        ),
        (
            &[
                "attribute",
                "--json",
                "--cache",
                "4K,2,64",
                "--sample",
                "50",
            ],
            &[
                "attribute",
                "--json",
                "--cache",
                "4K,2,64",
                "--sample-period",
                "50",
            ],
        ),
    ];
    for (old, new) in pairs {
        let old_out = stdout(&[&old[..], &ZIPF, &["-q"]].concat());
        let new_out = stdout(&[&new[..], &ZIPF, &["-q"]].concat());
        assert_eq!(old_out, new_out, "{old:?} against {new:?}");
    }
    // A different value through the new spelling changes the output: the flag is read.
    let other = stdout(
        &[
            &["l2", "--json", "--l1-size", "8K", "--l2-sizes", "16K,64K"][..],
            &ZIPF,
            &["-q"],
        ]
        .concat(),
    );
    let base = stdout(
        &[
            &["l2", "--json", "--l1-size", "4K", "--l2-sizes", "16K,64K"][..],
            &ZIPF,
            &["-q"],
        ]
        .concat(),
    );
    assert_ne!(other, base);
}
