"""Built-in policies alone (hand-built ToolContext) and through the executor; policy state."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from haversack import (
    Binding,
    CallOutcome,
    Filesystem,
    MarkdownSection,
    PolicyDecision,
    Prompt,
    ReadBeforeWritePolicy,
    ResourceRegistry,
    Resources,
    SequentialDependencyPolicy,
    Session,
    Tool,
    ToolAnnotations,
    ToolContext,
    ToolExecutor,
    ToolInvoked,
    ToolPolicy,
    ToolResult,
    compose,
)

# Policy state is internal (packs see only decisions); these tests pin its shape.
from haversack._policy_state import (
    ValueSet,
    add_policy_value,
    policy_values,
    set_policy_values,
)
from haversack.errors import PromptValidationError
from haversack_vfs import InMemoryFilesystem


def _rbw(**overrides):
    """The read-before-write policy over the file tools these tests define."""
    names = {"read_tools": ["read_file"], "write_tools": ["write_file", "edit_file"]}
    return ReadBeforeWritePolicy(**{**names, **overrides})


@dataclass(frozen=True)
class NoArgs:
    pass


@dataclass(frozen=True)
class PathArgs:
    path: str
    content: str = ""


@dataclass(frozen=True)
class FilePathArgs:
    file_path: str


@dataclass(frozen=True)
class Named:
    name: str


def _ok(params: Any, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult.ok(None)


def _tool(name: str, params: type = NoArgs) -> Tool[Any, Any]:
    return Tool[params, None](name=name, description=f"{name} tool.", handler=_ok)  # type: ignore[valid-type]


OK: ToolResult[None] = ToolResult.ok(None)
FAILED: ToolResult[None] = ToolResult.error("no")


@contextmanager
def context_for(
    tool: Tool[Any, Any], session: Session, *bindings: Binding[Any]
) -> Iterator[ToolContext]:
    prompt = Prompt(
        ns="t", key="k", sections=[MarkdownSection(title="T", key="t", template="t", tools=[tool])]
    )
    with ResourceRegistry.of(*bindings).open() as resources:
        yield ToolContext(
            prompt=prompt,
            rendered_prompt=prompt.render(),
            session=session,
            resources=resources,
            tool=tool,
        )


def test_builtin_policies_implement_the_protocol() -> None:
    assert isinstance(SequentialDependencyPolicy({}), ToolPolicy)
    assert isinstance(
        _rbw(),
        ToolPolicy,
    )


def test_denial_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="reason"):
        PolicyDecision.deny("  ")
    assert PolicyDecision.allow().allowed
    assert not PolicyDecision.deny("x").allowed


# ----------------------------------------------------------------------------- sequential, alone

BUILD, TEST, DEPLOY, OTHER = _tool("build"), _tool("test"), _tool("deploy"), _tool("other")


def test_sequential_denies_until_every_prerequisite_succeeded() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": {"build", "test"}})
    session = Session()
    with context_for(DEPLOY, session) as ctx:
        first = policy.check(DEPLOY, NoArgs(), context=ctx)
        assert not first.allowed
        assert "'deploy' needs a successful call of build, test first" in first.reason
        assert "call them, then retry" in first.reason
        policy.on_result(BUILD, NoArgs(), OK, context=ctx)
        second = policy.check(DEPLOY, NoArgs(), context=ctx)
        assert not second.allowed
        assert "of test first; call it" in second.reason
        assert "build" not in second.reason
        policy.on_result(TEST, NoArgs(), FAILED, context=ctx)  # failures do not count
        assert not policy.check(DEPLOY, NoArgs(), context=ctx).allowed
        policy.on_result(TEST, NoArgs(), OK, context=ctx)
        assert policy.check(DEPLOY, NoArgs(), context=ctx).allowed


def test_sequential_allows_tools_without_dependencies_and_ignores_unrelated_tools() -> None:
    policy = SequentialDependencyPolicy(dependencies={"deploy": ["build"]})
    session = Session()
    with context_for(OTHER, session) as ctx:
        assert policy.check(OTHER, NoArgs(), context=ctx).allowed
        policy.on_result(OTHER, NoArgs(), OK, context=ctx)
        assert not session._policy_state  # nothing recorded, for any policy
        assert policy.dependencies == {"deploy": frozenset({"build"})}
        assert "sequential-dependency" in repr(policy)


def test_sequential_state_is_per_session_and_per_policy() -> None:
    first = SequentialDependencyPolicy({"deploy": {"build"}}, name="first")
    second = SequentialDependencyPolicy({"deploy": {"build"}}, name="second")
    mine, theirs = Session(), Session()
    with context_for(DEPLOY, mine) as ctx, context_for(DEPLOY, theirs) as other_ctx:
        first.on_result(BUILD, NoArgs(), OK, context=ctx)
        assert first.check(DEPLOY, NoArgs(), context=ctx).allowed
        assert not second.check(DEPLOY, NoArgs(), context=ctx).allowed
        assert not first.check(DEPLOY, NoArgs(), context=other_ctx).allowed
    assert set(policy_values(mine, "first")) == {"build"}
    assert len(policy_values(mine, "second")) == 0


def test_sequential_state_rolls_back_with_the_session() -> None:
    policy = SequentialDependencyPolicy({"deploy": {"build"}})
    session = Session()
    with context_for(DEPLOY, session) as ctx:
        snapshot = session.snapshot()
        policy.on_result(BUILD, NoArgs(), OK, context=ctx)
        session.restore(snapshot)
        assert not policy.check(DEPLOY, NoArgs(), context=ctx).allowed


# ------------------------------------------------------------------- read-before-write, alone

READ = _tool("read_file", PathArgs)
WRITE = _tool("write_file", PathArgs)
EDIT = _tool("edit_file", FilePathArgs)


def _fs_with(*paths: str) -> InMemoryFilesystem:
    fs = InMemoryFilesystem()
    for path in paths:
        fs.write(path, "old", mode="create")
    return fs


def test_read_before_write_allows_new_files_and_denies_unread_existing_ones() -> None:
    policy = ReadBeforeWritePolicy(
        read_tools=["read_file"], write_tools=["write_file", "edit_file"]
    )
    fs = _fs_with("src/a.txt")
    with context_for(WRITE, Session(), Binding.instance(Filesystem, fs)) as ctx:
        assert policy.check(WRITE, PathArgs("src/new.txt"), context=ctx).allowed
        denied = policy.check(WRITE, PathArgs("src/a.txt"), context=ctx)
        assert not denied.allowed
        assert "'src/a.txt' already exists and has not been read" in denied.reason
        assert "call read_file on it first, then retry 'write_file'" in denied.reason
        policy.on_result(READ, PathArgs("src/a.txt"), OK, context=ctx)
        assert policy.check(WRITE, PathArgs("src/a.txt"), context=ctx).allowed


@pytest.mark.parametrize(
    ("read_as", "write_as"),
    [
        ("src/a.txt", "/src/a.txt"),
        ("/workspace/src/a.txt", "src/a.txt"),
        ("src//a.txt", " /workspace/src/a.txt "),
        ("  src/./a.txt", "//src/a.txt/"),
    ],
)
def test_read_before_write_treats_every_spelling_as_the_same_file(
    read_as: str, write_as: str
) -> None:
    policy = ReadBeforeWritePolicy(
        read_tools=["read_file"], write_tools=["write_file", "edit_file"]
    )
    fs = _fs_with("src/a.txt")
    with context_for(WRITE, Session(), Binding.instance(Filesystem, fs)) as ctx:
        assert not policy.check(WRITE, PathArgs(write_as), context=ctx).allowed
        policy.on_result(READ, PathArgs(read_as), OK, context=ctx)
        assert policy.check(WRITE, PathArgs(write_as), context=ctx).allowed
        assert fs.normalize(write_as) == "src/a.txt"  # the very function the filesystem uses


def test_read_before_write_uses_the_filesystems_own_mount_point() -> None:
    policy = ReadBeforeWritePolicy(
        read_tools=["read_file"], write_tools=["write_file", "edit_file"]
    )
    fs = InMemoryFilesystem(mount_point="/repo")
    fs.write("a.txt", "x", mode="create")
    with context_for(WRITE, Session(), Binding.instance(Filesystem, fs)) as ctx:
        policy.on_result(READ, PathArgs("/repo/a.txt"), OK, context=ctx)
        assert policy.check(WRITE, PathArgs("a.txt"), context=ctx).allowed


def test_read_before_write_reads_the_file_path_field() -> None:
    policy = ReadBeforeWritePolicy(
        read_tools=["read_file"], write_tools=["write_file", "edit_file"]
    )
    fs = _fs_with("a.txt")
    with context_for(EDIT, Session(), Binding.instance(Filesystem, fs)) as ctx:
        assert not policy.check(EDIT, FilePathArgs("a.txt"), context=ctx).allowed
        policy.on_result(READ, PathArgs("a.txt"), OK, context=ctx)
        assert policy.check(EDIT, FilePathArgs("/a.txt"), context=ctx).allowed


def test_read_before_write_fails_closed_without_a_filesystem() -> None:
    policy = ReadBeforeWritePolicy(
        read_tools=["read_file"], write_tools=["write_file", "edit_file"]
    )
    with context_for(WRITE, Session()) as ctx:
        decision = policy.check(WRITE, PathArgs("new.txt"), context=ctx)
        assert not decision.allowed
        assert "no workspace filesystem is bound" in decision.reason
        policy.on_result(READ, PathArgs("new.txt"), OK, context=ctx)  # nothing to normalise with
        assert not ctx.session._policy_state  # nothing recorded, for any policy


def test_read_before_write_fails_closed_when_the_path_field_is_missing() -> None:
    policy = _rbw(write_tools=["write_named"])
    tool = _tool("write_named", Named)
    with context_for(tool, Session(), Binding.instance(Filesystem, _fs_with())) as ctx:
        decision = policy.check(tool, Named("a.txt"), context=ctx)
        assert not decision.allowed
        assert "'path', 'file_path'" in decision.reason


def test_read_before_write_denies_invalid_paths_with_the_filesystem_message() -> None:
    policy = ReadBeforeWritePolicy(
        read_tools=["read_file"], write_tools=["write_file", "edit_file"]
    )
    with context_for(WRITE, Session(), Binding.instance(Filesystem, _fs_with())) as ctx:
        decision = policy.check(WRITE, PathArgs("../etc/passwd"), context=ctx)
        assert not decision.allowed
        assert "'..'" in decision.reason
        policy.on_result(READ, PathArgs("../etc/passwd"), OK, context=ctx)
        assert not ctx.session._policy_state  # nothing recorded, for any policy


def test_read_before_write_records_successful_reads_and_writes_only() -> None:
    policy = ReadBeforeWritePolicy(
        read_tools=["read_file"], write_tools=["write_file", "edit_file"]
    )
    session = Session()
    with context_for(WRITE, session, Binding.instance(Filesystem, _fs_with())) as ctx:
        policy.on_result(READ, PathArgs("failed.txt"), FAILED, context=ctx)
        policy.on_result(OTHER, PathArgs("other.txt"), OK, context=ctx)
        policy.on_result(WRITE, PathArgs("/written.txt"), OK, context=ctx)
        policy.on_result(READ, PathArgs("read.txt"), OK, context=ctx)
        policy.on_result(READ, PathArgs("read.txt"), OK, context=ctx)
    assert sorted(policy_values(session, "read-before-write")) == ["read.txt", "written.txt"]


def test_read_before_write_ignores_non_write_tools() -> None:
    policy = ReadBeforeWritePolicy(
        read_tools=["read_file"], write_tools=["write_file", "edit_file"]
    )
    with context_for(READ, Session()) as ctx:  # no filesystem: still allowed, it is a read
        assert policy.check(READ, PathArgs("a.txt"), context=ctx).allowed
    assert "read-before-write" in repr(policy)


# ----------------------------------------------------------------------------- through the executor


def _files_prompt(fs: InMemoryFilesystem, *policies: ToolPolicy, fs_bound: bool = True) -> Prompt:
    def read_file(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult.ok(None, context.filesystem.read_text(params.path))

    def write_file(params: PathArgs, *, context: ToolContext) -> ToolResult[None]:
        context.filesystem.write(params.path, params.content, mode="overwrite")
        return ToolResult.ok(None, "written")

    tools = [
        Tool[PathArgs, None](
            name="read_file",
            description="Read.",
            handler=read_file,
            annotations=ToolAnnotations(read_only=True),
        ),
        Tool[PathArgs, None](name="write_file", description="Write.", handler=write_file),
    ]
    return Prompt(
        ns="t",
        key="files",
        sections=[MarkdownSection(title="Files", key="files", template="f", tools=tools)],
        policies=policies,
        resources=ResourceRegistry.of(Binding.instance(Filesystem, fs)) if fs_bound else None,
    )


def test_read_before_write_through_the_executor() -> None:
    fs = _fs_with("notes.md")
    session = Session()
    executor = ToolExecutor(
        _files_prompt(
            fs,
            # Only tools the prompt has: a name meaning none is refused.
            ReadBeforeWritePolicy(read_tools=["read_file"], write_tools=["write_file"]),
        ).render(),
        session=session,
    )
    denied = executor.execute("write_file", {"path": "/workspace/notes.md", "content": "new"})
    assert not denied.success
    assert "has not been read" in denied.message
    assert fs.read_text("notes.md") == "old"
    assert executor.execute("write_file", {"path": "fresh.md", "content": "hi"}).success
    assert not executor.execute("read_file", {"path": "missing.md"}).success  # not recorded
    assert executor.execute("read_file", {"path": " notes.md "}).message == "old"
    assert executor.execute("write_file", {"path": "//notes.md", "content": "new"}).success
    assert fs.read_text("notes.md") == "new"
    assert executor.execute("write_file", {"path": "fresh.md", "content": "again"}).success
    outcomes = [e.outcome for e in session[ToolInvoked].all()]
    assert outcomes == [
        CallOutcome.DENIED,
        CallOutcome.OK,
        CallOutcome.ERROR,
        CallOutcome.OK,
        CallOutcome.OK,
        CallOutcome.OK,
    ]


def test_read_before_write_without_a_bound_filesystem_denies_through_the_executor() -> None:
    session = Session()
    executor = ToolExecutor(
        _files_prompt(
            _fs_with(),
            # Only tools the prompt has: a name meaning none is refused.
            ReadBeforeWritePolicy(read_tools=["read_file"], write_tools=["write_file"]),
            fs_bound=False,
        ).render(),
        session=session,
    )
    result = executor.execute("write_file", {"path": "a.txt"})
    assert "no workspace filesystem is bound" in result.message
    assert session[ToolInvoked].latest().outcome is CallOutcome.DENIED  # type: ignore[union-attr]


class Counting:
    """A policy that records which tools it was asked about and told about."""

    def __init__(self, name: str, deny: frozenset[str] = frozenset()) -> None:
        self.name = name
        self.deny = deny
        self.checked: list[str] = []
        self.recorded: list[str] = []

    def check(self, tool: Tool[Any, Any], params: Any, *, context: ToolContext) -> PolicyDecision:
        self.checked.append(tool.name)
        if tool.name in self.deny:
            return PolicyDecision.deny(f"{self.name} says no")
        return PolicyDecision.allow()

    def on_result(
        self, tool: Tool[Any, Any], params: Any, result: ToolResult[Any], *, context: ToolContext
    ) -> None:
        self.recorded.append(tool.name)


def test_policy_scope_section_children_and_prompt() -> None:
    wide, parent, child, sibling = (Counting(n) for n in ("wide", "parent", "child", "sibling"))
    prompt = Prompt(
        ns="t",
        key="scopes",
        policies=[wide],
        sections=[
            MarkdownSection(
                title="Parent",
                key="parent",
                template="p",
                tools=[_tool("p_tool")],
                policies=[parent],
                children=[
                    MarkdownSection(
                        title="Child",
                        key="child",
                        template="c",
                        tools=[_tool("c_tool")],
                        policies=[child],
                    )
                ],
            ),
            MarkdownSection(
                title="Sibling",
                key="sibling",
                template="s",
                tools=[_tool("s_tool")],
                policies=[sibling],
            ),
        ],
    )
    executor = ToolExecutor(prompt.render(), session=Session())
    for name in ("p_tool", "c_tool", "s_tool"):
        assert executor.execute(name).success
    assert wide.checked == ["p_tool", "c_tool", "s_tool"]
    assert parent.checked == ["p_tool", "c_tool"]
    assert child.checked == ["c_tool"]
    assert sibling.checked == ["s_tool"]
    # Every policy of the prompt observes every successful call, whatever its section.
    for policy in (wide, parent, child, sibling):
        assert policy.recorded == ["p_tool", "c_tool", "s_tool"]


def test_every_governing_policy_must_allow() -> None:
    wide, strict = Counting("wide"), Counting("strict", deny=frozenset({"t1"}))
    prompt = Prompt(
        ns="t",
        key="all",
        policies=[wide],
        sections=[
            MarkdownSection(
                title="S", key="s", template="s", tools=[_tool("t1")], policies=[strict]
            )
        ],
    )
    result = ToolExecutor(prompt.render(), session=Session()).execute("t1")
    assert "Denied by policy 'strict': strict says no" in result.message
    assert wide.recorded == []
    assert strict.recorded == []


def test_one_policy_object_in_two_sections_records_each_call_once() -> None:
    shared = Counting("shared")
    prompt = Prompt(
        ns="t",
        key="shared",
        sections=[
            MarkdownSection(
                title="A", key="a", template="a", tools=[_tool("a")], policies=[shared]
            ),
            MarkdownSection(
                title="B", key="b", template="b", tools=[_tool("b")], policies=[shared]
            ),
        ],
    )
    executor = ToolExecutor(prompt.render(), session=Session())
    executor.execute("a")
    executor.execute("b")
    assert shared.recorded == ["a", "b"]


def _pipeline_prompt(*extra: ToolPolicy, build_fails: bool = False) -> Prompt:
    def build(params: NoArgs, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult.error("compile error") if build_fails else ToolResult.ok(None)

    sequential = SequentialDependencyPolicy({"deploy": {"build", "test"}})
    return Prompt(
        ns="t",
        key="pipeline",
        policies=extra,
        sections=[
            MarkdownSection(
                title="Build",
                key="build",
                template="b",
                tools=[
                    Tool[NoArgs, None](name="build", description="b", handler=build),
                    _tool("test"),
                ],
            ),
            MarkdownSection(
                title="Release",
                key="release",
                template="r",
                tools=[_tool("deploy")],
                policies=[sequential],
            ),
        ],
    )


def test_sequential_dependency_across_sections_through_the_executor() -> None:
    executor = ToolExecutor(_pipeline_prompt().render(), session=Session())
    denied = executor.execute("deploy", "{}")
    assert "needs a successful call of build, test first" in denied.message
    assert executor.execute("build", "{}").success
    assert "of test first" in executor.execute("deploy", "{}").message
    assert executor.execute("test", "{}").success
    assert executor.execute("deploy", "{}").success


def test_a_failed_prerequisite_does_not_count() -> None:
    executor = ToolExecutor(_pipeline_prompt(build_fails=True).render(), session=Session())
    executor.execute("build", "{}")
    executor.execute("test", "{}")
    assert "of build first" in executor.execute("deploy", "{}").message


def test_a_rolled_back_call_leaves_no_trace_in_policy_state() -> None:
    class Explodes(Counting):
        def on_result(self, tool: Any, params: Any, result: Any, *, context: ToolContext) -> None:
            if tool.name == "build":
                raise RuntimeError("ledger full")

    session = Session()
    # Prompt-wide policies record first, so the sequential policy never sees this build.
    executor = ToolExecutor(_pipeline_prompt(Explodes("explodes")).render(), session=session)
    assert "failed to record" in executor.execute("build", "{}").message
    assert len(policy_values(session, "sequential-dependency")) == 0
    executor.execute("test", "{}")
    assert "of build first" in executor.execute("deploy", "{}").message
    assert set(policy_values(session, "sequential-dependency")) == {"test"}


def test_sequential_state_recorded_before_a_later_failing_recorder_is_rolled_back() -> None:
    class ExplodesLast(Counting):
        def on_result(self, tool: Any, params: Any, result: Any, *, context: ToolContext) -> None:
            raise RuntimeError("late failure")

    sequential = SequentialDependencyPolicy({"deploy": {"build"}})
    prompt = Prompt(
        ns="t",
        key="order",
        policies=[sequential, ExplodesLast("last")],
        sections=[
            MarkdownSection(
                title="S", key="s", template="s", tools=[_tool("build"), _tool("deploy")]
            )
        ],
    )
    session = Session()
    ToolExecutor(prompt.render(), session=session).execute("build", "{}")
    assert len(policy_values(session, "sequential-dependency")) == 0


# ----------------------------------------------------------------------------- policy state


def test_policy_state_helpers_keep_policies_apart() -> None:
    session = Session()
    add_policy_value(session, "a", "x")
    add_policy_value(session, "b", "y")
    add_policy_value(session, "a", "z")
    add_policy_value(session, "a", "x")
    assert set(policy_values(session, "a")) == {"x", "z"}
    assert set(policy_values(session, "b")) == {"y"}
    set_policy_values(session, "a", ["only"])
    assert set(policy_values(session, "a")) == {"only"}
    assert set(policy_values(session, "b")) == {"y"}
    assert len(policy_values(session, "never")) == 0


def test_value_set_is_persistent() -> None:
    empty = ValueSet()
    one = empty.add("a")
    two = one.add("b")
    assert one.add("a") is one
    assert (len(empty), len(one), len(two)) == (0, 1, 2)
    assert "b" not in one
    assert "b" in two
    assert 3 not in two  # type: ignore[comparison-overlap]
    assert two == {"a", "b"}  # type: ignore[comparison-overlap]
    assert hash(two) == hash(ValueSet(["b", "a"]))
    assert two == ValueSet(["a", "b"])
    with pytest.raises(TypeError):
        empty.add(3)  # type: ignore[arg-type]
    assert repr(two) == "ValueSet(['a', 'b'])"


@given(st.lists(st.text(max_size=6), max_size=80), st.lists(st.text(max_size=6), max_size=20))
def test_value_set_behaves_like_a_set(values: list[str], probes: list[str]) -> None:
    grown = ValueSet()
    versions = []
    for value in values:
        grown = grown.add(value)
        versions.append(grown)
    assert set(grown) == set(values)
    assert len(grown) == len(set(values))
    for probe in probes + values:
        assert (probe in grown) is (probe in set(values))
    for count, version in enumerate(versions, start=1):  # old versions are untouched
        assert set(version) == set(values[:count])


def test_value_set_refuses_non_strings_when_built_too() -> None:
    with pytest.raises(TypeError, match="Policy state holds strings, got int"):
        ValueSet(["a", 3])  # type: ignore[list-item]


def test_many_recorded_values_stay_exact() -> None:
    session = Session()
    for i in range(3000):
        add_policy_value(session, "rbw", f"file{i}.txt")
    values = policy_values(session, "rbw")
    assert len(values) == 3000
    assert "file2999.txt" in values
    assert "file3000.txt" not in values


def test_policy_state_is_part_of_session_snapshots() -> None:
    session = Session()
    add_policy_value(session, "p", "kept")
    snapshot = session.snapshot()
    add_policy_value(session, "p", "dropped")
    session.restore(snapshot)
    assert set(policy_values(session, "p")) == {"kept"}


def test_resources_type_is_what_contexts_get() -> None:
    # context_for hands policies the live Resources, as the executor does.
    with context_for(READ, Session()) as ctx:
        assert isinstance(ctx.resources, Resources)


def test_read_before_write_needs_the_tool_names_from_its_user():
    """The core names no pack's tools: the names are required and must be real names."""
    with pytest.raises(TypeError):
        ReadBeforeWritePolicy()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="collection of tool names"):
        ReadBeforeWritePolicy(read_tools="read_file", write_tools=["w"])
    with pytest.raises(ValueError, match="write_tools must name at least one tool"):
        ReadBeforeWritePolicy(read_tools=["r"], write_tools=[])


def test_a_reducer_cannot_record_policy_state() -> None:
    @dataclass(frozen=True)
    class Seen:
        n: int

    session = Session()

    def sneaky(view: Any, event: Seen) -> None:
        add_policy_value(session, "p", "x")

    session.register_reducer(Seen, sneaky)
    with pytest.raises(RuntimeError, match=r"add_policy_value\('p', \.\.\.\)"):
        session.dispatch(Seen(1))
    assert len(policy_values(session, "p")) == 0


def test_concurrent_recorders_lose_no_value() -> None:
    import threading

    session = Session()
    start = threading.Barrier(4)

    def record(worker: int) -> None:
        start.wait()
        for i in range(500):
            add_policy_value(session, "p", f"{worker}/{i}")

    threads = [threading.Thread(target=record, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(policy_values(session, "p")) == 2000


@pytest.mark.parametrize(
    ("policy", "unknown"),
    [
        (ReadBeforeWritePolicy(read_tools=["read_fle"], write_tools=["edit_file"]), "read_fle"),
        (ReadBeforeWritePolicy(read_tools=["read_file"], write_tools=["fs_edit"]), "fs_edit"),
        (SequentialDependencyPolicy({"edit_fil": ["read_file"]}), "edit_fil"),
        (SequentialDependencyPolicy({"fs_edit_file": ["read_fil"]}), "read_fil"),
    ],
)
def test_a_name_of_your_policy_meaning_no_tool_is_refused(
    policy: ToolPolicy, unknown: str, tmp_path: Any
) -> None:
    # Issue 26: such a name was ignored, so a write_tools typo left every write unchecked.
    empty = tmp_path / "haversack.toml"
    empty.write_text("", encoding="utf-8")
    options = {"config": {"vfs": {"prefix": "fs_"}}, "config_file": empty, "strict": True}
    with pytest.raises(PromptValidationError) as caught:
        compose(ns="t", key="k", packs=["vfs"], policies=[policy], **options)
    assert repr(unknown) in str(caught.value)
    assert "closest: " in str(caught.value)
    # Final names (after the prefix) and original names both resolve.
    fine = [
        ReadBeforeWritePolicy(read_tools=["fs_read_file"], write_tools=["edit_file"]),
        SequentialDependencyPolicy({"fs_edit_file": ["read_file", "fs_ls"]}),
    ]
    assert compose(ns="t", key="k", packs=["vfs"], policies=fine, **options).tools
