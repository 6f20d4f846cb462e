//! The accuracy tables of docs/accuracy/: every model against its exact reference, on lackey
//! traces of real programs (recorded by scripts/real-traces.sh) and on synthetic workloads.
//!
//! ```text
//! scripts/accuracy.sh                       # records the traces, then runs every table
//! cargo run --release -p cachescope --example accuracy -- TABLE TRACE_DIR OUT.md
//! ```
//! TABLE is `sampling` (StatCache and StatStack), `hotl`, `corun`, `phases`, `l2` or `mini`;
//! a fourth argument names a directory of traces of programs held out from the models' tuning
//! (scripts/heldout-traces.sh), reported apart.

mod common;
mod corun;
mod hotl;
mod l2;
mod mini;
mod phases;
mod sampling;

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (table, dir, out, held_out) = match &args[..] {
        [t, d, o] => (t, d, o, None),
        [t, d, o, h] => (t, d, o, Some(h)),
        _ => {
            eprintln!(
                "usage: accuracy sampling|hotl|corun|phases|l2|mini TRACE_DIR OUT.md [HELD_OUT_DIR]"
            );
            std::process::exit(2);
        }
    };
    let mut inputs = common::inputs(&PathBuf::from(dir));
    // Programs never used to tune a model, after the real ones (before the synthetic).
    if let Some(h) = held_out {
        let at = inputs
            .iter()
            .position(|i| i.kind != "real")
            .unwrap_or(inputs.len());
        inputs.splice(at..at, common::held_out(&PathBuf::from(h)));
    }
    let body = match table.as_str() {
        "sampling" => sampling::table(&inputs),
        "hotl" => hotl::table(&inputs),
        "corun" => corun::table(&inputs),
        "phases" => phases::table(&inputs),
        "l2" => l2::table(&inputs),
        "mini" => mini::table(&inputs),
        t => {
            eprintln!("unknown table {t:?}");
            std::process::exit(2);
        }
    };
    let script = match table.as_str() {
        "l2" => "l2-accuracy.sh".to_string(),
        "mini" => "mini-accuracy.sh".to_string(),
        t => format!("accuracy.sh {t}"),
    };
    let name = script.split(' ').next().unwrap_or_default();
    // The title, then the generated block (scripts/check-generated.py checks its markers).
    let (title, rest) = body.split_once('\n').unwrap_or((&body, ""));
    let mut text = format!(
        "{title}\n\n<!-- {name}: begin -->\nMeasured by `scripts/{script}` on {} (cachescope {}) on {}.\n",
        common::today(),
        env!("CARGO_PKG_VERSION"),
        common::machine()
    );
    text.push_str(rest.trim_start_matches('\n'));
    let end = format!("<!-- {name}: end -->");
    let _ = writeln!(text, "{end}");
    // What a page holds after its block was written by hand (notes, history): kept.
    if let Some((_, notes)) = std::fs::read_to_string(out)
        .unwrap_or_default()
        .split_once(&end)
    {
        let notes = notes.trim_start_matches('\n');
        if !notes.is_empty() {
            text.push('\n');
            text.push_str(notes);
        }
    }
    std::fs::write(out, text).expect("writes the table");
    eprintln!("accuracy: wrote {out}");
}
