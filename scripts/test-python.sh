#!/usr/bin/env bash
# The Python package's tests: builds it from python/ into a virtualenv (target/python-venv),
# then runs pytest on python/tests (each curve against the CLI's JSON) and the docstrings'
# examples. Skips, saying why, where python3 with venv or PyPI is missing; fails instead where
# CACHESCOPE_TEST_REQUIRE lists `python`.
set -euo pipefail
cd "$(dirname "$0")/.."

required() { [[ ",${CACHESCOPE_TEST_REQUIRE:-}," =~ ,[[:space:]]*($1|all)[[:space:]]*, ]]; }
skip() {
  echo "SKIPPED python/tests: $1 [python]"
  if [ -n "${CACHESCOPE_TEST_SKIP_LOG:-}" ]; then
    echo "SKIPPED python/tests: $1 [python]" >>"$CACHESCOPE_TEST_SKIP_LOG"
  fi
  if required python; then
    echo "error: CACHESCOPE_TEST_REQUIRE requires python, but $1" >&2
    exit 1
  fi
  exit 0
}

if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  skip "the Python package's tests need python3 with venv (apt-get install python3-venv)"
fi
venv=target/python-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# The build backend and the test tools come from PyPI; without it there is nothing to test with.
if ! "$venv/bin/pip" install -q "maturin>=1.8,<2" numpy pytest pandas; then
  skip "could not install maturin, numpy, pytest and pandas from PyPI"
fi
# From here on a failure is the package's own.
PATH="$PWD/$venv/bin:$PATH" "$venv/bin/pip" install -q --no-build-isolation --force-reinstall --no-deps ./python
cargo fmt --manifest-path python/Cargo.toml -- --check
cargo clippy --manifest-path python/Cargo.toml --locked -q -- -D warnings
cargo build -q -p cachescope-cli --locked
# -rs: every skip listed with its reason at the end (python/tests/conftest.py also logs them).
CACHESCOPE_CLI="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/debug/cachescope" "$venv/bin/pytest" -q -rs python/tests
package=$("$venv/bin/python" -c 'import cachescope, os; print(os.path.dirname(cachescope.__file__))')
(cd "$venv" && bin/pytest -q -rs --doctest-modules "$package")
