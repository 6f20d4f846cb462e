//! The one-minute note of an exact `report -- PROGRAM` (issue 57, "Progress and an
//! estimate"): a run still going after a minute says once how long `report --sampled` would
//! have taken to get as far.
//!
//! The exact report is slow because its analyses cannot keep up with the program: Valgrind
//! waits for them (asleep on the ring, using no CPU), so the CPU time Valgrind has used is
//! what running the program so far cost under the recording tool. `--sampled` runs the
//! program under the sampling tool instead, with its analyses on the other core, so it takes
//! about that CPU time times what a sampled report's wall time is over the recording tool's
//! CPU time on the same program ([`SAMPLED_OVER_FULL`]).

use std::time::{Duration, Instant};

use cachescope::record::Recording;

/// How long an exact report runs before it says anything (`CACHESCOPE_SAMPLED_NOTE_AFTER`
/// seconds instead, for tests).
const AFTER: Duration = Duration::from_secs(60);

/// Wall time of `report --sampled -- P` over the program's CPU time under the recording tool:
/// in docs/recording.md's "Where the time goes" (scripts/sampled-speed.sh), the first table's
/// `report --sampled -- P` wall over the third's "recording tool", 4.6 on bzip2 -9 of 2 MB
/// and 5.2 on sqlite3 (2026-12-07; 1.5 when the tool sampled no reuses' windows and the
/// live tool's own cost was not measured); rounded up, so the note errs long.
pub const SAMPLED_OVER_FULL: f64 = 5.5;

/// Whether the note was said, and since when the report reads.
pub struct Estimate {
    start: Instant,
    after: Duration,
    said: bool,
}

impl Estimate {
    pub fn new() -> Estimate {
        let after = std::env::var("CACHESCOPE_SAMPLED_NOTE_AFTER")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .map_or(AFTER, Duration::from_secs_f64);
        Estimate {
            start: Instant::now(),
            after,
            said: false,
        }
    }

    /// After a minute, once: says how long `--sampled` would have taken, from the CPU time
    /// `recording`'s Valgrind has used (nothing where the system does not say).
    pub fn check(&mut self, recording: &Recording) {
        if self.said || self.start.elapsed() < self.after {
            return;
        }
        self.said = true;
        if let Some(cpu) = recording.cpu_time() {
            crate::progress::say(note(self.start.elapsed(), cpu));
        }
    }
}

/// The note, `elapsed` into the report, Valgrind having used `cpu`.
fn note(elapsed: Duration, cpu: Duration) -> String {
    let sampled = cpu.as_secs_f64() * SAMPLED_OVER_FULL;
    format!(
        "cachescope: note: the program still runs after {}; `report --sampled` would have got \
         as far in about {} (Valgrind has run it for {} of CPU; a sampled report takes about \
         {SAMPLED_OVER_FULL}x that: docs/recording.md)",
        minutes(elapsed.as_secs_f64()),
        minutes(sampled.max(1.0)),
        minutes(cpu.as_secs_f64())
    )
}

/// `s` seconds in words: "0.4 s", "45 s", "3 min 20 s".
fn minutes(s: f64) -> String {
    if s < 10.0 {
        return format!("{s:.1} s");
    }
    let s = s.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        _ => format!("{} min {} s", s / 60, s % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_scales_valgrinds_cpu_time() {
        let n = note(Duration::from_secs(61), Duration::from_secs(8));
        assert!(n.contains("after 1 min 1 s"), "{n}");
        assert!(n.contains("in about 44 s"), "{n}");
        assert!(n.contains("8.0 s of CPU"), "{n}");
        assert_eq!(minutes(200.2), "3 min 20 s");
        assert_eq!(minutes(0.42), "0.4 s");
    }
}
