"""Property: random VFS tool calls through the executor never raise, and a failed call leaves
the tree exactly as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haversack import Filesystem, Session, ToolExecutor

from ._dump import dump
from ._workspace import SELECTION_VARIABLES, compose_vfs

SEGMENTS = st.sampled_from(["a", "b", "c.txt", " d ", "..", ".", "", "é", "workspace"])
PATHS = st.one_of(
    st.lists(SEGMENTS, max_size=4).map("/".join),
    st.lists(SEGMENTS, min_size=1, max_size=3).map(lambda s: "/workspace/" + "/".join(s)),
    st.sampled_from(["/", " a ", "a//b", "a\x00b", "/".join(["x"] * 40), "x" * 300]),
)
TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["", "\r\n", "a\r\nb", "a", "x\n" * 3, "aa"]),
)
INTS = st.one_of(st.integers(-2, 4), st.just(10**9))
ANY = st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2))


def _args(**fields: Any) -> Any:
    return st.fixed_dictionaries(fields)


CALLS = st.one_of(
    st.tuples(st.just("ls"), _args(path=PATHS)),
    st.tuples(
        st.just("read_file"), _args(path=PATHS, offset=INTS, limit=st.one_of(st.none(), INTS))
    ),
    st.tuples(st.just("write_file"), _args(path=PATHS, content=TEXT)),
    st.tuples(
        st.just("edit_file"),
        _args(path=PATHS, old_string=TEXT, new_string=TEXT, replace_all=st.booleans()),
    ),
    st.tuples(
        st.just("glob"),
        _args(pattern=st.sampled_from(["*", "**", "**/*.txt", "a/**", "[", "a**", ""]), path=PATHS),
    ),
    st.tuples(
        st.just("grep"),
        _args(
            pattern=st.sampled_from(["a", "^$", "(a+)+$", "(", "(?=x)", "\\w+"]),
            path=PATHS,
            glob=st.one_of(st.none(), st.sampled_from(["*", "**/*.txt", "["])),
            max_matches=st.one_of(st.none(), INTS),
        ),
    ),
    st.tuples(st.just("rm"), _args(path=PATHS)),
    # Garbage arguments: wrong types, unknown fields, unknown tools.
    st.tuples(
        st.sampled_from(["ls", "read_file", "write_file", "nope"]),
        st.dictionaries(st.sampled_from(["path", "content", "offset", "extra"]), ANY, max_size=3),
    ),
)


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("vfs-properties")


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(calls=st.lists(CALLS, max_size=25))
def test_random_calls_never_raise_and_failures_change_nothing(
    calls: list[tuple[str, dict[str, Any]]], config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in SELECTION_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    prompt = compose_vfs(config_file, {"max_read_bytes": 16, "max_grep_matches": 2})
    with ToolExecutor(prompt.render(), session=Session()) as executor:
        fs = executor.resources.get(Filesystem)  # type: ignore[type-abstract]
        for name, arguments in calls:
            before = dump(fs)
            result = executor.execute(name, arguments)
            assert isinstance(result.message, str)
            assert result.render()
            if not result.success:
                assert dump(fs) == before, (name, arguments, result.message)
