"""The examples say what they need: run without matplotlib or pandas, mrc_plot.py stops at
once with the pip command that installs them (before importing cachescope, so this needs no
built extension)."""

import importlib.util
import pathlib
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "mrc_plot.py"


def run_without(module: str) -> subprocess.CompletedProcess:
    # A None entry in sys.modules makes `import module` raise ImportError, as if missing.
    code = (
        f"import runpy, sys; sys.modules[{module!r}] = None; "
        f"runpy.run_path({str(EXAMPLE)!r}, run_name='__main__')"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_mrc_plot_names_missing_plot_dependencies_and_the_extra():
    # matplotlib is checked first; pandas's own message shows only where matplotlib exists.
    modules = ["matplotlib"]
    if importlib.util.find_spec("matplotlib") is not None:
        modules.append("pandas")
    for module in modules:
        out = run_without(module)
        assert out.returncode == 1, out
        assert f"({module} is not installed)" in out.stderr, out.stderr
        assert "pip install './python[plot]'" in out.stderr, out.stderr
        assert "Traceback" not in out.stderr, out.stderr
