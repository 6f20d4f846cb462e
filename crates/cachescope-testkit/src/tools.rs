//! Whether the tools a test needs are installed, and which need each one counts under.

use std::ffi::OsString;
use std::process::{Command, Stdio};

use crate::skip::skip;

/// Whether `tool` can be started (it is found and runs `tool --version`, whatever it then
/// exits with: the Perl scripts of Valgrind exit 255 on `--version`).
pub fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .is_ok()
}

/// The need a missing `tool` counts under in `CACHESCOPE_TEST_REQUIRE`.
pub fn need_of(tool: &str) -> &str {
    match tool {
        "valgrind" | "cg_annotate" | "callgrind_annotate" | "cg_merge" | "ms_print" => "valgrind",
        "cc" | "gcc" | "strip" | "objcopy" | "readelf" => "cc",
        "mpirun" | "mpicc" => "mpi",
        "chromium" | "chromium-browser" | "google-chrome" => "chromium",
        other => other,
    }
}

/// Whether every one of `tools` is installed; if one is not, skips (see [`skip`]) naming it.
pub fn tools_or_skip(tools: &[&str]) -> bool {
    for &tool in tools {
        if !have(tool) {
            skip(need_of(tool), &format!("{tool} is not installed"));
            return false;
        }
    }
    true
}

/// The Valgrind `record` runs: `$CACHESCOPE_VALGRIND` or `valgrind`.
fn valgrind() -> OsString {
    std::env::var_os("CACHESCOPE_VALGRIND").unwrap_or_else(|| "valgrind".into())
}

/// Whether cachescope's Valgrind tool can run here, or why not: the check `record` makes
/// before it starts the tool (`cachescope::record::tool_status`).
pub fn tool_status() -> Result<cachescope_valgrind::ToolDirs, String> {
    cachescope_valgrind::locate(&valgrind())
}

/// Whether cachescope's own Valgrind tool can run here (Valgrind and cc installed, the tool
/// built and runnable); if not, skips saying why (need `tool`, or `valgrind`/`cc`).
pub fn tool_or_skip() -> bool {
    if !tools_or_skip(&["valgrind", "cc"]) {
        return false;
    }
    match tool_status() {
        Ok(_) => true,
        Err(why) => {
            skip(
                "tool",
                &format!("cachescope's Valgrind tool cannot run: {why}"),
            );
            false
        }
    }
}

/// The headless browser to open reports in (`chromium`, `chromium-browser` or
/// `google-chrome`, the first that answers `--version` successfully); if none, skips (need
/// `chromium`).
pub fn chromium_or_skip() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .stdin(Stdio::null())
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if found.is_none() {
        skip("chromium", "no chromium runs here (.ci/run installs it)");
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_tool_is_not_had_and_counts_under_its_group() {
        assert!(!have("/nonexistent/cachescope-testkit-tool"));
        assert!(have("sh"));
        assert_eq!(need_of("cg_annotate"), "valgrind");
        assert_eq!(need_of("mpicc"), "mpi");
        assert_eq!(need_of("zstd"), "zstd");
    }
}
