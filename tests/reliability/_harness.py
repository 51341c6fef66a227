"""Reliability harness: the hypothesis budget, figures (cases, failures, time) and state checks."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from haversack import Prompt, Session, ToolExecutor, ToolResult
from haversack.testing import compose_packs, fingerprint

#: ``HAVERSACK_RELIABILITY=full`` (set by ``nox -s reliability``) raises every budget.
FULL = os.environ.get("HAVERSACK_RELIABILITY", "").strip().lower() == "full"
#: Directory the figures are written to (one JSON file per figure); unset: not written.
RESULTS_ENV = "HAVERSACK_RELIABILITY_RESULTS"
#: Packs whose tools need Podman; fuzzed by the ``podman``-marked tests only.
PODMAN_PACKS = frozenset({"podman"})


def budget(quick: int, full: int) -> int:
    """``quick`` cases in the normal test run (CI), ``full`` under ``HAVERSACK_RELIABILITY``."""
    return full if FULL else quick


@dataclass
class Figure:
    """One reported figure: how many cases were tried, what failed, and how long it took.

    A test counts every case it tries (:meth:`case`) and records every finding
    (:meth:`problem`); :meth:`assert_clean` fails the test listing the findings. The
    figure is written when the test ends, passed or failed, so the page shows failures.
    """

    area: str
    name: str
    cases: int = 0
    problems: list[str] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)
    start: float = field(default_factory=time.perf_counter)
    duration_s: float | None = None

    def case(self, count: int = 1) -> None:
        self.cases += count

    def problem(self, text: str) -> None:
        self.problems.append(text)

    def check(self, ok: bool, text: str) -> bool:
        if not ok:
            self.problems.append(text)
        return ok

    def note(self, key: str, value: Any) -> None:
        self.notes[key] = value

    def assert_clean(self, limit: int = 15) -> None:
        if self.problems:
            shown = "\n".join(f"- {p}" for p in self.problems[:limit])
            more = len(self.problems) - limit
            tail = f"\n... and {more} more" if more > 0 else ""
            raise AssertionError(
                f"{self.area}/{self.name}: {len(self.problems)} failure(s) in {self.cases} "
                f"case(s):\n{shown}{tail}"
            )

    def finish(self) -> None:
        if self.duration_s is None:
            self.duration_s = time.perf_counter() - self.start
        folder = os.environ.get(RESULTS_ENV)
        if not folder:
            return
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{self.area}__{self.name}")
        Path(folder).mkdir(parents=True, exist_ok=True)
        payload = {
            "area": self.area,
            "name": self.name,
            "cases": self.cases,
            "failures": len(self.problems),
            "problems": self.problems[:50],
            "duration_s": round(self.duration_s, 3),
            "budget": "full" if FULL else "quick",
            "notes": self.notes,
        }
        (Path(folder) / f"{slug}.json").write_text(json.dumps(payload, indent=2, default=str))


def loaded_packs(*, exclude: Sequence[str] = ()) -> list[str]:
    """Every installed pack that loads, in name order, minus ``exclude``."""
    from haversack import discover
    from haversack.testing._compose import isolated_selection

    with isolated_selection() as empty:
        report = discover(load=True, config_file=empty)
    return [
        info.name
        for info in report.packs
        if info.status == "loaded" and not info.builtin and info.name not in exclude
    ]


def compose_all(
    *, exclude: Sequence[str] = (), config: Mapping[str, Mapping[str, Any]] | None = None
) -> Prompt:
    """A prompt composed (strictly) from every pack that loads, minus ``exclude``."""
    return compose_packs(loaded_packs(exclude=exclude), config=config)


class Harness:
    """A session and an executor over ``prompt``, with the checks every hostile call needs."""

    def __init__(self, prompt: Prompt) -> None:
        self.prompt = prompt
        self.rendered = prompt.render()
        self.session = Session()
        self.executor = ToolExecutor(self.rendered, session=self.session)
        self._baseline_session = self.session.snapshot()
        self._baseline_resources: list[tuple[Any, Any]] = []

    def mark_baseline(self) -> None:
        """The state each hostile call starts from (after the set-up calls)."""
        self._baseline_session = self.session.snapshot()
        self._baseline_resources = [
            (r, r.snapshot()) for r in self.executor.resources.snapshottables()
        ]

    def reset(self) -> None:
        self.session.restore(self._baseline_session)
        for resource, snapshot in self._baseline_resources:
            resource.restore(snapshot)

    def ok(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolResult[Any]:
        result = self.executor.execute(name, arguments)
        assert result.success, f"{name}: {result.render()}"
        return result

    def hostile(
        self, figure: Figure, tool: str, arguments: Any, label: str, *, must_fail: bool = False
    ) -> ToolResult[Any] | None:
        """One hostile call with every check; findings go to ``figure``; state is reset after."""
        figure.case()
        where = f"{tool} given {label} ({_preview(arguments)})"
        before = fingerprint(self.session, self.executor.resources)
        try:
            result = self.executor.execute(tool, arguments)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            figure.problem(f"{where}: raised {type(exc).__name__}: {exc}")
            self.reset()
            return None
        if not isinstance(result, ToolResult):
            figure.problem(f"{where}: returned {type(result).__name__}, not a ToolResult")
            self.reset()
            return None
        if must_fail and result.success:
            figure.problem(f"{where}: succeeded; invalid arguments must give an error result")
        if not result.success:
            figure.check(bool(result.message.strip()), f"{where}: error result with no message")
            after = fingerprint(self.session, self.executor.resources)
            changes = before.differences(after)
            figure.check(not changes, f"{where}: failed call left state behind: {changes}")
        self.reset()
        return result

    def close(self) -> None:
        self.executor.close()


def _preview(arguments: Any) -> str:
    try:
        text = arguments if isinstance(arguments, str) else json.dumps(arguments, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = f"<{type(arguments).__name__} too deep or odd to show>"
    if isinstance(text, bytes):
        text = repr(text)
    return text if len(text) <= 120 else f"{text[:100]}... ({len(text)} chars)"
