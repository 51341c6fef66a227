"""Asking the MCP client's user whether a call a policy held may run (form elicitation).

The client must have declared the ``elicitation`` capability (form mode) at ``initialize``;
otherwise, and whenever asking fails, times out or is answered with anything but an
explicit approval, the call is refused and the model is told why and how to go on.
"""

from __future__ import annotations

import json
import unicodedata
from typing import TYPE_CHECKING, Any

from haversack._approval import Approval, PendingApproval, RawArguments, decode_arguments

if TYPE_CHECKING:
    from haversack._arguments import Arguments

__all__ = [
    "APPROVAL_SCHEMA",
    "MAX_REASON_CHARS",
    "MAX_SHOWN_CHARS",
    "approval_message",
    "ask_approval",
    "can_elicit",
    "cancelled_denial",
    "shown_arguments",
]

MAX_SHOWN_CHARS = 20_000
"""The longest argument text shown for approval; a longer call is refused without asking
(a person cannot check what they cannot read, and a cut-off text would approve unseen
arguments)."""

MAX_REASON_CHARS = 1_000
"""How much of the user's reason for a refusal the model is told."""

#: The form: one boolean and one optional string, the flat object of primitive fields the
#: MCP specification allows in ``requestedSchema``.
APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Run the call now, with exactly the arguments shown.",
            "default": False,
        },
        "reason": {
            "type": "string",
            "title": "Reason",
            "description": "Optional: why you refuse it (the model is told).",
            "maxLength": MAX_REASON_CHARS,
        },
    },
    "required": ["approve"],
}

_DO_NOT_RETRY = "Do not retry it as it is"


def can_elicit(ctx: Any) -> bool:
    """Whether the client of ``ctx`` declared form elicitation at ``initialize``.

    An ``elicitation`` capability without ``form`` or ``url`` means form mode (how the
    specification reads clients from before the two modes existed).
    """
    capabilities = ctx.session.client_capabilities
    elicitation = None if capabilities is None else capabilities.elicitation
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None


def shown_arguments(arguments: Arguments) -> str:
    """The call's arguments as a person reads them: indented JSON in the model's key order,
    every control, format or separator character in strings escaped (so a hostile model
    cannot hide text with bidirectional overrides or zero-width characters)."""
    decoded = decode_arguments(arguments)
    if isinstance(decoded, RawArguments):
        return _escape(json.dumps(str(decoded), ensure_ascii=False))
    return _escape(json.dumps(decoded, indent=2, ensure_ascii=False, default=repr))


def _escape(text: str) -> str:
    # json.dumps escaped every character below U+0020 inside strings already; the newlines
    # left are the indentation's.
    out: list[str] = []
    for char in text:
        if char != "\n" and unicodedata.category(char) in _HIDDEN:
            code = ord(char)
            if code <= 0xFFFF:
                out.append(f"\\u{code:04x}")
            else:
                high, low = _surrogates(code)
                out.append(f"\\u{high:04x}\\u{low:04x}")
        else:
            out.append(char)
    return "".join(out)


_HIDDEN = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})


def _surrogates(code: int) -> tuple[int, int]:
    code -= 0x10000
    return 0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)


def approval_message(held: PendingApproval, shown: str) -> str:
    """What the client shows the user: which tool, with which arguments, and why."""
    return (
        f"The model wants to call the tool {held.tool_name!r} with these arguments:\n\n"
        f"{shown}\n\n"
        f"It needs your approval: {held.reason} (policy {held.policy!r}).\n"
        "Approve to run it exactly as shown. Otherwise it is not run, and the model is told "
        "that you refused it (and your reason, if you give one)."
    )


async def ask_approval(ctx: Any, held: PendingApproval, timeout_s: float) -> Approval:
    """The user's answer about ``held``, asked with ``elicitation/create`` over the request
    ``ctx`` (on Streamable HTTP it rides that request's response stream).

    An approval covers exactly the arguments shown (it carries their hash: if the held
    call's arguments differ when it is resumed, the approval is void). Everything but an
    accepted form with ``approve: true`` is a denial whose reason tells the model what
    happened and how to go on: no elicitation capability, arguments too long to show,
    decline, cancel, ``approve: false`` (with the user's reason), an answer that does not
    say, a client error and no answer within ``timeout_s`` (the SDK then sends the client
    ``notifications/cancelled`` for the request). Cancelling the awaiting task cancels the
    request the same way and propagates.
    """
    import anyio
    from mcp.shared.exceptions import MCPError
    from pydantic import ValidationError

    if not can_elicit(ctx):
        return held.deny(
            f"{held.tool_name} needs a person's approval ({held.reason}), and this MCP "
            "client offers no way to ask for it (it did not declare the elicitation "
            "capability). Do not retry the call: tell the user what you want to do and why, "
            "so they can do it themselves or change the approval settings."
        )
    shown = shown_arguments(held.arguments)
    if len(shown) > MAX_SHOWN_CHARS:
        return held.deny(
            f"its arguments are too long to show a person for approval ({len(shown)} "
            f"characters; at most {MAX_SHOWN_CHARS}). {_DO_NOT_RETRY}: make the change in "
            "smaller calls, or tell the user what you want to do."
        )
    result = None
    with anyio.move_on_after(timeout_s) as waited:
        try:
            result = await ctx.session.elicit_form(
                approval_message(held, shown),
                APPROVAL_SCHEMA,
                related_request_id=ctx.request_id,
            )
        except MCPError as exc:
            return held.deny(
                f"the client could not ask the user for approval ({exc}). Do not retry the "
                "call: tell the user what you want to do and why."
            )
        except ValidationError:
            return held.deny(
                "the client's answer to the approval request was not a valid elicitation "
                "result. Do not retry at once; ask the user whether you should go ahead."
            )
    if result is None or waited.cancelled_caught:
        return held.deny(
            f"no one answered the approval request within {timeout_s:g} s. Do not retry at "
            "once: tell the user what you want to do, and try again when they are there to "
            "approve it."
        )
    if result.action == "decline":
        return held.deny(
            f"the user declined it. {_DO_NOT_RETRY}; ask the user what they want instead, "
            "or go on without it."
        )
    if result.action == "cancel":
        return held.deny(
            "the user dismissed the approval request without deciding. Do not retry at "
            "once; ask the user whether you should go ahead."
        )
    content = result.content or {}
    approve = content.get("approve")
    if approve is True:
        return held.approve()
    if approve is False:
        reason = _reason(content.get("reason"))
        if reason:
            return held.deny(
                f"the user refused it: {reason}. {_DO_NOT_RETRY}; take their reason into "
                "account, or ask them how to go on."
            )
        return held.deny(
            f"the user refused it. {_DO_NOT_RETRY}; ask the user what they want instead."
        )
    return held.deny(
        "the client's answer did not say whether to run it (the form's boolean 'approve' "
        "was missing). Do not retry at once; ask the user whether you should go ahead."
    )


def _reason(value: object) -> str:
    if not isinstance(value, str):
        return ""
    text = " ".join(value.split())  # one line, whatever the client sent
    if len(text) > MAX_REASON_CHARS:
        text = text[: MAX_REASON_CHARS - 3] + "..."
    return _escape(text)


def cancelled_denial(held: PendingApproval) -> Approval:
    """The answer recorded for a held call whose ``tools/call`` was cancelled (or whose
    client went away) while its approval was being asked; nobody reads it but the log."""
    return held.deny("the client cancelled the call while the user was being asked.")
