//! One file per subcommand; [`drive`] is the one streaming pass they share.

mod attribute;
pub(crate) mod convert;
mod corun;
mod demo;
mod footprint;
mod generate;
mod hotl;
mod l2;
pub(crate) mod mrc;
mod phases;
mod record;
mod sample;
mod simulate;
mod stats;

use anyhow::Result;
use cachescope::analysis::{self, Analysis};
use cachescope::trace::Trace;

use crate::args::{Cli, Command, RunArgs};
use crate::progress::Progress;

/// Dispatches to the subcommand.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Stats(a) => stats::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Generate(a) => generate::run(a),
        Command::Simulate(a) => simulate::run(a),
        Command::Mrc(a) => mrc::run(a),
        Command::Footprint(a) => footprint::run(a),
        Command::Hotl(a) => hotl::run(a),
        Command::Corun(a) => corun::run(a),
        Command::L2(a) => l2::run(a),
        Command::Phases(a) => phases::run(a),
        Command::Record(a) => record::run(a),
        Command::Attribute(a) => attribute::run(a),
        Command::Sample(a) => sample::run(a),
        Command::Demo(a) => demo::run(a),
    }
}

/// Reads `trace` once, feeding every analysis, with a progress bar; then reports what reading
/// noticed (assumptions, skipped lines) on stderr unless quiet.
pub fn drive(trace: &mut Trace, analyses: &mut [&mut dyn Analysis], run: &RunArgs) -> Result<u64> {
    if !run.quiet {
        for note in trace.notes() {
            eprintln!("cachescope: note: {}: {note}", trace.source());
        }
    }
    let progress = Progress::for_trace(trace, run.quiet);
    let probe = trace.progress_probe();
    let result = analysis::run(trace, analyses, run.threads, |n| {
        progress.update(n, probe.get().0)
    });
    progress.finish();
    let n = result?;
    let diag = trace.diagnostics();
    if diag.skipped_lines > 0 && !run.quiet {
        eprintln!(
            "cachescope: warning: skipped {} line(s) that did not parse; the first: {}",
            diag.skipped_lines,
            diag.first_skipped.as_deref().unwrap_or("?")
        );
    }
    if !run.quiet {
        for note in &diag.notes {
            eprintln!("cachescope: note: {}: {note}", trace.source());
        }
    }
    Ok(n)
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_separators() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1000), "1,000");
        assert_eq!(super::thousands(1234567), "1,234,567");
    }
}
