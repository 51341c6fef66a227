"""The package's front page (core/README.md, shown on PyPI) runs as written, installed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Venv

README = Path(__file__).resolve().parents[2] / "core" / "README.md"


def test_the_front_page_example_runs_in_an_installed_environment(venv: Venv) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    result = venv.script(block)
    assert result.returncode == 0, result.stderr
    assert "Greet people with greet." in result.stdout
    assert "Hello, Ada!" in result.stdout
    assert "Invalid arguments for 'greet': field 'name'" in result.stdout


def test_the_front_page_commands_exist(venv: Venv) -> None:
    named = re.findall(r"^haversack ([a-z-]+)", README.read_text(), re.M)
    assert {"packs", "check", "client-config", "serve"} <= set(named)
    for command in named:
        result = venv.cli(command, "--help")
        assert result.returncode == 0, (command, result.stderr)
