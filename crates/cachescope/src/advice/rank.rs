//! [`rank`]: the candidates with their predictions, as findings, most misses saved first.
//!
//! A finding's `saved` is the misses it removes from the data levels plus the coherence misses
//! it removes. Prefetching removes no fetch (a prefetched line is fetched all the same, only
//! earlier), and latent false sharing costs nothing as the program is laid out now: both come
//! after the changes that remove misses, prefetches by the demand misses they hide. A change
//! whose prediction saves nothing is left out.

use super::candidates::Candidate;
use super::{Finding, Kind};
use crate::layout::{LevelChange, Misses};

/// `candidates` with `predicted` (the changed simulation of each, `None` for an estimate),
/// against `before` (the simulation of the trace as it is); `whatif` is the command that
/// runs the simulations (`cachescope whatif TRACE FLAGS`), completed with each one's changes.
pub fn rank(
    candidates: Vec<Candidate>,
    before: &Misses,
    predicted: Vec<Option<Misses>>,
    whatif: &str,
) -> Vec<Finding> {
    let mut out: Vec<Finding> = candidates
        .into_iter()
        .zip(predicted)
        .filter_map(|(c, after)| finding(c, before, after, whatif))
        .collect();
    let late = |f: &Finding| matches!(f.kind, Kind::Prefetch | Kind::LatentFalseSharing);
    out.sort_by(|x, y| {
        late(x)
            .cmp(&late(y))
            .then(y.saved.cmp(&x.saved))
            .then(x.kind.cmp(&y.kind))
            .then_with(|| x.structure.cmp(&y.structure))
    });
    out
}

/// Single quotes around a word the shell would change.
fn quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.,:=@/+%".contains(c))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn finding(c: Candidate, before: &Misses, after: Option<Misses>, whatif: &str) -> Option<Finding> {
    let (levels, coherence_after, command) = match (&after, c.estimate) {
        (Some(after), _) => {
            let mut cmd = whatif.to_owned();
            for ch in &c.changes {
                cmd += &format!(" --change {}", quote(&ch.to_string()));
            }
            if let Some((kind, distance)) = &c.prefetch {
                cmd += &format!(" --after-prefetch {kind} --after-prefetch-distance {distance}");
            }
            (before.compare(after), after.coherence, Some(cmd))
        }
        (None, Some(saved)) => {
            // The first data level saves the estimate; the others are as they are.
            let first = before
                .levels
                .iter()
                .position(|(l, _)| l != "L1I" && l != "I1");
            let levels = before
                .levels
                .iter()
                .enumerate()
                .map(|(i, (level, misses))| LevelChange {
                    level: level.clone(),
                    misses: *misses,
                    misses_after: if Some(i) == first {
                        misses.saturating_sub(saved)
                    } else {
                        *misses
                    },
                })
                .collect();
            (levels, before.coherence, None)
        }
        (None, None) => return None,
    };
    let data: Vec<&LevelChange> = levels
        .iter()
        .filter(|l| l.level != "L1I" && l.level != "I1")
        .collect();
    let mut saved: i64 = data
        .iter()
        .map(|l| l.misses as i64 - l.misses_after as i64)
        .sum();
    if let (Some(b), Some(a)) = (before.coherence, coherence_after) {
        saved += b as i64 - a as i64;
    }
    if saved <= 0 && c.kind != Kind::LatentFalseSharing {
        return None;
    }
    Some(Finding {
        kind: c.kind,
        structure: c.structure,
        fields: c.fields,
        code: c.code,
        evidence: c.evidence,
        change: c.change,
        whatif: command,
        levels,
        coherence_misses: before.coherence,
        coherence_misses_after: coherence_after.filter(|_| before.coherence.is_some()),
        estimate: c.estimate.is_some() && after.is_none(),
        saved,
    })
}
