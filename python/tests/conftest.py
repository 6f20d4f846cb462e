"""Skips that say so, as the Rust tests' (crates/cachescope-testkit): every skip is appended to
$CACHESCOPE_TEST_SKIP_LOG (which scripts/test.sh prints at the end), and a skip whose need is
listed in $CACHESCOPE_TEST_REQUIRE (a comma list: valgrind, tool, chromium, mpi, python, …)
is a failure. A skip names its need as the reason's first word in brackets, "[valgrind] …";
a reason without one (pandas missing, the CLI not built) counts as "python": the package's
own test environment, which scripts/test-python.sh sets up."""

import os
import re

import pytest


def _need(reason: str) -> str:
    m = re.match(r"\s*\[([\w-]+)\]", reason)
    return m.group(1) if m else "python"


def _required(need: str) -> bool:
    listed = [n.strip() for n in os.environ.get("CACHESCOPE_TEST_REQUIRE", "").split(",")]
    return need in listed or "all" in listed


def _reason(report) -> str:
    # A skip's longrepr is (file, line, "Skipped: reason").
    if isinstance(report.longrepr, tuple) and len(report.longrepr) == 3:
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return str(report.longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = _reason(report)
    need = _need(reason)
    if _required(need):
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} needs {need}, which CACHESCOPE_TEST_REQUIRE requires, but: {reason}"
        )
        return
    log = os.environ.get("CACHESCOPE_TEST_SKIP_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"SKIPPED {item.nodeid}: {reason} [{need}]\n")
