//! `analyse(..., sampled=True)`: the analyses of one pass over the source read as a sampled
//! stream (docs/sampled.md), each document the one the command line prints with `--sampled`
//! (`mrc --sampled --json` for `mrc`).

use cachescope::Result;
use cachescope::analysis::Analysis;
use cachescope::method::MrcOptions;
use cachescope::models::hotl::FootprintAnalysis;
use cachescope::pass::{Analyses, Pass};
use cachescope::reuse::ShardsAnalysis;
use cachescope::sampling::Profile;
use cachescope::spatial::SpatialOptions;
use serde_json::json;

use crate::passes::{Progress, pretty, profile_summary};
use crate::source::Spec;

/// [`crate::passes::analyse`] of the stream `spatial` samples: `mrc` is SHARDS's curve at
/// `opts.sizes`, `footprint` the sampled lines' footprint scaled by the rate, `sample`
/// StatCache's profile of the full stream (sampled beside the filter,
/// its rate floored as the sampled report's: docs/sampled.md); `stats`, which counts
/// every reference and line, is refused.
pub fn analyse(
    spec: &Spec,
    names: &[String],
    opts: &MrcOptions,
    spatial: SpatialOptions,
    progress: Progress,
) -> Result<(Vec<String>, Option<Profile>)> {
    let has = |n: &str| names.iter().any(|x| x == n);
    if let Some(bad) = names
        .iter()
        .find(|n| !["mrc", "footprint", "sample"].contains(&n.as_str()))
    {
        return Err(cachescope::Error::InvalidParameter {
            name: "analyses",
            message: format!(
                "{bad:?} with sampled=True: one of mrc, footprint, sample (stats counts every \
                 reference: ask for it without sampled)"
            ),
        });
    }
    let mut trace = spec.open(opts.options.line_size)?;
    trace.sampled(spatial, has("sample").then(|| opts.sampler()))?;
    let mut shards = ShardsAnalysis::new(opts.options);
    let mut fp = FootprintAnalysis::new(opts.options, &[])?;
    let mut chosen: Vec<&mut dyn Analysis> = Vec::new();
    if has("mrc") {
        chosen.push(&mut shards);
    }
    if has("footprint") || chosen.is_empty() {
        chosen.push(&mut fp);
    }
    Pass::new(opts.threads)
        .with_progress(progress)
        .run(&mut trace, Analyses(&mut chosen))?;
    let profile = trace
        .reuse_profile()
        .map(|p| p.with_source(trace.source().to_string()));
    let mut out = Vec::new();
    for name in names {
        out.push(match name.as_str() {
            "mrc" => pretty(&shards.finish().mrc(&opts.sizes)),
            "footprint" => {
                let f = fp.finish();
                pretty(&json!({
                    "line_size": f.line_size,
                    "refs": f.refs,
                    "distinct_lines": f.distinct_lines,
                    "points": f.points(256)?,
                }))
            }
            _ => profile_summary(profile.as_ref().expect("sampled beside the filter"), None),
        });
    }
    Ok((out, profile))
}
