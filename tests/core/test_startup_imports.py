"""What the start-up paths import: the structure behind the cold-start figures in bench/.

Timings are measured by ``bench/bench_packs.py``, never asserted here. These tests pin the
imports that decide them, each in a fresh interpreter: ``haversack render`` never imports
pydantic, ``haversack packs`` only while its schema cache is cold, and listing packs
imports neither a pack, pluggy nor the prompt model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REAL = ("planning", "podman", "vfs")

#: Runs the CLI (or a snippet) and writes the names of the loaded modules to argv[1].
RUN = """
import json, sys
out, what, *args = sys.argv[1:]
if what == "cli":
    from haversack.cli import main
    status = main(args)
else:
    exec(args[0])
    status = 0
with open(out, "w") as fh:
    json.dump(sorted(sys.modules), fh)
sys.exit(status)
"""


def _modules(
    tmp_path: Path, cache: Path, *args: str, packs: tuple[str, ...] = REAL
) -> tuple[set[str], str]:
    """Run ``RUN`` in a fresh interpreter; the modules it loaded and its stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    env.update(HAVERSACK_PACKS=",".join(packs), HAVERSACK_CACHE_DIR=str(cache))
    out = tmp_path / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(out), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(out.read_text())), done.stdout


def _pydantic(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core"))


def test_render_never_imports_pydantic(tmp_path):
    for _ in range(2):  # a cold and a warm discovery cache
        modules, text = _modules(tmp_path, tmp_path / "cache", "cli", "render")
        assert {f"haversack_{name}.plugin" for name in REAL} <= modules
        assert "Workspace files" in text
        assert _pydantic(modules) == []


def test_an_mcp_pack_without_servers_imports_neither_asyncio_nor_the_client(tmp_path):
    modules, text = _modules(tmp_path, tmp_path / "cache", "cli", "render", packs=(*REAL, "mcp"))
    assert {"haversack_mcp.plugin", "haversack_mcp._config"} <= modules
    assert "Workspace files" in text
    assert sorted(m for m in modules if m.split(".")[0] in ("asyncio", "mcp", "anyio")) == []


def test_packs_imports_pydantic_only_to_fill_its_schema_cache(tmp_path):
    cache = tmp_path / "cache"
    cold, listed = _modules(tmp_path, cache, "cli", "packs")
    warm, again = _modules(tmp_path, cache, "cli", "packs")
    assert _pydantic(cold)  # the schemas were built once...
    assert _pydantic(warm) == []  # ...and then read from the cache
    assert {f"haversack_{name}.plugin" for name in REAL} <= warm
    assert again == listed
    assert listed.count(" tokens") == len(REAL)


def test_listing_packs_imports_no_pack_pluggy_or_prompt_model(tmp_path):
    for _ in range(2):  # a cold and a warm discovery cache
        modules, _ = _modules(
            tmp_path,
            tmp_path / "cache",
            "code",
            "import haversack; assert len(haversack.discover()) >= 3",
        )
        assert "haversack._packs._compose" in modules
        loaded = sorted(
            m
            for m in modules
            if m.split(".")[0] in ("pluggy", "pydantic", *(f"haversack_{n}" for n in REAL))
            or m in ("haversack._section", "haversack._tool", "haversack._prompt")
        )
        assert loaded == []
