"""Approval bypass: a hostile model tries to get a call approved for other arguments.

Every tool of every installed pack (Podman's excepted) is held by ``ApprovalPolicy(["*"])``.
Each case: the model makes a valid call (generated from the tool's schema), which is held and
must change nothing. The model then resends the same call id with other arguments (valid,
or hostile from the generator of ``test_hostile_arguments``), and the human approves what
they were shown (the first arguments' hash): the executor must refuse, change nothing and
hold nothing. When the first call was held, approving it exactly must run exactly those arguments.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from haversack import ApprovalPolicy, PendingApproval, ToolInvoked, serde

# The hash an approval is bound to is internal; these tests forge and compare it.
from haversack._approval import arguments_hash
from haversack.testing import compose_packs, fingerprint

from ._harness import PODMAN_PACKS, Harness, budget, loaded_packs
from ._hostile import hostile_call

KNOWN = ("notes/a.txt", "evil.txt", "1", "a" * 64)
SETUP = (
    ("planning_setup_plan", {"objective": "reliability", "steps": ["one", "two"]}),
    ("write_file", {"path": "notes/a.txt", "content": "alpha\nbeta\n"}),
)


def _valid(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Arguments that satisfy ``schema`` (the subset of JSON Schema the packs' tools use)."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([_valid(option) for option in schema["anyOf"]])
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        return st.fixed_dictionaries(
            {name: _valid(sub) for name, sub in properties.items() if name in required},
            optional={n: _valid(sub) for n, sub in properties.items() if n not in required},
        )
    if kind == "array":
        return st.lists(_valid(schema.get("items", {"type": "string"})), max_size=3)
    if kind == "integer":
        return st.integers(min_value=0, max_value=5)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    return st.sampled_from(KNOWN) | st.text(max_size=12)


def _prompt():
    return compose_packs(
        loaded_packs(exclude=sorted(PODMAN_PACKS)), policies=[ApprovalPolicy(["*"])]
    )


def _tool_names() -> list[str]:
    try:
        return [t.name for t in _prompt().render().tools]
    except Exception as exc:
        return [f"<compose failed: {type(exc).__name__}>"]


@pytest.mark.parametrize("tool_name", _tool_names())
def test_an_approval_never_covers_other_arguments(tool_name: str, figure) -> None:
    fig = figure("approval-bypass", tool_name)
    h = Harness(_prompt())
    held_count = swapped = 0
    first_held: Any = None
    try:
        names = {t.name for t in h.rendered.tools}
        for name, arguments in SETUP:  # approved, so that later tools are not denied outright
            if name in names:
                held = h.executor.execute(name, arguments, call_id="setup")
                assert h.executor.resume("setup", held.value.approve()).success, name
        h.mark_baseline()
        tool = h.rendered.tool(tool_name)
        assert tool is not None, tool_name
        schema = serde.schema(tool.params_type)
        valid = _valid(schema).map(lambda args: ("valid arguments", args, False))
        strategy = valid | hostile_call(schema, tool.params_type is not None, KNOWN)

        @settings(
            max_examples=budget(20, 400),
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(first=valid, second=strategy)
        def case(first: tuple[str, Any, bool], second: tuple[str, Any, bool]) -> None:
            nonlocal held_count, swapped, first_held
            fig.case()
            (label, shown, _), (_, sent, _) = first, second
            where = f"{tool_name} given {label}"
            before = fingerprint(h.session, h.executor.resources)
            try:
                held = h.executor.execute(tool_name, shown, call_id="c")
                if not isinstance(held.value, PendingApproval):
                    fig.check(not held.success, f"{where}: ran without approval")
                    return
                held_count += 1
                if first_held is None:
                    first_held = shown
                fig.check(
                    not before.differences(fingerprint(h.session, h.executor.resources)),
                    f"{where}: a held call changed state",
                )
                approval = held.value.approve()
                resent = h.executor.execute(tool_name, sent, call_id="c")
                if not isinstance(resent.value, PendingApproval):
                    return  # malformed: refused before any policy; "c" stays held as shown
                if resent.value.arguments_hash == arguments_hash(shown):
                    h.executor.resume("c", approval)
                    return
                swapped += 1
                result = h.executor.resume("c", approval)
                fig.check(not result.success, f"{where}: an approval ran other arguments")
                fig.check(
                    not before.differences(fingerprint(h.session, h.executor.resources)),
                    f"{where}: a refused approval changed state",
                )
                fig.check(not h.executor.pending, f"{where}: the refused call is still held")
                # The honest path: approving exactly what was held runs exactly that.
                again = h.executor.execute(tool_name, shown, call_id="d")
                if isinstance(again.value, PendingApproval):
                    h.executor.resume("d", again.value.approve())
                    last = h.session[ToolInvoked].all()[-1]
                    fig.check(
                        arguments_hash(last.arguments) == arguments_hash(shown),
                        f"{where}: the approved call ran other arguments",
                    )
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                fig.problem(f"{where}: raised {type(exc).__name__}: {exc}")
            finally:
                for pending in h.executor.pending:
                    h.executor.resume(pending.call_id, pending.deny("reset"))
                h.reset()

        case()
        if first_held is not None:
            # Blank text means "no arguments" to a tool without parameters but hashes as raw
            # text: a resend the generator finds only now and then (in 2 of 4 quick runs
            # for planning_read_plan), so every tool gets it every run.
            for blank in ("", " ", "\n\t"):
                case.hypothesis.inner_test(  # type: ignore[attr-defined]
                    first=("valid arguments", first_held, False),
                    second=("blank text", blank, False),
                )
    finally:
        h.close()
    fig.note("held", held_count)
    fig.note("swapped", swapped)
    fig.check(swapped > 0, f"{tool_name}: no case resent other arguments; the test tested nothing")
    fig.assert_clean()
