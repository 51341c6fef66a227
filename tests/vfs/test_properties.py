"""Property tests: random operation sequences raise only FilesystemError; restore is exact."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haversack.errors import FilesystemError
from haversack_vfs import InMemoryFilesystem

from ._dump import dump

SEGMENTS = st.sampled_from(["a", "b", "c.txt", "d d", "..", ".", "", "é", "workspace"])
PATHS = st.one_of(
    st.lists(SEGMENTS, min_size=0, max_size=4).map("/".join),
    st.lists(SEGMENTS, min_size=1, max_size=3).map(lambda s: "/workspace/" + "/".join(s)),
    st.sampled_from(["/", " a ", "a//b", "a\x00b", "/".join(["x"] * 40), "x" * 300]),
)
CONTENT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", "\r\n", "a\r\nb", "no newline", "x\n" * 3, "bad \ud800"]),
)
PATTERNS = st.sampled_from(["a", "^$", "(a+)+$", "[", "(?=x)", "\\w+", "", "b|c", "\\Aa"])
GLOBS = st.sampled_from(["*", "**", "**/*.txt", "a/**", "[", "**x", "", "?", "../*"])

OPERATIONS = st.one_of(
    st.tuples(
        st.just("write"),
        PATHS,
        CONTENT,
        st.sampled_from(["create", "overwrite", "append"]),
        st.booleans(),
    ),
    st.tuples(st.just("edit"), PATHS, CONTENT, CONTENT, st.booleans()),
    st.tuples(st.just("delete"), PATHS, st.booleans()),
    st.tuples(st.just("mkdir"), PATHS, st.booleans(), st.booleans()),
    st.tuples(st.just("read"), PATHS, st.integers(-1, 3), st.one_of(st.none(), st.integers(-1, 3))),
    st.tuples(st.just("list"), PATHS),
    st.tuples(st.just("stat"), PATHS),
    st.tuples(st.just("glob"), GLOBS, PATHS),
    st.tuples(st.just("grep"), PATTERNS, PATHS, st.one_of(st.none(), GLOBS), st.integers(0, 3)),
)


def apply(fs: InMemoryFilesystem, op: tuple) -> None:
    name, *args = op
    try:
        if name == "write":
            fs.write(args[0], args[1], mode=args[2], parents=args[3])
        elif name == "edit":
            fs.edit(args[0], args[1], args[2], replace_all=args[3])
        elif name == "delete":
            fs.delete(args[0], recursive=args[1])
        elif name == "mkdir":
            fs.mkdir(args[0], parents=args[1], exist_ok=args[2])
        elif name == "read":
            window = fs.read(args[0], offset=args[1], limit=args[2])
            assert fs.read_text(args[0]).startswith(window.content) or args[1] > 0
        elif name == "list":
            fs.list(args[0])
        elif name == "stat":
            fs.stat(args[0])
        elif name == "glob":
            fs.glob(args[0], path=args[1])
        elif name == "grep":
            fs.grep(args[0], path=args[1], glob=args[2], max_matches=args[3])
    except FilesystemError:
        pass


def check_counters(fs: InMemoryFilesystem) -> None:
    tree = dump(fs)
    files = {p: c for p, c in tree.items() if c is not None}
    assert fs.file_count == len(files)
    assert fs.directory_count == len(tree) - len(files)
    assert fs.total_bytes == sum(len(c.encode()) for c in files.values())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OPERATIONS, max_size=25), st.lists(OPERATIONS, max_size=25))
def test_random_operations_only_raise_filesystem_errors_and_restore_is_exact(before, after):
    fs = InMemoryFilesystem(max_file_bytes=200, max_total_bytes=600, max_files=8)
    for op in before:
        apply(fs, op)
    check_counters(fs)
    snap = fs.snapshot()
    expected = dump(fs)
    for op in after:
        apply(fs, op)
    check_counters(fs)
    fs.restore(snap)
    assert dump(fs) == expected
    check_counters(fs)
