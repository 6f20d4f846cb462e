//! [`Module`]'s DWARF lookups are loaded on the first lookup, and then name the code.

use super::Module;

/// A function of this test binary, to look up.
#[inline(never)]
fn marker() -> u64 {
    std::hint::black_box(7)
}

/// Where this process mapped its executable's first page: (start, file offset).
fn own_mapping(exe: &std::path::Path) -> (u64, u64) {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("procfs");
    let exe = exe.to_string_lossy();
    maps.lines()
        .filter(|l| l.ends_with(&*exe))
        .find_map(|l| {
            let mut f = l.split_whitespace();
            let start = u64::from_str_radix(f.next()?.split('-').next()?, 16).ok()?;
            let offset = u64::from_str_radix(f.nth(1)?, 16).ok()?;
            Some((start, offset))
        })
        .expect("the executable is mapped")
}

#[test]
#[cfg(target_os = "linux")]
fn line_tables_load_on_the_first_lookup() {
    let exe = std::env::current_exe().expect("the test binary");
    let (module, _) = Module::load(&exe, Some(own_mapping(&exe)));
    assert!(module.has_debug_info, "test binaries carry DWARF lines");
    assert!(module.loader.get().is_none(), "loaded before any lookup");
    // The function's first instruction; its innermost frame may be something inlined into it.
    let frames = module.frames(marker as *const () as usize as u64);
    assert!(module.loader.get().is_some(), "not loaded by a lookup");
    let own = frames
        .iter()
        .find(|f| f.function.as_deref().is_some_and(|f| f.ends_with("marker")));
    let own = own.unwrap_or_else(|| panic!("no frame names marker: {frames:?}"));
    assert_eq!(own.file.as_deref(), Some("tests.rs"), "{own:?}");
    assert!(own.line.is_some_and(|l| l > 0), "{own:?}");
    assert_eq!(marker(), 7);
}
