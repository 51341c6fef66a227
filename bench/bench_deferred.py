"""Deferred loading: the prompt tokens a model is sent with every pack up front and with the
packs deferred (one line each plus ``load_pack``), for the three bundled packs and a
generated 50-tool pack; and what one load costs.

Tokens are the core's estimate (``len(json(name, description, schema)) / 4`` per tool, the
text at four characters a token), so the figures are comparable, not a tokenizer's count.
Runs through ``bench/run.py`` or standalone (``python bench/bench_deferred.py [--quick]``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from _harness import Result, measure, result

from haversack import compose
from haversack._packs import _discovery
from haversack._packs._tokens import token_estimate
from haversack.testing import write_distribution

SUITE = "deferred"
REAL = ("planning", "podman", "vfs")
WIDE_TOOLS = 50

WIDE = """
from dataclasses import dataclass, field
from haversack import MarkdownSection, Tool, ToolResult
from haversack.hookspecs import hookimpl

@dataclass(frozen=True)
class Params:
    path: str = field(metadata={{"description": "Which record to act on."}})
    limit: int = field(default=10, metadata={{"description": "At most this many lines."}})

def _run(params, *, context):
    return ToolResult.ok(message="done")

@hookimpl
def register_sections(register):
    register(MarkdownSection(
        title="Records", key="wide",
        template="Use the record tools to inspect and change records; read before you change.",
        tools=[Tool[Params, None](name=f"wide_op{{i}}",
                                  description=f"Operation {{i}} on one record: reads it, "
                                  "applies the change and reports what it did.",
                                  handler=_run) for i in range({count})]))
"""


def _tokens(prompt: Any) -> int:
    rendered = prompt.render()
    return (len(rendered.text) + 3) // 4 + token_estimate(rendered.tools)


def _figure(name: str, value: float, unit: str, notes: str) -> Result:
    return Result(suite=SUITE, name=name, value=value, unit=unit, notes=notes)


def _pair(label: str, packs: tuple[str, ...], notes: str) -> list[Result]:
    whole = _tokens(compose(ns="b", key="k", packs=list(packs)))
    deferred = _tokens(compose(ns="b", key="k", packs=[], deferred=list(packs)))
    saved = 100.0 * (whole - deferred) / whole
    return [
        _figure(f"{label}: every pack up front", whole, "tokens", notes),
        _figure(f"{label}: deferred", deferred, "tokens", "one line per pack, plus load_pack"),
        _figure(f"{label}: saved by deferring", saved, "%", "until the model loads a pack"),
    ]


def run(quick: bool) -> list[Result]:
    with tempfile.TemporaryDirectory() as folder:
        site = Path(folder)
        write_distribution(
            site,
            "bench-wide",
            entry_points={"wide": "bench_wide_pack"},
            requires=["haversack>=0.1"],
            modules={"bench_wide_pack": WIDE.format(count=WIDE_TOOLS)},
        )
        saved_path = _discovery.search_path
        _discovery.search_path = [folder, *sys.path]
        sys.path.insert(0, folder)
        try:
            results = _pair("three bundled packs", REAL, "planning, podman, vfs")
            results += _pair("50-tool pack", ("wide",), f"{WIDE_TOOLS} generated tools")
            results += _pair(
                "three packs + 50-tool pack", (*REAL, "wide"), "the three beside the 50 tools"
            )
            prompt = compose(ns="b", key="k", packs=["planning"], deferred=["wide"])
            load = measure(lambda: prompt.with_pack("wide").render(), repeats=5 if quick else 30)
            results.append(
                result(
                    SUITE,
                    "load the 50-tool pack (with_pack + render)",
                    load,
                    notes="what ToolExecutor.load_pack adds to one call, before its parsers",
                )
            )
        finally:
            _discovery.search_path = saved_path
            sys.path.remove(folder)
    return results


if __name__ == "__main__":
    for item in run("--quick" in sys.argv):
        print(item.name, item.display, item.notes)
