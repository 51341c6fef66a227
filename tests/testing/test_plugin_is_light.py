"""Loading the pytest plugin imports neither pydantic nor the pack system, and adds no autouse."""

from __future__ import annotations

import subprocess
import sys


def test_plugin_import_is_light():
    code = (
        "import sys, haversack.testing.plugin as p;"
        "heavy = ('pydantic', 'haversack._packs', 'haversack._executor');"
        "heavy = [m for m in heavy if m in sys.modules];"
        "print(heavy)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_fixtures_are_prefixed_and_not_autouse(request):
    from haversack.testing import plugin

    names = [n for n in vars(plugin) if n.startswith("haversack_")]
    assert names == ["haversack_compose", "haversack_session", "haversack_executor"]
    # This test asks for none of them, so an autouse one would show up here.
    assert not set(names) & set(request.fixturenames)
