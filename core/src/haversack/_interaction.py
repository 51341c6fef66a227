"""A tool call asking its person a question and reporting its progress: the one concept.

A handler calls :meth:`ToolContext.ask` / :meth:`ToolContext.aask` and
:meth:`ToolContext.report_progress`; whoever runs the call supplies the
:class:`Interaction` that carries them: the MCP server (elicitation and
``notifications/progress``), ``haversack run`` (the terminal), a test or a headless
deployment (:class:`ScriptedInteraction`). Without one, asking raises a precise
:class:`~haversack.errors.InteractionError` and progress goes nowhere; nothing ever waits
without a bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .errors import InteractionError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "MAX_MESSAGE_CHARS",
    "Answer",
    "Interaction",
    "Progress",
    "Question",
    "ScriptedInteraction",
    "answer_from",
    "progress_update",
    "question",
]

MAX_MESSAGE_CHARS = 20_000
"""The longest question or progress message; a longer one is refused (a question) or cut
(progress), so a tool cannot flood a client or a terminal."""

MAX_FIELDS = 32
"""The most fields one question may ask for."""

DEFAULT_TIMEOUT_S = 300.0

#: The answer kinds a question can be asked with, besides a JSON schema: one field ``value``.
_KINDS: dict[type, str] = {bool: "boolean", int: "integer", float: "number", str: "string"}
_PRIMITIVES = frozenset({"string", "number", "integer", "boolean", "array"})


@dataclass(frozen=True, slots=True)
class Question:
    """What a handler asks: ``message`` for the person, ``schema`` the form of the answer
    (a flat JSON object of primitive fields, as MCP elicitation allows), ``kind`` the Python
    type the answer's ``value`` has when asked with ``bool``/``int``/``float``/``str``
    (``None``: the answer is the whole form), ``timeout_s`` how long to wait for it and
    ``tool`` the name of the tool asking."""

    message: str
    schema: Mapping[str, Any]
    kind: type | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    tool: str | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """The person's answer: ``action`` is ``"accept"`` (``content`` holds the form, checked
    against the question's schema, and ``value`` the typed answer of a question asked with
    a type), ``"decline"`` (they said no) or ``"cancel"`` (they dismissed the question)."""

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] | None = None
    value: Any = None

    @property
    def accepted(self) -> bool:
        """Whether the person answered (``action == "accept"``)."""
        return self.action == "accept"


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a call got: ``progress`` out of ``total`` (``None``: unknown), and a message."""

    progress: float
    total: float | None = None
    message: str | None = None


class Interaction:
    """How a running tool call reaches a person (:meth:`ask`) and its caller (:meth:`progress`).

    Subclass it to carry questions somewhere new. The base class has nobody to ask (every
    question raises :class:`~haversack.errors.InteractionError`, as when no interaction is
    given) and drops progress. :meth:`ask` is called from a sync handler's thread and may
    block up to the question's ``timeout_s``; :meth:`aask` from an async handler, on the
    event loop (by default it runs :meth:`ask` in a worker thread). :meth:`progress` must
    never block: it is called as often as a tool likes.
    """

    def ask(self, question: Question) -> Answer:
        """The person's answer to ``question`` (bounded by ``question.timeout_s``)."""
        raise InteractionError(_nobody(question, "nobody can be asked here"))

    async def aask(self, question: Question) -> Answer:
        """:meth:`ask` for an async handler."""
        import anyio

        return await anyio.to_thread.run_sync(self.ask, question)

    def progress(self, update: Progress) -> None:
        """Tell the caller how far the call got; dropped by default."""


def _nobody(question: Question, why: str) -> str:
    who = f"Tool {question.tool!r}" if question.tool else "The tool"
    return (
        f"{who} needed to ask the user ({_first_line(question.message)!r}) but {why}, so it "
        "stopped. Do not retry it as it is: ask the user yourself, then call it with what "
        "they said (if its parameters allow), or go on without it."
    )


def _first_line(text: str, limit: int = 120) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


class ScriptedInteraction(Interaction):
    """Answers from a script, for tests and headless runs; keeps what it was asked and told.

    ``answers`` are given in order, each an :class:`Answer`, a mapping (accepted form
    content) or a plain value (the accepted ``value`` of a question asked with a type); or
    ``answers`` is a function of the :class:`Question`. Asking past the end of the script
    raises :class:`~haversack.errors.InteractionError` naming the question. An answer that
    does not fit the question's schema raises it too, as from a real client.
    """

    def __init__(
        self, answers: Sequence[Any] | Callable[[Question], Any] = (), *, keep: int = 10_000
    ) -> None:
        self._answers = answers if callable(answers) else list(answers)
        self._keep = keep
        self.questions: list[Question] = []
        self.updates: list[Progress] = []

    def ask(self, question: Question) -> Answer:
        self.questions.append(question)
        answers = self._answers
        if callable(answers):
            given = answers(question)
        elif answers:
            given = answers.pop(0)
        else:
            raise InteractionError(_nobody(question, "the scripted answers ran out"))
        if isinstance(given, Answer):
            if not given.accepted:
                return given
            return answer_from(question, "accept", given.content)
        if isinstance(given, Mapping):
            return answer_from(question, "accept", given)
        return answer_from(question, "accept", {"value": given})

    async def aask(self, question: Question) -> Answer:
        return self.ask(question)  # never blocks: no thread needed

    def progress(self, update: Progress) -> None:
        if len(self.updates) < self._keep:
            self.updates.append(update)


def question(
    message: str,
    schema: type | Mapping[str, Any],
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    tool: str | None = None,
) -> Question:
    """A checked :class:`Question`: ``schema`` is ``bool``, ``int``, ``float`` or ``str``
    (one field ``value``) or a JSON schema of a flat object of primitive fields (strings,
    numbers, integers, booleans, enums, arrays of enum strings: what MCP clients can show
    as a form). Raises :class:`~haversack.errors.InteractionError` for anything else."""
    if not isinstance(message, str) or not message.strip():
        raise InteractionError("A question needs a message for the person (a non-empty string).")
    if len(message) > MAX_MESSAGE_CHARS:
        raise InteractionError(
            f"A question's message may be at most {MAX_MESSAGE_CHARS} characters, got "
            f"{len(message)}: a person cannot check what they cannot read."
        )
    if not (isinstance(timeout_s, int | float) and 0 < timeout_s < math.inf):
        raise InteractionError(
            f"timeout_s must be a positive number of seconds, got {timeout_s!r}."
        )
    if isinstance(schema, type):
        kind = _KINDS.get(schema)
        if kind is None:
            raise InteractionError(
                f"ask() takes bool, int, float, str or a JSON schema, not {schema.__qualname__}."
            )
        form: dict[str, Any] = {
            "type": "object",
            "properties": {"value": {"type": kind, "title": "Answer"}},
            "required": ["value"],
        }
        return Question(message, form, schema, float(timeout_s), tool)
    if not isinstance(schema, Mapping):
        raise InteractionError(
            f"ask() takes bool, int, float, str or a JSON schema, not {type(schema).__name__}."
        )
    _check_form(schema)
    return Question(message, dict(schema), None, float(timeout_s), tool)


def _check_form(schema: Mapping[str, Any]) -> None:
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, Mapping):
        raise InteractionError(
            "A question's schema must be {'type': 'object', 'properties': {...}}: a flat form."
        )
    if not properties or len(properties) > MAX_FIELDS:
        raise InteractionError(
            f"A question's form must have 1 to {MAX_FIELDS} fields, got {len(properties)}."
        )
    for name, spec in properties.items():
        kind = spec.get("type") if isinstance(spec, Mapping) else None
        if kind not in _PRIMITIVES:
            raise InteractionError(
                f"Field {name!r} of a question's form must be a string, number, integer, "
                "boolean or array of enum strings (MCP elicitation shows flat forms only), "
                f"got {spec!r:.200}."
            )
    required = schema.get("required", [])
    if not isinstance(required, list) or any(r not in properties for r in required):
        raise InteractionError("A question's 'required' must list fields of its form.")


def answer_from(
    question: Question,
    action: str,
    content: Mapping[str, Any] | None,
) -> Answer:
    """The :class:`Answer` for what a person (or their client) sent, checked: an accepted
    form must fit the question's schema, else :class:`~haversack.errors.InteractionError`."""
    if action in ("decline", "cancel"):
        return Answer(action)  # type: ignore[arg-type]
    if action != "accept":
        raise InteractionError(
            f"The answer's action {action!r:.50} is not accept, decline or cancel."
        )
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    form = dict(content or {})
    error = next(iter(Draft202012Validator(dict(question.schema)).iter_errors(form)), None)
    if error is not None:
        raise InteractionError(
            f"The user's answer does not fit the question's form ({error.message:.300}); "
            "ask again or go on without it."
        )
    if question.kind is None:
        return Answer("accept", form)
    value = form["value"]
    if question.kind is float:
        value = float(value)
    return Answer("accept", form, value)


def progress_update(progress: float, total: float | None, message: str | None) -> Progress:
    """A checked :class:`Progress` (finite numbers, a message cut to a bound)."""
    if (
        isinstance(progress, bool)
        or not isinstance(progress, int | float)
        or not math.isfinite(progress)
    ):
        raise InteractionError(f"progress must be a finite number, got {progress!r:.50}.")
    if total is not None and (
        isinstance(total, bool) or not isinstance(total, int | float) or not math.isfinite(total)
    ):
        raise InteractionError(f"total must be a finite number or None, got {total!r:.50}.")
    if message is not None:
        if not isinstance(message, str):
            raise InteractionError(
                f"message must be a string or None, got {type(message).__name__}."
            )
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[: MAX_MESSAGE_CHARS - 3] + "..."
    return Progress(float(progress), None if total is None else float(total), message)
