"""The README's Python example runs as written."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no project config file may influence composition
    for var in ("HAVERSACK_PACKS", "HAVERSACK_DISABLE", "HAVERSACK_STRICT"):
        monkeypatch.delenv(var, raising=False)
    text = (ROOT / "README.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", text, re.S)
    script = tmp_path / "readme_example.py"
    script.write_text(block)
    runpy.run_path(str(script), run_name="readme_example")
    out = capsys.readouterr().out
    assert "Greet people with greet." in out
    assert "Hello, Ada!" in out
    assert "Invalid arguments for 'greet': field 'name'" in out
