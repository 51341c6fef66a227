"""docs/runtime.md: every python code block runs as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

RUNTIME_MD = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"
BLOCKS = re.findall(r"```python\n(.*?)```", RUNTIME_MD.read_text(encoding="utf-8"), re.DOTALL)


def test_the_page_has_an_example() -> None:
    assert BLOCKS


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_code_block_runs(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A real module, so dataclasses and annotations resolve as they would in a user's file.
    module = types.ModuleType("runtime_md_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, str(RUNTIME_MD), "exec"), module.__dict__)
