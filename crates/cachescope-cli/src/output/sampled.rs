//! What a command run with `--sampled` prints around its result (docs/sampled.md): a
//! `# sampled:` line naming the method and the rate above the table, and a `sampled` object
//! (`method`, `rate`, `seed`, `sample_lines`) added to the JSON document; the CSV is the
//! result's own, records only.

use anyhow::Result;
use cachescope::spatial::SpatialOptions;

use super::Output;

/// `inner` computed by `method` on the stream `spatial` samples.
pub struct SampledOutput<'a, O> {
    /// The command's result, its counts already scaled to the full stream.
    pub inner: &'a O,
    /// The sampling it was computed from.
    pub spatial: SpatialOptions,
    /// How the sample was read: `shards` (the sampled lines' own analysis, scaled) or `mini`
    /// (a miniature of each cache simulated on them).
    pub method: &'a str,
}

/// The line that says how a result was sampled, without its `# `.
fn sampled_note(spatial: &SpatialOptions, method: &str) -> String {
    format!(
        "sampled ({method}): lines kept with probability {} (seed {}){}, counts scaled by \
         1/rate; expected errors in docs/accuracy/sampled.md",
        spatial.rate,
        spatial.seed,
        spatial
            .max_lines
            .map_or(String::new(), |m| format!(", at most {m} at once"))
    )
}

impl<O: Output> Output for SampledOutput<'_, O> {
    fn table(&self) -> String {
        format!(
            "# {}\n{}",
            sampled_note(&self.spatial, self.method),
            self.inner.table()
        )
    }

    fn json(&self) -> Result<String> {
        let mut doc: serde_json::Value = serde_json::from_str(&self.inner.json()?)?;
        if let Some(map) = doc.as_object_mut() {
            map.insert(
                "sampled".into(),
                serde_json::json!({
                    "method": self.method,
                    "rate": self.spatial.rate,
                    "seed": self.spatial.seed,
                    "sample_lines": self.spatial.max_lines,
                }),
            );
        }
        super::json(&doc)
    }

    fn csv(&self) -> Result<String> {
        self.inner.csv()
    }
}

/// Prints `out` as [`super::emit`] does, wrapped in a [`SampledOutput`] under `--sampled`.
pub fn emit_sampled(
    out: &impl Output,
    format: super::Format,
    spatial: Option<SpatialOptions>,
    method: &str,
) -> Result<()> {
    match spatial {
        Some(spatial) => super::emit(
            &SampledOutput {
                inner: out,
                spatial,
                method,
            },
            format,
        ),
        None => super::emit(out, format),
    }
}
