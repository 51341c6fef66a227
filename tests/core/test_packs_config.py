"""Configuration files, per-pack options parsed into the pack's config_type, precedence."""

from __future__ import annotations

import pytest

from haversack import compose, discover
from haversack._packs._config import find_config_file, load_config, may_configure
from haversack.errors import PackConfigError

CONFIGURED = """
from dataclasses import dataclass
from haversack import MarkdownSection
from haversack.hookspecs import hookimpl

@dataclass(frozen=True)
class Options:
    root: str = "/"
    depth: int = 1

@hookimpl
def config_type():
    return Options

@hookimpl
def register_sections(register, config):
    register(MarkdownSection(
        title="Opts", key="opts", template=f"root={config.root} depth={config.depth}"
    ))
"""

NO_OPTIONS = """
from haversack.hookspecs import hookimpl

@hookimpl
def register_tools(register, config):
    assert config is None
"""


def text(**kwargs) -> str:
    return compose(ns="t", key="k", **kwargs).render().text


def test_hook_config_type_defaults_without_configuration(site):
    site.add("fs", CONFIGURED)
    assert "root=/ depth=1" in text()


def test_options_from_code(site):
    site.add("fs", CONFIGURED)
    assert "root=/w depth=3" in text(config={"fs": {"root": "/w", "depth": 3}})


def test_pyproject_found_upward_and_code_overrides_file_per_key(site, tmp_path, monkeypatch):
    site.add("fs", CONFIGURED)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.haversack.packs.fs]\nroot = "/file"\ndepth = 2\n'
    )
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    monkeypatch.chdir(nested)
    assert "root=/file depth=2" in text()
    assert "root=/file depth=9" in text(config={"fs": {"depth": 9}})


def test_haversack_toml_wins_over_pyproject_in_one_folder(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.haversack]\nstrict = true\n")
    (tmp_path / "haversack.toml").write_text("strict = false\n")
    assert find_config_file(tmp_path) == tmp_path / "haversack.toml"
    assert load_config(None, search_from=tmp_path).strict is False


def test_pyproject_without_table_is_skipped(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "haversack-thing"\n')
    assert find_config_file(tmp_path) is None


PYPROJECTS = {
    # uv's source for the core (in a project using it) is no [tool.haversack]: not parsed
    "[tool.uv.sources]\nhaversack = { workspace = true }\n": False,
    '[project]\ndependencies = ["haversack>=0.1"]\n': False,
    '[tool.importlinter]\nroot_packages = ["haversack", "haversack._x"]\n': False,
    "haversack = 1\n": False,  # a root key, not tool.haversack
    "[tool.haversack]\nstrict = true\n": True,
    "[tool]\nhaversack = { strict = true }\n": True,
    "[ tool ]\n  haversack.strict = true\n": True,
    '["tool"]\n"haversack" = { strict = true }\n': True,
    "tool.haversack.strict = true\n": True,
    "tool = { haversack = { strict = true } }\n": True,
    '[tool."haversack"]\nstrict = true\n': True,
    "[tool.uv.sources]\nhaversack = { workspace = true }\n[tool]\nhaversack.strict = true\n": True,
    # a multi-line string could hide a header line: every match counts then
    '[tool.black]\nx = """\n[tool.uv]\n"""\n[tool.uv.sources]\nhaversack = { path = "." }\n': True,
}


@pytest.mark.parametrize("text", PYPROJECTS)
def test_only_a_pyproject_that_may_configure_haversack_is_parsed(text):
    import tomllib

    configures = "haversack" in tomllib.loads(text).get("tool", {})
    assert may_configure(text.encode()) is PYPROJECTS[text]
    assert may_configure(text.encode()) or not configures  # never skips a real table


def test_uv_source_for_the_core_is_not_a_config_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "app"\ndependencies = ["haversack"]\n\n'
        '[tool.uv.sources]\nhaversack = { git = "https://example.org/haversack" }\n'
    )
    assert find_config_file(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text(
        "[tool.uv.sources]\nhaversack = { workspace = true }\n\n[tool]\nhaversack.strict = true\n"
    )
    assert find_config_file(tmp_path) == tmp_path / "pyproject.toml"
    assert load_config(None, search_from=tmp_path).strict is True


def test_explicit_config_file(site, tmp_path):
    site.add("fs", CONFIGURED)
    other = tmp_path / "elsewhere.toml"
    other.write_text('[packs.fs]\nroot = "/explicit"\n')
    assert "root=/explicit" in text(config_file=other)
    with pytest.raises(PackConfigError, match="does not exist"):
        text(config_file=tmp_path / "missing.toml")


def test_unknown_option_names_pack_and_key(site):
    site.add("fs", CONFIGURED)
    with pytest.raises(PackConfigError) as info:
        text(config={"fs": {"rot": "/"}}, strict=True)
    message = str(info.value)
    assert "pack 'fs'" in message
    assert "unknown option 'rot'" in message
    assert "valid options: root, depth" in message
    assert "valid options: root, depth; did you mean 'root'?" in message
    assert info.value.pack == "fs"
    with pytest.raises(PackConfigError, match="unknown option 'rot'"):
        text(config={"fs": {"rot": "/"}})  # not strict: still the user's own mistake


def test_wrong_type_option_and_where_it_came_from(site, tmp_path):
    site.add("fs", CONFIGURED)
    (tmp_path / "haversack.toml").write_text('[packs.fs]\ndepth = "deep"\n')
    report = discover(load=True)
    assert report["fs"].status == "misconfigured"
    assert "haversack.toml [packs.fs]" in report["fs"].reason
    assert "depth" in report["fs"].reason


def test_options_for_pack_without_config_type(site):
    site.add("plain", NO_OPTIONS)
    text(config={"plain": {"prefix": "p_"}})  # core options are always accepted
    with pytest.raises(PackConfigError, match=r"takes no options.*colour"):
        text(config={"plain": {"colour": "red"}}, strict=True)


def test_options_for_pack_not_installed(site):
    site.add("fs", CONFIGURED)
    report = discover(load=True, config={"fss": {"root": "/"}})
    assert "pack 'fss'" in report.problems[0]
    assert "installed: fs" in report.problems[0]
    assert "(did you mean 'fs'?)" in report.problems[0]
    with pytest.raises(PackConfigError, match="'fss'"):
        text(config={"fss": {}})  # options for a pack that is not there: always an error


def test_strict_from_file(site, tmp_path):
    site.add("fs", CONFIGURED)
    (tmp_path / "haversack.toml").write_text("strict = true\n[packs.fs]\nbad = 1\n")
    with pytest.raises(PackConfigError):
        text()
    with pytest.raises(PackConfigError):  # not strict: bad options are still an error
        text(strict=False)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("pakcs = []\n", "Unknown key 'pakcs'"),
        ("packs = 3\n", "must be a list of names or a table"),
        ("packs = ['a']\nenable = ['b']\n", "keep one"),
        ("disable = 'a'\n", "must be a list of pack names"),
        ("strict = 'yes'\n", "strict must be true or false"),
        ("[packs]\nfs = 3\n", "must be a table"),
        ("[packs.fs]\nprefix = 3\n", "prefix for pack 'fs'"),
        ("[packs.fs]\nrename = ['a']\n", "rename for pack 'fs'"),
        ("this is not toml", "Cannot read config file"),
    ],
)
def test_malformed_config_file(site, tmp_path, content, message):
    site.add("fs", CONFIGURED)
    (tmp_path / "haversack.toml").write_text(content)
    with pytest.raises(PackConfigError, match=message):
        discover(load=True)


def test_config_value_for_a_pack_must_be_a_mapping(site):
    site.add("fs", CONFIGURED)
    with pytest.raises(PackConfigError, match="must be a mapping"):
        text(config={"fs": ["root"]})
