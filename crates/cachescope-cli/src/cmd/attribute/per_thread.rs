//! `attribute --per-thread`: one attribution per thread, each simulating its thread's
//! references alone in a cache of its own, all from one pass.
//!
//! Each thread's attribution is made when the thread first appears and sees every batch from
//! then on, counting the other threads' records without simulating them
//! ([`Attribution::only_thread`]): the event log's positions count every record of the trace,
//! so a filter on the trace itself would apply allocations late. Each reads the event log
//! anew, from the start, applying what fell due before its thread appeared at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cachescope::ThreadId;
use cachescope::analysis::Analysis;
use cachescope::attribution::events::EventReader;
use cachescope::attribution::{Attribution, EventSource, Report};
use cachescope::pass::Analyses;
use cachescope::trace::Trace;
use cachescope::{Batch, Error};

use super::super::drive;
use super::table::Table;
use super::{AttributeArgs, NO_LOG, options};
use crate::output::{self, Format, Output};

/// The attributions, one per thread met, and the records read so far.
struct ByThread {
    parts: BTreeMap<ThreadId, Attribution<'static>>,
    records: u64,
    make: Box<dyn FnMut(ThreadId) -> cachescope::Result<Attribution<'static>>>,
    error: Option<Error>,
}

impl Analysis for ByThread {
    fn observe(&mut self, batch: &Batch) {
        for (_, t) in batch.thread_runs() {
            if self.parts.contains_key(&t) || self.error.is_some() {
                continue;
            }
            match (self.make)(t) {
                Ok(a) => {
                    self.parts.insert(t, a.only_thread(t).skip(self.records));
                }
                Err(e) => self.error = Some(e),
            }
        }
        for a in self.parts.values_mut() {
            a.observe(batch);
        }
        self.records += batch.len() as u64;
    }
}

/// Attributes each thread of `trace`, its event log at `events`, and prints them.
pub(super) fn run(
    trace: &mut Trace,
    args: &AttributeArgs,
    events: Option<&Path>,
    log: Option<EventReader<std::fs::File>>,
    tlb: Option<(cachescope::tlb::TlbConfig, Vec<cachescope::tlb::PageRule>)>,
) -> Result<()> {
    // The log opened to check it serves the first thread; the others open their own.
    let mut first = log;
    let path: Option<PathBuf> = events.map(Path::to_path_buf);
    let opts = options(args, false);
    let mut by = ByThread {
        parts: BTreeMap::new(),
        records: 0,
        make: Box::new(move |_| {
            let log = match (first.take(), &path) {
                (Some(log), _) => Some(log),
                (None, Some(p)) => Some(EventReader::open(p)?),
                (None, None) => None,
            };
            let a = Attribution::new(
                opts.clone(),
                log.map(|l| Box::new(l) as EventSource<'static>),
            )?;
            // Each thread in TLBs of its own, as in its own cache.
            match &tlb {
                Some((c, rules)) => a.with_tlb(c, rules),
                None => Ok(a),
            }
        }),
        error: None,
    };
    drive(trace, Analyses(&mut [&mut by]), &args.run)?;
    if let Some(e) = by.error {
        return Err(e.into());
    }
    let mut threads = Vec::new();
    for (thread, a) in by.parts {
        let mut report = a.finish().with_context(|| match events {
            Some(p) => format!("reading the event log {}", p.display()),
            None => format!("attributing thread {thread}"),
        })?;
        if events.is_none() {
            report.notes.insert(0, NO_LOG.into());
        }
        threads.push((thread, report));
    }
    let out = PerThread {
        threads,
        top: args.top,
    };
    output::emit(&out, Format::from_flags(args.json, args.csv))
}

/// Every thread's attribution.
struct PerThread {
    threads: Vec<(ThreadId, Report)>,
    top: usize,
}

impl Output for PerThread {
    /// `{"threads": [{"thread": ID, …}]}`, each entry `attribute --json`'s fields.
    fn json(&self) -> Result<String> {
        let mut list = Vec::new();
        for (t, r) in &self.threads {
            let mut v = serde_json::json!({ "thread": t });
            if let (Some(m), serde_json::Value::Object(fields)) =
                (v.as_object_mut(), serde_json::to_value(r)?)
            {
                m.extend(fields);
            }
            list.push(v);
        }
        output::json(&serde_json::json!({ "threads": list }))
    }

    /// One row per thread and bucket, the thread first.
    fn csv(&self) -> Result<String> {
        let mut rows = Vec::new();
        for (t, r) in &self.threads {
            let v = serde_json::to_value(r)?;
            for b in v["buckets"].as_array().map_or(&[][..], Vec::as_slice) {
                let mut row = serde_json::json!({ "thread": t });
                if let (Some(m), Some(fields)) = (row.as_object_mut(), b.as_object()) {
                    m.extend(fields.clone());
                }
                rows.push(row);
            }
        }
        Ok(output::csv_records(&rows))
    }

    fn table(&self) -> String {
        let mut o = String::new();
        for (t, r) in &self.threads {
            o += &format!("## thread {t}\n");
            o += &Table {
                report: r.clone(),
                top: self.top,
            }
            .table();
            o += "\n";
        }
        o
    }
}
