//! What a sampled report says where its samples are too few to trust a number: which range of
//! the LRU curve each estimator serves, and a warning (in the notes and in `sampled.warnings`
//! of report.json) for each model whose samples are too few: reuse samples under
//! [`MIN_REUSES`], a sample of fewer than [`MIN_SAMPLE_LINES`] distinct lines, a curve that
//! reads 0 at every size of a stream with reuses, a thread with too few sampled references,
//! a sharing table that holds only a share of the shared lines.

use crate::reuse::Mrc;
use crate::sampling::Profile;

use super::super::model::Report;
use super::curves::{MIN_REUSES_COMBINED, MIN_SAMPLED_LINES};

/// Fewer reuse samples than this and StatCache's and StatStack's curves move in steps of more
/// than a tenth of a percent of the references each.
pub const MIN_REUSES: u64 = 1000;

/// Fewer distinct lines than this in the whole sample and SHARDS, the miniatures and OPT of the
/// sample are a handful of lines' behaviour.
pub const MIN_SAMPLE_LINES: f64 = 64.0;

/// Fewer sampled references of a thread than this and its curve is a handful of lines.
pub const MIN_THREAD_REFS: u64 = 1000;

/// The note naming the estimator of each range of the `combined` LRU curve: StatStack's
/// below `from` (the first size SHARDS serves), SHARDS's from there.
pub(super) fn combined_note(from: Option<u64>, sizes: &[u64], rate: f64) -> String {
    let why = format!(
        "a cache holds fewer than {MIN_SAMPLED_LINES} sampled lines at rate {rate} below it"
    );
    match from {
        Some(b) if sizes.first() == Some(&b) => format!(
            "the LRU curve (`combined`) is SHARDS's at every size (StatStack's only where a \
             cache holds fewer than {MIN_SAMPLED_LINES} sampled lines, and with at least \
             {MIN_REUSES_COMBINED} reuse samples)"
        ),
        Some(b) => format!(
            "the LRU curve (`combined`) is StatStack's below {} and SHARDS's from there ({why})",
            crate::units::size_label(b)
        ),
        None => format!(
            "the LRU curve (`combined`) is StatStack's at every size (SHARDS would need {} \
             bytes or more: {why})",
            (MIN_SAMPLED_LINES / rate).ceil()
        ),
    }
}

/// Appends the warnings of a sampled report to its notes and its `sampled` summary: `profile`
/// the reuse samples (`None`: no profile), `lines` distinct lines sampled.
pub(super) fn warn(report: &mut Report, profile: Option<&Profile>, lines: f64) {
    let mut w = Vec::new();
    let reuses = profile.map(Profile::reuses);
    if let Some(n) = reuses.filter(|&n| n < MIN_REUSES) {
        w.push(format!(
            "StatCache and StatStack rest on {n} reuse samples (fewer than {MIN_REUSES}): each \
             stands for {:.1} % of the references, so their curves move in steps that large",
            100.0 / n.max(1) as f64
        ));
    }
    // The expected errors were measured with the short reuses' windows, which the stage (on a
    // trace) and the tool (live) measure (docs/sampled.md, "Reuse windows measured"); a
    // profile can still have none: every sampled reuse longer than the ring.
    if profile.is_some_and(|p| p.reuses() > 0 && p.measured() == 0) {
        w.push(format!(
            "no reuse window was measured exactly (no sampled reuse came within the {} \
             references the windows cover, or their counting budget was spent): StatStack's \
             curve, and `combined`, `hotl` and the curves corrected by it, keep its estimate, \
             which places a sharp working-set cliff early (docs/accuracy/sampled.md); the \
             expected errors were measured with the windows",
            crate::sampling::RING
        ));
    }
    if lines < MIN_SAMPLE_LINES {
        w.push(format!(
            "the sample holds {lines:.0} distinct lines (fewer than {MIN_SAMPLE_LINES}): SHARDS, \
             the miniatures and OPT of the sample are decided by those few lines"
        ));
    }
    if report.stats.refs > report.stats.distinct_lines {
        for c in report.mrc.iter().filter(|c| reads_zero(c)) {
            w.push(format!(
                "{} {} reads 0 at every size although the stream reuses lines: too few samples",
                c.method, c.policy
            ));
        }
    }
    push(report, w);
}

/// Warns of each thread of the threads section with fewer than [`MIN_THREAD_REFS`] sampled
/// references (`(thread, sampled)` pairs).
pub(super) fn warn_threads(report: &mut Report, sampled: &[(u32, u64)]) {
    let w = sampled
        .iter()
        .filter(|(_, n)| *n < MIN_THREAD_REFS)
        .map(|(t, n)| {
            format!(
                "thread {t}'s curve rests on {n} sampled references (fewer than \
                 {MIN_THREAD_REFS}): read it as a rough shape"
            )
        })
        .collect();
    push(report, w);
}

/// Says what the sharing table of a sample at `rate` (below 1) holds: the sampled lines, whole
/// (each falsely shared line there with probability `rate`), and, with `promotion`, the lines
/// two threads write, promoted (`live`: by the tool, measured from the promoting write on);
/// warns when the detector's cap dropped some.
pub(super) fn warn_sharing(
    report: &mut Report,
    rate: f64,
    promotion: Option<&crate::sharing::detect::Promotion>,
    live: bool,
) {
    if rate >= 1.0 {
        return;
    }
    let Some(p) = promotion else {
        push(
            report,
            vec![format!(
                "the sharing table holds the sampled lines only: each falsely or truly shared \
                 line is in it with probability {rate}, so a program with a few such lines \
                 shows none of them at this rate (raise --rate to find them)"
            )],
        );
        return;
    };
    let how = if live {
        "found by a detector in the tool's filter once a second thread ran, and measured from \
         the write that promoted each on, with the bytes its writer before had written"
    } else {
        "found by a detector that read every reference and measured whole"
    };
    report.notes.push(format!(
        "the sharing table holds the sampled lines (at rate {rate}) and the {} line{} that \
         two or more threads write, {how} (`found`: `promoted`); a line written by one \
         thread and only read by others is there only if sampled (probability {rate})",
        p.promoted,
        if p.promoted == 1 { "" } else { "s" }
    ));
    if p.dropped > 0 {
        push(
            report,
            vec![format!(
                "{} line{} written by two or more threads {} not promoted: the detector's cap \
                 of {} promoted lines was reached, so the sharing table may lack shared lines \
                 (raise --rate, or run `cachescope sharing` on the trace)",
                p.dropped,
                if p.dropped == 1 { "" } else { "s" },
                if p.dropped == 1 { "was" } else { "were" },
                p.max_lines
            )],
        );
    }
}

fn push(report: &mut Report, w: Vec<String>) {
    for text in &w {
        report.notes.push(format!("warning: {text}"));
    }
    if let Some(s) = &mut report.sampled {
        s.warnings.extend(w);
    }
}

/// A curve with points that all read no miss (cold misses left out).
fn reads_zero(c: &Mrc) -> bool {
    !c.points.is_empty() && c.points.iter().all(|p| p.miss_ratio_warm == 0.0)
}
