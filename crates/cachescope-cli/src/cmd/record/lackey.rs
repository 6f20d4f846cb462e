//! Starting the fallback backend, Valgrind's lackey, with the LD_PRELOAD allocation
//! interposer when events are wanted and it is found.

use std::path::Path;

use anyhow::Result;
use cachescope::attribution::events::{EVENTS_VERSION, Header};
use cachescope::record::{Recording, preload};

use super::EventsThread;
use super::write::write_events;

/// Starts lackey, with the LD_PRELOAD interposer when `events` and it is found.
pub(super) fn start_lackey(
    program: &std::ffi::OsStr,
    rest: &[std::ffi::OsString],
    events: bool,
    quiet: bool,
    events_path: &Path,
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
    let (recording, trace, events_writer) = match &preload {
        Some(so) => {
            let (recording, trace, rx) = Recording::start_with_events(program, rest, so)?;
            let header = Header {
                cachescope_events: EVENTS_VERSION,
                program: recording.description().to_string(),
            };
            let path = events_path.to_owned();
            let writer = std::thread::spawn(move || write_events(&path, &header, rx));
            (recording, trace, Some(writer))
        }
        None => {
            let (recording, trace) = Recording::start(program, rest)?;
            (recording, trace, None)
        }
    };
    let with = if preload.is_some() {
        "valgrind --tool=lackey --trace-mem=yes, LD_PRELOAD=libcachescope_preload.so \
         (its own references removed)"
    } else {
        "valgrind --tool=lackey --trace-mem=yes"
    };
    Ok((recording, trace, events_writer, with.into()))
}
