"""Reading one JSON-RPC frame from a client, answering malformed ones as JSON-RPC 2.0 says."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCError

__all__ = ["MAX_FRAME_BYTES", "MAX_NESTING", "decode_frame", "frame_error"]

MAX_FRAME_BYTES = 4 * 1024 * 1024
"""The largest message accepted (the SDK's HTTP body limit, applied to stdio lines too)."""

MAX_NESTING = 200
"""How deep arrays and objects may nest; pydantic-core's JSON parser stops there, in C time."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def frame_error(code: int, message: str, request_id: Any = None) -> JSONRPCError:
    """A JSON-RPC error response; ``request_id`` is ``None`` when it cannot be determined."""
    from mcp_types import ErrorData, JSONRPCError

    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


def _request_id(obj: dict[str, Any]) -> str | int | None:
    value = obj.get("id")
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def decode_frame(data: bytes | str) -> SessionMessage | JSONRPCError:
    """One client frame as a message for the server, or the error response owed for it.

    Invalid JSON and JSON nested deeper than :data:`MAX_NESTING` are parse errors
    (-32700, ``id: null``); anything else that is not a single JSON-RPC message (a batch
    array, a scalar, an object without ``jsonrpc: "2.0"``) is an invalid request (-32600,
    with the request's id when it has a usable one). The work is bounded by the frame
    size: the parser is linear and stops at the nesting limit.
    """
    import pydantic_core
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter
    from pydantic import ValidationError

    if len(data) > MAX_FRAME_BYTES:
        return frame_error(
            INVALID_REQUEST, f"Invalid request: the message exceeds {MAX_FRAME_BYTES} bytes."
        )
    try:
        obj = pydantic_core.from_json(data, allow_inf_nan=False)
    except ValueError as exc:
        reason = str(exc)
        if "recursion limit" in reason:
            reason = f"arrays and objects nest deeper than {MAX_NESTING} levels"
        return frame_error(PARSE_ERROR, f"Parse error: {reason}.")
    if isinstance(obj, list):
        return frame_error(
            INVALID_REQUEST,
            "Invalid request: batches (JSON arrays) are not supported; send one message per frame.",
        )
    if not isinstance(obj, dict):
        return frame_error(
            INVALID_REQUEST,
            f"Invalid request: expected a JSON-RPC message object, got {type(obj).__name__}.",
        )
    if "id" in obj and obj["id"] is not None and _request_id(obj) is None:
        # Parsed leniently this would pass as a notification (no id) and never be answered.
        return frame_error(
            INVALID_REQUEST, "Invalid request: id must be a string, a number or null."
        )
    try:
        message = jsonrpc_message_adapter.validate_python(obj, by_name=False)
    except ValidationError as exc:
        fields = ", ".join(sorted({str(e["loc"][-1]) for e in exc.errors() if e["loc"]}))
        return frame_error(
            INVALID_REQUEST,
            "Invalid request: not a JSON-RPC 2.0 message"
            + (f" (check {fields})" if fields else "")
            + ".",
            _request_id(obj),
        )
    return SessionMessage(message)
