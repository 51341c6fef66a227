"""Tool identity across composition: random compositions of contributors whose tools share
original names, under prefixes, renames and filters (issue 26).

Each case builds a prompt the way ``compose`` does (one top-level section per contributor,
``contributors=`` naming who contributed it, removed tools left out of the section while its
text still mentions them inside ``${if tool:x}`` blocks) and checks that: each contributor's
``edit_file`` is unlocked only by its own ``read_file`` (a section policy never grants on
another contributor's tool); every tool the rendered text or a denial names exists under the
composition and belongs to the contributor whose text names it; ``ToolContext.identity`` and
``tool_name`` answer for the calling tool's own contributor; and a prompt-wide approval
pattern matching no tool is refused, one that matches is accepted.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haversack import (
    ApprovalPolicy,
    Binding,
    Filesystem,
    MarkdownSection,
    Prompt,
    ReadBeforeWritePolicy,
    ResourceRegistry,
    SequentialDependencyPolicy,
    Session,
    Tool,
    ToolContext,
    ToolExecutor,
    ToolIdentity,
    ToolResult,
    compose,
)
from haversack.errors import PromptValidationError
from haversack_planning import TOOL_NAMES as PLANNING_TOOLS
from haversack_podman import TOOL_NAMES as PODMAN_TOOLS
from haversack_vfs import TOOL_NAMES as VFS_TOOLS
from haversack_vfs import InMemoryFilesystem

from ._harness import budget

POOL = ("read_file", "edit_file", "rm", "ls")
CONTRIBUTORS = ("your code", "pa", "pb")
KEYS = {"your code": "yours", "pa": "pa", "pb": "pb"}
PREFIXES = ("", "x_", "y_")
RENAMES = ("read_file", "edit_file", "rm", "ls", "r1", "e1")

contributor_plan = st.fixed_dictionaries(
    {
        "originals": st.sets(st.sampled_from(POOL), min_size=1),
        "prefix": st.sampled_from(PREFIXES),
        "rename": st.dictionaries(st.sampled_from(POOL), st.sampled_from(RENAMES), max_size=2),
        "excluded": st.sets(st.sampled_from(POOL), max_size=2),
    }
)
compositions = st.lists(contributor_plan, min_size=2, max_size=3)
calls = st.lists(st.tuples(st.integers(0, 2), st.sampled_from(POOL)), max_size=12)
patterns = st.lists(
    st.sampled_from((*POOL, "x_*", "y_*", "r1", "e1", "wipe_everything", "rm*", "zz_*")),
    min_size=1,
    max_size=3,
)


def _handler(params: None, *, context: ToolContext) -> ToolResult[Any]:
    # Reports who it is and what it calls its own read_file: the identity checks read it back.
    identity = context.identity
    assert identity is not None
    return ToolResult.ok(
        None,
        message=f"{identity.contributor}|{identity.original_name}|{context.name}|"
        f"{context.tool_name('read_file')}",
    )


def _build(plan: list[dict[str, Any]]) -> tuple[list[MarkdownSection[None]], dict, dict]:
    """Sections, ``contributors=`` and {(contributor, original): final name} of the kept tools."""
    sections = []
    owners: dict[str, str] = {}
    finals: dict[tuple[str, str], str] = {}
    for who, spec in zip(CONTRIBUTORS, plan, strict=False):
        key = KEYS[who]
        if who == "your code":  # compose prefixes, renames and filters packs only
            spec = {**spec, "prefix": "", "rename": {}, "excluded": set()}
        owners[key] = who
        tools = []
        for original in sorted(spec["originals"] - spec["excluded"]):
            final = spec["rename"].get(original) or spec["prefix"] + original
            finals[(who, original)] = final
            tools.append(
                Tool[None, None](
                    name=final, description="d", handler=_handler, original_name=original
                )
            )
        template = "\n".join(
            f"${{if tool:{o}}}\n- use ${{tool:{o}}} of {key}\n${{endif}}"
            for o in sorted(spec["originals"])
        )
        sections.append(
            MarkdownSection[None](
                title=who,
                key=key,
                template=f"Tools of {key}.\n{template}",
                tools=tools,
                # A pack's policy may name its tools that exclude_tools removed; yours must
                # name tools you have (else the prompt is refused): you write it with them.
                policies=[
                    SequentialDependencyPolicy({"edit_file": {"read_file"}}, name=f"seq-{key}")
                ]
                if who != "your code" or {"edit_file", "read_file"} <= spec["originals"]
                else [],
            )
        )
    return sections, owners, finals


def test_random_compositions_keep_every_tool_to_its_identity(figure) -> None:
    fig = figure("tool-identity", "random compositions")

    @settings(
        max_examples=budget(60, 1500),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(plan=compositions, script=calls, asked=patterns)
    def case(plan: list[dict[str, Any]], script: list[tuple[int, str]], asked: list[str]) -> None:
        sections, owners, finals = _build(plan)
        names = list(finals.values())
        if len(set(names)) != len(names):
            return  # a name clash: compose refuses it (tested elsewhere)
        fig.case()
        where = f"plan={plan!r}"
        try:
            prompt = Prompt(ns="t", key="k", sections=sections, contributors=owners)
        except Exception as exc:
            fig.problem(f"{where}: composing raised {type(exc).__name__}: {exc}")
            return
        rendered = prompt.render()
        # 1. The text names exactly the kept tools, each in its own contributor's text.
        mentioned = re.findall(r"^- use (\S+) of (\S+)$", rendered.text, re.MULTILINE)
        expected = sorted((final, KEYS[who]) for (who, _), final in finals.items())
        fig.check(
            sorted(mentioned) == expected,
            f"{where}: text names {sorted(mentioned)}, the composition has {expected}",
        )
        fig.check("${" not in rendered.text, f"{where}: a marker survived rendering")
        # 2. Identities, both ways.
        for (who, original), final in finals.items():
            fig.check(
                prompt.identity(final) == ToolIdentity(who, original)
                and prompt.tool_named(ToolIdentity(who, original)) == final,
                f"{where}: identity of {final!r} is {prompt.identity(final)}",
            )
        # 3. Policies grant only on their own contributor's tools.
        executor = ToolExecutor(rendered, session=Session())
        unlocked: set[str] = set()
        for index, original in script:
            who = CONTRIBUTORS[index % len(plan)]
            final = finals.get((who, original))
            if final is None:
                continue
            result = executor.execute(final)
            if original == "edit_file":
                guarded = who != "your code" or (who, "read_file") in finals
                allowed = who in unlocked or not guarded
                fig.check(
                    result.success == allowed,
                    f"{where}: {who}'s edit_file {'denied' if allowed else 'ran'} after "
                    f"reads by {sorted(unlocked)}",
                )
                if not result.success:
                    own_read = finals.get((who, "read_file"))
                    said = re.search(r"successful call of (.+) first", result.message)
                    named = said.group(1) if said else ""
                    fig.check(
                        named == (own_read or "'read_file' (not offered here)"),
                        f"{where}: {who}'s denial names {named!r}, its read_file is {own_read}",
                    )
            if result.success:
                contributor, identity_original, name, own_read = result.message.split("|")
                fig.check(
                    (contributor, identity_original, name) == (who, original, final),
                    f"{where}: {final!r} saw itself as {result.message}",
                )
                wanted = finals.get((who, "read_file"))
                fig.check(
                    wanted is None or own_read == wanted,
                    f"{where}: {final!r}'s tool_name('read_file') is {own_read}, not {wanted}",
                )
                if original == "read_file":
                    unlocked.add(who)
        executor.close()
        # 4. An approval pattern that matches no tool is refused; one that does is accepted.
        every = [(final, original) for (_, original), final in finals.items()]
        dead = [
            p for p in asked if not any(fnmatchcase(f, p) or fnmatchcase(o, p) for f, o in every)
        ]
        try:
            Prompt(
                ns="t",
                key="k",
                sections=sections,
                contributors=owners,
                policies=[ApprovalPolicy(asked)],
            )
            fig.check(not dead, f"{where}: patterns {dead} match nothing but were accepted")
        except PromptValidationError as exc:
            fig.check(
                bool(dead) and repr(dead[0]) in str(exc),
                f"{where}: patterns {asked} refused ({exc}); dead ones: {dead}",
            )
        # 5. So is a name of a sequential or read-before-write setting of yours that means no
        # tool (a final or original name); the refusal names it.
        names = sorted({p for p in asked if "*" not in p})
        if names:
            known = {f for f, _ in every} | {o for _, o in every}
            unknown = [n for n in names if n not in known]
            for policy in (
                SequentialDependencyPolicy({names[0]: names[1:]}),
                ReadBeforeWritePolicy(read_tools=names[:1], write_tools=names),
            ):
                try:
                    Prompt(
                        ns="t", key="k", sections=sections, contributors=owners, policies=[policy]
                    )
                    fig.check(not unknown, f"{where}: {policy} names {unknown} but was accepted")
                except PromptValidationError as exc:
                    fig.check(
                        bool(unknown) and repr(unknown[0]) in str(exc),
                        f"{where}: {policy} refused ({exc}); unknown names: {unknown}",
                    )

    case()
    fig.assert_clean()


@pytest.mark.parametrize(
    ("pack", "excluded", "gone"),
    [
        ("vfs", ["rm"], "removes a file"),
        ("podman", ["shell_execute"], "/bin/sh -c"),
        ("planning", ["planning_read_plan"], "shows the plan and its progress"),
        ("planning", ["planning_add_step", "planning_update_step"], "appends one or more"),
    ],
)
def test_bundled_packs_accept_exclude_tools(
    pack: str, excluded: list[str], gone: str, tmp_path: Any
) -> None:
    # Issue 26, item 4: their instructions named every tool, so excluding any was refused.
    empty = tmp_path / "haversack.toml"
    empty.write_text("", encoding="utf-8")
    whole = compose(ns="t", key="k", packs=[pack], config_file=empty, strict=True).render()
    assert gone in whole.text
    rendered = compose(
        ns="t",
        key="k",
        packs=[pack],
        config={pack: {"exclude_tools": excluded}},
        config_file=empty,
        strict=True,
    ).render()
    offered = {t.name for t in rendered.tools}
    assert offered
    assert not offered & set(excluded)
    assert gone not in rendered.text
    assert "${" not in rendered.text
    for name in excluded:
        assert name not in rendered.text


# -- every tool of the bundled packs, excluded ------------------------------------------------

BUNDLED = {"planning": PLANNING_TOOLS, "vfs": VFS_TOOLS, "podman": PODMAN_TOOLS}
EVERY_TOOL = [(pack, tool) for pack, tools in BUNDLED.items() for tool in tools]
PREFIX = "zz_"
#: Bare spellings no English sentence uses: one in a message is a name the pack hard-coded
#: instead of asking the context (it would be wrong under the prefix, and may be absent).
HARD_CODED = re.compile(
    r"(?<![\w-])(" + "|".join(t for _, t in EVERY_TOOL if "_" in t) + r")(?![\w-])"
)


PACK_OF = {tool: pack for pack, tool in EVERY_TOOL}


def _bundled(
    tmp_path: Any, excluded: dict[str, list[str]], prefixes: dict[str, str] | None = None
) -> Any:
    """The three packs, every tool prefixed (``PREFIX``, or ``prefixes[pack]``), ``excluded``
    removed, with limits small enough for the script to reach."""
    empty = tmp_path / "haversack.toml"
    empty.write_text("", encoding="utf-8")
    prefixes = prefixes or {}
    config: dict[str, dict[str, Any]] = {
        pack: {"prefix": prefixes.get(pack, PREFIX)} for pack in BUNDLED
    }
    config["vfs"].update(max_list_entries=1, max_write_bytes=64)
    config["planning"].update(max_steps=30)
    for pack, tools in excluded.items():
        if tools:
            config[pack]["exclude_tools"] = tools
    return compose(ns="t", key="k", packs=list(BUNDLED), config=config, config_file=empty)


def _executor(rendered: Any) -> ToolExecutor:
    """An executor whose file tools work on a workspace of our own (not the sandbox's: no
    container starts) holding a file the session has not read."""
    workspace = InMemoryFilesystem()
    workspace.write("seed.txt", "one\ntwo\n", mode="create")
    workspace.write("other.txt", "x\n", mode="create")
    resources = ResourceRegistry.of(Binding.instance(Filesystem, workspace))
    return ToolExecutor(rendered, session=Session(), resources=resources)


def _script() -> list[tuple[str, dict[str, Any]]]:
    """Calls (by original name) that reach every message of the planning and VFS tools that
    names another tool: denials, refusals with hints, notes on long results."""
    many = [f"s{i}" for i in range(25)]
    big = "b" * 100
    return [
        ("planning_add_step", {"steps": ["a"]}),  # denied: no plan yet
        ("planning_read_plan", {}),
        ("planning_setup_plan", {"objective": "o", "steps": []}),  # no steps: add them with
        ("planning_update_step", {"step_id": 3, "status": "done"}),  # no steps yet
        ("planning_setup_plan", {"objective": "o", "steps": many}),  # long: read to see all
        ("planning_add_step", {"steps": ["a"]}),
        ("planning_update_step", {"step_id": 99, "status": "done"}),  # read to see them
        ("planning_add_step", {"steps": many}),  # too many: start the next with setup
        ("planning_setup_plan", {"objective": "o", "steps": ["only"]}),
        ("planning_update_step", {"step_id": 1, "status": "done"}),
        ("planning_add_step", {"steps": ["late"]}),  # completed: start a new plan with
        ("edit_file", {"path": "seed.txt", "old_string": "one", "new_string": "1"}),  # unread
        ("write_file", {"path": "seed.txt", "content": "x"}),  # exists: read, edit, rm
        ("write_file", {"path": "big.txt", "content": big}),  # over max_write_bytes
        ("ls", {"path": ""}),  # past max_list_entries: glob
        ("rm", {"path": ""}),  # the root: ls shows the entries
        ("read_file", {"path": "seed.txt"}),
        ("edit_file", {"path": "seed.txt", "old_string": "", "new_string": "1"}),  # write_file
        ("edit_file", {"path": "seed.txt", "old_string": "zzz", "new_string": "1"}),  # read_file
        ("edit_file", {"path": "seed.txt", "old_string": "one", "new_string": big}),
    ]


def _absent_names(
    prompt: Any, excluded: dict[str, list[str]], prefixes: dict[str, str] | None = None
) -> list[str]:
    """Every text the model may read (the prompt, each description and parameter schema,
    the message of each scripted call) that names a tool the composition does not have, or
    names one by a hard-coded spelling; empty when there is none."""
    rendered = prompt.render()
    offered = {t.name for t in rendered.tools}
    prefixes = prefixes or {}

    def final(original: str) -> str:
        return prefixes.get(PACK_OF[original], PREFIX) + original

    gone = {final(t) for tools in excluded.values() for t in tools}
    alternatives = "|".join(map(re.escape, sorted(gone))) or "(?!)"  # (?!) matches nothing
    absent = re.compile(r"(?<![\w-])(" + alternatives + r")(?![\w-])")
    assert not offered & gone, f"{sorted(offered & gone)} still offered"
    texts = [("the prompt text", rendered.text)]
    texts += [(f"{t.name}'s description", t.description) for t in rendered.tools]
    texts += [(f"{t.name}'s examples", repr(t.examples)) for t in rendered.tools]
    executor = _executor(rendered)
    try:
        for original, arguments in _script():
            if final(original) in offered:
                result = executor.execute(final(original), arguments)
                texts.append((f"{original}({arguments})", result.render()))
    finally:
        executor.close()
    found = []
    for where, text in texts:
        named = {m.group(1) for m in absent.finditer(text)}
        hard = {m.group(1) for m in HARD_CODED.finditer(text)}
        if "${" in text:
            found.append(f"{where} holds a template marker: {text[:300]!r}")
        if named or hard:
            found.append(f"{where} names {sorted(named | hard)}: {text[:300]!r}")
    return found


@pytest.mark.parametrize(("pack", "tool"), EVERY_TOOL)
def test_every_tool_of_the_bundled_packs_can_be_excluded_alone(
    pack: str, tool: str, tmp_path: Any
) -> None:
    # Issue 26: excluding edit_file alone was refused (write_file's description named it),
    # and hints named tools that exclude_tools had removed.
    excluded = {pack: [tool]}
    prompt = _bundled(tmp_path, excluded)
    assert len(prompt.tools) == len(EVERY_TOOL) - 1
    assert _absent_names(prompt, excluded) == []


def test_the_script_reaches_the_messages_that_name_tools(tmp_path: Any) -> None:
    # With nothing excluded the same script must show the hints the test above looks for,
    # or that test would pass by reaching none of them.
    prompt = _bundled(tmp_path, {})
    rendered = prompt.render()
    executor = _executor(rendered)
    try:
        said = " ".join(executor.execute(PREFIX + o, a).render() for o, a in _script())
    finally:
        executor.close()
    for original in ("planning_setup_plan", "planning_add_step", "planning_read_plan"):
        assert PREFIX + original in said, original
    for original in ("read_file", "edit_file", "write_file", "rm", "ls", "glob"):
        assert PREFIX + original in said, original
    assert _absent_names(prompt, {}) == []


def test_random_exclusions_and_prefixes_leave_no_name_of_an_absent_tool(figure, tmp_path) -> None:
    fig = figure("tool-identity", "bundled packs, random exclusions")
    prefixes = st.sampled_from(("a_", "fs_", "zz_", "srv-"))

    @settings(
        max_examples=budget(12, 200),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        excluded=st.fixed_dictionaries(
            {
                pack: st.sets(st.sampled_from(tools), max_size=len(tools))
                for pack, tools in BUNDLED.items()
            }
        ),
        chosen=st.fixed_dictionaries(dict.fromkeys(BUNDLED, prefixes)),
    )
    def case(excluded: dict[str, set[str]], chosen: dict[str, str]) -> None:
        fig.case()
        where = f"excluded={ {k: sorted(v) for k, v in excluded.items()} } prefixes={chosen}"
        removed = {pack: sorted(tools) for pack, tools in excluded.items()}
        try:
            prompt = _bundled(tmp_path, removed, chosen)
        except Exception as exc:
            fig.problem(f"{where}: composing raised {type(exc).__name__}: {exc}")
            return
        kept = len(EVERY_TOOL) - sum(len(v) for v in removed.values())
        fig.check(len(prompt.tools) == kept, f"{where}: {len(prompt.tools)} tools, not {kept}")
        for found in _absent_names(prompt, removed, chosen):
            fig.problem(f"{where}: {found}")

    case()
    fig.assert_clean()
