"""A user's own mistakes are errors (named packs, options, filters, paths); packs nobody
named stay fail-soft; slow imports are named and, for listings, given a budget."""

from __future__ import annotations

import io
import sys
import threading
import uuid
from pathlib import Path

import pytest

from haversack import compose, discover
from haversack._packs._watch import watching, within
from haversack.errors import PackConfigError, PackLoadError

HEADER = """
from dataclasses import dataclass, field
from pathlib import Path
from haversack import MarkdownSection, Tool, ToolResult
from haversack.hookspecs import hookimpl

def _ok(params, *, context):
    return ToolResult.ok(message="ran")

def make(name, description=None):
    return Tool[None, None](name=name, description=description or f"Tool {name}.", handler=_ok)
"""

SQLITE = (
    HEADER
    + """
@dataclass(frozen=True)
class Mount:
    host: str = field(metadata={"path": True})
    inside: str = ""

@dataclass(frozen=True)
class Options:
    max_rows: int = 100
    database: Path = Path("db.sqlite")
    folder: str = field(default=".", metadata={"path": True})
    label: str = "plain"
    roots: tuple[str, ...] = field(default=(), metadata={"path": True})
    copies: dict[str, str] = field(default_factory=dict, metadata={"path": "keys"})
    mounts: tuple[Mount, ...] = ()

@hookimpl
def config_type():
    return Options

@hookimpl
def register_sections(register, config):
    register(MarkdownSection(
        title="SQL", key="sql",
        template=f"db={config.database} folder={config.folder} label={config.label} "
        f"roots={','.join(config.roots)} copies={config.copies} "
        f"mounts={[(m.host, m.inside) for m in config.mounts]} "
        "Use ${tool:query}.",
        tools=[make("query"), make("schema"), make("explain"), make("drop_table")],
    ))
"""
)

MENTIONS = (
    HEADER
    + """
@hookimpl
def register_sections(register):
    register(MarkdownSection(
        title="Notes", key="notes", template="Use ${tool:schema} first.",
    ))
"""
)


def names(prompt) -> list[str]:
    return [t.name for t in prompt.render().tools]


# ---------------------------------------------------------------- named packs
def test_a_typo_in_packs_is_an_error_with_the_closest_name(site):
    site.add("sqlite", SQLITE)
    with pytest.raises(PackConfigError) as info:
        compose(ns="t", key="k", packs=["sqlte"])
    message = str(info.value)
    assert "names 'sqlte'" in message
    assert "(did you mean 'sqlite'?)" in message
    assert "installed packs: sqlite" in message


def test_a_typo_in_the_environment_and_the_config_file(site, monkeypatch, tmp_path):
    site.add("sqlite", SQLITE)
    monkeypatch.setenv("HAVERSACK_PACKS", "sqlit")
    with pytest.raises(PackConfigError, match="HAVERSACK_PACKS names 'sqlit'"):
        compose(ns="t", key="k")
    monkeypatch.delenv("HAVERSACK_PACKS")
    (tmp_path / "haversack.toml").write_text('packs = ["sqllite"]\n')
    with pytest.raises(PackConfigError, match=r"haversack.toml names 'sqllite'.*'sqlite'"):
        compose(ns="t", key="k")
    # discover reports it instead of raising, for `haversack packs` and `check`
    assert "'sqllite'" in discover(load=True).problems[0]


def test_a_deny_list_entry_naming_no_pack_is_an_error_everywhere(site, monkeypatch, tmp_path):
    # Issue 26, item 5: a misspelt deny entry silently left the pack on ("OK" from check).
    site.add("sqlite", SQLITE)
    with pytest.raises(PackConfigError) as info:
        compose(ns="t", key="k", exclude=["sqlte"])
    assert "exclude= (--disable) names 'sqlte' to disable" in str(info.value)
    assert "(did you mean 'sqlite'?)" in str(info.value)
    monkeypatch.setenv("HAVERSACK_DISABLE", "sqlit")
    with pytest.raises(PackConfigError, match=r"HAVERSACK_DISABLE names 'sqlit'.*'sqlite'"):
        compose(ns="t", key="k")
    monkeypatch.delenv("HAVERSACK_DISABLE")
    (tmp_path / "haversack.toml").write_text('disable = ["sqllite"]\n')
    with pytest.raises(PackConfigError, match=r"disable names 'sqllite'.*'sqlite'"):
        compose(ns="t", key="k")
    report = discover(load=True)
    assert not report.ok
    assert "'sqllite'" in report.problems[0]
    (tmp_path / "haversack.toml").write_text('disable = ["sqlite", "*"]\n')
    assert names(compose(ns="t", key="k")) == []  # real names and '*' stay accepted


def test_a_named_broken_pack_raises_an_unnamed_one_is_left_out(site, caplog):
    site.add("sqlite", SQLITE)
    site.add("broken", "raise ImportError('no driver here')")
    assert "query" in names(compose(ns="t", key="k"))  # nobody named 'broken': fail-soft
    assert any("left out pack 'broken'" in r.getMessage() for r in caplog.records)
    with pytest.raises(PackLoadError) as info:
        compose(ns="t", key="k", packs=["sqlite", "broken"])
    assert "no driver here" in str(info.value)
    assert "it is named in packs= (--pack)" in str(info.value)
    assert info.value.pack == "broken"


def test_a_named_incompatible_pack_raises(site):
    site.add("old", HEADER, requires=("haversack<0.0.1",))
    assert discover(load=True)["old"].status == "incompatible"
    compose(ns="t", key="k")  # not named: left out
    with pytest.raises(PackLoadError, match=r"pack 'old' .* is incompatible.*named"):
        compose(ns="t", key="k", packs=["old"])


def test_options_make_a_pack_named(site):
    site.add("broken", "raise ImportError('no driver here')")
    with pytest.raises(PackLoadError, match="because you gave it options"):
        compose(ns="t", key="k", config={"broken": {"prefix": "b_"}})


# ---------------------------------------------------------------- the user's own options
@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"max_row": 3}, r"unknown option 'max_row' \(valid options: max_rows, database"),
        ({"max_rows": "many"}, r"max_rows"),
    ],
)
def test_bad_options_always_raise_naming_pack_and_option(site, options, expected):
    site.add("sqlite", SQLITE)
    with pytest.raises(PackConfigError, match=expected) as info:
        compose(ns="t", key="k", config={"sqlite": options})  # autoloaded, not strict
    assert info.value.pack == "sqlite"
    assert "pack 'sqlite'" in str(info.value)
    report = discover(load=True, config={"sqlite": options})
    assert report["sqlite"].status == "misconfigured"
    assert not report.ok


def test_did_you_mean_for_an_unknown_option(site):
    site.add("sqlite", SQLITE)
    with pytest.raises(PackConfigError, match=r"did you mean 'max_rows'\?"):
        compose(ns="t", key="k", config={"sqlite": {"max_row": 3}})


# ---------------------------------------------------------------- per-tool filtering
def test_tools_keeps_only_the_matching_tools(site):
    site.add("sqlite", SQLITE)
    prompt = compose(ns="t", key="k", config={"sqlite": {"tools": ["query", "sch*"]}})
    assert names(prompt) == ["query", "schema"]


def test_exclude_tools_drops_matching_tools_and_reports_tokens_saved(site):
    site.add("sqlite", SQLITE)
    full = discover(load=True)["sqlite"]
    config = {"sqlite": {"exclude_tools": ["drop_*", "explain"]}}
    assert names(compose(ns="t", key="k", config=config)) == ["query", "schema"]
    info = discover(load=True, config=config)["sqlite"]
    assert info.tools == ("query", "schema")
    assert info.removed_tools == ("explain", "drop_table")
    assert info.tokens_saved is not None
    assert info.tokens_saved > 0
    assert info.token_estimate is not None
    assert full.token_estimate is not None
    assert info.token_estimate + info.tokens_saved == full.token_estimate
    assert full.tokens_saved is None


def test_filters_apply_before_prefix(site):
    site.add("sqlite", SQLITE)
    config = {"sqlite": {"tools": ["query"], "prefix": "db_"}}
    assert names(compose(ns="t", key="k", config=config)) == ["db_query"]


@pytest.mark.parametrize("option", ["tools", "exclude_tools"])
def test_a_filter_naming_no_tool_is_rejected(site, option):
    site.add("sqlite", SQLITE)
    with pytest.raises(PackConfigError) as info:
        compose(ns="t", key="k", config={"sqlite": {option: ["qeury"]}})
    message = str(info.value)
    assert f"{option} for pack 'sqlite'" in message
    assert "'qeury' (did you mean 'query'?)" in message
    assert "drop_table, explain, query, schema" in message


@pytest.mark.parametrize("value", ["query", [3], []])
def test_a_filter_must_be_a_list_of_names(site, value):
    site.add("sqlite", SQLITE)
    if value == []:  # excluding nothing is allowed and changes nothing
        config = {"sqlite": {"exclude_tools": value}}
        assert len(names(compose(ns="t", key="k", config=config))) == 4
        return
    with pytest.raises(PackConfigError, match="must be a list of tool names or globs"):
        compose(ns="t", key="k", config={"sqlite": {"tools": value}})


def test_text_naming_a_removed_tool_fails_composition(site):
    site.add("sqlite", SQLITE)
    site.add("notes", MENTIONS)
    with pytest.raises(PackConfigError) as info:
        compose(ns="t", key="k", config={"sqlite": {"exclude_tools": ["schema"]}})
    message = str(info.value)
    assert "'schema' of pack 'sqlite' is removed by its tools/exclude_tools" in message
    assert info.value.pack == "sqlite"
    # the pack's own text names ${tool:query}: removing it is refused the same way
    with pytest.raises(PackConfigError, match="'query' of pack 'sqlite'"):
        compose(ns="t", key="k", packs=["sqlite"], config={"sqlite": {"tools": ["schema"]}})


# ---------------------------------------------------------------- paths in config files
def test_relative_paths_resolve_against_the_config_file(site, tmp_path, monkeypatch):
    site.add("sqlite", SQLITE)
    project = tmp_path / "project"
    project.mkdir()
    config = project / "haversack.toml"
    config.write_text(
        '[packs.sqlite]\ndatabase = "data/app.db"\nfolder = "~/notes"\nlabel = "rel/x"\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    text = compose(ns="t", key="k", config_file=config).render().text
    assert f"db={project / 'data' / 'app.db'}" in text
    assert f"folder={Path('~/notes').expanduser()}" in text
    assert "label=rel/x" in text  # not a path option: left as given


def test_nested_and_marked_paths_resolve_too(site, tmp_path, monkeypatch):
    site.add("sqlite", SQLITE)
    (tmp_path / "haversack.toml").write_text(
        '[packs.sqlite]\nroots = ["a", "/abs"]\ncopies = { "src" = "dst" }\n'
        'mounts = [{ host = "m", inside = "w" }]\n'
    )
    monkeypatch.chdir("/")
    text = compose(ns="t", key="k", config_file=tmp_path / "haversack.toml").render().text
    assert f"roots={tmp_path / 'a'},/abs" in text
    assert f"copies={{'{tmp_path / 'src'}': 'dst'}}" in text
    assert f"mounts=[('{tmp_path / 'm'}', 'w')]" in text


def test_haversack_config_is_used_from_any_directory(site, tmp_path, monkeypatch):
    site.add("sqlite", SQLITE)
    config = tmp_path / "conf" / "haversack.toml"
    config.parent.mkdir()
    config.write_text('[packs.sqlite]\ndatabase = "app.db"\n')
    monkeypatch.setenv("HAVERSACK_CONFIG", str(config))
    monkeypatch.chdir("/")
    text = compose(ns="t", key="k").render().text
    assert f"db={config.parent / 'app.db'}" in text


def test_paths_given_in_code_are_not_rewritten(site, tmp_path):
    site.add("sqlite", SQLITE)
    (tmp_path / "haversack.toml").write_text('[packs.sqlite]\nfolder = "from-file"\n')
    config = {"sqlite": {"database": "code.db"}}
    text = compose(ns="t", key="k", config=config).render().text
    assert "db=code.db" in text
    assert f"folder={tmp_path / 'from-file'}" in text


def test_a_missing_config_file_names_where_it_was_given(site, monkeypatch):
    monkeypatch.setenv("HAVERSACK_CONFIG", "nowhere/haversack.toml")
    with pytest.raises(PackConfigError, match=r"nowhere/haversack.toml \(HAVERSACK_CONFIG\)"):
        compose(ns="t", key="k")


# ---------------------------------------------------------------- slow imports
@pytest.fixture
def gate(site):
    """A module whose Event a pack's import waits on: set it to let the import finish."""
    name = f"hvt_gate_{uuid.uuid4().hex[:8]}"
    (site.root / f"{name}.py").write_text("import threading\nGATE = threading.Event()\n")
    module = __import__(name)
    yield name, module.GATE
    module.GATE.set()
    sys.modules.pop(name, None)


def test_a_pack_past_the_import_budget_is_reported_timed_out(site, gate):
    name, _event = gate
    site.add("sqlite", SQLITE)
    site.add("hangs", f"import {name}\n{name}.GATE.wait()\n")
    # A budget a quick import meets even on a loaded machine (0.05 s did not, on CI once).
    report = discover(load=True, import_budget=2.0)
    assert report["hangs"].status == "timed-out"
    assert "did not finish within 2 s" in report["hangs"].reason
    assert "HAVERSACK_DISABLE=hangs" in report["hangs"].reason
    assert report["sqlite"].status == "loaded"  # the others are still listed
    assert not report.ok
    prompt = compose(ns="t", key="k", import_budget=2.0)  # not named: left out
    assert "query" in names(prompt)
    with pytest.raises(PackLoadError, match="did not finish within"):
        compose(ns="t", key="k", packs=["hangs"], import_budget=2.0)


def test_within_returns_the_result_and_reraises():
    assert within(lambda: 42, "x", 5.0) == (True, 42)

    def boom() -> None:
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        within(boom, "x", 5.0)


class _Signal(io.StringIO):
    """A stream that says when something was written to it."""

    def __init__(self) -> None:
        super().__init__()
        self.written = threading.Event()

    def write(self, text: str) -> int:
        count = super().write(text)
        self.written.set()
        return count


def test_a_slow_step_is_named_on_stderr():
    stream = _Signal()
    with watching("importing pack 'slow' (module m)", delay=0.0, stream=stream):
        assert stream.written.wait(30)
    assert stream.getvalue().startswith("haversack: still importing pack 'slow' (module m) after")
    assert "HAVERSACK_DISABLE" in stream.getvalue()


def test_a_quick_step_says_nothing():
    stream = _Signal()
    with watching("importing pack 'quick'", delay=60.0, stream=stream):
        pass
    with watching("importing pack 'next'", delay=60.0, stream=stream):
        pass
    assert stream.getvalue() == ""
