"""``Section``: a node of the prompt tree carrying text, tools and policies."""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from ._policy import ToolPolicy
from ._specializable import Specializable, type_name
from ._tool import Tool
from .errors import PromptValidationError

__all__ = ["Section"]

ParamsT = TypeVar("ParamsT")

_KEY = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")

EnabledPredicate = Callable[[], bool] | Callable[[Any], bool]


class Section(Specializable, Generic[ParamsT]):
    """A titled node of the prompt tree; subclasses supply the body text.

    ``Section[Params]`` (or a subclass such as ``MarkdownSection[Params]``) declares the
    params dataclass the section renders with; an unsubscripted section takes no params.
    The base class renders only its heading, which makes it a grouping node.

    ``enabled`` is ``None`` (always), a bool, or a predicate taking no argument or the
    section's params; a disabled section contributes neither text nor tools, and neither
    do its children. ``policies`` govern the tools of this section and its children.
    """

    __slots__ = (
        "_enabled",
        "_enabled_takes_params",
        "children",
        "default_params",
        "key",
        "params_type",
        "policies",
        "title",
        "tools",
    )

    def __init__(
        self,
        *,
        title: str,
        key: str,
        default_params: ParamsT | None = None,
        children: Sequence[Section[Any]] = (),
        enabled: EnabledPredicate | bool | None = None,
        tools: Sequence[Tool[Any, Any]] = (),
        policies: Sequence[ToolPolicy] = (),
    ) -> None:
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise PromptValidationError(
                f"Section key {key!r} is invalid: it must match ^[a-z0-9][a-z0-9._-]{{0,63}}$ "
                "(lowercase; keys are not lower-cased for you).",
                section_path=(key,) if isinstance(key, str) else (),
            )
        self.key: str = key
        if not isinstance(title, str) or not title.strip():
            raise PromptValidationError(
                "Section title must be a non-empty string.", section_path=(key,)
            )
        self.title: str = title.strip()
        self.params_type: type[ParamsT] | None = self._declared_params_type()
        if default_params is not None:
            if self.params_type is None:
                raise PromptValidationError(
                    "Section takes no params but default_params was given; declare the params "
                    "type as Section[Params] / MarkdownSection[Params].",
                    section_path=(key,),
                    dataclass_type=type(default_params),
                )
            if not isinstance(default_params, self.params_type):
                raise PromptValidationError(
                    f"default_params must be a {self.params_type.__qualname__}, got "
                    f"{type(default_params).__qualname__}.",
                    section_path=(key,),
                    dataclass_type=self.params_type,
                )
        self.default_params: ParamsT | None = default_params
        self.children: tuple[Section[Any], ...] = tuple(children)
        for child in self.children:
            if not isinstance(child, Section):
                raise PromptValidationError(
                    f"Section children must be Section instances, got {type(child).__name__}.",
                    section_path=(key,),
                )
        self.tools: tuple[Tool[Any, Any], ...] = tuple(tools)
        for item in self.tools:
            if not isinstance(item, Tool):
                raise PromptValidationError(
                    f"Section tools must be Tool instances, got {type(item).__name__}.",
                    section_path=(key,),
                )
        self.policies: tuple[ToolPolicy, ...] = tuple(policies)
        for policy in self.policies:
            if not isinstance(policy, ToolPolicy):
                raise PromptValidationError(
                    f"Section policies must implement ToolPolicy (name, check, on_result); got "
                    f"{type(policy).__name__}.",
                    section_path=(key,),
                )
        self._enabled = enabled
        self._enabled_takes_params = _predicate_takes_params(enabled, key)

    def _declared_params_type(self) -> type[ParamsT] | None:
        args = type(self).__type_args__
        if args is None:
            return None
        if len(args) != 1:
            raise PromptValidationError(
                f"{type(self).__name__} takes exactly one type argument (its params dataclass).",
                section_path=(self.key,),
            )
        tp = args[0]
        if tp is None or tp is type(None):
            return None
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return tp  # type: ignore[return-value]
        raise PromptValidationError(
            f"Section params type must be a dataclass, got {type_name(tp)}.",
            section_path=(self.key,),
        )

    @property
    def enabled_needs_params(self) -> bool:
        """Whether the ``enabled`` predicate is called with the section's params."""
        return self._enabled_takes_params

    def is_enabled(self, params: ParamsT | None) -> bool:
        """Evaluate ``enabled`` (``params`` is only used by a one-argument predicate)."""
        enabled = self._enabled
        if enabled is None:
            return True
        if isinstance(enabled, bool):
            return enabled
        if self._enabled_takes_params:
            return bool(enabled(params))  # type: ignore[call-arg]
        return bool(enabled())  # type: ignore[call-arg]

    def placeholders(self) -> frozenset[str]:
        """Names of the params fields the body refers to (none for the base class)."""
        return frozenset()

    def tool_references(self) -> frozenset[str]:
        """Original tool names the body refers to as ``${tool:name}``."""
        return frozenset()

    def conditional_tool_references(self) -> frozenset[str]:
        """Original tool names the body names only in text that exists while a tool does
        (``${if tool:x}`` blocks): they need not exist (none for the base class)."""
        return frozenset()

    def kept_tool_references(self, offered: frozenset[str]) -> frozenset[str]:
        """The tool names of the text kept when the tools ``offered`` (original names of
        the conditional references the render offers) exist."""
        return self.tool_references()

    def render_body(self, params: ParamsT | None, tool_names: dict[str, str]) -> str:
        """The body text under the heading; ``tool_names`` maps referenced names to actual ones."""
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(key={self.key!r}, title={self.title!r})"


def _predicate_takes_params(enabled: object, key: str) -> bool:
    if enabled is None or isinstance(enabled, bool):
        return False
    if not callable(enabled):
        raise PromptValidationError(
            f"enabled must be None, a bool or a callable, got {type(enabled).__name__}.",
            section_path=(key,),
        )
    try:
        signature = inspect.signature(enabled)
    except (TypeError, ValueError):
        return True
    required = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    if len(required) > 1:
        raise PromptValidationError(
            f"enabled predicate takes {len(required)} arguments; it must take none or the "
            "section's params.",
            section_path=(key,),
        )
    return len(required) == 1
