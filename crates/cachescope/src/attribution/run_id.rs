//! A recording's run id: 128 random bits written into its trace's header (the metadata pair
//! [`KEY`]) and its event log's header ([`Header::run`]), so that the two name each other. An
//! event log read beside another recording's trace would attribute that trace's misses to the
//! wrong program's variables and functions: [`check`] refuses the pair when the ids differ, and
//! says it cannot tell when one has none (files recorded before run ids, or a trace format
//! without a header to hold one).

use std::path::Path;

use super::events::Header;
use crate::error::{Error, Result};
use crate::trace::Trace;

/// The native trace header's metadata key of the run id.
pub const KEY: &str = "run_id";

/// A new run id: 32 hexadecimal digits from the system's random source (or, where it cannot be
/// read, from the clock and process id through the standard library's randomly keyed hash).
pub fn new() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if random.is_err() {
        use std::hash::{BuildHasher, Hasher};
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        for (i, half) in bytes.chunks_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(now);
            h.write_u32(std::process::id());
            h.write_usize(i);
            half.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether the event log `log` (read from `log_path`) belongs to `trace`: `Ok(None)` when their
/// run ids agree, `Ok(Some(warning))` when either has none, an error naming both files when they
/// differ.
pub fn check(trace: &Trace, log: &Header, log_path: &Path) -> Result<Option<String>> {
    let log_name = log_path.display();
    let trace_run = trace.metadata(KEY).unwrap_or_default();
    match (trace_run, log.run.as_str()) {
        (t, l) if !t.is_empty() && t == l => Ok(None),
        (t, l) if !t.is_empty() && !l.is_empty() => Err(Error::InvalidParameter {
            name: "event log",
            message: format!(
                "{log_name} belongs to another recording than {} (run {l} in the log, run {t} in \
                 the trace): give the trace's own log with --events, or none",
                trace.source()
            ),
        }),
        (t, _) => Ok(Some(format!(
            "cannot check that {log_name} belongs to {}: {} no run id (not recorded by this \
             version of cachescope{}); its events are used as they are",
            trace.source(),
            if t.is_empty() {
                "the trace has"
            } else {
                "the log has"
            },
            if t.is_empty() {
                ", or in a format without a header"
            } else {
                ""
            }
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Source;
    use crate::trace::OpenOptions;
    use crate::trace::native::{self, Writer};

    fn trace_with(run: Option<&str>) -> Trace {
        let mut header = native::Header::new();
        if let Some(run) = run {
            header = header.with_metadata(KEY, run);
        }
        let mut w = Writer::new(Vec::new(), header).unwrap();
        w.write_batch(&[crate::Access::load(0x1000, 8)].into_iter().collect())
            .unwrap();
        let (bytes, _) = w.finish().unwrap();
        Trace::from_read(
            std::io::Cursor::new(bytes),
            Source::Memory,
            None,
            &OpenOptions::default(),
        )
        .unwrap()
    }

    fn log(run: &str) -> Header {
        Header {
            cachescope_events: super::super::events::EVENTS_VERSION,
            program: "prog".into(),
            run: run.into(),
        }
    }

    #[test]
    fn ids_are_new_each_time() {
        let (a, b) = (new(), new());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }

    #[test]
    fn the_same_run_passes_another_is_refused_a_missing_one_warned() {
        let p = Path::new("t.cst.events");
        assert_eq!(check(&trace_with(Some("ab")), &log("ab"), p).unwrap(), None);
        let err = check(&trace_with(Some("ab")), &log("cd"), p).unwrap_err();
        assert!(
            err.to_string().contains("belongs to another recording"),
            "{err}"
        );
        let old_log = check(&trace_with(Some("ab")), &log(""), p)
            .unwrap()
            .unwrap();
        assert!(old_log.contains("the log has no run id"), "{old_log}");
        let old_trace = check(&trace_with(None), &log("ab"), p).unwrap().unwrap();
        assert!(old_trace.contains("the trace has no run id"), "{old_trace}");
    }
}
