//! cachescope's Valgrind tool, ready to run.
//!
//! The tool (`tool/cs_main.c`, `tool/cs_events.c`, `tool/cs_sample.c`, `tool/cs_ring.c`,
//! `tool/cs_debuginfo.c`; GPL-2.0-or-later because it links Valgrind's core) writes every
//! memory reference of a program as an 8-byte binary record into a shared-memory ring or a
//! pipe; its preload library (`tool/cs_preload.c`) wraps the C library's allocator so that
//! heap events land in the same stream. `build.rs` builds both when Valgrind's development
//! files are present, and this crate embeds the results. [`locate`] writes them once into a
//! per-user cache directory keyed by a hash of their content computed at build time
//! (`cargo install` installs only the `cachescope` binary, so the tool must travel inside it)
//! beside a link to the installed Valgrind's `vgpreload_core`, and returns the directories to
//! pass as `VALGRIND_LIB` to
//! `valgrind --tool=cachescope`. Writing a new build's directory removes those of builds
//! unused for two weeks (`prune.rs`). The tool stays a separate program run as a separate process.
//!
//! The record format is decoded by `cachescope::record::tool` and documented in the
//! repository's `docs/recording.md`.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

#[cfg_attr(not(cachescope_tool), allow(dead_code))]
mod prune;

/// The tool's name: `valgrind --tool=cachescope`.
pub const TOOL_NAME: &str = "cachescope";
/// File name of the tool executable in a `VALGRIND_LIB` directory.
pub const TOOL_FILE: &str = "cachescope-amd64-linux";
/// File name of the allocator-wrapper library Valgrind preloads for the tool.
pub const PRELOAD_FILE: &str = "vgpreload_cachescope-amd64-linux.so";
/// Environment variable naming a ready `VALGRIND_LIB` directory to use instead of the
/// embedded tool (it must hold [`TOOL_FILE`] and `vgpreload_core-amd64-linux.so`, and
/// [`PRELOAD_FILE`] for allocation events).
pub const ENV_LIB: &str = "CACHESCOPE_VALGRIND_LIB";
/// Valgrind's own preload library, which must sit beside the tool.
const CORE: &str = "vgpreload_core-amd64-linux.so";

#[cfg(cachescope_tool)]
mod embedded {
    pub const TOOL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cachescope-amd64-linux"));
    pub const PRELOAD: &[u8] = include_bytes!(concat!(
        env!("OUT_DIR"),
        "/vgpreload_cachescope-amd64-linux.so"
    ));
    pub const VALGRIND: &str = env!("CACHESCOPE_TOOL_VALGRIND");
    /// Hash of [`TOOL`] and [`PRELOAD`], computed by build.rs.
    pub const HASH: &str = env!("CACHESCOPE_TOOL_HASH");
}

/// The Valgrind version (`MAJOR.MINOR`) the embedded tool was built against, or why it was
/// not built.
pub fn built_for() -> Result<&'static str, &'static str> {
    #[cfg(cachescope_tool)]
    {
        Ok(embedded::VALGRIND)
    }
    #[cfg(not(cachescope_tool))]
    {
        Err(env!("CACHESCOPE_TOOL_MISSING"))
    }
}

/// Where the tool is ready to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolDirs {
    /// A `VALGRIND_LIB` with the tool alone: references only, and the program's memory
    /// layout exactly as under lackey.
    pub plain: PathBuf,
    /// A `VALGRIND_LIB` with the tool and its preload library: references and allocation
    /// events (the preload library is mapped into the program, so later libraries move).
    pub events: PathBuf,
}

/// Makes the tool runnable with the `valgrind` executable given, or says why it cannot be.
///
/// Checks that the installed Valgrind is the version the tool was built against (the tool
/// links Valgrind's core statically, so another version would not run it), finds that
/// Valgrind's `vgpreload_core`, and writes the embedded files into
/// `$XDG_CACHE_HOME/cachescope/valgrind-HASH/` (or `~/.cache/…`, or the temporary
/// directory) unless they are there already. [`ENV_LIB`] overrides all of this.
pub fn locate(valgrind: &OsStr) -> Result<ToolDirs, String> {
    if let Some(dir) = std::env::var_os(ENV_LIB).filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        if !dir.join(TOOL_FILE).exists() {
            return Err(format!("${ENV_LIB}={} holds no {TOOL_FILE}", dir.display()));
        }
        return Ok(ToolDirs {
            plain: dir.clone(),
            events: dir,
        });
    }
    let wanted = built_for().map_err(|why| format!("the tool was not built ({why})"))?;
    let installed = installed_version(valgrind)?;
    if installed != wanted {
        return Err(format!(
            "the tool was built for Valgrind {wanted} but {} is {installed}; rebuild cachescope",
            valgrind.to_string_lossy()
        ));
    }
    let core = find_core(valgrind)?;
    write_dirs(&core, &cache_base())
        .map_err(|e| format!("cannot write the tool into the cache directory: {e}"))
}

/// `MAJOR.MINOR` of `valgrind --version` (`valgrind-3.19.0`).
fn installed_version(valgrind: &OsStr) -> Result<String, String> {
    let out = Command::new(valgrind)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", valgrind.to_string_lossy()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let v = text.trim().trim_start_matches("valgrind-");
    let mut parts = v.split(['.', '-']);
    match (parts.next(), parts.next()) {
        (Some(a), Some(b)) if !a.is_empty() && !b.is_empty() => Ok(format!("{a}.{b}")),
        _ => Err(format!(
            "cannot read the version of {} from {:?}",
            valgrind.to_string_lossy(),
            text.trim()
        )),
    }
}

/// The installed Valgrind's `vgpreload_core-amd64-linux.so`, which must sit beside the tool.
fn find_core(valgrind: &OsStr) -> Result<PathBuf, String> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    // <prefix>/bin/valgrind → <prefix>/libexec/valgrind, <prefix>/lib/valgrind
    let exe = which(valgrind);
    if let Some(prefix) = exe.as_deref().and_then(Path::parent).and_then(Path::parent) {
        dirs.push(prefix.join("libexec/valgrind"));
        dirs.push(prefix.join("lib/x86_64-linux-gnu/valgrind"));
        dirs.push(prefix.join("lib/valgrind"));
        dirs.push(prefix.join("lib64/valgrind"));
    }
    for d in [
        "/usr/libexec/valgrind",
        "/usr/lib/x86_64-linux-gnu/valgrind",
        "/usr/lib/valgrind",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs.into_iter()
        .map(|d| d.join(CORE))
        .find(|p| p.exists())
        .ok_or_else(|| format!("{CORE} of the installed Valgrind not found"))
}

fn which(program: &OsStr) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 {
        return fs::canonicalize(p).ok();
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(p))
        .find(|c| c.is_file())
        .and_then(|c| fs::canonicalize(c).ok())
}

#[cfg(cachescope_tool)]
fn write_dirs(core: &Path, base: &Path) -> io::Result<ToolDirs> {
    use std::hash::Hasher;
    let mut h = twox_hash::XxHash64::with_seed(0);
    h.write(embedded::HASH.as_bytes());
    h.write(core.as_os_str().as_encoded_bytes());
    let dir = base.join(format!("valgrind-{:016x}", h.finish()));
    let dirs = ToolDirs {
        plain: dir.join("plain"),
        events: dir.join("events"),
    };
    if complete(&dirs) {
        prune::touch(&dir);
        return Ok(dirs);
    }
    fs::create_dir_all(base)?;
    // A new build's first run: the directories of builds unused for two weeks go.
    prune::prune(base, &dir, std::time::SystemTime::now(), prune::UNUSED_FOR);
    // Written in a directory of its own (unique even among threads of one process) and
    // renamed into place, so concurrent runs never see half a tool.
    let tmp = tempfile::Builder::new().prefix("tmp-").tempdir_in(base)?;
    for sub in ["plain", "events"] {
        let d = tmp.path().join(sub);
        fs::create_dir(&d)?;
        write_executable(&d.join(TOOL_FILE), embedded::TOOL)?;
        std::os::unix::fs::symlink(core, d.join(CORE))?;
    }
    write_executable(
        &tmp.path().join("events").join(PRELOAD_FILE),
        embedded::PRELOAD,
    )?;
    let mut tries = 0;
    loop {
        match fs::rename(tmp.path(), &dir) {
            Ok(()) => return Ok(dirs),
            // Another run renamed its copy first.
            Err(_) if complete(&dirs) => return Ok(dirs),
            // Left incomplete by an older cachescope or a hand: moved aside (and removed with
            // `aside`), then ours goes in. Only a directory seen incomplete after our rename
            // failed is moved, so a complete copy another run has just put there stays.
            Err(_) if dir.exists() && tries < 4 => {
                tries += 1;
                let aside = tempfile::Builder::new()
                    .prefix("broken-")
                    .tempdir_in(base)?;
                let _ = fs::rename(&dir, aside.path().join("old"));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Whether both directories hold every file Valgrind will look for.
#[cfg_attr(not(cachescope_tool), allow(dead_code))]
fn complete(dirs: &ToolDirs) -> bool {
    let plain = [TOOL_FILE, CORE].map(|f| dirs.plain.join(f));
    let events = [TOOL_FILE, CORE, PRELOAD_FILE].map(|f| dirs.events.join(f));
    plain.iter().chain(&events).all(|p| p.exists())
}

#[cfg(not(cachescope_tool))]
fn write_dirs(_core: &Path, _base: &Path) -> io::Result<ToolDirs> {
    Err(io::Error::other("the tool was not built"))
}

#[cfg(cachescope_tool)]
fn write_executable(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::write(path, bytes)?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
}

/// `$XDG_CACHE_HOME/cachescope`, `~/.cache/cachescope`, or the temporary directory's.
#[cfg_attr(not(cachescope_tool), allow(dead_code))]
fn cache_base() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("cachescope")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tool_is_written_once_and_found_again() {
        if let Err(why) = built_for() {
            cachescope_testkit::skip("tool", why);
            return;
        }
        if !cachescope_testkit::tools_or_skip(&["valgrind"]) {
            return;
        }
        let a = locate(OsStr::new("valgrind")).unwrap();
        let b = locate(OsStr::new("valgrind")).unwrap();
        assert_eq!(a, b);
        assert!(a.plain.join(TOOL_FILE).exists());
        assert!(!a.plain.join(PRELOAD_FILE).exists());
        assert!(a.events.join(PRELOAD_FILE).exists());
        assert!(a.plain.join("vgpreload_core-amd64-linux.so").exists());
    }

    #[test]
    fn concurrent_writers_leave_one_complete_copy_and_a_broken_one_is_repaired() {
        if let Err(why) = built_for() {
            cachescope_testkit::skip("tool", why);
            return;
        }
        let base = tempfile::tempdir().unwrap();
        let core = base.path().join("core.so");
        fs::write(&core, b"").unwrap();
        let all: Vec<ToolDirs> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| write_dirs(&core, base.path()).unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(all.iter().all(|d| *d == all[0] && complete(d)));
        fs::remove_file(all[0].events.join(TOOL_FILE)).unwrap();
        assert!(!complete(&all[0]));
        assert_eq!(write_dirs(&core, base.path()).unwrap(), all[0]);
        assert!(complete(&all[0]));
    }

    #[test]
    fn a_missing_valgrind_is_named() {
        if let Err(why) = built_for() {
            cachescope_testkit::skip("tool", why);
            return;
        }
        let err = locate(OsStr::new("/nonexistent/valgrind")).unwrap_err();
        assert!(err.contains("/nonexistent/valgrind"), "{err}");
    }
}
