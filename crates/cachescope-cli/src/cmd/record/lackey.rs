//! Starting the fallback backend, Valgrind's lackey, with the LD_PRELOAD allocation
//! interposer when events are wanted and it is found.

use std::path::Path;

use anyhow::Result;
use cachescope::attribution::events::{EVENTS_VERSION, Header};
use cachescope::record::{Recording, preload};

use super::EventsThread;
use super::write::write_events;
use crate::program::Capture;

/// Starts lackey, with the LD_PRELOAD interposer when `events` and it is found; the program's
/// output goes where `capture` says, the event log's header carries `run_id`.
pub(super) fn start_lackey(
    program: &std::ffi::OsStr,
    rest: &[std::ffi::OsString],
    events: bool,
    quiet: bool,
    events_path: &Path,
    capture: &Capture,
    run_id: &str,
) -> Result<(
    Recording,
    cachescope::trace::Trace,
    Option<EventsThread>,
    String,
)> {
    let preload = if !events {
        None
    } else {
        match preload::locate() {
            Ok(p) => Some(p),
            Err(searched) => {
                if !quiet {
                    eprintln!(
                        "cachescope: recording without allocation events: {} not found ({searched}); \
                         build it with `{}` or name it with ${}",
                        preload::FILE_NAME,
                        preload::BUILD_HINT,
                        preload::ENV
                    );
                }
                None
            }
        }
    };
    let (recording, trace, rx) =
        Recording::start_lackey(program, rest, preload.as_deref(), &capture.output)?;
    let events_writer = rx.map(|rx| {
        let header = Header {
            cachescope_events: EVENTS_VERSION,
            program: recording.description().to_string(),
            run: run_id.to_owned(),
        };
        let path = events_path.to_owned();
        std::thread::spawn(move || write_events(&path, &header, rx))
    });
    let with = if preload.is_some() {
        "valgrind --tool=lackey --trace-mem=yes, LD_PRELOAD=libcachescope_preload.so \
         (its own references removed)"
    } else {
        "valgrind --tool=lackey --trace-mem=yes"
    };
    Ok((recording, trace, events_writer, with.into()))
}
