"""cachescope: cache-locality analysis of memory-access traces, from Python.

A source (a trace file, a built-in workload or a recorded program) gives miss-ratio curves
for every cache size by any method, footprints, sampling profiles and HTML reports. Keyword
names and defaults are the command line's flags (``sizes``, ``policy``, ``line_size``,
``seed``, ``rate``, ``threads``, ...), and every result carries the JSON the command line
prints for the same request, so the two agree number for number.

>>> import cachescope as cs
>>> t = cs.workload("zipf", refs=100_000)
>>> curve = t.mrc(method="statstack", sizes=["4K", "32K", "256K"])
>>> curve.sizes.tolist()
[4096, 32768, 262144]

Passes release the GIL, so threads analyse several traces at once; errors raise
:class:`CachescopeError` with the library's message (the file and line of bad input).
"""

from __future__ import annotations

import os
import tempfile
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import _native
from ._native import CachescopeError
from ._results import Curve, Document, Footprint, Profile, ThreadCurves

__all__ = [
    "CachescopeError",
    "Curve",
    "Document",
    "Footprint",
    "Profile",
    "ThreadCurves",
    "Trace",
    "analyse",
    "load_profile",
    "open",
    "record",
    "sizes",
    "workload",
]

Size = Union[int, str]
Progress = Union[bool, Callable[[int], None], None]

#: The sampling rate of StatCache and StatStack by default (the command line's ``--rate``).
DEFAULT_RATE = 1e-4
#: References per sampling time slot by default (``--slot``).
DEFAULT_SLOT = 200_000
#: The share of lines ``sampled=True`` keeps by default (``--sampled``'s ``--rate``).
DEFAULT_SAMPLED_RATE = 0.01
#: The most lines ``sampled=True`` keeps at once by default (``--sample-lines``).
DEFAULT_SAMPLE_LINES = 1 << 18


def _sizes(sizes: Optional[Iterable[Size]]) -> List[int]:
    """Byte counts from ints or strings like ``"32K"``; the command line's 1K..1G sweep
    (8 sizes per power of two) when None."""
    if sizes is None:
        return _native.size_range()
    if isinstance(sizes, (str, int)):
        sizes = [sizes]
    out = [s if isinstance(s, int) else _native.parse_size(s) for s in sizes]
    if any(s <= 0 for s in out):
        raise CachescopeError("a cache size of 0 bytes holds nothing; give sizes of at least one line")
    return out


def sizes(lo: Size = "1K", hi: Size = "1G", per_octave: int = 8) -> List[int]:
    """Cache sizes from ``lo`` to ``hi`` bytes, ``per_octave`` per power of two (the command
    line's ``--range LO..HI --per-octave N``; its default sweep without arguments)."""
    return _native.size_range(_size(lo), _size(hi), per_octave)


def _size(s: Size) -> int:
    return s if isinstance(s, int) else _native.parse_size(s)


def _threads(threads: Optional[int]) -> int:
    return max(1, threads or os.cpu_count() or 1)


def _progress(progress: Progress):
    """A callback for the native pass: tqdm's bar when ``True`` (and tqdm is installed)."""
    if progress is None or progress is False:
        return None
    if callable(progress):
        return progress
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    bar = tqdm(unit=" refs", unit_scale=True)

    def update(n: int) -> None:
        bar.update(n - bar.n)

    return update


class Trace:
    """A source of references: every method reads it afresh (a file is reopened, a workload
    regenerated), so one object serves many analyses."""

    def __init__(self, native):
        self._native = native

    @property
    def name(self) -> str:
        """The source as results name it (a path, or a workload's name)."""
        return self._native.name

    def thread(self, thread: int) -> "Trace":
        """The references of thread ``thread`` alone (``--thread ID``): every analysis of the
        result sees that thread's stream. Thread ids are those ``stats()`` lists under
        ``threads``; a single-stream trace is thread 1."""
        return Trace(self._native.thread(int(thread)))

    def stats(self, line_size: Size = 64, threads: Optional[int] = None, progress: Progress = None) -> Document:
        """Reference counts by kind, distinct lines, bytes touched (``cachescope stats``)."""
        return Document(_native.stats(self._native, _size(line_size), _threads(threads), _progress(progress)))

    def mrc(
        self,
        method: str = "exact",
        sizes: Optional[Iterable[Size]] = None,
        policy: Optional[str] = None,
        line_size: Size = 64,
        seed: int = 1,
        rate: float = DEFAULT_RATE,
        slot: int = DEFAULT_SLOT,
        ways: Optional[int] = None,
        estimate_cold: bool = False,
        mini_rate: float = 0.01,
        include_instructions: bool = False,
        threads: Optional[int] = None,
        progress: Progress = None,
        mini_min_sets: int = 64,
        mini_unadjusted: bool = False,
        per_thread: bool = False,
    ) -> Union[Curve, ThreadCurves]:
        """A miss-ratio curve (``cachescope mrc``).

        method: ``exact`` (LRU stack distances for every size, or per-size simulation for
        other policies), ``statstack``, ``statcache``, ``hotl``, ``hotl-rt`` or ``mini``
        (miniature simulation at ``mini_rate``, each miniature at least ``mini_min_sets``
        sets; misses over the references the rate should keep, SHARDS's adjustment, unless
        ``mini_unadjusted``). policy: ``lru`` (default), ``random``,
        ``opt``, ``fifo``, ``plru``, ``srrip``, ``brrip``, ``drrip``; the models take only the
        policy they model. ways: set-associative caches (Smith's formula for exact LRU and
        HOTL, simulation otherwise). per_thread: a curve per thread of the trace from one pass
        (``mrc --per-thread``), returned as :class:`ThreadCurves`; each equals
        ``trace.thread(id).mrc(...)``.
        """
        doc = _native.mrc(
            self._native, method, policy, _sizes(sizes), _size(line_size), include_instructions,
            seed, rate, slot, ways, estimate_cold, mini_rate, _threads(threads), _progress(progress),
            mini_min_sets, mini_unadjusted, per_thread,
        )
        return ThreadCurves(doc) if per_thread else Curve(doc)

    def footprint(
        self,
        windows: Optional[Sequence[int]] = None,
        per_octave: int = 256,
        line_size: Size = 64,
        include_instructions: bool = False,
        threads: Optional[int] = None,
        progress: Progress = None,
    ) -> Footprint:
        """The average footprint for every window length (``cachescope footprint``)."""
        doc = _native.footprint(
            self._native, _size(line_size), include_instructions,
            None if windows is None else list(windows), per_octave, _threads(threads), _progress(progress),
        )
        return Footprint(doc)

    def sample(
        self,
        rate: float = DEFAULT_RATE,
        seed: int = 1,
        slot: int = DEFAULT_SLOT,
        line_size: Size = 64,
        include_instructions: bool = False,
        threads: Optional[int] = None,
        progress: Progress = None,
    ) -> Profile:
        """Sampled reuse distances (``cachescope sample``): a :class:`Profile`."""
        native = _native.sample(
            self._native, rate, seed, slot, _size(line_size), include_instructions,
            _threads(threads), _progress(progress),
        )
        return Profile(native)

    def simulate(
        self,
        caches: Union[str, Sequence[str]],
        policy: str = "lru",
        seed: int = 1,
        line_size: Size = 64,
        threads: Optional[int] = None,
        progress: Progress = None,
        writebacks: bool = False,
        write_allocate: bool = True,
        prefetch: str = "none",
        prefetch_degree: int = 1,
        prefetch_distance: int = 1,
        utilization: bool = False,
        dtlb: Union[str, Sequence[str]] = (),
        itlb: Union[str, Sequence[str]] = (),
        stlb: Union[str, Sequence[str]] = (),
        tlb: Optional[str] = None,
        tlb_policy: str = "lru",
        pages: Union[str, Sequence[str]] = (),
        walks: bool = True,
        cores: Optional[int] = None,
        interleave: str = "time",
        quantum: Optional[int] = None,
    ) -> Document:
        """Exact simulation of independent caches side by side (``cachescope simulate
        --cache SIZE,ASSOC,LINE … --policy P``): ``{"simulations": [...]}``, each with its
        levels' hits, misses and miss_ratio. ``writebacks``, ``write_allocate``, ``prefetch``
        (``none``, ``next-line`` or ``stride``), ``prefetch_degree`` and ``prefetch_distance``
        are ``simulate``'s flags of those names (docs/hardware.md); ``utilization=True`` adds
        each level's ``used_bytes``, ``fetched_bytes`` and ``utilization`` (``--utilization``).
        TLBs (docs/tlb.md): ``dtlb``, ``itlb``, ``stlb`` (``"ENTRIES,WAYS,PAGE"`` or a list),
        ``tlb="skylake"``, ``tlb_policy``, ``pages`` (``"2M"``, ``"LO..HI=2M"``) and
        ``walks=False`` (``--no-walks``) add ``tlbs``, ``page_walks`` and ``walk_refs``; with
        TLBs, ``caches`` may be empty. ``cores=N`` (``simulate --cores N``, docs/threads.md)
        simulates N cores, each with a private copy of the one cache in ``caches``, kept
        coherent; the threads interleaved in modelled time, slices of ``quantum`` cycles
        (default 100), or with ``interleave="instructions"`` round-robin, ``quantum``
        instructions each; ``quantum=0`` keeps the recorded order. It gives the CLI's
        document: ``caches`` (each core's), ``totals``, ``clocks``, ``threads``, with
        ``coherence`` misses beside the other classes. Write-backs, utilization and a
        prefetcher (each core's cache its own, docs/threads.md) work with cores; TLBs do not
        (their page walks join each thread's stream in a pass only the command line has)."""
        caches = [caches] if isinstance(caches, str) else list(caches)
        many = lambda v: [v] if isinstance(v, str) else list(v)
        return Document(
            _native.simulate(
                self._native, caches, policy, seed, _size(line_size), _threads(threads), _progress(progress),
                writebacks=writebacks, write_allocate=write_allocate, prefetch=prefetch,
                prefetch_degree=prefetch_degree, prefetch_distance=prefetch_distance,
                utilization=utilization, dtlb=many(dtlb), itlb=many(itlb), stlb=many(stlb),
                tlb=tlb, tlb_policy=tlb_policy, pages=many(pages), walks=walks,
                cores=cores, interleave=interleave, quantum=quantum,
            )
        )

    def l2(
        self,
        l1: Size = "32K",
        l2: Iterable[Size] = ("128K", "256K", "512K", "1M", "2M"),
        policy: str = "lru",
        variant: str = "fills",
        simulate: bool = False,
        seed: int = 1,
        line_size: Size = 64,
        threads: Optional[int] = None,
        progress: Progress = None,
    ) -> Document:
        """L2 miss ratios predicted from the L1 stack distances (Ji et al.; ``cachescope
        l2``), beside an exact two-level simulation when ``simulate``."""
        return Document(
            _native.l2(
                self._native, _size(l1), _sizes(l2), policy, variant, simulate, seed,
                _size(line_size), _threads(threads), _progress(progress),
            )
        )

    def phases(
        self,
        interval: int = 100_000,
        unit: str = "auto",
        k: Union[int, str] = 2,
        method: str = "all",
        l2: str = "1M,16,64",
        l1: Optional[str] = None,
        bits: int = 8,
        seed: int = 1,
        no_simpoint: bool = False,
        threads: Optional[int] = None,
    ) -> Document:
        """Memory phases per interval and every method's scores (``cachescope phases``)."""
        return Document(
            _native.phases(
                self._native, interval, unit, str(k), method, l2, l1, bits, seed, no_simpoint, _threads(threads)
            )
        )

    def attribute(
        self,
        cache: str = "64K,4,32",
        sample: int = 25_000,
        events=None,
        exe=None,
        handler_lines: int = 32,
        no_cost: bool = False,
        no_mrc: bool = False,
        cachegrind_out=None,
        seed: int = 1,
        line_size: Size = 64,
        threads: Optional[int] = None,
        progress: Progress = None,
        writebacks: bool = False,
        utilization: bool = False,
    ) -> Document:
        """Misses and evictions by variable, heap allocation site and code line (Buck &
        Hollingsworth; ``cachescope attribute``): the exact simulation beside the sampled
        monitor's view. ``events`` defaults to ``TRACE.events`` beside a trace file;
        ``cachegrind_out`` also writes a file ``cg_annotate`` and KCachegrind read;
        ``writebacks=True`` counts write-backs by bucket (``--writebacks``), ``utilization=True``
        the bytes of each fetched line used, by bucket, code line and load (``--utilization``)."""
        opt = lambda p: None if p is None else str(p)  # noqa: E731
        return Document(
            _native.attribute(
                self._native, cache, sample, opt(events), opt(exe), handler_lines, no_cost, no_mrc,
                opt(cachegrind_out), seed, _size(line_size), _threads(threads), _progress(progress),
                writebacks=writebacks, utilization=utilization,
            )
        )

    def callgraph(
        self,
        i1: str = "32K,8,64",
        d1: str = "32K,8,64",
        ll: str = "8M,16,64",
        events=None,
        exe=None,
        per_thread: bool = False,
        callgrind_out=None,
        line_size: Size = 64,
        threads: Optional[int] = None,
        progress: Progress = None,
        sampled: bool = False,
        rate: Optional[float] = None,
        seed: int = 1,
    ) -> Document:
        """Each function's costs, its own and inclusive of everything it calls, in Cachegrind's
        cache model (``i1``, ``d1``, ``ll``), the calls between functions and the structures
        each function's subtree misses on (``cachescope attribute --callgraph``;
        docs/callgraph.md): ``{"functions": [...], "calls": [...], "contexts": [...], ...}``.
        Inclusive costs need a recording with call events. ``callgrind_out`` also writes a
        file ``callgrind_annotate --inclusive=yes`` and KCachegrind read (one per thread,
        FILE-NN, with ``per_thread``). ``events`` defaults to ``TRACE.events`` beside a trace
        file. ``sampled=True`` reads a hashed sample of the lines (``--sampled``; ``rate``
        default 0.01, ``seed`` the hash's): references and calls stay exact, the misses are
        estimates scaled by the rate in the document's ``sampled``."""
        opt = lambda p: None if p is None else str(p)  # noqa: E731
        share = (DEFAULT_SAMPLED_RATE if rate is None else rate, seed) if sampled else None
        return Document(
            _native.callgraph(
                self._native, i1, d1, ll, opt(events), opt(exe), per_thread, opt(callgrind_out),
                _size(line_size), _threads(threads), _progress(progress), share,
            )
        )

    def sharing(
        self,
        l1: str = "32K,8,64",
        ll: str = "8M,16,64",
        cores: Optional[int] = None,
        quantum: Optional[int] = None,
        events=None,
        threads: Optional[int] = None,
        progress: Progress = None,
        interleave: str = "time",
        all: bool = False,
    ) -> Document:
        """The lines two or more threads touch and one writes, ``true`` or ``false`` sharing,
        with the structures each holds (their fields, the threads using them), the code that
        writes them, the fix, and the coherence misses they cause in a machine of private
        ``l1`` caches over a shared ``ll`` (``cachescope sharing``; one core per thread unless
        ``cores``; the threads interleaved in modelled time, slices of ``quantum`` cycles
        (default 100), or with ``interleave="instructions"`` round-robin, ``quantum``
        instructions each; ``quantum=0`` keeps the recorded order): ``{"lines": [...],
        "coherence_misses": N, ...}``, the lines with coherence misses, every shared line with
        ``all=True``. ``events`` defaults to ``TRACE.events`` beside a trace file."""
        return Document(
            _native.sharing(
                self._native, l1, ll, cores, interleave, quantum, all,
                None if events is None else str(events), _threads(threads), _progress(progress),
            )
        )

    def whatif(
        self,
        changes: Union[str, Sequence[str]],
        caches: Union[str, Sequence[str], None] = None,
        cores: Optional[int] = None,
        events=None,
        exe=None,
        threads: Optional[int] = None,
        progress: Progress = None,
    ) -> Document:
        """What a layout change would do (``cachescope whatif``): ``simulate``'s document for the
        trace as it is (``original``) and with ``changes`` applied to its addresses
        (``changed``), each level's ``misses`` and ``misses_after`` (``levels``) and what each
        change moved (``applied``). ``changes`` are SPECs like ``"split:parts=x"``,
        ``"pad-rows:grid=64"``, ``"own-line:counters"``, ``"nontemporal:out"``
        (docs/advice.md). The machine: independent ``caches``, or ``cores`` cores (a 32 KiB L1
        each over a shared 8 MiB LL), or by default 32 KiB L1I and L1D over a 1 MiB L2. Needs a
        recorded trace file and its event log (``events`` defaults to ``TRACE.events``)."""
        opt = lambda p: None if p is None else str(p)  # noqa: E731
        changes = [changes] if isinstance(changes, str) else list(changes)
        caches = [] if caches is None else ([caches] if isinstance(caches, str) else list(caches))
        return Document(
            _native.whatif(
                self._native, changes, caches, cores, opt(events), opt(exe), _threads(threads), _progress(progress)
            )
        )

    def advise(
        self,
        caches: Union[str, Sequence[str], None] = None,
        cores: Optional[int] = None,
        events=None,
        exe=None,
        threads: Optional[int] = None,
        progress: Progress = None,
    ) -> Document:
        """What to change and what it gains (``cachescope advise``): ``{"findings": [...]}``,
        each with its ``kind`` (split, pad, false-sharing, latent-false-sharing, block,
        prefetch, non-temporal), ``structure``, ``fields``, ``code``, ``evidence``, ``change``,
        the ``whatif`` command that reproduces it and the misses per level before and after
        (``levels``; ``coherence_misses`` with cores), most misses saved first. The machine as
        for ``whatif``; docs/advice.md says how each finding is made."""
        opt = lambda p: None if p is None else str(p)  # noqa: E731
        caches = [] if caches is None else ([caches] if isinstance(caches, str) else list(caches))
        return Document(
            _native.advise(self._native, caches, cores, opt(events), opt(exe), _threads(threads), _progress(progress))
        )

    def report(
        self,
        dir,
        rate: float = 1e-3,
        interval: int = 100_000,
        ways: int = 8,
        seed: int = 1,
        line_size: Size = 64,
        threads: Optional[int] = None,
    ) -> Document:
        """Every analysis as a self-contained HTML report in ``dir`` (``cachescope report``);
        returns the summary (paths of report.html, report.json and the figures)."""
        return Document(
            _native.report(self._native, str(dir), _size(line_size), seed, rate, interval, ways, _threads(threads))
        )

    def __repr__(self) -> str:
        return f"<Trace {self.name}>"


def open(path, format: str = "auto", thread: Optional[int] = None) -> Trace:  # noqa: A001 - the package's verb, as in the issue
    """A trace file of any format cachescope reads (lackey, plain, din, binary, native, each
    optionally gzip/zstd/xz-compressed); ``format`` forces one; ``thread`` keeps that thread's
    references alone (as :meth:`Trace.thread`)."""
    t = Trace(_native.open_file(str(path), format))
    return t if thread is None else t.thread(thread)


def workload(name: str, seed: int = 1, refs: Optional[int] = None, **params) -> Trace:
    """A built-in synthetic workload (``cachescope generate --list``): sequential, stride,
    loop, random, zipf, matmul, ... with their parameters (``lines``, ``stride``, ``n``,
    ``tile``, ``zipf_s``, ``instructions``)."""
    return Trace(_native.workload(name, seed=seed, refs=refs, **params))


def record(argv: Sequence[str], output=None) -> Trace:
    """Runs a program under cachescope's Valgrind tool and returns its trace as a source.

    The trace goes to ``output`` (a native ``.cst`` file), or a temporary file removed when
    the interpreter exits. The program's standard output goes to standard error. A program
    that exits non-zero raises :class:`CachescopeError`; its trace up to the exit is kept.
    """
    if output is None:
        d = tempfile.mkdtemp(prefix="cachescope-")
        import atexit
        import shutil

        atexit.register(shutil.rmtree, d, True)
        output = os.path.join(d, "trace.cst")
    native, code = _native.record([str(a) for a in argv], str(output))
    if code != 0:
        raise CachescopeError(
            f"{argv[0]} exited with {'a signal' if code is None else code}; its trace up to the exit is in {output}"
        )
    return Trace(native)


def load_profile(path) -> Profile:
    """A profile written by ``cachescope sample`` or :meth:`Profile.save`."""
    return Profile(_native.load_profile(str(path)))


def analyse(
    source: Trace,
    analyses: Sequence[str],
    sizes: Optional[Iterable[Size]] = None,
    line_size: Size = 64,
    seed: int = 1,
    rate: Optional[float] = None,
    slot: int = DEFAULT_SLOT,
    include_instructions: bool = False,
    threads: Optional[int] = None,
    progress: Progress = None,
    sampled: bool = False,
    sample_lines: int = DEFAULT_SAMPLE_LINES,
) -> Dict[str, object]:
    """Several analyses from one reading of ``source``: a dict from each name to its result.

    Names: ``stats`` (a :class:`Document`), ``mrc`` (the exact LRU :class:`Curve` at
    ``sizes``), ``footprint`` (a :class:`Footprint` on the logarithmic grid) and ``sample``
    (a :class:`Profile`; ``rate`` its sampling rate, default 1e-4).

    ``sampled=True`` reads a hashed sample of the lines instead (the command line's
    ``--sampled``, docs/sampled.md): ``rate`` is then the share of lines kept (default 0.01,
    at most ``sample_lines`` at once; the profile keeps its default rate), ``mrc`` is the
    SHARDS curve ``mrc --sampled --json`` prints, ``footprint`` the sampled lines' footprint
    scaled by the rate, and ``stats`` is refused.
    """
    names = list(analyses)
    share = None
    if sampled:
        share = (DEFAULT_SAMPLED_RATE if rate is None else rate, sample_lines)
        rate = None
    docs, profile = _native.analyse(
        source._native, names, _sizes(sizes), _size(line_size), include_instructions, seed,
        DEFAULT_RATE if rate is None else rate, slot, _threads(threads), _progress(progress),
        share,
    )
    out: Dict[str, object] = {}
    for name, doc in zip(names, docs):
        if name == "stats":
            out[name] = Document(doc)
        elif name == "mrc":
            out[name] = Curve(doc)
        elif name == "footprint":
            out[name] = Footprint(doc)
        else:
            out[name] = Profile(profile)
    return out
