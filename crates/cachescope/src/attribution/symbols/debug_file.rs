//! A module's separate debug file, found the way Valgrind finds it (`find_debug_file` in
//! coregrind/m_debuginfo/readelf.c), so that code in a distribution's stripped libraries is
//! named as Cachegrind names it: first by build id, `ROOT/.build-id/xx/yyyy….debug`, then by
//! the `.gnu_debuglink` name beside the file, in its `.debug/` directory and under
//! `ROOT/<the file's directory>/`, with ROOT `/usr/lib/debug`. A candidate counts only when
//! its build id is the file's (or, for a file without one, its CRC-32 is the debuglink's), so
//! a stale debug package never names the wrong code.

use std::path::{Path, PathBuf};

use object::Object;

/// Where distributions install debug files (Debian's `*-dbg`/`*-dbgsym`, Fedora's
/// `*-debuginfo`).
pub(super) const DEBUG_ROOT: &str = "/usr/lib/debug";

/// The separate debug file of `file` (read from `path`) under `root`, if one matches it.
pub(super) fn find(file: &object::File<'_>, path: &Path, root: &Path) -> Option<PathBuf> {
    let build_id = file.build_id().ok().flatten();
    if let Some(id) = build_id.filter(|id| id.len() >= 2) {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let candidate = root
            .join(".build-id")
            .join(&hex[..2])
            .join(format!("{}.debug", &hex[2..]));
        if matches(&candidate, build_id, None) {
            return Some(candidate);
        }
    }
    let (name, crc) = file.gnu_debuglink().ok().flatten()?;
    let name = Path::new(std::str::from_utf8(name).ok()?);
    let dir = path.parent()?;
    let under_root = root.join(dir.strip_prefix("/").unwrap_or(dir));
    [
        dir.join(name),
        dir.join(".debug").join(name),
        under_root.join(name),
    ]
    .into_iter()
    .find(|c| c != path && matches(c, build_id, Some(crc)))
}

/// `candidate` is an object file with `build_id` (when the original has one), else whose
/// CRC-32 is `crc`.
fn matches(candidate: &Path, build_id: Option<&[u8]>, crc: Option<u32>) -> bool {
    let Ok(data) = std::fs::read(candidate) else {
        return false;
    };
    match (build_id, crc) {
        (Some(id), _) => object::File::parse(&*data)
            .ok()
            .and_then(|f| f.build_id().ok().flatten().map(|own| own == id))
            .unwrap_or(false),
        (None, Some(crc)) => {
            let mut sum = flate2::Crc::new();
            sum.update(&data);
            sum.sum() == crc
        }
        (None, None) => false,
    }
}
