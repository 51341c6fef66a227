"""The parse step of a tool call: the model's arguments into the tool's params.

Every refusal is worded here, once, as the model reads it (``Invalid arguments for 'greet':
...``). A parser is built per tool when the executor is created, together with the tool's
validator, so that no call (the first included) pays for building one; pydantic is imported
then, never by rendering a prompt.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._preview import preview
from .errors import ToolValidationError
from .serde._parse import parse_as, prepare

if TYPE_CHECKING:
    from ._tool import Tool

__all__ = ["ArgumentParser", "Arguments"]

#: What a caller may pass as a call's arguments: JSON text, a decoded mapping, or nothing.
Arguments = str | bytes | Mapping[str, Any] | None

_EMPTY_ARGUMENTS = frozenset({"", "{}", "null"})


class ArgumentParser:
    """Parses the arguments of one tool into its params; raises ``ToolValidationError``."""

    __slots__ = ("_heading", "_params_type", "_validate_json")

    def __init__(self, tool: Tool[Any, Any]) -> None:
        self._params_type = tool.params_type
        self._heading = f"Invalid arguments for {tool.name!r}"
        self._validate_json: Any = None
        if self._params_type is not None:
            validator = prepare(self._params_type)
            if validator is not None:
                self._validate_json = validator.validate_json

    def __call__(self, arguments: Arguments) -> Any:
        params_type = self._params_type
        if params_type is None:
            _refuse_unless_empty(arguments, self._heading)
            return None
        if type(arguments) is str and self._validate_json is not None:
            # JSON text, the usual case: what parse_as does with it, minus its dispatch.
            try:
                return self._validate_json(arguments, strict=True)
            except Exception:  # noqa: BLE001 - parse_as validates again and words the refusal
                return parse_as(params_type, arguments, self._heading)
        return parse_as(params_type, {} if arguments is None else arguments, self._heading)


def _refuse_unless_empty(arguments: Arguments, heading: str) -> None:
    """A tool without params accepts only an empty object, however it is spelled."""
    if arguments is None or arguments == {}:
        return
    if isinstance(arguments, str | bytes):
        text = arguments.decode(errors="replace") if isinstance(arguments, bytes) else arguments
        if text.strip() in _EMPTY_ARGUMENTS:
            return
        try:
            decoded = json.loads(text)
        except (ValueError, RecursionError):  # deep nesting overflows the C decoder's stack
            decoded = ...
        # Any spelling of an empty object ("{ }", "{\n}") means "no arguments".
        if decoded is None or decoded == {}:
            return
    raise ToolValidationError(
        f"{heading}: this tool takes no arguments, got {preview(arguments, 80)}; call it with {{}}."
    )
