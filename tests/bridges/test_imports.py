"""The bridges are optional: the core, the adapters and the bridges package import no
framework; a bridge module imports only its own."""

from __future__ import annotations

import json
import subprocess
import sys

FRAMEWORKS = ("pydantic_ai", "agents", "llm")


def _frameworks_after(code: str) -> list[str]:
    snippet = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout.splitlines()[-1])
    return sorted({m.split(".")[0] for m in modules} & set(FRAMEWORKS))


def test_the_core_adapters_agent_and_bridges_package_import_no_framework():
    code = (
        "import haversack, haversack.adapters, haversack.agent, haversack.bridges\n"
        "haversack.compose(ns='t', key='t', packs=['vfs']).render()"
    )
    assert _frameworks_after(code) == []


def test_each_bridge_imports_only_its_own_framework():
    assert _frameworks_after("import haversack.bridges.pydantic_ai") == ["pydantic_ai"]
    assert _frameworks_after("import haversack.bridges.openai_agents") == ["agents"]
    assert _frameworks_after("import haversack.bridges.llm") == ["llm"]
