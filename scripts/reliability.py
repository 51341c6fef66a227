"""Run the reliability suite and write its figures: reliability/results/*.json, docs/reliability.md.

Usage: ``python scripts/reliability.py [--quick] [pytest args...]``. Without ``--quick`` the
suite runs with ``HAVERSACK_RELIABILITY=full`` (the large hypothesis and run budgets); the
normal test run (``pytest -n auto``) runs the same tests with the quick budget and writes
nothing. ``nox -s reliability`` calls this script.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "reliability" / "results"
PAGE = ROOT / "docs" / "reliability.md"

AREAS: dict[str, tuple[str, str]] = {
    "hostile-arguments": (
        "1. Hostile arguments",
        "Every tool of every installed pack, enumerated from the composed prompt: the "
        "conformance kit's fixed battery plus hypothesis-generated calls (wrong types, unknown "
        "fields, huge strings, deep nesting, control characters, lone surrogates and bad JSON "
        "escapes, pathological regular expressions and globs, empty and whitespace values, "
        "extreme numbers, malformed JSON text and bytes). A failure is a raised exception, an "
        "error without a message, a must-fail call that succeeded, or a failed call that "
        "changed the session or the workspace (full filesystem dump).",
    ),
    "broken-packs": (
        "2. Broken packs",
        "Faulty distributions installed with uv into a fresh virtual environment: import "
        "error, a hook that raises, hooks that register or return the wrong type, an "
        "incompatible core requirement, clashes of each name kind (tool, section, policy, "
        "resource type) and a slow import. A case is one expectation: the culprit named in "
        "the report and by `haversack packs --json`, the precise strict-mode error, or a "
        "healthy pack still working.",
    ),
    "escapes": (
        "3. Escapes",
        "Path attacks (traversal, absolute, backslash, URL-encoded, unicode look-alikes, NUL "
        "and control characters, long and deep paths, symlinks planted in host mounts and in "
        "the sandbox workspace) against the VFS tools and the sandbox workspace. A canary "
        "outside the allowed roots must keep its content, size, mtime, atime, mode and "
        "owner, never appear in a result, and no file may appear outside the roots.",
    ),
    "sandbox-abuse": (
        "4. Sandbox abuse",
        "Fork bombs, memory hog, disk fillers, runaway loops, network attempts and writes "
        "outside /workspace in a real Podman sandbox: each returns a result with a message, "
        "and the next command in the same session works.",
    ),
    "concurrency": (
        "5. Concurrency",
        "Many sessions on one composed prompt, in threads and in asyncio tasks (`aexecute`), "
        "and one session (one executor) shared by threads and by tasks. A failure is a plan "
        "entry, a file or read-before-write state seen in the wrong session, or a rollback "
        "undoing another call's committed work.",
    ),
    "leaks": (
        "6. Leaks",
        "Memory (tracemalloc) after a warm-up and after many more sessions or calls; and, "
        "after a sandbox run in a child process, containers (by the pack's pid label), "
        "service processes, workspace, snapshot and service directories left behind.",
    ),
    "rollback": (
        "7. Exact rollback",
        "The workspace snapshotter alone and the real Podman sandbox under attack: planted "
        "temporary names (a symbolic link to a host canary, a regular file, a hard link, a "
        "FIFO, a directory) at every name restore might use, FIFOs and sockets surviving "
        "failed calls, a tree 1,100 levels deep (made, rolled back, deleted by the model), a "
        "3 GiB sparse file (stored and restored in allocated blocks), byte and depth budgets "
        "failing the call, random changes rolled back (a full manifest compared before and "
        "after: inexact rollbacks must be 0), and the garbage collector running inside "
        "`restore` (it deadlocked before).",
    ),
}


#: Bugs the suite found, kept on the page after they are fixed (the figures then show 0).
FINDINGS: tuple[str, ...] = (
    "`ToolExecutor.execute` raised `RecursionError` for a tool without parameters given "
    "deeply nested JSON text (`'[' * 100000`): `_parse_arguments` caught only `ValueError` "
    "from `json.loads`. Fixed in `core/src/haversack/_executor.py` (c5ae997).",
    "`ToolExecutor.execute` raised `RecursionError` for any tool given a decoded mapping "
    "nested deeper than the recursion limit (~2000 levels): `serde.parse` re-encodes "
    "mappings with `json.dumps`, which raised outside the caught `TypeError`/`ValueError`. "
    "Found in every tool, Podman's included. Fixed in `core/src/haversack/serde/_parse.py` "
    "(ce6ebb8).",
    "One `ToolExecutor` shared by threads lost committed work: a failing call restored its "
    "snapshot over calls that had committed meanwhile (files and plan steps vanished, a "
    "refused overwrite succeeded), and `asyncio.gather` of `aexecute` calls with async "
    "handlers raised `ResourceError`. Calls on one executor now take turns "
    "(`core/src/haversack/_turn.py`, a938b5c).",
    "Each Podman OOM kill left an empty `oom` file in the caller's working directory: "
    "conmon writes that marker into its cwd, which the private `podman system service` "
    "inherited. The service now starts in its own folder "
    "(`plugins/podman/src/haversack_podman/_service.py`, 9e618f7).",
    "Rollback of the sandbox workspace could be broken or made inexact from inside: a "
    "symbolic link at restore's fixed temporary name made every later restore fail, a tree "
    "1,100 levels deep made every snapshot raise `RecursionError`, a 3 GiB sparse file cost "
    "3 GiB of snapshot storage, failed calls deleted FIFOs and sockets, and the garbage "
    "collector running a snapshot finalizer inside `restore` deadlocked. Fixed in "
    "`core/src/haversack/filesystem/_snapshot.py` (branch `snapshots`).",
)


def run_suite(quick: bool, extra: list[str]) -> tuple[int, list[dict[str, Any]]]:
    with tempfile.TemporaryDirectory(prefix="haversack-reliability-") as folder:
        env = dict(os.environ)
        env["HAVERSACK_RELIABILITY_RESULTS"] = folder
        if not quick:
            env["HAVERSACK_RELIABILITY"] = "full"
        argv = [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "auto",
            "-p",
            "no:cacheprovider",
            "tests/reliability",
            *extra,
        ]
        code = subprocess.run(argv, cwd=ROOT, env=env, check=False).returncode
        figures = [json.loads(p.read_text()) for p in sorted(Path(folder).glob("*.json"))]
    return code, figures


def write_results(figures: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    for area in AREAS:
        items = sorted((f for f in figures if f["area"] == area), key=lambda f: f["name"])
        payload = {"meta": meta, "figures": items}
        (RESULTS / f"{area}.json").write_text(json.dumps(payload, indent=2) + "\n")


def _fmt_notes(notes: dict[str, Any]) -> str:
    parts = []
    for key, value in notes.items():
        if isinstance(value, dict):
            if not value:
                continue
            value = "; ".join(f"{k}: {v}" for k, v in value.items())
        parts.append(f"{key.replace('_', ' ')}: {value}")
    return "<br>".join(parts).replace("|", "\\|").replace("\n", " ")


def render_page(meta: dict[str, Any]) -> str:
    lines = [
        "# Reliability",
        "",
        "<!-- Generated by `nox -s reliability` (scripts/reliability.py); do not edit. -->",
        "",
        "Proof, with figures, that Haversack keeps working, loses nothing and lets nothing "
        "out. The suite lives in `tests/reliability/`; the normal test run (`pytest -n auto`, "
        "CI) runs it with a small budget, `nox -s reliability` with the full budget "
        "(`HAVERSACK_RELIABILITY=full`), and rewrites this page and "
        "`reliability/results/*.json`. Durations are figures, never asserted.",
        "",
        f"Last run: {meta['date']}, budget **{meta['budget']}**, Python {meta['python']}, "
        f"{meta['machine']}; pytest exit code {meta['pytest_exit']}.",
        "",
        "| Area | Cases tried | Failures found | Time (s) |",
        "|---|---:|---:|---:|",
    ]
    all_figures: dict[str, list[dict[str, Any]]] = {}
    for area in AREAS:
        path = RESULTS / f"{area}.json"
        figs = json.loads(path.read_text())["figures"] if path.exists() else []
        all_figures[area] = figs
        cases = sum(f["cases"] for f in figs)
        failures = sum(f["failures"] for f in figs)
        seconds = sum(f["duration_s"] for f in figs)
        lines.append(
            f"| [{AREAS[area][0]}](#{_anchor(AREAS[area][0])}) | {cases:,} | "
            f"{failures} | {seconds:.1f} |"
        )
    lines += ["", "## Bugs found", ""]
    lines += [f"- {finding}" for finding in FINDINGS]
    for area, (title, text) in AREAS.items():
        lines += ["", f"## {title}", "", text, ""]
        figs = all_figures[area]
        if not figs:
            lines.append("_Not run (Podman unavailable or the tests were deselected)._")
            continue
        lines += ["| Figure | Cases | Failures | Time (s) | Notes |", "|---|---:|---:|---:|---|"]
        for f in figs:
            lines.append(
                f"| {f['name']} | {f['cases']:,} | {f['failures']} | "
                f"{f['duration_s']:.2f} | {_fmt_notes(f.get('notes', {}))} |"
            )
        problems = [(f["name"], p) for f in figs for p in f.get("problems", [])]
        if problems:
            lines += ["", "Failures found:", ""]
            lines += [f"- {name}: `{_code(p)}`" for name, p in problems[:30]]
    return "\n".join(lines) + "\n"


def _code(text: str) -> str:
    return text[:300].replace("`", "'").replace("\n", " ")


def _anchor(title: str) -> str:
    return "".join(c for c in title.lower().replace(" ", "-") if c.isalnum() or c == "-")


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    extra = [a for a in argv if a != "--quick"]
    code, figures = run_suite(quick, extra)
    meta = {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "budget": "quick" if quick else "full",
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
        "pytest_exit": code,
    }
    write_results(figures, meta)
    PAGE.write_text(render_page(meta))
    print(f"reliability: {len(figures)} figures; wrote {RESULTS} and {PAGE}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
