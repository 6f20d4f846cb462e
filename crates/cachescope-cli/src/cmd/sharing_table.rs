//! `sharing`'s output: the table (each line, its structures and their fields, the code that
//! writes it, the fix), `--json` the whole analysis, `--csv` one row per listed line.

use std::fmt::Write as _;

use anyhow::Result;
use cachescope::interleave::QuantumUnit;
use cachescope::sharing::{Part, SharedLine, Sharing};
use cachescope::units::{count_of, thousands};

use crate::output::{self, Output};

/// What `sharing` prints: the analysis, the table cut at `--top`.
pub struct Printed {
    pub sharing: Sharing,
    pub top: usize,
}

impl Output for Printed {
    fn json(&self) -> Result<String> {
        output::json(&self.sharing)
    }

    fn csv(&self) -> Result<String> {
        let s = &self.sharing;
        let mut o = String::from("line,kind,structure,threads,writes,coherence_misses,code\n");
        for l in &s.lines {
            let threads: Vec<String> = l.threads.iter().map(|t| t.thread.to_string()).collect();
            let _ = writeln!(
                o,
                "{},{},{},{},{},{},{}",
                l.line,
                l.kind,
                output::csv_field(&l.structure),
                threads.join(" "),
                l.writes,
                l.coherence_misses,
                output::csv_field(&l.code.join(" "))
            );
        }
        Ok(o)
    }

    fn table(&self) -> String {
        let s = &self.sharing;
        let order = match s.quantum_unit {
            None => "in the recorded order".to_owned(),
            Some(QuantumUnit::Cycles) => {
                format!(
                    "in modelled time, slices of {}",
                    count_of(s.quantum, "cycle")
                )
            }
            Some(QuantumUnit::Instructions) => format!(
                "round-robin, {} at a time",
                count_of(s.quantum, "instruction")
            ),
            Some(QuantumUnit::References) => format!(
                "round-robin, {} at a time",
                count_of(s.quantum, "reference")
            ),
        };
        let mut o = format!(
            "# {}: {} on {}, {order}; {} in all\n",
            s.source,
            count_of(u64::from(s.threads), "thread"),
            count_of(u64::from(s.cores), "core"),
            misses(s.coherence_misses)
        );
        for n in &s.notes {
            let _ = writeln!(o, "# {n}");
        }
        let hidden = s.shared_lines.saturating_sub(s.lines.len() as u64);
        if s.lines.is_empty() {
            o += if s.shared_lines == 0 {
                "no line is written by one thread and used by another\n"
            } else {
                "no shared line has a coherence miss in the model\n"
            };
            if hidden > 0 {
                let _ = writeln!(
                    o,
                    "({} without coherence misses: --all lists them)",
                    count_of(hidden, "shared line")
                );
            }
            return o;
        }
        let _ = writeln!(
            o,
            "{:<18} {:<6} {:>10} {:>10}  {:<24} threads (reads/writes, bytes written)",
            "line", "kind", "coherence", "writes", "structure"
        );
        for l in s.lines.iter().take(self.top) {
            line(&mut o, l);
        }
        if s.lines.len() > self.top {
            let _ = writeln!(
                o,
                "… {} more (--top N, or --json)",
                s.lines.len() - self.top
            );
        }
        if hidden > 0 {
            let _ = writeln!(
                o,
                "({} without coherence misses not listed: --all lists them)",
                count_of(hidden, "more shared line")
            );
        }
        o
    }
}

/// `1 coherence miss`, `3 coherence misses`.
fn misses(n: u64) -> String {
    format!(
        "{} coherence miss{}",
        thousands(n),
        if n == 1 { "" } else { "es" }
    )
}

/// One line's rows.
fn line(o: &mut String, l: &SharedLine) {
    let threads: Vec<String> = l
        .threads
        .iter()
        .map(|t| {
            format!(
                "{}: {}/{} [{}]",
                t.thread, t.reads, t.writes, t.written_bytes
            )
        })
        .collect();
    let _ = writeln!(
        o,
        "{:<18} {:<6} {:>10} {:>10}  {:<24} {}",
        l.line,
        l.kind,
        thousands(l.coherence_misses),
        thousands(l.writes),
        l.structure,
        threads.join("; ")
    );
    // The structures the line holds, when it holds several, or the fields of one.
    if l.structures.len() > 1 {
        for p in &l.structures {
            let _ = writeln!(o, "{:<18} {}", "", part(p));
        }
    } else if let Some(p) = l
        .structures
        .first()
        .filter(|p| p.fields.len() > 1 && named(p))
    {
        let _ = writeln!(o, "{:<18} {}", "", fields(p));
    }
    if !l.code.is_empty() {
        // The four busiest writers; --json has them all.
        let code: Vec<&str> = l.code.iter().take(4).map(String::as_str).collect();
        let more = if l.code.len() > 4 { ", …" } else { "" };
        let _ = writeln!(o, "{:<18} written at {}{more}", "", code.join(", "));
    }
    if let Some(fix) = &l.fix {
        let _ = writeln!(o, "{:<18} fix: {fix}", "");
    }
}

/// `slots (bytes 0-15): false sharing by threads 2, 3 — slots[0]: 2 writes; …`.
fn part(p: &Part) -> String {
    let threads: Vec<String> = p.threads.iter().map(u32::to_string).collect();
    let kind = match p.kind.as_str() {
        "true" | "false" => format!("{} sharing by threads {}", p.kind, threads.join(", ")),
        "private" => format!("used by thread {} alone", threads.join(", ")),
        other => format!(
            "{other}, thread{} {}",
            if threads.len() == 1 { "" } else { "s" },
            threads.join(", ")
        ),
    };
    let mut text = format!("{} (bytes {}): {kind}", p.structure, p.bytes);
    if p.fields.len() > 1 && named(p) {
        text.push_str(" — ");
        text.push_str(&fields(p));
    }
    text
}

/// Whether the debug information named some field of `p` (else its bytes are in the threads
/// column already).
fn named(p: &Part) -> bool {
    p.fields.iter().any(|f| !f.name.starts_with("bytes "))
}

/// Each field of a part and its threads: `counters.a: thread 2 writes; counters.b: thread 3
/// writes, 1 reads`.
fn fields(p: &Part) -> String {
    p.fields
        .iter()
        .map(|f| {
            let writers: Vec<String> = f.writers.iter().map(u32::to_string).collect();
            let readers: Vec<String> = f
                .threads
                .iter()
                .filter(|t| !f.writers.contains(t))
                .map(u32::to_string)
                .collect();
            let mut who = Vec::new();
            if !writers.is_empty() {
                who.push(format!(
                    "thread{} {} write{}",
                    if writers.len() == 1 { "" } else { "s" },
                    writers.join(", "),
                    if writers.len() == 1 { "s" } else { "" }
                ));
            }
            if !readers.is_empty() {
                who.push(format!(
                    "{} read{}",
                    readers.join(", "),
                    if readers.len() == 1 { "s" } else { "" }
                ));
            }
            format!("{}: {}", f.name, who.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}
