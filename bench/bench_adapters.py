"""Provider tool lists: the ``tools=`` an application sends with every model request.

Times ``openai.chat_tools`` and ``anthropic.tools`` for a prompt of twenty dataclass-param
tools (``_adapter_params``) and the three packs' prompt, against the reference library
(``weakincentives``) building the same twenty tools' lists. The reference is installed with uv
into a throwaway environment outside the repository (it needs Python 3.12+) and timed in a
subprocess (``_reference_adapters.py``), so it never becomes a dependency of ours; when it
cannot be installed the rows say why and ours are compared with returning a cached list.
Runs through ``bench/run.py`` or standalone (``python bench/bench_adapters.py [--quick]``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _adapter_params import TOOLS
from _harness import Result, Sample, measure, result

from haversack import MarkdownSection, Prompt, RenderedPrompt, Tool, ToolContext, ToolResult, serde
from haversack.adapters import anthropic, openai

SUITE = "adapters"
REFERENCE = "weakincentives==0.27.0"
#: Ours must be at least this many times faster than the reference.
SPEED_UP = 10
BENCH_DIR = Path(__file__).resolve().parent
REFERENCE_VENV = (
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    / "haversack-dev"
    / "bench-reference-venv"
)


@dataclass(frozen=True)
class Out:
    text: str


def _handler(params: Any, *, context: ToolContext) -> ToolResult[Out]:
    return ToolResult.ok(Out(text=""))


def twenty_tools() -> RenderedPrompt:
    """The rendered prompt of ``_adapter_params.TOOLS``."""
    tool_of: Any = Tool  # subscripted with runtime types, which mypy cannot check
    tools = [
        tool_of[params, Out](name=n, description=d, handler=_handler) for n, d, params in TOOLS
    ]
    section = MarkdownSection[None](
        title="Tools", key="tools", template="Use the tools.", tools=tools
    )
    return Prompt(ns="bench", key="adapters", sections=[section]).render()


def three_packs() -> RenderedPrompt:
    """The planning, vfs and podman packs composed (no container is started)."""
    from haversack.testing import compose_packs

    return compose_packs(["planning", "vfs", "podman"]).render()


def copied_chat_tools(rendered: RenderedPrompt) -> list[dict[str, Any]]:
    """The chat list built as before: a fresh (unpickled) copy of each cached schema."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": serde.schema(t.params_type),
            },
        }
        for t in rendered.tools
    ]


def _find_uv() -> str | None:
    for candidate in (
        os.environ.get("UV"),
        shutil.which("uv"),
        str(Path.home() / ".cache" / "haversack-dev" / "uv-venv" / "bin" / "uv"),
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def _find_python_312() -> str | None:
    for name in ("python3.13", "python3.12"):
        found = shutil.which(name)
        if found and subprocess.run([found, "-c", ""], capture_output=True).returncode == 0:
            return found
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for minor in ("3.13", "3.12"):
        for path in sorted(pyenv.glob(f"{minor}.*/bin/python{minor}"), reverse=True):
            return str(path)
    return None


def reference_python() -> tuple[str | None, str]:
    """The reference environment's interpreter (made on first use), or ``None`` and why not."""
    python = REFERENCE_VENV / "bin" / "python"
    check = [str(python), "-c", "import weakincentives"]
    if python.is_file() and subprocess.run(check, capture_output=True).returncode == 0:
        return str(python), ""
    uv, base = _find_uv(), _find_python_312()
    if uv is None:
        return None, "uv not found (set UV)"
    if base is None:
        return None, "no Python 3.12+ found (the reference needs it)"
    steps = [
        [uv, "venv", "-q", "--python", base, str(REFERENCE_VENV)],
        [uv, "pip", "install", "-q", "--python", str(python), REFERENCE],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return None, f"`{' '.join(step[:3])}` failed: {last}"
    return str(python), ""


def reference_samples(python: str, repeats: int) -> dict[str, Any]:
    """Run ``_reference_adapters.py`` with the reference environment's interpreter."""
    done = subprocess.run(
        [python, str(BENCH_DIR / "_reference_adapters.py"), str(repeats)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=BENCH_DIR,
        env={**os.environ, "PYTHONPATH": str(BENCH_DIR)},
        check=True,
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def run(quick: bool) -> list[Result]:
    repeats = 50 if quick else 500
    ref_repeats = 10 if quick else 100
    rendered, packs = twenty_tools(), three_packs()
    n, n_packs = len(rendered.tools), len(packs.tools)
    chat = measure(lambda: openai.chat_tools(rendered), repeats=repeats, warmup=5)
    claude = measure(lambda: anthropic.tools(rendered), repeats=repeats, warmup=5)
    copied = measure(lambda: copied_chat_tools(rendered), repeats=repeats, warmup=5)
    packs_chat = measure(lambda: openai.chat_tools(packs), repeats=repeats, warmup=5)
    cached = openai.chat_tools(rendered)
    floor = measure(lambda: cached, repeats=repeats, warmup=5)
    floor_name = "return a cached list (floor)"
    rows = [result(SUITE, floor_name, floor, notes="the least any tools= can cost")]

    python, why_not = reference_python()
    if python is None:
        note = f"reference not run: {why_not}"
        return [
            *rows,
            result(
                SUITE, f"OpenAI chat tools, {n} tools", chat, floor=(floor_name, floor), notes=note
            ),
            result(
                SUITE, f"Anthropic tools, {n} tools", claude, floor=(floor_name, floor), notes=note
            ),
            result(
                SUITE,
                f"OpenAI chat tools, copied schemas (before), {n} tools",
                copied,
                floor=(floor_name, floor),
            ),
            result(
                SUITE,
                f"OpenAI chat tools, three packs ({n_packs} tools)",
                packs_chat,
                floor=(floor_name, floor),
            ),
        ]
    ref = reference_samples(python, ref_repeats)
    ref_chat, ref_claude = Sample(tuple(ref["openai"])), Sample(tuple(ref["anthropic"]))
    version = sys.version.split()[0]
    ref_chat_name = f"weakincentives {ref['version']}: OpenAI chat tools (tool_to_spec)"
    ref_claude_name = f"weakincentives {ref['version']}: Anthropic tools (serde.schema)"
    ref_note = f"reference library, Python {ref['python']}, own environment, same twenty tools"

    def ours(mine: Sample, theirs: Sample) -> str:
        speed_up = theirs.median_s / mine.median_s
        return (
            f"{speed_up:,.0f}x faster than the reference (target ≥ {SPEED_UP}x); Python {version}"
        )

    return [
        *rows,
        result(SUITE, ref_chat_name, ref_chat, notes=ref_note),
        result(SUITE, ref_claude_name, ref_claude, notes=ref_note),
        result(
            SUITE,
            f"OpenAI chat tools, {n} tools",
            chat,
            floor=(ref_chat_name, ref_chat),
            max_ratio=1 / SPEED_UP,
            notes=ours(chat, ref_chat),
        ),
        result(
            SUITE,
            f"Anthropic tools, {n} tools",
            claude,
            floor=(ref_claude_name, ref_claude),
            max_ratio=1 / SPEED_UP,
            notes=ours(claude, ref_claude),
        ),
        result(
            SUITE,
            f"OpenAI chat tools, copied schemas (before), {n} tools",
            copied,
            floor=(ref_chat_name, ref_chat),
            notes=f"each schema unpickled afresh, as before the shared read-only schemas: "
            f"{ref_chat.median_s / copied.median_s:,.0f}x faster than the reference",
        ),
        result(
            SUITE,
            f"OpenAI chat tools, three packs ({n_packs} tools)",
            packs_chat,
            floor=(floor_name, floor),
            notes="planning, vfs and podman composed",
        ),
    ]


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(r)
