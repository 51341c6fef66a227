"""Human approval in the executor: a policy asks, the call waits, resume() decides."""

from __future__ import annotations

import asyncio

import pytest

from haversack import (
    Approval,
    ApprovalError,
    ApprovalPolicy,
    CallOutcome,
    PendingApproval,
    PolicyDecision,
    Session,
    ToolExecutor,
    ToolInvoked,
)

# The hash an approval is bound to is internal; these tests forge and compare it.
from haversack._approval import arguments_hash

from ..agent._kit import Note, prompt  # noqa: TID252 - the agent tests' kit

WRITE = '{"path": "a", "text": "hello"}'


class DenyBoom:
    """Denies writes of the text 'forbidden' outright."""

    name = "deny-forbidden"

    def check(self, tool, params, *, context):
        if getattr(params, "text", "") == "forbidden":
            return PolicyDecision.deny("that text is forbidden")
        return PolicyDecision.allow()

    def on_result(self, tool, params, result, *, context):
        pass


def _executor(*policies, session=None):
    session = session or Session()
    rendered = prompt(policies=list(policies or [ApprovalPolicy(["write_*"])])).render()
    return ToolExecutor(rendered, session=session), session


def _outcomes(session):
    return [event.outcome for event in session[ToolInvoked].all()]


def test_an_asking_policy_holds_the_call_and_nothing_runs():
    executor, session = _executor()
    result = executor.execute("write_note", WRITE, call_id="c1")
    assert not result.success
    pending = result.value
    assert isinstance(pending, PendingApproval)
    assert pending.call_id == "c1"
    assert pending.tool_name == "write_note"
    assert pending.policy == "approval"
    assert pending.arguments_hash == arguments_hash(WRITE)
    assert "needs a human's approval" in result.message
    assert executor.pending == (pending,)
    assert session[Note].all() == ()  # the handler never ran
    assert _outcomes(session) == [CallOutcome.PENDING]


def test_read_only_tools_are_not_asked_about_by_a_name_pattern_that_misses_them():
    executor, session = _executor()
    session[Note].append(Note("a", "x"))
    assert executor.execute("read_note", '{"path": "a"}').message == "x"
    assert executor.pending == ()


def test_approve_runs_the_call_once():
    executor, session = _executor()
    pending = executor.execute("write_note", WRITE, call_id="c1").value
    result = executor.resume("c1", pending.approve())
    assert result.success, result.message
    assert session[Note].all() == (Note("a", "hello"),)
    assert executor.pending == ()
    assert _outcomes(session) == [CallOutcome.PENDING, CallOutcome.OK]
    with pytest.raises(ApprovalError, match="No call 'c1' awaits approval"):
        executor.resume("c1", pending.approve())


def test_deny_refuses_with_the_reason_and_changes_nothing():
    executor, session = _executor()
    pending = executor.execute("write_note", WRITE, call_id="c1").value
    result = executor.resume("c1", pending.deny("not today"))
    assert not result.success
    assert result.message == "The call of 'write_note' was not approved: not today"
    assert session[Note].all() == ()
    assert _outcomes(session) == [CallOutcome.PENDING, CallOutcome.DENIED]


def test_edited_arguments_run_instead_of_the_models():
    executor, session = _executor()
    pending = executor.execute("write_note", WRITE, call_id="c1").value
    result = executor.resume("c1", pending.edit({"path": "b", "text": "edited"}))
    assert result.success
    assert session[Note].all() == (Note("b", "edited"),)
    assert session[ToolInvoked].all()[-1].arguments == {"path": "b", "text": "edited"}


def test_edited_arguments_are_parsed_as_strictly_as_the_models():
    executor, session = _executor()
    executor.execute("write_note", WRITE, call_id="c1")
    result = executor.resume("c1", Approval.edit('{"path": "b", "txt": 1}'))
    assert not result.success
    assert "unknown field 'txt'" in result.message
    assert session[Note].all() == ()
    assert _outcomes(session)[-1] is CallOutcome.INVALID


def test_an_approval_is_void_once_the_arguments_changed():
    executor, session = _executor()
    first = executor.execute("write_note", WRITE, call_id="c1").value
    # The same call id comes back with other arguments: the old approval must not cover it.
    second = executor.execute("write_note", '{"path": "a", "text": "rm -rf"}', call_id="c1").value
    assert first.arguments_hash != second.arguments_hash
    assert executor.pending == (second,)
    result = executor.resume("c1", first.approve())
    assert not result.success
    assert "approval was given for other arguments" in result.message
    assert session[Note].all() == ()
    assert _outcomes(session)[-1] is CallOutcome.DENIED


def test_the_hash_ignores_key_order_and_spacing_but_not_values():
    assert arguments_hash('{"a": 1, "b": 2}') == arguments_hash({"b": 2, "a": 1})
    assert arguments_hash("{}") == arguments_hash(None) == arguments_hash("null")
    assert arguments_hash('{"a": 1}') != arguments_hash('{"a": 2}')
    assert arguments_hash("{not json") != arguments_hash("{not json!")


def test_an_approved_call_still_follows_the_transaction_rules():
    executor, session = _executor()
    executor.execute("write_note", '{"path": "a", "text": "boom"}', call_id="c1")
    result = executor.resume("c1", Approval.approve())
    assert not result.success
    assert "the disk is full" in result.message
    assert session[Note].all() == ()  # the handler's append was rolled back
    assert _outcomes(session)[-1] is CallOutcome.ERROR


def test_a_denial_by_another_policy_beats_asking():
    executor, _ = _executor(ApprovalPolicy(["write_*"]), DenyBoom())
    result = executor.execute("write_note", '{"path": "a", "text": "forbidden"}', call_id="c1")
    assert result.message == "Denied by policy 'deny-forbidden': that text is forbidden"
    assert executor.pending == ()


def test_an_approval_answers_only_the_asking_policies():
    executor, session = _executor(ApprovalPolicy(["write_*"]), DenyBoom())
    executor.execute("write_note", WRITE, call_id="c1")
    result = executor.resume("c1", Approval.edit({"path": "a", "text": "forbidden"}))
    assert result.message == "Denied by policy 'deny-forbidden': that text is forbidden"
    assert session[Note].all() == ()


def test_not_read_only_asks_before_every_mutating_tool():
    executor, session = _executor(ApprovalPolicy(not_read_only=True))
    session[Note].append(Note("a", "x"))
    assert executor.execute("read_note", '{"path": "a"}').success
    held = executor.execute("write_note", WRITE)
    assert isinstance(held.value, PendingApproval)
    assert held.value.reason == "'write_note' is not read-only"
    assert held.value.call_id == "pending-1"  # no call id from the caller: one is made up


def test_resume_of_an_unknown_call_names_the_waiting_ones():
    executor, _ = _executor()
    executor.execute("write_note", WRITE, call_id="c7")
    with pytest.raises(ApprovalError, match=r"No call 'c1'.*'c7'"):
        executor.resume("c1", Approval.approve())


def test_async_execute_and_resume():
    async def main():
        executor, session = _executor()
        held = await executor.aexecute("write_note", WRITE, call_id="c1")
        result = await executor.aresume("c1", held.value.approve())
        return result, session

    result, session = asyncio.run(main())
    assert result.success
    assert session[Note].all() == (Note("a", "hello"),)


def test_asking_needs_a_reason_and_the_policy_a_rule():
    with pytest.raises(ValueError, match="needs a reason"):
        PolicyDecision.ask("  ")
    with pytest.raises(ValueError, match="would never ask"):
        ApprovalPolicy()
    with pytest.raises(ValueError, match="denial needs a reason"):
        Approval.deny("")
    decision = PolicyDecision.ask("why")
    assert not decision.allowed
    assert decision.needs_approval
    assert not PolicyDecision.deny("no").needs_approval


def test_patterns_match_the_original_name_of_a_renamed_tool():
    import dataclasses

    from haversack import MarkdownSection, Prompt

    from ..agent._kit import write_note  # noqa: TID252

    renamed = dataclasses.replace(write_note, name="notes_write")
    assert renamed.original_name == "write_note"
    rendered = Prompt(
        ns="t",
        key="r",
        sections=[MarkdownSection(title="N", key="n", template="n", tools=[renamed])],
        policies=[ApprovalPolicy(["write_note"])],
    ).render()
    executor = ToolExecutor(rendered, session=Session())
    held = executor.execute("notes_write", WRITE)
    assert isinstance(held.value, PendingApproval)


def test_a_pattern_matching_no_tool_is_refused_naming_the_closest():
    # Issue 26, item 3: ApprovalPolicy(["wipe_everything"]) matched nothing and the tool ran.
    from haversack.errors import PromptValidationError

    with pytest.raises(PromptValidationError) as info:
        prompt(policies=[ApprovalPolicy(["wite_note"])])
    message = str(info.value)
    assert "'wite_note', which matches none of the tools it governs" in message
    assert "closest: write_note" in message
    with pytest.raises(PromptValidationError, match=r"'wipe_everything'.*closest: write_note"):
        prompt(policies=[ApprovalPolicy(["wipe_everything"])])
    with pytest.raises(PromptValidationError, match=r"its tools: fetch, left, read_note"):
        prompt(policies=[ApprovalPolicy(["zzz"])])
    # One good pattern does not cover a bad one beside it.
    with pytest.raises(PromptValidationError, match=r"'nothing_\*'"):
        prompt(policies=[ApprovalPolicy(["write_*", "nothing_*"])])
    prompt(policies=[ApprovalPolicy(["write_*"], not_read_only=True)])  # every pattern matches


def test_an_approval_names_its_call_and_tool_and_is_void_for_another():
    # Issue 25, item 18: the approval of read_file(x), bound only to the arguments' hash,
    # ran a held rm(x) with the same arguments.
    executor, session = _executor(ApprovalPolicy(["read_note", "write_note"]))
    same = '{"path": "a", "text": "x"}'
    executor.execute("write_note", same, call_id="harmless")
    executor.execute("write_note", same, call_id="other")
    read = executor.execute("read_note", '{"path": "a"}', call_id="read").value
    held = executor.execute("write_note", '{"path": "a", "text": "y"}', call_id="w").value
    approval = read.approve()
    assert (approval.call_id, approval.tool_name) == ("read", "read_note")
    # Another tool: refused, nothing ran.
    result = executor.resume("w", approval)
    assert not result.success
    assert "approval given was for another call, read_note (call read)" in result.message
    assert session[Note].all() == ()
    # The same tool and the same arguments, but another held call: refused too.
    pending = {p.call_id: p for p in executor.pending}
    result = executor.resume("other", pending["harmless"].approve())
    assert "for another call" in result.message
    assert session[Note].all() == ()
    # Edits and denials are bound the same way; the right call's own approval still runs it.
    assert "for another call" in executor.resume("read", held.edit(same)).message
    assert executor.resume("harmless", pending["harmless"].approve()).success
    assert session[Note].all() == (Note("a", "x"),)
