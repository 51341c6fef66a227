"""Broken packs REALLY installed into a fresh virtual environment (uv), next to good ones.

One environment holds the integration suite's fixtures (good, import error, incompatible,
tool-name clash) plus throwaway packs for every other fault: a hook that raises, hooks that
register or return the wrong type, clashes of each name kind (section key, policy, resource
type) and a pack slow to import. The rest must keep working, the report
(``discover(load=True)`` and ``haversack packs --json``) must name each culprit, and strict
mode must raise the precise error.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..integration.conftest import (  # noqa: TID252 - reuse
    FIXTURES,
    ROOT,
    Venv,
    find_uv,
    require_tool,
    uv_candidates,
)
from ._packs import PLUGINS, wheel_from_project, write_pack

PROBE = Path(__file__).resolve().parent / "packs" / "probe.py"
#: culprit -> (report status, words its reason and strict error must contain)
CULPRITS: dict[str, tuple[str, tuple[str, ...]]] = {
    "broken": ("broken", ("hvit_this_module_does_not_exist",)),
    "incompatible": ("incompatible", ("haversack<0.0.1",)),
    "hookraise": ("broken", ("register_tools", "hookraise exploded")),
    "wrongreg": ("broken", ("register_tools", "str")),
    "wrongret": ("broken", ("config_type", "42")),
    "wrongsect": ("broken", ("register_sections", "dict")),
}
#: (first, second, conflict kind, clashing name)
CLASHES = (
    ("clasha", "clashb", "tool", "fetch"),
    ("secta", "sectb", "section", "shared-notes"),
    ("pola", "polb", "policy", "same-policy"),
    ("resa", "resb", "resource", "Fraction"),
)


@pytest.fixture(scope="module")
def matrix_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    # Under CI a missing uv fails: a skip would hide missing set-up.
    uv = require_tool("uv", find_uv(), uv_candidates())
    base = tmp_path_factory.mktemp("hvrel")
    path = base / "venv"
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    subprocess.run([uv, "venv", "-q", "-p", py, str(path)], check=True)
    target = ["--python", str(path / "bin" / "python")]
    wheels = base / "wheels"
    reused = [FIXTURES / n for n in ("good", "broken", "clash_a", "clash_b")]
    ours = [write_pack(base / "src", name) for name in PLUGINS]
    built = [str(wheel_from_project(project, wheels)) for project in [*reused, *ours]]
    subprocess.run([uv, "pip", "install", "-q", *target, str(ROOT / "core"), *built], check=True)
    # As in tests/integration: force in a pack that excludes the installed core.
    incompatible = wheel_from_project(FIXTURES / "incompatible", wheels)
    subprocess.run(
        [uv, "pip", "install", "-q", "--no-deps", *target, str(incompatible)], check=True
    )
    workdir = base / "project"
    workdir.mkdir()
    return Venv(path, workdir)


def test_broken_pack_matrix(matrix_venv: Venv, figure) -> None:
    fig = figure("broken-packs", "installed matrix")
    clashes = ",".join(f"{a}+{b}" for a, b, _, _ in CLASHES)
    probe = matrix_venv.run(matrix_venv.python, PROBE, ",".join(CULPRITS), clashes)
    assert probe.returncode == 0, probe.stderr
    out = json.loads(probe.stdout)
    packs = out["packs"]
    fig.note("discover_load_s", round(out["discover_s"], 3))
    fig.note("compose_s", round(out["compose_s"], 3))

    # Each culprit named in the report, with why; the strict error is precise.
    for name, (status, words) in CULPRITS.items():
        fig.case()
        info = packs.get(name, {})
        if fig.check(info.get("status") == status, f"{name}: status {info.get('status')!r}"):
            for word in words:
                fig.check(word in info["reason"], f"{name}: reason lacks {word!r}: {info}")
        fig.case()
        error = out["strict"].get(name)
        if fig.check(error is not None, f"{name}: strict compose did not raise"):
            kind, pack, message = error
            fig.check(kind == "PackLoadError", f"{name}: strict raised {kind}: {message}")
            fig.check(pack == name, f"{name}: strict error names pack {pack!r}")
            for word in words:
                fig.check(word in message, f"{name}: strict message lacks {word!r}: {message}")

    # Clashes: every one in the report with both contributors; strict raises NameConflictError.
    listed = {(kind, name): contributors for kind, name, contributors in out["conflicts"]}
    for first, second, kind, name in CLASHES:
        fig.case()
        contributors = next((c for (k, n), c in listed.items() if k == kind and name in n), None)
        if fig.check(contributors is not None, f"{kind} clash {name!r} not reported: {listed}"):
            joined = " ".join(contributors)
            fig.check(
                f"'{first}'" in joined and f"'{second}'" in joined,
                f"{kind} clash {name!r} does not name both packs: {contributors}",
            )
        fig.case()
        error = out["strict"].get(f"{first}+{second}")
        fig.check(
            error is not None and error[0] == "NameConflictError" and error[1] == kind,
            f"{first}+{second}: strict error {error}",
        )
    fig.case()
    fig.check(
        out["clash_error"] is not None and out["clash_error"][0] == "NameConflictError",
        f"compose with clashes: {out['clash_error']}",
    )

    # The rest keep working: good, slow and the surviving clash sides load and run.
    for name in ("good", "slow", "clasha", "secta", "pola", "resa"):
        fig.case()
        fig.check(packs.get(name, {}).get("status") == "loaded", f"{name}: {packs.get(name)}")
    for tool, (ok, text) in out["calls"].items():
        fig.case()
        fig.check(ok, f"tool {tool} of a healthy pack failed next to broken ones: {text}")

    # The command line reports the same culprits.
    cli = matrix_venv.cli("packs", "--json")
    fig.case()
    if fig.check(cli.returncode == 0, f"haversack packs --json failed: {cli.stderr}"):
        listed_cli = {p["name"]: p for p in json.loads(cli.stdout)["packs"]}
        for name, (status, _) in CULPRITS.items():
            fig.case()
            got = listed_cli.get(name, {}).get("status")
            fig.check(got == status, f"packs --json: {name} is {got!r}, expected {status!r}")
    fig.assert_clean()
