//! Ranking: the predictions order the findings; estimates and prefetches are labelled and
//! placed as docs/advice.md says.

use serde_json::json;

use super::candidates::Candidate;
use super::{Kind, rank};
use crate::layout::Misses;

fn candidate(kind: Kind, structure: &str, spec: &str) -> Candidate {
    Candidate {
        kind,
        structure: structure.into(),
        fields: Vec::new(),
        code: vec!["a.c:1".into()],
        evidence: json!({ "summary": "test" }),
        change: "change it".into(),
        changes: if spec.is_empty() {
            Vec::new()
        } else {
            vec![spec.parse().unwrap()]
        },
        prefetch: (kind == Kind::Prefetch).then(|| ("stride".to_string(), 4)),
        estimate: None,
    }
}

fn misses(l1d: u64, l2: u64) -> Misses {
    Misses {
        levels: vec![("L1I".into(), 10), ("L1D".into(), l1d), ("L2".into(), l2)],
        coherence: None,
    }
}

#[test]
fn findings_are_ranked_by_misses_saved_and_carry_their_command() {
    let before = misses(1000, 500);
    let mut block = candidate(Kind::Block, "b", "");
    block.estimate = Some(300);
    let found = rank(
        vec![
            candidate(Kind::Split, "s", "split:s=x"),
            candidate(Kind::Pad, "p", "pad-rows:p=64"),
            candidate(Kind::Prefetch, "f", ""),
            candidate(Kind::NonTemporal, "n", "nontemporal:n"),
            block,
        ],
        &before,
        vec![
            Some(misses(400, 450)),  // saves 650
            Some(misses(900, 500)),  // saves 100
            Some(misses(10, 500)),   // hides 990, ranked last
            Some(misses(1000, 600)), // saves nothing: left out
            None,
        ],
        "cachescope whatif t.cst --cache 32K,8,64",
    );
    let order: Vec<(&str, i64)> = found
        .iter()
        .map(|f| (f.structure.as_str(), f.saved))
        .collect();
    assert_eq!(order, [("s", 650), ("b", 300), ("p", 100), ("f", 990)]);
    assert_eq!(
        found[0].whatif.as_deref(),
        Some("cachescope whatif t.cst --cache 32K,8,64 --change split:s=x")
    );
    let block = &found[1];
    assert!(block.estimate && block.whatif.is_none());
    assert_eq!(
        block.levels[1].misses_after, 700,
        "the first data level saves the estimate"
    );
    assert_eq!(block.levels[2].misses_after, 500);
    assert!(
        found[3]
            .whatif
            .as_deref()
            .unwrap()
            .ends_with("--after-prefetch stride --after-prefetch-distance 4")
    );
    let json = serde_json::to_value(&found[0]).unwrap();
    for key in [
        "kind",
        "structure",
        "fields",
        "code",
        "evidence",
        "change",
        "whatif",
        "levels",
    ] {
        assert!(json.get(key).is_some(), "{key} in {json}");
    }
    assert_eq!(
        json["levels"][1],
        json!({"level": "L1D", "misses": 1000, "misses_after": 400})
    );
    assert!(json.get("coherence_misses").is_none(), "only with cores");
}

#[test]
fn coherence_misses_count_with_cores() {
    let before = Misses {
        levels: vec![("L1".into(), 5000), ("LL".into(), 100)],
        coherence: Some(4000),
    };
    let after = Misses {
        levels: vec![("L1".into(), 1000), ("LL".into(), 100)],
        coherence: Some(10),
    };
    let found = rank(
        vec![candidate(
            Kind::FalseSharing,
            "counters",
            "own-line:counters",
        )],
        &before,
        vec![Some(after)],
        "cachescope whatif t.cst --cores 4",
    );
    assert_eq!(found[0].saved, 4000 + 3990);
    let json = serde_json::to_value(&found[0]).unwrap();
    assert_eq!(
        (
            json["coherence_misses"].as_u64(),
            json["coherence_misses_after"].as_u64()
        ),
        (Some(4000), Some(10))
    );
    assert_eq!(json["kind"], "false-sharing");
}
