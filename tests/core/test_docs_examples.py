"""The python code blocks of ``docs/concepts.md`` run as written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "concepts.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_page_has_an_example() -> None:
    assert blocks()


@pytest.mark.parametrize("index", range(len(blocks())))
def test_code_block_runs(index: int) -> None:
    source = blocks()[index]
    # A real module, so @tool can resolve the example's postponed annotations.
    name = f"_concepts_example_{index}"
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        exec(compile(source, f"{DOC}:block{index}", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
