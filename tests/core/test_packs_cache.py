"""The discovery cache: warm hits skip the scan, and any install change invalidates them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from haversack import discover
from haversack._packs import _cache, _discovery
from haversack.testing import write_distribution

PACK = """
from haversack import Tool, ToolResult
from haversack.hookspecs import hookimpl

def _ok(params, *, context):
    return ToolResult.ok()

@hookimpl
def register_tools(register):
    register(Tool[None, None](name="{name}_tool", description="A tool.", handler=_ok))
"""


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("discovery-*.json")) if folder.is_dir() else []


def _no_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail() -> list[_discovery.Candidate]:
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(_discovery, "scan", fail)


def _names(report: object) -> list[tuple[str, str, str]]:
    return [(p.name, p.version, p.status) for p in report]  # type: ignore[attr-defined]


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("HAVERSACK_CACHE_DIR", str(tmp_path / "x"))
    assert _cache.cache_dir() == str(tmp_path / "x")
    monkeypatch.delenv("HAVERSACK_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _cache.cache_dir() == str(tmp_path / "xdg" / "haversack")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _cache.cache_dir() == str(tmp_path / "home" / ".cache" / "haversack")


def test_warm_hit_answers_without_scanning(site, cache_dir, monkeypatch, age):
    site.add("alpha", PACK.format(name="alpha"))
    site.add("beta", PACK.format(name="beta"), requires=["haversack<0.0.1"])
    age(site.root)
    cold = discover()
    assert len(_files(cache_dir)) == 1
    _no_scan(monkeypatch)
    warm = discover()
    assert (
        _names(warm)
        == _names(cold)
        == [
            ("alpha", "1.0", "not-imported"),
            ("beta", "1.0", "incompatible"),
        ]
    )
    assert warm["beta"].reason == cold["beta"].reason
    assert "haversack<0.0.1" in warm["beta"].reason
    assert warm["alpha"].requires == cold["alpha"].requires == ">=0.1"


def test_warm_hit_loads_packs_through_the_cached_entry_point(site, cache_dir, monkeypatch, age):
    site.add("alpha", PACK.format(name="alpha"))
    age(site.root)
    discover()
    _no_scan(monkeypatch)
    report = discover(load=True)
    assert report["alpha"].status == "loaded"
    assert report["alpha"].tools == ("alpha_tool",)


def test_installing_a_distribution_invalidates(site, cache_dir, monkeypatch, age):
    site.add("alpha", PACK.format(name="alpha"))
    age(site.root)
    assert [p.name for p in discover()] == ["alpha"]
    site.add("beta", PACK.format(name="beta"))
    assert [p.name for p in discover()] == ["alpha", "beta"]


def test_installing_a_plain_library_invalidates_too(site, cache_dir, age):
    site.add("alpha", PACK.format(name="alpha"))
    age(site.root)
    discover()
    before = _cache._key()[0]
    write_distribution(site.root, "some-lib")
    assert _cache._key()[0] != before


def test_uninstalling_a_distribution_invalidates(site, cache_dir, age):
    site.add("alpha", PACK.format(name="alpha"))
    site.add("beta", PACK.format(name="beta"))
    age(site.root)
    assert [p.name for p in discover()] == ["alpha", "beta"]
    shutil.rmtree(site.root / "hvt_beta-1.0.dist-info")
    assert [p.name for p in discover()] == ["alpha"]


def test_upgrading_a_distribution_invalidates(site, cache_dir, age):
    site.add("alpha", PACK.format(name="alpha"))
    age(site.root)
    assert discover()["alpha"].version == "1.0"
    shutil.rmtree(site.root / "hvt_alpha-1.0.dist-info")
    site.add("alpha", PACK.format(name="alpha"), version="2.0")
    assert discover()["alpha"].version == "2.0"


def test_metadata_rewritten_in_place_invalidates(site, cache_dir, age):
    site.add("alpha", PACK.format(name="alpha"))
    age(site.root)
    assert discover()["alpha"].status == "not-imported"
    metadata = site.root / "hvt_alpha-1.0.dist-info" / "METADATA"
    metadata.write_text(metadata.read_text().replace("haversack>=0.1", "haversack<0.0.1"))
    then = time.time() - 50  # a different, still old, mtime
    os.utime(metadata, (then, then))
    assert discover()["alpha"].status == "incompatible"


def test_fresh_folders_are_not_cached(site, cache_dir):
    # A folder written this instant may change again within the same mtime tick.
    site.add("alpha", PACK.format(name="alpha"))
    assert [p.name for p in discover()] == ["alpha"]
    assert _files(cache_dir) == []


def test_no_cache_variable_disables_it(site, cache_dir, monkeypatch, age):
    site.add("alpha", PACK.format(name="alpha"))
    age(site.root)
    monkeypatch.setenv("HAVERSACK_NO_CACHE", "1")
    assert [p.name for p in discover()] == ["alpha"]
    assert _files(cache_dir) == []


@pytest.mark.parametrize(
    "content",
    [b"", b"{not json", b"[]", b'{"key": 1}', b"\xff\xfe garbage", b'{"key": null, "x": 1}'],
)
def test_corrupt_cache_is_ignored_and_replaced(site, cache_dir, content, age):
    site.add("alpha", PACK.format(name="alpha"))
    age(site.root)
    discover()
    (path,) = _files(cache_dir)
    path.write_bytes(content)
    assert [p.name for p in discover()] == ["alpha"]
    assert json.loads(path.read_text())["candidates"][0]["name"] == "alpha"


def test_corrupt_rows_under_a_matching_key_are_ignored(site, cache_dir, age):
    site.add("alpha", PACK.format(name="alpha"))
    age(site.root)
    discover()
    (path,) = _files(cache_dir)
    data = json.loads(path.read_text())
    data["candidates"] = [{"name": "alpha"}]
    path.write_text(json.dumps(data))
    assert [p.name for p in discover()] == ["alpha"]


def test_unwritable_cache_dir_falls_back(site, tmp_path, monkeypatch, age):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("HAVERSACK_CACHE_DIR", str(blocker / "cache"))
    site.add("alpha", PACK.format(name="alpha"))
    age(site.root)
    assert [p.name for p in discover()] == ["alpha"]
    assert [p.name for p in discover()] == ["alpha"]


def test_concurrent_writers_leave_a_valid_file(site, cache_dir, age):
    site.add("alpha", PACK.format(name="alpha"))
    age(site.root)
    key = _cache._key()[0]
    found = _discovery.scan()
    path = _cache._file()
    threads = [threading.Thread(target=_cache._store, args=(path, key, found)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [c.name for c in _cache._load(path, key) or []] == ["alpha"]
    assert list(cache_dir.glob("*.tmp")) == []


def test_a_warm_process_imports_neither_metadata_nor_packaging(tmp_path):
    """The real environment, in fresh processes: the second run is served from the cache."""
    code = (
        "import sys\n"
        "from haversack import discover\n"
        "names = sorted(p.name for p in discover())\n"
        "heavy = sorted(m for m in ('importlib.metadata', 'packaging') if m in sys.modules)\n"
        "print(names, heavy)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAVERSACK_")}
    env["HAVERSACK_CACHE_DIR"] = str(tmp_path / "cache")

    def once() -> str:
        return subprocess.run(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    cold = once()
    if not _files(tmp_path / "cache"):
        pytest.skip("the environment was modified within the last seconds; nothing cached")
    warm = once()
    assert warm.split("] [")[0] == cold.split("] [")[0]
    assert warm.strip().endswith("[]"), warm


@pytest.mark.parametrize(
    "text",
    [
        "[tool.haversack]\nstrict = true\n",
        '[ tool . "haversack" ]\nstrict = true\n',
        "[tool.'haversack'.packs.vfs]\nprefix = 'v_'\n",
        "[tool]\nhaversack = { strict = true }\n",
        '[tool]\n"haversack".strict = true\n',
        "tool.haversack.strict = true\n",
        "tool = { haversack = { strict = true } }\n",
    ],
)
def test_config_precheck_finds_every_spelling_of_the_table(tmp_path, text):
    from haversack._packs._config import find_config_file, load_config

    # The table's text first: a root-level dotted key must come before any [header].
    (tmp_path / "pyproject.toml").write_text(text + '[project]\nname = "x"\n')
    assert find_config_file(tmp_path) == tmp_path / "pyproject.toml"
    assert load_config(None, search_from=tmp_path).strict is True or "prefix" in text


def test_config_precheck_skips_files_that_only_mention_haversack(tmp_path, monkeypatch):
    from haversack._packs import _config

    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "haversack-app"\ndependencies = ["haversack>=0.1", "haversack"]\n'
        '[tool.other]\nmodules = ["haversack._section", "haversack_vfs"]\n'
    )

    def no_parse(path: Path) -> dict[str, object]:
        raise AssertionError(f"{path} should not need parsing")

    monkeypatch.setattr(_config, "_read_toml", no_parse)
    assert _config.find_config_file(tmp_path) is None


def test_the_cache_folder_keeps_only_the_newest_files(site, cache_dir, monkeypatch, age):
    cache_dir.mkdir()
    for i in range(_cache.MAX_FILES + 5):
        old = cache_dir / f"discovery-{i:08x}.json"
        old.write_text("{}")
        os.utime(old, ns=(i * 1_000_000_000, i * 1_000_000_000))
    (cache_dir / "unrelated.txt").write_text("kept")
    site.add("alpha", PACK.format(name="alpha"))
    age(site.root)
    assert [p.name for p in discover()] == ["alpha"]
    left = _files(cache_dir)
    assert len(left) == _cache.MAX_FILES
    assert Path(_cache._file()) in left  # the file just written is among the newest
    assert cache_dir / "discovery-00000000.json" not in left  # the oldest went first
    assert (cache_dir / "unrelated.txt").read_text() == "kept"


@pytest.mark.parametrize(
    "value", ["os.path", "os.path:join", "os.path : join", "os.path:join [extra]", "os:path.join"]
)
def test_cached_entry_points_load_what_importlib_loads(value):
    from importlib.metadata import EntryPoint

    light = _discovery.LightEntryPoint("x", value, _discovery.GROUP)
    assert light.load() is EntryPoint("x", value, _discovery.GROUP).load()


def test_a_malformed_cached_entry_point_names_itself():
    light = _discovery.LightEntryPoint("oops", "not a value!", _discovery.GROUP)
    with pytest.raises(ValueError, match="'not a value!' for 'oops'"):
        light.load()
