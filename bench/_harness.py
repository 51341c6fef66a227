"""Measurement helpers and the result record shared by every benchmark suite."""

from __future__ import annotations

import gc
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any


@dataclass(frozen=True)
class Sample:
    """Wall-clock durations of repeated runs of one workload, in seconds."""

    times_s: tuple[float, ...]

    @property
    def repeats(self) -> int:
        """How many timed runs the sample holds (warm-up runs excluded)."""
        return len(self.times_s)

    @property
    def median_s(self) -> float:
        """The median duration: the figure every report uses."""
        return statistics.median(self.times_s)

    @property
    def min_s(self) -> float:
        """The fastest run."""
        return min(self.times_s)

    @property
    def p90_s(self) -> float:
        """The 90th percentile (nearest rank), to show the spread."""
        ordered = sorted(self.times_s)
        rank = max(0, -(-9 * len(ordered) // 10) - 1)
        return ordered[rank]


def measure(fn: Callable[[], object], *, repeats: int = 20, warmup: int = 2) -> Sample:
    """Time ``fn()`` ``repeats`` times after ``warmup`` untimed calls (garbage collector off)."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    for _ in range(warmup):
        fn()
    times: list[float] = []
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            start = time.perf_counter_ns()
            fn()
            times.append((time.perf_counter_ns() - start) / 1e9)
    finally:
        if gc_was_enabled:
            gc.enable()
    return Sample(tuple(times))


def measure_process(
    argv: Sequence[str],
    *,
    repeats: int = 10,
    warmup: int = 1,
    env: Mapping[str, str] | None = None,
) -> Sample:
    """Time whole runs of the process ``argv`` (start to exit); a non-zero exit raises.

    Bytecode caching is switched back on (``PYTHONDONTWRITEBYTECODE`` removed) unless ``env``
    is given: these sandboxes set it, which makes every run compile its imports from source —
    a cost no installed program pays — and the warm-up run then writes the caches once.
    """
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def once() -> None:
        subprocess.run(list(argv), check=True, stdout=subprocess.DEVNULL, env=dict(env))

    return measure(once, repeats=repeats, warmup=warmup)


@dataclass(frozen=True)
class Result:
    """One reported figure: a workload's median, optionally against a floor measured in the run.

    Durations go in ``median_s`` (seconds); a figure that is not a duration (a ratio, a count, a
    yes/no check) goes in ``value`` with its ``unit``. ``passed`` is ``None`` when the result has
    no target, otherwise whether this run met it.
    """

    suite: str
    name: str
    median_s: float | None = None
    repeats: int = 0
    min_s: float | None = None
    p90_s: float | None = None
    floor_name: str | None = None
    floor_median_s: float | None = None
    value: float | bool | None = None
    unit: str = ""
    target: str = ""
    passed: bool | None = None
    notes: str = ""

    @property
    def display(self) -> str:
        """The figure as shown in the report: a duration, or ``value`` with its unit."""
        if self.median_s is not None:
            return format_seconds(self.median_s)
        if isinstance(self.value, bool):
            return "yes" if self.value else "no"
        if self.value is not None:
            return f"{self.value:.3g} {self.unit}".rstrip()
        return "—"

    @property
    def ratio(self) -> float | None:
        """``median_s / floor_median_s`` when there is a floor."""
        if self.median_s is None or self.floor_median_s is None or self.floor_median_s <= 0:
            return None
        return self.median_s / self.floor_median_s

    def to_json(self) -> dict[str, Any]:
        """The JSON object stored in ``bench/results/<suite>.json``."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Result:
        """Rebuild a result read from a results file (unknown keys are ignored)."""
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


def result(
    suite: str,
    name: str,
    sample: Sample,
    *,
    floor: tuple[str, Sample] | None = None,
    max_ratio: float | None = None,
    max_median_s: float | None = None,
    target: str = "",
    notes: str = "",
) -> Result:
    """Build a :class:`Result` from a sample, judging ``max_ratio`` (vs the floor) and/or
    ``max_median_s``; ``target`` defaults to a description of those limits."""
    floor_name, floor_median = (floor[0], floor[1].median_s) if floor else (None, None)
    checks: list[bool] = []
    texts: list[str] = []
    if max_ratio is not None:
        if floor_median is None:
            raise ValueError(f"{suite}/{name}: max_ratio needs a floor to compare against")
        checks.append(sample.median_s <= max_ratio * floor_median)
        texts.append(f"≤ {max_ratio:g}x floor")
    if max_median_s is not None:
        checks.append(sample.median_s <= max_median_s)
        texts.append(f"≤ {format_seconds(max_median_s)}")
    return Result(
        suite=suite,
        name=name,
        median_s=sample.median_s,
        repeats=sample.repeats,
        min_s=sample.min_s,
        p90_s=sample.p90_s,
        floor_name=floor_name,
        floor_median_s=floor_median,
        target=target or ", ".join(texts),
        passed=all(checks) if checks else None,
        notes=notes,
    )


def format_seconds(seconds: float) -> str:
    """Render a duration with a unit that keeps 3 significant figures readable."""
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.3g} µs"
    return f"{seconds * 1e9:.3g} ns"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@dataclass(frozen=True)
class Machine:
    """Where a suite ran; stored next to its results."""

    cpu: str = field(default_factory=_cpu_model)
    cores: int = field(default_factory=lambda: os.cpu_count() or 1)
    python: str = field(default_factory=lambda: platform.python_version())
    implementation: str = field(default_factory=platform.python_implementation)
    system: str = field(default_factory=lambda: f"{platform.system()} {platform.release()}")
    date: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))

    def to_json(self) -> dict[str, Any]:
        """The JSON object stored under ``machine`` in a results file."""
        return asdict(self)


def interpreter() -> str:
    """The Python running the benchmarks, for suites that start child interpreters."""
    return sys.executable
