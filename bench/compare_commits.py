"""Time one workload of bench_prompt under an older commit and under this checkout, interleaved.

    .venv/bin/python bench/compare_commits.py 9a5912b [--rounds 8] [--repeats 30]

Extracts the commit's core and bundled packs (``git archive``) into a temporary directory and
runs ``bench_prompt.compose_and_render`` (the three packs plus 1,000 tools of your own, composed
and rendered) in a fresh process per round, alternating the old tree and this one, each first
on ``PYTHONPATH``. Each round reports the least CPU time of its repeats: on a shared machine
wall-clock medians mostly measure the neighbours, and the least CPU time the code. Prints the
per-round figures, the ratio of the medians of the per-round minima and of the least of all
(this / old). Issue 26 asks for at most 1.1x against 9a5912b, the commit before tool identities.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("core/src", "plugins/planning/src", "plugins/vfs/src", "plugins/podman/src")
CHILD = """
import gc, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, {bench!r})
from bench_prompt import compose_and_render
empty = Path(tempfile.mkdtemp(), "haversack.toml")
empty.write_text("", encoding="utf-8")
for _ in range(3):
    compose_and_render(empty)
gc.collect()
gc.disable()
best = float("inf")
for _ in range({repeats}):
    start = time.process_time()
    compose_and_render(empty)
    best = min(best, time.process_time() - start)
print(best)
"""


def _extract(commit: str, into: Path) -> None:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, *SOURCES], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def _round(tree: Path, repeats: int) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(tree / s) for s in SOURCES)}
    code = CHILD.format(bench=str(ROOT / "bench"), repeats=repeats)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", help="the older commit (e.g. 9a5912b, before tool identities)")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        old = Path(scratch)
        _extract(args.commit, old)
        figures: dict[str, list[float]] = {args.commit: [], "this checkout": []}
        for _ in range(args.rounds):
            figures[args.commit].append(_round(old, args.repeats))
            figures["this checkout"].append(_round(ROOT, args.repeats))
    for name, values in figures.items():
        shown = " ".join(f"{v * 1000:.2f}" for v in sorted(values))
        print(f"{name}: per-round least CPU time (ms): {shown}")
    before = statistics.median(figures[args.commit])
    now = statistics.median(figures["this checkout"])
    print(
        f"median of the minima: {before * 1000:.2f} ms -> {now * 1000:.2f} ms: {now / before:.3f}x"
    )


if __name__ == "__main__":
    main()
