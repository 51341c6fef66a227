"""Real installs: a user's mistakes are precise errors, config works from any directory,
resources are checked up front, and a hanging pack is named, not waited for silently."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Venv


def test_a_typo_in_a_named_pack_is_an_error_everywhere(venv: Venv, tmp_path: Path) -> None:
    flag = venv.cli("render", "-p", "godo")
    assert flag.returncode == 2
    assert flag.stdout == ""
    assert "names 'godo', but no installed pack" in flag.stderr
    assert "(did you mean 'good'?)" in flag.stderr
    env = venv.cli("render", HAVERSACK_PACKS="godo")
    assert env.returncode == 2
    assert "HAVERSACK_PACKS names 'godo'" in env.stderr
    # The listing still shows what is installed, next to the precise problem, and fails.
    listing = venv.cli("packs", "-p", "godo")
    assert listing.returncode == 2
    assert "problem: packs= (--pack) names 'godo', but no installed pack" in listing.stdout
    assert "good  (" in listing.stdout
    assert venv.cli("packs", "--json", "-p", "godo").returncode == 2
    (tmp_path / "haversack.toml").write_text('packs = ["godo"]\n')
    file = venv.cli("render", cwd=tmp_path)
    assert file.returncode == 2
    assert "haversack.toml names 'godo'" in file.stderr
    code = venv.script(
        "from haversack import compose\n"
        "from haversack.errors import PackConfigError\n"
        "try:\n    compose(ns='t', key='k', packs=['godo'])\n"
        "except PackConfigError as e:\n    print('raised:', e)\n"
    )
    assert "raised: packs= (--pack) names 'godo'" in code.stdout, code.stderr


def test_unknown_option_raises_without_strict(venv: Venv) -> None:
    result = venv.script(
        "from haversack import compose\n"
        "from haversack.errors import PackConfigError\n"
        "try:\n    compose(ns='t', key='k', packs=['good'], config={'good': {'greting': 'x'}})\n"
        "except PackConfigError as e:\n    print(e.pack, '|', e)\n"
    )
    assert result.stdout.startswith("good | Invalid options for pack 'good'"), result.stderr
    expected = "unknown option 'greting' (valid options: greeting; did you mean 'greeting'?)"
    assert expected in result.stdout


def test_named_broken_pack_is_an_error_unnamed_is_left_out(venv: Venv) -> None:
    named = venv.cli("render", "-p", "good", "-p", "broken")
    assert named.returncode == 2
    assert named.stderr.startswith("haversack: error: pack 'broken' (hvit-broken 0.3.0)")
    assert "it is named in packs= (--pack)" in named.stderr
    unnamed = venv.cli("render", "--disable", "clashb", "--disable", "store")
    assert unnamed.returncode == 0, unnamed.stderr
    assert "left out pack 'broken'" in unnamed.stderr


def test_check_names_config_mistakes_and_resources(venv: Venv, tmp_path: Path) -> None:
    (tmp_path / "haversack.toml").write_text(
        'enable = ["good", "store"]\n[packs.good]\ngreting = "Hi"\n'
    )
    mistake = venv.cli("check", cwd=tmp_path)
    assert mistake.returncode == 1
    assert "error: config error: Invalid options for pack 'good'" in mistake.stdout
    assert "is broken" not in mistake.stdout
    (tmp_path / "haversack.toml").write_text(
        'enable = ["good", "store"]\n[packs.store]\nfolder = "data"\n'
    )
    missing = venv.cli("check", cwd=tmp_path)
    assert missing.returncode == 1
    assert missing.stdout.splitlines()[0] == (
        f"error: resource Store cannot open: Store folder {tmp_path / 'data'} does not exist; "
        "create it or set [packs.store] folder."
    )
    call = venv.cli("call", "where", cwd=tmp_path)
    assert call.returncode == 2
    assert call.stderr.splitlines() == [
        f"haversack: error: resource Store cannot open: Store folder {tmp_path / 'data'} does "
        "not exist; create it or set [packs.store] folder.",
        "hint: `haversack check` opens every resource and lists each one that fails.",
    ]
    (tmp_path / "data").mkdir()
    fixed = venv.cli("check", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout
    assert "OK (2 loaded: good, store; 0 errors)" in fixed.stdout


def test_config_from_any_working_directory(venv: Venv, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "a.txt").write_text("a")
    config = project / "haversack.toml"
    config.write_text('enable = ["store"]\n[packs.store]\nfolder = "data"\n')
    # As a desktop MCP client launches a server: working directory /, config by environment.
    by_env = venv.cli("call", "list_store", cwd=Path("/"), HAVERSACK_CONFIG=str(config))
    assert (by_env.returncode, by_env.stdout) == (0, "a.txt\n"), by_env.stderr
    where = venv.cli("call", "where", "--config", str(config), cwd=Path("/"))
    assert where.stdout == f"{project / 'data'}\n", where.stderr
    relative = venv.cli("call", "where", "--config", "project/haversack.toml", cwd=tmp_path)
    assert relative.stdout == f"{project / 'data'}\n", relative.stderr
    nowhere = venv.cli("render", cwd=Path("/"), HAVERSACK_CONFIG="project/haversack.toml")
    assert nowhere.returncode == 2
    assert "project/haversack.toml (HAVERSACK_CONFIG) does not exist" in nowhere.stderr
    assert "relative to the working directory /" in nowhere.stderr


def test_client_config_entry_runs_from_root(venv: Venv, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "haversack.toml").write_text('enable = ["store"]\n[packs.store]\nfolder = "data"\n')
    printed = venv.cli("client-config", cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    server = json.loads(printed.stdout)["mcpServers"]["haversack"]
    assert server["command"] == str(venv.python)
    assert server["args"][:3] == ["-m", "haversack", "serve"]
    # The same launch, with `call` instead of `serve`, from / with only the entry's env.
    argv = [server["command"], "-m", "haversack", "call", "where"]
    result = venv.run(*argv, cwd=Path("/"), **server["env"])
    assert result.stdout == f"{tmp_path / 'data'}\n", result.stderr


def test_exclude_tools_from_the_config_file(venv: Venv, tmp_path: Path) -> None:
    (tmp_path / "haversack.toml").write_text(
        'enable = ["store"]\n[packs.store]\nexclude_tools = ["list_*"]\n'
    )
    tools = venv.cli("tools", "--json", cwd=tmp_path)
    assert [t["name"] for t in json.loads(tools.stdout)] == ["where"], tools.stderr
    packs = venv.cli("packs", cwd=tmp_path)
    assert "saved by tools/exclude_tools)" in packs.stdout
    assert "removed by options: list_store" in packs.stdout
    (tmp_path / "haversack.toml").write_text('[packs.store]\ntools = ["wehre"]\n')
    typo = venv.cli("render", cwd=tmp_path)
    assert typo.returncode == 2
    assert "tools for pack 'store'" in typo.stderr
    assert "'wehre' (did you mean 'where'?)" in typo.stderr


def test_a_hanging_pack_is_reported_timed_out_by_listings(venv: Venv) -> None:
    env = {"HVIT_HANG": "1", "HAVERSACK_IMPORT_BUDGET": "1", "HAVERSACK_IMPORT_NOTICE": "0.2"}
    packs = venv.cli("packs", "--json", **env)
    assert packs.returncode == 0, packs.stderr
    report = {p["name"]: p for p in json.loads(packs.stdout)["packs"]}
    assert report["hangs"]["status"] == "timed-out"
    assert "did not finish within 1 s" in report["hangs"]["reason"]
    assert report["good"]["status"] == "loaded"
    assert "haversack: still importing pack 'hangs' (hvit-hangs 0.3.0)" in packs.stderr
    check = venv.cli("check", "--disable", "broken", **env)
    assert check.returncode == 1
    assert "pack 'hangs' (hvit-hangs 0.3.0) is timed-out" in check.stdout


def test_a_hanging_pack_is_named_on_stderr_by_other_commands(venv: Venv) -> None:
    proc = subprocess.Popen(
        [str(venv.haversack), "render"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=venv.workdir,
        env=venv.env(HVIT_HANG="1", HAVERSACK_IMPORT_NOTICE="0.2"),
    )
    # The import never returns: read the notice, then stop the process. The timer only
    # guards against a missing notice (the read would otherwise wait forever).
    guard = threading.Timer(60, proc.kill)
    guard.start()
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
    finally:
        guard.cancel()
        proc.kill()
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    assert line.startswith(
        "haversack: still importing pack 'hangs' (hvit-hangs 0.3.0) (module hvit_hangs.plugin)"
    ), line
    assert "HAVERSACK_DISABLE=NAME" in line
