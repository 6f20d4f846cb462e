# %% [markdown]
# # Miss-ratio curves from Python
# A notebook-style script (cells marked `# %%`, as Jupyter and VS Code read them): the exact
# LRU curve of a trace beside StatStack's from 1 in 100 references and the optimal bound,
# drawn with matplotlib. Run it with `python examples/python/mrc_plot.py [TRACE]`; without a
# trace it uses the built-in `phases` workload.
#
# Needs matplotlib and pandas beside cachescope: `pip install ./python[plot]` installs all
# three.

# %%
import sys

# Said before anything is computed, with the command that fixes it.
try:
    import matplotlib
    import pandas  # noqa: F401  (curve.to_pandas below)
except ImportError as missing:
    sys.exit(
        f"mrc_plot.py needs matplotlib and pandas ({missing.name} is not installed): "
        "pip install './python[plot]'"
    )

matplotlib.use("Agg")  # a file, not a window: works on a headless machine
import matplotlib.pyplot as plt

import cachescope as cs

trace = cs.open(sys.argv[1]) if len(sys.argv) > 1 else cs.workload("phases")
sizes = cs.sizes("1K", "16M", per_octave=4)

# %%
exact = trace.mrc(method="exact", sizes=sizes)
statstack = trace.mrc(method="statstack", sizes=sizes, rate=0.01)
opt = trace.mrc(method="exact", policy="opt", sizes=sizes)
print(exact.to_pandas().head())  # needs pandas; exact.sizes and exact.miss_ratio are numpy

# %%
fig, ax = plt.subplots(figsize=(7, 4))
for curve in (exact, statstack, opt):
    curve.plot(ax=ax, warm=True)
ax.set_title(f"{trace.name}: miss ratio by cache size, LRU and its optimal bound")
ax.legend()
fig.tight_layout()
fig.savefig("mrc.png", dpi=120)
print("wrote mrc.png")
