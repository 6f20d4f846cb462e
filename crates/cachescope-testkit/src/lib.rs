//! What the tests of every cachescope crate share, written once: whether a tool is installed
//! ([`have`], [`tools_or_skip`], [`tool_or_skip`], [`chromium_or_skip`]), compiling C
//! ([`compile_c`], [`compile_c_file`]), running and recording a program ([`valgrind`],
//! [`lackey`], [`record()`], [`record_ok`]) and skipping a test ([`skip()`]).
//!
//! A test that needs something the machine lacks skips, and says so where nobody can miss it:
//! a line `SKIPPED test: why [need]` straight on the test process's standard output (the
//! harness captures `println!`, not the handle itself) and in the file named by
//! `CACHESCOPE_TEST_SKIP_LOG`, which `scripts/test.sh` prints at the end of the run. Where
//! the need is listed in `CACHESCOPE_TEST_REQUIRE` (a comma list, e.g.
//! `valgrind,tool,chromium,mpi,python`; `.ci/run` sets it after its installs), the skip is a
//! failure instead. Once the tools exist, a recording or a compilation that fails is a
//! failure, never a skip.
//!
//! The needs: `valgrind` (Valgrind, lackey, Cachegrind and the annotate scripts), `tool`
//! (cachescope's own Valgrind tool, built and runnable), `cc` (a C compiler and binutils),
//! `chromium`, `mpi` (`mpirun`, `mpicc`), `python`, and any other tool by its own name
//! (`gzip`, `zstd`, `xz`, `script`). A skip that depends on the machine rather than on an
//! installed tool (no separate debug files, root ignoring permissions) has a need of its own
//! that CI does not list.

mod cc;
mod record;
mod skip;
mod tools;

pub use cc::{compile_c, compile_c_file};
pub use record::{lackey, record, record_ok, valgrind};
pub use skip::{REQUIRE_VAR, SKIP_LOG_VAR, required, skip};
pub use tools::{chromium_or_skip, have, need_of, tool_or_skip, tool_status, tools_or_skip};
