"""``ToolContext``: the immutable bundle a handler receives as ``context=``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .filesystem._protocol import Filesystem

if TYPE_CHECKING:
    from ._bindings import ResourceResolver
    from ._deadline import Deadline
    from ._identity import ToolIdentity
    from ._interaction import Answer, Interaction
    from ._prompt import Prompt, RenderedPrompt
    from ._session import Session
    from ._tool import Tool

__all__ = ["ToolContext"]


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Everything a handler may use besides its params; built fresh for each call.

    ``prompt`` and ``rendered_prompt`` are what is being evaluated, ``session`` holds state
    (read and dispatch to it; it is rolled back if the call fails), ``resources`` gives
    the bound resources, ``deadline`` the evaluation's time budget (``None`` for none),
    ``tool`` the tool being called and ``call_id`` the provider's id for this call.
    ``interaction`` carries :meth:`ask` and :meth:`report_progress` to whoever runs the
    call (an MCP client, the terminal of ``haversack run``, a test); ``None``: nobody.
    """

    prompt: Prompt
    rendered_prompt: RenderedPrompt | None
    session: Session
    resources: ResourceResolver
    deadline: Deadline | None = None
    tool: Tool[Any, Any] | None = None
    call_id: str | None = None
    interaction: Interaction | None = None

    def ask(
        self, message: str, schema: type | Mapping[str, Any] = bool, *, timeout_s: float = 300.0
    ) -> Answer:
        """Ask the user ``message`` and wait (at most ``timeout_s``, and never past the
        deadline) for the answer, from a sync handler.

        ``schema`` is ``bool``, ``int``, ``float`` or ``str`` (the answer's ``value`` has
        that type) or a JSON schema of a flat form (the answer's ``content``). The answer
        says whether the user accepted, declined or cancelled. Raises
        :class:`~haversack.errors.InteractionError` when nobody can be asked (a client
        without elicitation, a headless run), on timeout, or for an answer that does not
        fit; uncaught, the call fails and the model is told why. An async handler uses
        :meth:`aask`.
        """
        interaction, asked = self._question(message, schema, timeout_s)
        if interaction is None:
            from ._interaction import Interaction

            interaction = Interaction()
        return interaction.ask(asked)

    async def aask(
        self, message: str, schema: type | Mapping[str, Any] = bool, *, timeout_s: float = 300.0
    ) -> Answer:
        """:meth:`ask` for an async handler (awaits the answer on the event loop)."""
        interaction, asked = self._question(message, schema, timeout_s)
        if interaction is None:
            from ._interaction import Interaction

            interaction = Interaction()
        return await interaction.aask(asked)

    def _question(
        self, message: str, schema: type | Mapping[str, Any], timeout_s: float
    ) -> tuple[Interaction | None, Any]:
        from ._interaction import question

        deadline = self.deadline
        if deadline is not None:
            deadline.check(f"asking the user in tool call {self.name!r}")
            timeout_s = max(min(timeout_s, deadline.remaining()), 1e-3)
        return self.interaction, question(message, schema, timeout_s=timeout_s, tool=self.name)

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Tell whoever runs the call how far it got (``progress`` of ``total``, rising).

        Never blocks and never fails the call for want of a listener: an MCP client that
        asked for progress gets ``notifications/progress`` (a flood is coalesced to the
        latest), the terminal prints it, and without an interaction it goes nowhere.
        Raises :class:`~haversack.errors.InteractionError` only for values that are not
        finite numbers (a bug in the tool).
        """
        from ._interaction import progress_update

        update = progress_update(progress, total, message)
        interaction = self.interaction
        if interaction is not None:
            interaction.progress(update)

    @property
    def identity(self) -> ToolIdentity | None:
        """Who contributed the tool being called and what it originally called it (``None``
        outside a call): unambiguous whatever prefixes, renames and clashes the prompt has."""
        tool = self.tool
        return None if tool is None else self.prompt.identity(tool.name)

    @property
    def name(self) -> str | None:
        """The final name of the tool being called (the model's name for it), or ``None``."""
        tool = self.tool
        return None if tool is None else tool.name

    def tool_name(self, original: str) -> str:
        """The name the model knows the tool originally called ``original`` by.

        The tool is the one of the same contributor as the tool being called (a pack naming
        its own tools in a message), never another contributor's: when that contributor has
        none (``exclude_tools`` removed it), ``original`` comes back unchanged, so ask
        :meth:`offers` before naming a tool that may be gone. Outside a call, the only tool of
        the prompt originally called so. A composed pack may be prefixed or renamed, so a
        message naming another tool of its pack asks here instead of spelling the original
        name. Unknown or ambiguous names come back unchanged.
        """
        from ._identity import ToolIdentity, resolve_name

        prompt = self.prompt
        mine = self.identity
        if mine is not None:
            found = prompt.tool_named(ToolIdentity(mine.contributor, original))
            # Another contributor's tool of that name is not this one (issue 26).
            return original if found is None else found
        rendered = self.rendered_prompt
        tools = rendered.tools if rendered is not None else prompt.tools
        names = resolve_name(original, {t.name: t for t in tools})
        return next(iter(names)) if len(names) == 1 else original

    def offers(self, original: str) -> bool:
        """Whether the prompt has the tool originally called ``original`` (of the calling
        tool's contributor): a message mentions a tool only while it exists (a pack's
        ``exclude_tools`` may have removed it)."""
        from ._identity import ToolIdentity

        mine = self.identity
        if mine is not None:
            return self.prompt.tool_named(ToolIdentity(mine.contributor, original)) is not None
        return any(t.original_name == original for t in self.prompt.tools)

    @property
    def filesystem(self) -> Filesystem:
        """The bound workspace :class:`Filesystem`; raises ``ResourceError`` if none is."""
        return self.resources.get(Filesystem)  # type: ignore[type-abstract]
