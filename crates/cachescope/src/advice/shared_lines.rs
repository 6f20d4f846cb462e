//! The findings threads' shared lines call for: `false-sharing` from the lines the multi-core
//! model counts coherence misses on, `latent-false-sharing` from Predator's virtual lines.

use serde_json::json;

use super::Kind;
use super::candidates::{Candidate, Options, display_name, nameable, spec, spec_name};
use super::collect::Evidence;
use crate::units::thousands;

/// false-sharing from the lines the multi-core model counts coherence misses on; latent
/// false sharing from the lines shared falsely only at twice the line or half a line over.
pub(super) fn sharing_candidates(
    evidence: &Evidence,
    options: &Options,
    out: &mut Vec<Candidate>,
    notes: &mut Vec<String>,
) {
    let Some(sharing) = &evidence.sharing else {
        return;
    };
    let r = &evidence.report;
    let line = options.l1.line_size().bytes();
    let find = |name: &str| r.structures.iter().find(|s| s.structure == name);
    let mut seen: Vec<String> = Vec::new();
    for l in sharing
        .lines
        .iter()
        .filter(|l| l.kind == "false" && l.coherence_misses > 0)
    {
        if seen.contains(&l.structure) {
            continue;
        }
        seen.push(l.structure.clone());
        // A line of the stack, of no structure, or of a heap site a change cannot name: the
        // finding is `sharing`'s to report; no layout change here could be predicted.
        if l.structure == "other"
            || l.structure == "stack"
            || find(&l.structure).is_some_and(|s| !nameable(s))
        {
            notes.push(format!(
                "falsely shared lines of {} (coherence misses, see `cachescope sharing`): not a \
                 structure a layout change can name",
                l.structure
            ));
            continue;
        }
        let lines: Vec<_> = sharing
            .lines
            .iter()
            .filter(|x| x.structure == l.structure && x.kind == "false")
            .collect();
        let coherence: u64 = lines.iter().map(|x| x.coherence_misses).sum();
        let name = find(&l.structure).map_or_else(|| format!("{}@8", l.structure), spec_name);
        let shown = find(&l.structure).map_or_else(|| l.structure.clone(), display_name);
        let threads: Vec<String> = l.threads.iter().map(|t| t.thread.to_string()).collect();
        if let Some(c) = spec(format!("own-line:{name}")) {
            out.push(Candidate {
                kind: Kind::FalseSharing,
                structure: shown,
                fields: Vec::new(),
                code: l.code.clone(),
                evidence: json!({
                    "summary": format!("{} lines written by threads {} at disjoint bytes: {} coherence misses", lines.len(), threads.join(", "), thousands(coherence)),
                    "coherence_misses": coherence,
                    "lines": lines.iter().map(|x| &x.line).collect::<Vec<_>>(),
                    "threads": l.threads,
                }),
                change: format!(
                    "give each thread's part of {} a {line}-byte line of its own (pad each \
                     element to {line} bytes and align it, alignas({line}), or gather each \
                     thread's elements together)",
                    l.structure
                ),
                changes: vec![c],
                prefetch: None,
                estimate: None,
            });
        }
    }
    for latent in &evidence.latent {
        let l = &latent.line;
        if seen.contains(&l.structure)
            || l.structure == "other"
            || l.structure == "stack"
            || find(&l.structure).is_some_and(|s| !nameable(s))
        {
            continue;
        }
        seen.push(l.structure.clone());
        let name = find(&l.structure).map_or_else(|| format!("{}@8", l.structure), spec_name);
        let shown = find(&l.structure).map_or_else(|| l.structure.clone(), display_name);
        let at = latent.shift.map(|(o, a)| format!("move:{name}={o}@{a}"));
        if let Some(c) = spec(format!("own-line:{name}={}", 2 * line)) {
            out.push(Candidate {
                kind: Kind::LatentFalseSharing,
                structure: shown,
                fields: Vec::new(),
                code: l.code.clone(),
                evidence: json!({
                    "summary": format!("threads write disjoint bytes of one line at {}: not shared at {line}-byte lines as it is laid out now", latent.variant),
                    "at": latent.variant,
                    "recreate": at,
                    "threads": l.threads,
                }),
                change: format!(
                    "keep each thread's part of {} {} bytes apart (alignas({})): at {} it is \
                     falsely shared",
                    l.structure,
                    2 * line,
                    2 * line,
                    latent.variant
                ),
                changes: vec![c],
                prefetch: None,
                estimate: None,
            });
        }
    }
    if sharing.lines.is_empty() && sharing.threads > 1 {
        notes.push(format!("{} threads share no written line", sharing.threads));
    }
}
