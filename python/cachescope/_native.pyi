"""Type stubs of the Rust extension (``python/src/lib.rs``). Functions return the command
line's JSON documents; ``cachescope`` wraps them in result objects."""

from typing import Callable, List, Optional, Tuple

class CachescopeError(Exception): ...

class NativeSource:
    @property
    def name(self) -> str: ...
    def thread(self, thread: int) -> NativeSource: ...

class NativeProfile:
    def summary(self) -> str: ...
    def mrc(self, method: str, sizes: List[int], estimate_cold: bool = ..., threads: int = ...) -> str: ...
    def save(self, path: str) -> None: ...
    def samples(self) -> List[Tuple[int, int]]: ...

Progress = Optional[Callable[[int], None]]

def open_file(path: str, format: str = ...) -> NativeSource: ...
def workload(
    name: str,
    seed: int = ...,
    refs: Optional[int] = ...,
    lines: Optional[int] = ...,
    stride: Optional[int] = ...,
    n: Optional[int] = ...,
    tile: Optional[int] = ...,
    zipf_s: Optional[float] = ...,
    instructions: bool = ...,
) -> NativeSource: ...
def stats(source: NativeSource, line_size: int = ..., threads: int = ..., progress_cb: Progress = ...) -> str: ...
def mrc(
    source: NativeSource,
    method: str,
    policy: Optional[str],
    sizes: List[int],
    line_size: int,
    include_instructions: bool,
    seed: int,
    rate: float,
    slot: int,
    ways: Optional[int],
    estimate_cold: bool,
    mini_rate: float,
    threads: int,
    progress_cb: Progress = ...,
    mini_min_sets: int = ...,
    mini_unadjusted: bool = ...,
    per_thread: bool = ...,
) -> str: ...
def sample(
    source: NativeSource,
    rate: float,
    seed: int,
    slot: int,
    line_size: int,
    include_instructions: bool,
    threads: int,
    progress_cb: Progress = ...,
) -> NativeProfile: ...
def load_profile(path: str) -> NativeProfile: ...
def footprint(
    source: NativeSource,
    line_size: int,
    include_instructions: bool,
    windows: Optional[List[int]],
    per_octave: int,
    threads: int,
    progress_cb: Progress = ...,
) -> str: ...
def analyse(
    source: NativeSource,
    names: List[str],
    sizes: List[int],
    line_size: int,
    include_instructions: bool,
    seed: int,
    rate: float,
    slot: int,
    threads: int,
    progress_cb: Progress = ...,
) -> Tuple[List[str], Optional[NativeProfile]]: ...
def report(
    source: NativeSource,
    dir: str,
    line_size: int,
    seed: int,
    rate: float,
    interval: int,
    ways: int,
    threads: int,
) -> str: ...
def parse_size(s: str) -> int: ...
def size_range(lo: int = ..., hi: int = ..., per_octave: int = ...) -> List[int]: ...
def record(argv: List[str], output: str) -> Tuple[NativeSource, Optional[int]]: ...
def simulate(
    source: NativeSource,
    caches: List[str],
    policy: str,
    seed: int,
    line_size: int,
    threads: int,
    progress_cb: Progress = ...,
    writebacks: bool = ...,
    write_allocate: bool = ...,
    prefetch: str = ...,
    prefetch_degree: int = ...,
    prefetch_distance: int = ...,
    utilization: bool = ...,
    dtlb: List[str] = ...,
    itlb: List[str] = ...,
    stlb: List[str] = ...,
    tlb: Optional[str] = ...,
    tlb_policy: str = ...,
    pages: List[str] = ...,
    walks: bool = ...,
    cores: Optional[int] = ...,
    interleave: str = ...,
    quantum: Optional[int] = ...,
) -> str: ...
def l2(
    source: NativeSource,
    l1: int,
    l2: List[int],
    policy: str,
    variant: str,
    simulate: bool,
    seed: int,
    line_size: int,
    threads: int,
    progress_cb: Progress = ...,
) -> str: ...
def phases(
    source: NativeSource,
    interval: int,
    unit: str,
    k: str,
    method: str,
    l2: str,
    l1: Optional[str],
    bits: int,
    seed: int,
    no_simpoint: bool,
    threads: int,
) -> str: ...
def attribute(
    source: NativeSource,
    cache: str,
    sample: int,
    events: Optional[str],
    exe: Optional[str],
    handler_lines: int,
    no_cost: bool,
    no_mrc: bool,
    cachegrind_out: Optional[str],
    seed: int,
    line_size: int,
    threads: int,
    progress_cb: Progress = ...,
    writebacks: bool = ...,
    utilization: bool = ...,
) -> str: ...
def callgraph(
    source: NativeSource,
    i1: str,
    d1: str,
    ll: str,
    events: Optional[str],
    exe: Optional[str],
    per_thread: bool,
    callgrind_out: Optional[str],
    line_size: int,
    threads: int,
    progress_cb: Progress = ...,
    sampled: Optional[Tuple[float, int]] = ...,
) -> str: ...
def sharing(
    source: NativeSource,
    l1: str,
    ll: str,
    cores: Optional[int],
    interleave: str,
    quantum: Optional[int],
    all: bool,
    events: Optional[str],
    threads: int,
    progress_cb: Progress = ...,
) -> str: ...
def whatif(
    source: NativeSource,
    changes: List[str],
    caches: List[str],
    cores: Optional[int],
    events: Optional[str],
    exe: Optional[str],
    threads: int,
    progress_cb: Progress = ...,
) -> str: ...
def advise(
    source: NativeSource,
    caches: List[str],
    cores: Optional[int],
    events: Optional[str],
    exe: Optional[str],
    threads: int,
    progress_cb: Progress = ...,
) -> str: ...
