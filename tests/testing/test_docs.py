"""The examples of docs/testing.md pass; docs/tutorial.md quotes the scaffold exactly."""

from __future__ import annotations

import re
from pathlib import Path

from haversack._scaffold import scaffold  # what `haversack new-pack` runs

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)

pytest_plugins = ["pytester"]


def test_testing_page_examples_pass(pytester):
    blocks = BLOCK.findall((DOCS / "testing.md").read_text(encoding="utf-8"))
    pytester.makepyfile(test_page="\n\n".join(blocks))
    result = pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=13)


def test_tutorial_quotes_the_generated_files(tmp_path):
    root = scaffold("journal", tmp_path / "journal")
    quoted = [b for b in BLOCK.findall((DOCS / "tutorial.md").read_text()) if b.startswith("# ")]
    assert len(quoted) == 7
    for block in quoted:
        header, _, code = block.partition("\n")
        assert code in (root / header.removeprefix("# ")).read_text(), header
