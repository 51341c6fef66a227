"""Prompt model benchmark: construct + validate + render prompts of 100 and 1,000 tools.

Suite interface (``bench/_harness.py``): ``run(quick) -> list[Result]``. When the harness is
not importable the module still runs standalone (``python bench/bench_prompt.py``) and prints
raw figures. Tools are built inside the timed region, so the figures cover the whole model.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

from haversack import MarkdownSection, Prompt, Tool, ToolResult

TARGET_1000_MS = 25.0
TARGET_LINEARITY = 11.0


@dataclass(frozen=True)
class SectionParams:
    """Params every benchmark section renders with."""

    project: str = "haversack"
    limit: int = 10


@dataclass(frozen=True)
class ToolParams:
    path: str
    limit: int = 10


@dataclass(frozen=True)
class ToolValue:
    lines: tuple[str, ...]


def _handler(params: ToolParams, *, context: Any) -> ToolResult[ToolValue]:
    return ToolResult.ok(ToolValue(lines=(params.path,)))


TEMPLATE = """
    Work on project $project. Read at most ${limit} files per step, then call ${tool:t0}.
    Costs are quoted in $$ and never guessed.
"""


def build_and_render(n_sections: int, tools_per_section: int) -> str:
    """One full cycle: tools, sections, prompt (validated), rendered text."""
    sections = []
    n = 0
    for s in range(n_sections):
        tools = []
        for _ in range(tools_per_section):
            tools.append(
                Tool[ToolParams, ToolValue](
                    name=f"t{n}", description="Read a window of a file.", handler=_handler
                )
            )
            n += 1
        template = TEMPLATE.replace("${tool:t0}", f"${{tool:t{s * tools_per_section}}}")
        sections.append(
            MarkdownSection[SectionParams](
                title=f"Section {s}", key=f"s{s}", template=template, tools=tools
            )
        )
    prompt = Prompt(ns="bench", key="prompt", sections=sections)
    rendered = prompt.render(SectionParams())
    assert len(rendered.tools) == n_sections * tools_per_section
    return rendered.text


def measure(n_sections: int, tools_per_section: int, repeats: int) -> list[float]:
    """Seconds per cycle for ``repeats`` cycles after one warm-up."""
    build_and_render(n_sections, tools_per_section)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        build_and_render(n_sections, tools_per_section)
        times.append(time.perf_counter() - start)
    return times


def figures(quick: bool) -> dict[str, float]:
    """Median milliseconds of both workloads and their ratio."""
    small = measure(10, 10, 20 if quick else 200)
    large = measure(100, 10, 5 if quick else 50)
    small_ms = statistics.median(small) * 1000
    large_ms = statistics.median(large) * 1000
    return {
        "prompt_100_tools_ms": small_ms,
        "prompt_1000_tools_ms": large_ms,
        "linearity_ratio": large_ms / small_ms,
    }


def run(quick: bool) -> list[Any]:
    """Harness entry point: one ``Result`` per figure."""
    data = figures(quick)
    try:
        from _harness import Result  # type: ignore[import-not-found]
    except ImportError:  # harness not written yet: hand back plain records
        return [{"name": k, "value": v} for k, v in data.items()]
    results = []
    for name, value in data.items():
        unit = "x" if name.endswith("ratio") else "ms"
        target = TARGET_LINEARITY if unit == "x" else (TARGET_1000_MS if "1000" in name else None)
        results.append(_make_result(Result, name, value, unit, target))
    return results


def _make_result(result_cls: Any, name: str, value: float, unit: str, target: float | None) -> Any:
    # The harness's Result is being designed concurrently; pass only the fields it declares.
    wanted = {"name": name, "value": value, "unit": unit, "target": target, "suite": "prompt"}
    if isinstance(result_cls, type) and dataclasses.is_dataclass(result_cls):
        names = {f.name for f in dataclasses.fields(result_cls)}
        return result_cls(**{k: v for k, v in wanted.items() if k in names})
    return result_cls(**wanted)


def main() -> None:
    quick = "--quick" in sys.argv
    data = figures(quick)
    print(f"10 sections / 100 tools:    {data['prompt_100_tools_ms']:.2f} ms (median)")
    print(
        f"100 sections / 1,000 tools: {data['prompt_1000_tools_ms']:.2f} ms (median; "
        f"target < {TARGET_1000_MS} ms)"
    )
    print(f"ratio: {data['linearity_ratio']:.2f}x (target <= {TARGET_LINEARITY}x)")


if __name__ == "__main__":
    main()
