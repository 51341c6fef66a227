"""The tool model: ``Tool``, ``ToolExample``, ``ToolAnnotations`` and the handler shape they
check; the ``@tool`` decorator lives in :mod:`haversack._tool_decorator`."""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import os
import re
import typing
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

from ._result import ToolResult
from ._specializable import Specializable, type_name
from .errors import PromptValidationError

if TYPE_CHECKING:
    from ._context import ToolContext

__all__ = [
    "SIGNATURE_HELP",
    "TOOL_REFERENCE",
    "Tool",
    "ToolAnnotations",
    "ToolExample",
    "ToolHandler",
]

ParamsT = TypeVar("ParamsT")
ResultT = TypeVar("ResultT")
ParamsT_contra = TypeVar("ParamsT_contra", contravariant=True)

_NAME = re.compile(r"[a-z0-9_-]{1,64}")
#: ``${tool:name}`` in a description: the current name of the tool originally called ``name``.
TOOL_REFERENCE = re.compile(r"\$\{tool:([a-z0-9_-]{1,64})\}")
#: The default longest tool description, in characters: OpenAI's limit for
#: ``function.description`` (longer ones are refused with ``string_above_max_length``).
#: Anthropic and MCP accept longer text; raise the limit with ``HAVERSACK_MAX_DESCRIPTION``.
DEFAULT_MAX_DESCRIPTION = 1024
#: The environment variable that sets the longest tool description (a positive integer).
ENV_MAX_DESCRIPTION = "HAVERSACK_MAX_DESCRIPTION"


def max_description() -> int:
    """The longest tool description allowed: ``$HAVERSACK_MAX_DESCRIPTION`` or 1024."""
    raw = os.environ.get(ENV_MAX_DESCRIPTION, "").strip()
    if not raw:
        return DEFAULT_MAX_DESCRIPTION
    if not raw.isdigit() or int(raw) < 1:
        raise PromptValidationError(
            f"{ENV_MAX_DESCRIPTION}={raw!r} is not a positive whole number of characters; "
            f"unset it for the default ({DEFAULT_MAX_DESCRIPTION}, OpenAI's limit)."
        )
    return int(raw)


#: Control characters other than newline and tab: invisible to a reader, and some providers
#: refuse them.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class ToolHandler(Protocol[ParamsT_contra, ResultT]):
    """``handler(params, *, context) -> ToolResult`` (or an awaitable of one)."""

    def __call__(
        self, params: ParamsT_contra, /, *, context: ToolContext
    ) -> ToolResult[ResultT] | Awaitable[ToolResult[ResultT]]: ...


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """Hints about a tool's effects, named as MCP names them; ``None`` means unspecified.

    The executor skips the transaction snapshot for ``read_only`` tools. ``title`` is a
    name for people (an MCP client shows it; ``None``: the tool's name in words).
    """

    read_only: bool = False
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    title: str | None = None


# No slots=True: on Python 3.11 and 3.12 the frozen __setattr__ of a slotted generic dataclass
# breaks ``ToolExample[P, R](...)`` (typing's __orig_class__ assignment raises TypeError).
@dataclass(frozen=True)
class ToolExample(Generic[ParamsT, ResultT]):
    """A worked call: ``input`` must be the tool's params, ``output`` its result value.

    Examples are documentation and test data, not model input: construction checks their
    types, :func:`haversack.testing.check_examples` runs them through the handler, and no
    adapter, ``haversack tools`` or the MCP server sends them to the model. Put what the
    model must know in the description.
    """

    description: str
    input: ParamsT
    output: ResultT


@dataclass(frozen=True, eq=False)
class Tool(Specializable, Generic[ParamsT, ResultT]):
    """A typed function-calling affordance. Create it as ``Tool[Params, Result](...)``.

    ``Params`` is a dataclass or ``None``; ``Result`` a dataclass, ``None`` or a sequence of
    dataclasses. The handler has the shape ``handler(params, *, context)`` and returns a
    ``ToolResult`` (sync or async). Every rule is checked here; a violation raises
    :class:`PromptValidationError` naming the tool.
    """

    name: str
    description: str
    handler: ToolHandler[ParamsT, ResultT] | None
    examples: Sequence[ToolExample[ParamsT, ResultT]] = ()
    annotations: ToolAnnotations = field(default_factory=ToolAnnotations)
    original_name: str = ""
    params_type: type[ParamsT] | None = field(init=False, repr=False)
    result_type: type[Any] | None = field(init=False, repr=False)
    result_is_sequence: bool = field(init=False, repr=False)
    is_async: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        args = type(self).__type_args__
        if args is None or len(args) != 2:
            raise PromptValidationError(
                "Tool needs its type arguments: create it as Tool[ParamsType, ResultType](...) "
                "(use None for a tool without params or without a result value).",
                tool_name=self.name if isinstance(self.name, str) else None,
            )
        _check_name(self.name)
        set_ = object.__setattr__
        if not self.original_name:
            # Renaming (a pack's prefix) keeps the original so ${tool:x} references resolve.
            set_(self, "original_name", self.name)
        set_(self, "description", _clean_description(self.description, what="Tool", tool=self.name))
        types = _checked_types.get(args)
        if types is None:
            types = _params_type(args[0], self.name), *_result_type(args[1], self.name)
            _checked_types[args] = types  # valid type arguments are checked once per pair
        params_type, result_type, is_seq = types
        set_(self, "params_type", params_type)
        set_(self, "result_type", result_type)
        set_(self, "result_is_sequence", is_seq)
        if not isinstance(self.annotations, ToolAnnotations):
            raise PromptValidationError(
                "Tool annotations must be a ToolAnnotations instance.", tool_name=self.name
            )
        is_async = False
        if self.handler is not None:
            is_async = _check_handler(self.handler, self.name)
        set_(self, "is_async", is_async)
        set_(self, "examples", tuple(self.examples))
        for example in self.examples:
            self._check_example(example)

    def tool_references(self) -> frozenset[str]:
        """The original names this description refers to as ``${tool:name}``."""
        if "${tool:" not in self.description:
            return frozenset()
        return frozenset(TOOL_REFERENCE.findall(self.description))

    def _check_example(self, example: object) -> None:
        if not isinstance(example, ToolExample):
            raise PromptValidationError(
                f"Tool examples must be ToolExample instances, got {type(example).__name__}.",
                tool_name=self.name,
            )
        _clean_description(example.description, what="Tool example", tool=self.name)
        expected = self.params_type
        if expected is None:
            if example.input is not None:
                raise PromptValidationError(
                    "Example input must be None: the tool takes no params.", tool_name=self.name
                )
        elif not isinstance(example.input, expected):
            raise PromptValidationError(
                f"Example input must be a {expected.__qualname__}, got "
                f"{type(example.input).__qualname__}.",
                tool_name=self.name,
                dataclass_type=expected,
            )
        self._check_example_output(example.output)

    def _check_example_output(self, output: object) -> None:
        rtype = self.result_type
        if rtype is None:
            ok = output is None
        elif self.result_is_sequence:
            ok = (
                isinstance(output, Sequence)
                and not isinstance(output, str)
                and all(isinstance(item, rtype) for item in output)
            )
        else:
            ok = isinstance(output, rtype)
        if not ok:
            want = "None" if rtype is None else rtype.__qualname__
            if self.result_is_sequence:
                want = f"a sequence of {want}"
            raise PromptValidationError(
                f"Example output must be {want}, got {type(output).__qualname__}.",
                tool_name=self.name,
                dataclass_type=rtype,
            )


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PromptValidationError(
            f"Tool name {name!r} is invalid: use 1-64 characters from lowercase ASCII letters, "
            "digits, '_' and '-' (no spaces, no dots).",
            tool_name=name if isinstance(name, str) else None,
        )


def _clean_description(text: object, *, what: str, tool: str) -> str:
    if not isinstance(text, str):
        raise PromptValidationError(f"{what} description must be a string.", tool_name=tool)
    stripped = text.strip()
    bad = _CONTROL.search(stripped)
    if bad is not None:
        raise PromptValidationError(
            f"{what} description contains the control character {bad.group()!r} at "
            f"{bad.start()}; only newlines and tabs are allowed.",
            tool_name=tool,
        )
    limit = max_description()
    if not 1 <= len(stripped) <= limit:
        raise PromptValidationError(
            f"{what} description must be 1-{limit} characters after stripping, got "
            f"{len(stripped)}"
            + (
                f"; {limit} is OpenAI's limit: shorten it, or set {ENV_MAX_DESCRIPTION} "
                "higher if you only use providers that accept more (Anthropic, MCP clients)."
                if limit == DEFAULT_MAX_DESCRIPTION and stripped
                else "."
            ),
            tool_name=tool,
        )
    return stripped


def _params_type(tp: object, tool: str) -> type[Any] | None:
    if tp is None or tp is type(None):
        return None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return tp
    raise PromptValidationError(
        f"Tool params type must be a dataclass or None, got {type_name(tp)}.", tool_name=tool
    )


_SEQUENCE_ORIGINS = (list, tuple, collections.abc.Sequence)
_checked_types: dict[tuple[object, ...], tuple[type[Any] | None, type[Any] | None, bool]] = {}


def _result_type(tp: object, tool: str) -> tuple[type[Any] | None, bool]:
    if tp is None or tp is type(None):
        return None, False
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return tp, False
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in _SEQUENCE_ORIGINS:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            args = ()
        item = args[0] if args else None
        if isinstance(item, type) and dataclasses.is_dataclass(item):
            return item, True
    raise PromptValidationError(
        "Tool result type must be a dataclass, None, or a sequence of dataclasses "
        f"(list[X], tuple[X, ...], Sequence[X]); got {type_name(tp)}.",
        tool_name=tool,
    )


SIGNATURE_HELP = "handler(params, *, context) -> ToolResult"


def _check_handler(handler: object, tool: str) -> bool:
    """Check the handler's shape; return whether it is a coroutine function."""
    if not callable(handler):
        raise PromptValidationError(
            f"Tool handler must be callable, got {type(handler).__name__}.", tool_name=tool
        )
    code: Any = getattr(handler, "__code__", None)
    defaults: Any = getattr(handler, "__defaults__", None)
    if code is not None and inspect.isfunction(cast(Any, handler)):
        # Fast path for plain functions: building an inspect.Signature costs ~10x more.
        flags = code.co_flags
        ok = (
            code.co_argcount == 1
            and code.co_posonlyargcount <= 1
            and code.co_kwonlyargcount == 1
            and code.co_varnames[1] == "context"
            and not flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
            and not defaults
        )
        if ok:
            # The code flag is what iscoroutinefunction reads, minus its unwrapping overhead;
            # the marker is markcoroutinefunction's (Python 3.12+).
            return bool(flags & inspect.CO_COROUTINE) or (
                hasattr(handler, "_is_coroutine_marker") and inspect.iscoroutinefunction(handler)
            )
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError) as exc:
        raise PromptValidationError(
            f"Cannot read the handler's signature ({exc}); it must be {SIGNATURE_HELP}.",
            tool_name=tool,
        ) from exc
    params = list(signature.parameters.values())
    positional = [
        p
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    keyword = [p for p in params if p.kind is p.KEYWORD_ONLY]
    ok = (
        len(params) == 2
        and len(positional) == 1
        and len(keyword) == 1
        and keyword[0].name == "context"
    )
    if not ok:
        raise PromptValidationError(
            f"Tool handler {getattr(handler, '__qualname__', handler)!r} has signature "
            f"{signature}; it must be {SIGNATURE_HELP}: exactly one positional parameter "
            "and a keyword-only 'context'.",
            tool_name=tool,
        )
    call = getattr(handler, "__call__", None)  # noqa: B004 - callable objects
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(call)
