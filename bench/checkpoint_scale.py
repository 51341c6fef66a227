"""Checkpoint size and time at 10,000 workspace files (issue 29's figure).

Run: ``.venv/bin/python bench/checkpoint_scale.py [FILES] [BYTES_PER_FILE]``. Measures, for an
in-memory workspace (kept whole in the checkpoint) and a host directory (only its tree hash
is kept): the checkpoint's size, the time to capture and write it, and the time to load and
validate it (and to hash the host directory again, as a resume does). Prints one line each.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from pathlib import Path

from haversack.agent import load_checkpoint, save_checkpoint
from haversack.agent._checkpoint import Checkpoint, workspace_data
from haversack.filesystem import DirectoryFilesystem
from haversack_vfs import InMemoryFilesystem

EMPTY = Checkpoint(
    task="bench",
    provider="openai",
    model="m",
    prompt_digest="0" * 64,
    system="",
    messages=(),
    turns=(),
    stop_reason=None,
    session_id="s",
    slices=(),
    policy_records={},
    calls=(),
    pending=(),
    workspace=None,
)


def _content(index: int, size: int) -> str:
    line = f"line of file {index}\n"
    return (line * (size // len(line) + 1))[:size]


def _measure(label: str, filesystem: object, rounds: int = 3) -> None:
    best_save = best_load = float("inf")
    with tempfile.TemporaryDirectory() as directory:
        for _ in range(rounds):
            started = time.perf_counter()
            checkpoint = dataclasses.replace(EMPTY, workspace=workspace_data(filesystem))  # type: ignore[arg-type]
            path = save_checkpoint(directory, checkpoint)
            best_save = min(best_save, time.perf_counter() - started)
            started = time.perf_counter()
            loaded = load_checkpoint(directory)
            if isinstance(filesystem, DirectoryFilesystem):
                from haversack.agent import tree_hash

                assert tree_hash(filesystem.root) == loaded.workspace.tree_hash  # type: ignore[union-attr]
            best_load = min(best_load, time.perf_counter() - started)
        size = path.stat().st_size
    print(
        f"{label}: checkpoint {size:,} bytes, capture+write {best_save * 1e3:.0f} ms, "
        f"load+validate{' +rehash' if isinstance(filesystem, DirectoryFilesystem) else ''} "
        f"{best_load * 1e3:.0f} ms (best of {rounds})"
    )


def main() -> None:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    memory = InMemoryFilesystem()
    with tempfile.TemporaryDirectory() as root:
        for index in range(files):
            path = f"d{index % 100}/f{index}.txt"
            memory.write(path, _content(index, size), mode="overwrite", parents=True)
            host = Path(root, path)
            host.parent.mkdir(exist_ok=True)
            host.write_text(_content(index, size))
        _measure(f"in-memory workspace, {files} files x {size} B", memory)
        _measure(f"host directory, {files} files x {size} B", DirectoryFilesystem(root))


if __name__ == "__main__":
    main()
