"""Result objects: the command line's JSON documents as numpy arrays.

Every result keeps the exact JSON the command line prints for the same request in ``.json``
(``cachescope mrc --json`` and so on), so a notebook and a shell script see the same numbers.
"""

from __future__ import annotations

import json as _json
from collections.abc import Mapping as _Mapping
from typing import Any, Dict, Optional

import numpy as np


def _pandas():
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("to_pandas() needs pandas: pip install pandas") from e
    return pandas


class Curve:
    """A miss-ratio curve: one point per cache size.

    Attributes (numpy arrays, one element per size):
        sizes: cache sizes in bytes (uint64).
        lines: lines each size holds (uint64).
        miss_ratio: misses per reference counting cold misses (NaN where the method does not
            estimate cold misses: the models without ``estimate_cold=True``).
        miss_ratio_warm: misses per reference leaving cold (first-reference) misses out.
    and ``method``, ``policy``, ``line_size``, ``json`` (the command line's document).

    >>> import cachescope as cs
    >>> c = cs.workload("loop", lines=256, refs=20000).mrc(sizes=["8K", "32K"])
    >>> c.miss_ratio_warm.tolist()
    [0.9872, 0.0]
    """

    def __init__(self, document: str):
        self.json: str = document
        d = _json.loads(document)
        self.method: str = d["method"]
        self.policy: str = d["policy"]
        self.line_size: int = d["line_size"]
        points = d["points"]
        self.sizes = np.array([p["size_bytes"] for p in points], dtype=np.uint64)
        self.lines = np.array([p["lines"] for p in points], dtype=np.uint64)
        self.miss_ratio = np.array(
            [np.nan if p.get("miss_ratio") is None else p["miss_ratio"] for p in points],
            dtype=np.float64,
        )
        self.miss_ratio_warm = np.array([p["miss_ratio_warm"] for p in points], dtype=np.float64)

    def to_dict(self) -> Dict[str, Any]:
        """The JSON document as Python objects."""
        return _json.loads(self.json)

    def to_pandas(self):
        """A DataFrame with columns size_bytes, lines, miss_ratio, miss_ratio_warm."""
        return _pandas().DataFrame(
            {
                "size_bytes": self.sizes,
                "lines": self.lines,
                "miss_ratio": self.miss_ratio,
                "miss_ratio_warm": self.miss_ratio_warm,
            }
        )

    def plot(self, ax=None, warm: bool = False, **kwargs):
        """Draws the curve on a matplotlib axis (log-2 size axis); returns the axis."""
        try:
            import matplotlib.pyplot as plt
        except ImportError as e:
            raise ImportError("Curve.plot needs matplotlib: pip install './python[plot]'") from e

        ax = ax or plt.gca()
        y = self.miss_ratio_warm if warm or np.isnan(self.miss_ratio).all() else self.miss_ratio
        kwargs.setdefault("label", f"{self.method} {self.policy}")
        ax.plot(self.sizes, y, **kwargs)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("cache size (bytes)")
        ax.set_ylabel("miss ratio")
        return ax

    def __len__(self) -> int:
        return len(self.sizes)

    def __repr__(self) -> str:
        return f"<Curve {self.method} {self.policy}, {len(self)} sizes, {self.line_size}-B lines>"


class ThreadCurves(_Mapping):
    """A curve per thread (``mrc --per-thread``), a mapping from thread id to that thread's
    :class:`Curve` (the points ``trace.thread(thread).mrc(...)`` gives): ``curves[thread]``,
    ``for thread in curves``, ``thread in curves``, ``curves.items()``; ``refs[thread]`` its
    references, ``threads`` the thread ids in order; ``method``, ``policy``, ``line_size`` and
    ``json`` (the command line's document) as for a curve.
    """

    def __init__(self, document: str):
        self.json: str = document
        d = _json.loads(document)
        self.method: str = d["method"]
        self.policy: str = d["policy"]
        self.line_size: int = d["line_size"]
        self.threads = [t["thread"] for t in d["threads"]]
        self.refs: Dict[int, int] = {t["thread"]: t["refs"] for t in d["threads"]}
        self.curves: Dict[int, Curve] = {}
        for t in d["threads"]:
            one = {"method": self.method, "policy": self.policy, "line_size": self.line_size, "points": t["points"]}
            self.curves[t["thread"]] = Curve(_json.dumps(one))

    def __getitem__(self, thread: int) -> "Curve":
        return self.curves[thread]

    def __len__(self) -> int:
        return len(self.threads)

    def __iter__(self):
        return iter(self.threads)

    def to_pandas(self):
        """A long DataFrame: thread, refs and the columns of :meth:`Curve.to_pandas`."""
        pd = _pandas()
        frames = []
        for t in self.threads:
            f = self.curves[t].to_pandas()
            f.insert(0, "refs", self.refs[t])
            f.insert(0, "thread", t)
            frames.append(f)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def __repr__(self) -> str:
        return f"<ThreadCurves {self.method} {self.policy}, threads {self.threads}>"


class Footprint:
    """The average footprint fp(w): distinct lines in a window of w references (HOTL).

    Attributes: ``windows`` (uint64), ``footprint`` (float64), ``refs``, ``distinct_lines``,
    ``line_size`` and ``json``.
    """

    def __init__(self, document: str):
        self.json: str = document
        d = _json.loads(document)
        self.line_size: int = d["line_size"]
        self.refs: int = d["refs"]
        self.distinct_lines: int = d["distinct_lines"]
        self.windows = np.array([p["window"] for p in d["points"]], dtype=np.uint64)
        self.footprint = np.array([p["footprint"] for p in d["points"]], dtype=np.float64)

    def to_pandas(self):
        """A DataFrame with columns window, footprint."""
        return _pandas().DataFrame({"window": self.windows, "footprint": self.footprint})

    def __repr__(self) -> str:
        return f"<Footprint {len(self.windows)} windows of {self.refs} references>"


class Document(dict):
    """A JSON document (``stats()``, ``report()``, a profile's summary) as a dict, with the
    command line's text in ``.json``."""

    def __init__(self, document: str):
        super().__init__(_json.loads(document))
        self.json: str = document


class Profile:
    """Sampled reuse distances (StatCache's run-time part): curves without the trace.

    >>> import cachescope as cs
    >>> p = cs.workload("zipf", refs=50000).sample(rate=0.01)
    >>> p.mrc("statstack", sizes=["4K"]).method
    'statstack'
    """

    def __init__(self, native):
        self._native = native
        self.summary = Document(native.summary())

    def mrc(
        self,
        method: str = "statstack",
        sizes=None,
        estimate_cold: bool = False,
        threads: Optional[int] = None,
    ) -> Curve:
        """The curve of ``statstack`` (LRU) or ``statcache`` (random) from the samples."""
        from . import _sizes, _threads

        return Curve(self._native.mrc(method, _sizes(sizes), estimate_cold, _threads(threads)))

    def samples(self) -> np.ndarray:
        """(position, distance) per sample; distance -1 for a sample never reused."""
        return np.array(self._native.samples(), dtype=np.int64).reshape(-1, 2)

    def save(self, path) -> None:
        """Writes the profile file ``cachescope mrc PROFILE --method statstack`` reads."""
        self._native.save(str(path))

    def __repr__(self) -> str:
        s = self.summary
        return f"<Profile {s['samples']} samples of {s['refs']} references at rate {s['rate']}>"
