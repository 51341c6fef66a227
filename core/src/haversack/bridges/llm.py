"""``llm``: tools whose calls run through a :class:`~haversack.ToolExecutor`, and the plugin
that registers the installed packs' tools for ``llm -T``.

Install with ``pip install 'haversack[llm]'``; ``llm`` then loads the plugin by itself (the
``haversack`` entry point of the ``llm`` group). ``llm`` has no per-tool approval (``--ta``
asks before every call), so a call a Haversack policy holds is put to ``approve``: the
plugin asks on the terminal as ``--ta`` does, and refuses when no one is at one.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import llm

from haversack.adapters._common import NO_APPROVER, pending_of, tool_definition

if TYPE_CHECKING:
    from haversack._approval import PendingApproval
    from haversack._executor import ToolExecutor
    from haversack._prompt import RenderedPrompt
    from haversack._tool import Tool

__all__ = ["ask_on_terminal", "packs_tools", "register_tools", "tool", "tools"]

#: Answers a held call: ``True`` runs it, ``False`` refuses it.
Approve = Callable[["PendingApproval"], bool]


def tools(
    executor: ToolExecutor | Callable[[], ToolExecutor],
    *,
    rendered: RenderedPrompt | None = None,
    approve: Approve | None = None,
) -> list[llm.Tool]:
    """The tools of a rendered prompt as ``llm.Tool`` objects, in prompt order; pass them as
    ``model.chain(..., tools=tools(executor))``. See :func:`tool`.

    ``executor`` may be a function making one (``rendered`` then names the prompt): it is
    called at the first tool call, so listing the tools opens no resource.
    """
    from haversack import ToolExecutor

    if rendered is None:
        if not isinstance(executor, ToolExecutor):
            raise TypeError("Give rendered= with an executor factory: it names the tools.")
        rendered = executor.rendered_prompt
    get = _Once(executor)
    return [tool(get, item, approve=approve) for item in rendered.tools]


def tool(
    executor: ToolExecutor | Callable[[], ToolExecutor],
    item: Tool[Any, Any],
    *,
    approve: Approve | None = None,
) -> llm.Tool:
    """``item`` as an ``llm.Tool`` whose calls run through ``executor`` (or the executor the
    function ``executor`` returns, asked at each call).

    Each call runs with ``executor.execute(...)`` (parsing, policies, rollback of a failed
    call, the session's log); its rendered result, success or failure, is the tool's output,
    so a policy's denial reaches the model as the result. A call a policy holds for a human
    is put to ``approve``: ``True`` runs it with the approval answering the policies that
    hold it (every other policy still applies), ``False`` refuses it; without ``approve``
    it is refused and the model is told that no one is there to approve it.
    """
    get = executor if isinstance(executor, _Once) else _Once(executor)
    name = item.name
    definition = tool_definition(item)

    # llm passes the arguments as keywords too; the call's own dict is read instead, as sent.
    def implementation(llm_tool_call: llm.ToolCall, **_arguments: Any) -> str:
        ex = get()
        call_id = llm_tool_call.tool_call_id
        result = ex.execute(name, llm_tool_call.arguments, call_id=call_id)
        pending = pending_of(result)
        if pending is not None:
            if approve is None:
                answer = pending.deny(NO_APPROVER)
            elif approve(pending):
                answer = pending.approve()
            else:
                answer = pending.deny("The user did not approve this call.")
            result = ex.resume(pending.call_id, answer)
        return result.render()

    return llm.Tool(
        name=name,
        description=definition.description,
        # llm keeps and may change the schema it is given; the shared one is read-only.
        input_schema=copy.deepcopy(definition.parameters),
        implementation=implementation,
        plugin="haversack",
    )


class _Once:
    """An executor, or the one a factory makes on its first use."""

    __slots__ = ("_executor", "_factory")

    def __init__(self, executor: ToolExecutor | Callable[[], ToolExecutor]) -> None:
        from haversack import ToolExecutor

        self._executor: ToolExecutor | None = None
        self._factory: Callable[[], ToolExecutor] | None = None
        if isinstance(executor, ToolExecutor):
            self._executor = executor
        else:
            self._factory = executor

    def __call__(self) -> ToolExecutor:
        if self._executor is None:
            assert self._factory is not None
            self._executor = self._factory()
        return self._executor


def ask_on_terminal(pending: PendingApproval) -> bool:
    """Ask the person at the terminal, the way ``llm --ta`` does; ``False`` without one."""
    if not sys.stdin.isatty():
        return False
    import click

    click.echo(click.style(f"Haversack: {pending.render()}", fg="yellow", bold=True), err=True)
    return click.confirm("Approve tool call?", err=True)


def packs_tools(**compose: Any) -> list[llm.Tool]:
    """The installed packs' tools as ``llm`` tools: the prompt :func:`haversack.compose`
    makes (``HAVERSACK_PACKS``, the configuration file, or the keyword arguments given),
    run by one executor for the process, opened at the first call and closed at exit;
    held calls are put to :func:`ask_on_terminal`."""
    import atexit

    from haversack import Session, ToolExecutor
    from haversack import compose as compose_prompt

    rendered = compose_prompt(ns="llm", key="tools", **compose).render()

    def open_executor() -> ToolExecutor:
        executor = ToolExecutor(rendered, session=Session())
        atexit.register(executor.close)
        return executor

    return tools(open_executor, rendered=rendered, approve=ask_on_terminal)


@llm.hookimpl
def register_tools(register: Callable[..., None]) -> None:
    """``llm``'s hook: register every tool of the installed packs (see :func:`packs_tools`).

    A pack that cannot load costs ``llm`` only these tools: one line on stderr says why.
    """
    from haversack.errors import HaversackError

    try:
        found = packs_tools()
    except HaversackError as exc:
        print(f"haversack: no pack tools for llm: {exc}", file=sys.stderr)
        return
    for item in found:
        register(item)
