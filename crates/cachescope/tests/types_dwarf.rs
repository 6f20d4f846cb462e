//! The DWARF types of a compiled C program: structures' fields by offset, arrays' dimensions,
//! pointers with their function and declaration line (`attribution::types`).

use std::path::{Path, PathBuf};

use cachescope::attribution::types::ModuleTypes;
use object::{Object, ObjectSymbol};

const SOURCE: &str = r#"
#include <stdlib.h>
struct inner { short a; short b; };
struct particle { double x; double y; struct inner in; char tag[20]; long *next; };
struct particle parts[100];
float grid[16][1024];
long counters[4];
struct particle *global_ptr;
int main(int argc, char **argv) {
    struct particle *local = malloc(10 * sizeof *local);
    global_ptr = malloc(20 * sizeof *global_ptr);
    local[argc].x = parts[argc].y + grid[argc][3] + counters[argc];
    global_ptr[0] = local[0];
    return (int)local[1].x;
}
"#;

/// Compiles the program with `cc -g -O0`; `None` (after the testkit's skip) without a C
/// compiler.
fn compile(dir: &Path) -> Option<PathBuf> {
    if !cachescope_testkit::tools_or_skip(&["cc"]) {
        return None;
    }
    Some(cachescope_testkit::compile_c(
        dir,
        "types",
        SOURCE,
        &["-g", "-O0", "-no-pie"],
    ))
}

/// The link-time address of symbol `name`.
fn symbol(exe: &Path, name: &str) -> u64 {
    let data = std::fs::read(exe).unwrap();
    let file = object::File::parse(&*data).unwrap();
    file.symbols()
        .find(|s| s.name() == Ok(name))
        .map(|s| s.address())
        .unwrap_or_else(|| panic!("no symbol {name}"))
}

#[test]
fn structures_arrays_and_pointers_come_from_dwarf() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(dir.path()) else {
        return;
    };
    let types = ModuleTypes::load(&exe);
    assert!(types.has_types);

    let parts = types
        .global_at(symbol(&exe, "parts"))
        .expect("parts is typed");
    assert_eq!(parts.dims, [100]);
    let e = &parts.element;
    assert_eq!((e.type_name.as_str(), e.size), ("struct particle", 48));
    let fields: Vec<(&str, u64, u64)> = e
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.offset, f.size))
        .collect();
    assert_eq!(
        fields,
        [
            ("x", 0, 8),
            ("y", 8, 8),
            ("in.a", 16, 2),
            ("in.b", 18, 2),
            ("tag", 20, 20),
            ("next", 40, 8)
        ]
    );
    assert_eq!(e.field_at(19), Some(3));

    let grid = types
        .global_at(symbol(&exe, "grid"))
        .expect("grid is typed");
    assert_eq!(grid.dims, [16, 1024]);
    assert_eq!(grid.element.size, 4);
    assert_eq!(grid.row_bytes(), Some(4096));
    assert!(!grid.element.is_structure());

    let counters = types.global_at(symbol(&exe, "counters")).unwrap();
    assert_eq!(
        (counters.dims.as_slice(), counters.element.size),
        (&[4][..], 8)
    );

    let local = types
        .pointers
        .iter()
        .find(|p| p.name == "local")
        .expect("the local pointer");
    assert_eq!(local.pointee.type_name, "struct particle");
    assert!(!local.scope.is_empty() && local.address.is_none());
    let main = symbol(&exe, "main");
    assert!(local.scope.iter().any(|&(lo, hi)| main >= lo && main < hi));
    // Found by its declaration line, or by the name the line assigns to.
    let line = local.decl_line.expect("a declaration line");
    assert_eq!(types.pointer_for(main + 4, Some(line), None), Some(local));
    let global = types
        .pointer_for(main + 4, None, Some("global_ptr"))
        .unwrap();
    assert_eq!(global.address, Some(symbol(&exe, "global_ptr")));
    assert_eq!(global.pointee.size, 48);
}

#[test]
fn a_file_without_debug_information_has_no_types() {
    let dir = tempfile::tempdir().unwrap();
    if !cachescope_testkit::tools_or_skip(&["cc"]) {
        return;
    }
    let exe = cachescope_testkit::compile_c(
        dir.path(),
        "plain",
        "int v[4]; int main(void) { return v[0]; }\n",
        &[],
    );
    let types = ModuleTypes::load(&exe);
    assert!(!types.has_types);
    assert!(types.globals.is_empty());
    assert!(
        ModuleTypes::load(Path::new("/nonexistent"))
            .globals
            .is_empty()
    );
}
