//! Builds cachescope's Valgrind tool (tool/*.c) when Valgrind's development files are present:
//! the tool executable `cachescope-amd64-linux`, linked statically against Valgrind's core,
//! and the allocator-wrapper library `vgpreload_cachescope-amd64-linux.so`. Both land in
//! OUT_DIR and are embedded by src/lib.rs. Without Valgrind's headers and libraries the build
//! still succeeds: the crate then reports why the tool is missing and `record` uses lackey.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const SOURCES: [&str; 14] = [
    "tool/cs_main.c",
    "tool/cs_fork.c",
    "tool/cs_env.c",
    "tool/cs_instrument.c",
    "tool/cs_debuginfo.c",
    "tool/cs_events.c",
    "tool/cs_sample.c",
    "tool/cs_sample_threads.c",
    "tool/cs_windows.c",
    "tool/cs_spatial.c",
    "tool/cs_share.c",
    "tool/cs_ring.c",
    "tool/cs_toggle.c",
    "tool/cs_calls.c",
];

fn main() {
    println!("cargo::rustc-check-cfg=cfg(cachescope_tool)");
    for f in [
        "tool/cs_main.c",
        "tool/cs_fork.c",
        "tool/cs_fork.h",
        "tool/cs_env.c",
        "tool/cs_env.h",
        "tool/cs_instrument.c",
        "tool/cs_instrument.h",
        "tool/cs_debuginfo.c",
        "tool/cs_events.c",
        "tool/cs_events.h",
        "tool/cs_sample.c",
        "tool/cs_sample.h",
        "tool/cs_sample_threads.c",
        "tool/cs_sample_threads.h",
        "tool/cs_windows.c",
        "tool/cs_windows.h",
        "tool/cs_spatial.c",
        "tool/cs_spatial.h",
        "tool/cs_share.c",
        "tool/cs_share.h",
        "tool/cs_ring.c",
        "tool/cs_ring.h",
        "tool/cs_toggle.c",
        "tool/cs_toggle.h",
        "tool/cs_calls.c",
        "tool/cs_calls.h",
        "tool/cs_protocol.h",
        "tool/cs_preload.c",
    ] {
        println!("cargo::rerun-if-changed={f}");
    }
    println!("cargo::rerun-if-env-changed=CACHESCOPE_NO_VALGRIND_TOOL");
    println!("cargo::rerun-if-env-changed=PKG_CONFIG_PATH");
    match build() {
        Ok((version, hash)) => {
            println!("cargo::rustc-cfg=cachescope_tool");
            println!("cargo::rustc-env=CACHESCOPE_TOOL_VALGRIND={version}");
            println!("cargo::rustc-env=CACHESCOPE_TOOL_HASH={hash:016x}");
        }
        Err(why) => {
            println!(
                "cargo::warning=cachescope's Valgrind tool not built: {why}; `record` will use lackey"
            );
            println!("cargo::rustc-env=CACHESCOPE_TOOL_MISSING={why}");
        }
    }
}

/// Builds both files into OUT_DIR; returns the Valgrind version they were built against and
/// a hash of their bytes, which names the directory they are written into at run time (hashed
/// here because hashing 2.6 MB took ~40 ms at the start of every `record`).
fn build() -> Result<(String, u64), String> {
    if env::var_os("CACHESCOPE_NO_VALGRIND_TOOL").is_some() {
        return Err("CACHESCOPE_NO_VALGRIND_TOOL was set at build time".into());
    }
    let (os, arch) = (
        env::var("CARGO_CFG_TARGET_OS").unwrap_or_default(),
        env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default(),
    );
    if os != "linux" || arch != "x86_64" {
        return Err(format!(
            "the tool is built for amd64 Linux only (target: {arch}-{os})"
        ));
    }
    // pkg-config's directories end in `valgrind` on Debian; other installs may name the parent.
    let either = |d: String, probe: &str| {
        let d = PathBuf::from(d);
        [d.clone(), d.join("valgrind")]
            .into_iter()
            .find(|c| c.join(probe).exists())
    };
    let include = pkg_var("includedir")
        .and_then(|d| either(d, "pub_tool_tooliface.h"))
        .unwrap_or_else(|| PathBuf::from("/usr/include/valgrind"));
    let libdir = pkg_var("libdir")
        .and_then(|d| either(d, "libcoregrind-amd64-linux.a"))
        .unwrap_or_else(|| PathBuf::from("/usr/lib/x86_64-linux-gnu/valgrind"));
    let load = pkg_var("valt_load_address").unwrap_or_else(|| "0x58000000".into());
    let header = include.join("pub_tool_tooliface.h");
    if !header.exists() {
        return Err(format!(
            "{} not found (install Valgrind's development files: Debian/Ubuntu `apt-get install valgrind`, Fedora `valgrind-devel`)",
            header.display()
        ));
    }
    let libs = [
        "libcoregrind-amd64-linux.a",
        "libvex-amd64-linux.a",
        "libgcc-sup-amd64-linux.a",
    ];
    for lib in libs {
        if !libdir.join(lib).exists() {
            return Err(format!("{} not found", libdir.join(lib).display()));
        }
    }
    let version = version_of(&include.join("valgrind.h"))?;
    let out = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?);
    let cc = cc::Build::new().get_compiler();
    let flags = [
        "-DVGA_amd64=1",
        "-DVGO_linux=1",
        "-DVGP_amd64_linux=1",
        "-DVGPV_amd64_linux_vanilla=1",
        "-fno-stack-protector",
        "-fno-builtin",
        "-fno-strict-aliasing",
        "-fno-pie",
        "-O2",
        "-g",
        "-Wall",
    ];
    let mut objects = Vec::new();
    for src in SOURCES {
        let obj = out.join(Path::new(src).with_extension("o").file_name().unwrap());
        run(cc
            .to_command()
            .args(flags)
            .arg("-I")
            .arg(&include)
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(&obj))?;
        objects.push(obj);
    }
    run(cc
        .to_command()
        .args([
            "-static",
            "-nodefaultlibs",
            "-nostartfiles",
            "-u",
            "_start",
            "-no-pie",
        ])
        .arg(format!("-Wl,-Ttext-segment={load}"))
        // tool/cs_debuginfo.c: the core's image opening goes through the tool first.
        .arg("-Wl,--wrap=vgModuleLocal_img_from_local_file")
        .arg("-o")
        .arg(out.join("cachescope-amd64-linux"))
        .args(&objects)
        .arg(libdir.join(libs[0]))
        .arg(libdir.join(libs[1]))
        .arg("-lgcc")
        .arg(libdir.join(libs[2])))?;
    run(cc
        .to_command()
        .args([
            "-fPIC",
            "-shared",
            "-O2",
            "-nostdlib",
            "-fno-stack-protector",
            "-Wall",
        ])
        .arg("-I")
        .arg(&include)
        .arg("tool/cs_preload.c")
        .arg("-o")
        .arg(out.join("vgpreload_cachescope-amd64-linux.so")))?;
    let mut h = twox_hash::XxHash64::with_seed(0);
    for f in [
        "cachescope-amd64-linux",
        "vgpreload_cachescope-amd64-linux.so",
    ] {
        let bytes = std::fs::read(out.join(f)).map_err(|e| format!("{f}: {e}"))?;
        std::hash::Hasher::write(&mut h, &bytes);
    }
    Ok((version, std::hash::Hasher::finish(&h)))
}

fn pkg_var(name: &str) -> Option<String> {
    let out = Command::new("pkg-config")
        .args([&format!("--variable={name}"), "valgrind"])
        .output()
        .ok()?;
    let v = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !v.is_empty()).then_some(v)
}

/// "MAJOR.MINOR" from valgrind.h's __VALGRIND_MAJOR__ and __VALGRIND_MINOR__.
fn version_of(header: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(header)
        .map_err(|e| format!("cannot read {}: {e}", header.display()))?;
    let find = |name: &str| {
        text.lines().find_map(|l| {
            let rest = l.trim().strip_prefix("#define")?.trim();
            rest.strip_prefix(name)?.trim().parse::<u32>().ok()
        })
    };
    match (find("__VALGRIND_MAJOR__"), find("__VALGRIND_MINOR__")) {
        (Some(a), Some(b)) => Ok(format!("{a}.{b}")),
        _ => Err(format!("no version in {}", header.display())),
    }
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
