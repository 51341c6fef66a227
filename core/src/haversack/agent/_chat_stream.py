"""A streamed Chat Completions reply assembled from its chunks, as real servers send them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from haversack.adapters import ToolCall

from ._provider import Reply
from ._records import Usage

__all__ = ["ChatStream", "UnreadableReplyError", "chat_reply"]


class UnreadableReplyError(Exception):
    """The server answered, but not with a reply this API can have (empty, garbage); the
    message says what came instead. Internal: the provider turns it into a ``ProviderError``
    naming the request, and never retries it (the same server answers the same).
    ``format`` is false when the reply is the API's format but cannot be made sense of."""

    def __init__(self, message: str, *, format: bool = True) -> None:
        super().__init__(message)
        self.format = format


@dataclass
class _Call:
    """One tool call as its chunks arrive: the pieces of each field, kept apart so a name
    sent whole in every chunk (llama.cpp's server does) can be told from a name in pieces."""

    ids: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    arguments: list[str] = field(default_factory=list)


class ChatStream:
    """Feeds on ``chat.completion.chunk`` objects; :meth:`reply` is the whole turn.

    The SDK's own accumulator joins every string piece, so a server that repeats the tool's
    name (or the call's id) in each chunk of the same call yields ``read_fileread_file``.
    Here a piece equal to what the same call already holds is a repeat, not more of it.
    """

    def __init__(self) -> None:
        self.chunks = 0
        self._text: list[str] = []
        self._calls: dict[int, _Call] = {}
        self._finish: str | None = None
        self._usage: Usage | None = None

    def add(self, chunk: Any) -> str:
        """Take one chunk; return its text (``""`` when it has none)."""
        self.chunks += 1
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self._usage = Usage(
                _count(getattr(usage, "prompt_tokens", 0)),
                _count(getattr(usage, "completion_tokens", 0)),
            )
        text = ""
        for choice in getattr(chunk, "choices", None) or ():
            if getattr(choice, "index", 0) not in (0, None):
                continue  # n > 1 is not asked for; a server that sends more, the first counts
            finish = getattr(choice, "finish_reason", None)
            if isinstance(finish, str):
                self._finish = finish
            delta = getattr(choice, "delta", None)
            piece = getattr(delta, "content", None)
            if isinstance(piece, str) and piece:
                self._text.append(piece)
                text += piece
            for call in getattr(delta, "tool_calls", None) or ():
                index = getattr(call, "index", None)
                slot = self._calls.setdefault(
                    index if isinstance(index, int) else len(self._calls), _Call()
                )
                _piece(slot.ids, getattr(call, "id", None))
                function = getattr(call, "function", None)
                _piece(slot.names, getattr(function, "name", None))
                _piece(slot.arguments, getattr(function, "arguments", None))
        return text

    def reply(self, tool_names: set[str]) -> Reply:
        """The assembled turn; a tool name is resolved against ``tool_names``."""
        if self.chunks == 0:
            raise UnreadableReplyError(
                "the server's stream ended without a single chunk (an empty reply; if the "
                "server answers without streaming, run with --no-stream, stream=False)"
            )
        if self._finish is None and not self._text and not self._calls:
            raise UnreadableReplyError(
                f"the server streamed {self.chunks} chunk(s) with no choice in them (no text, "
                "no tool call, no finish reason): not a chat completion"
            )
        calls = tuple(
            ToolCall(
                call_id=_joined(slot.ids) or None,
                name=_name(index, slot.names, tool_names),
                arguments="".join(slot.arguments),
            )
            for index, slot in sorted(self._calls.items())
        )
        stop = self._finish or "stop"
        return Reply(
            text="".join(self._text),
            calls=calls,
            usage=self._usage or Usage(),
            stop=stop,
            truncated=stop == "length",
        )


def _piece(pieces: list[str], value: object) -> None:
    if isinstance(value, str) and value:
        pieces.append(value)


def _joined(pieces: list[str]) -> str:
    """The pieces joined, a piece equal to all that came before it dropped as a repeat."""
    whole = ""
    for piece in pieces:
        if piece != whole:
            whole += piece
    return whole


def _name(index: int, pieces: list[str], tool_names: set[str]) -> str:
    plain = "".join(pieces)  # what the API specifies: the name in pieces
    deduplicated = _joined(pieces)
    if plain == deduplicated or plain in tool_names:
        return plain
    if deduplicated in tool_names:
        return deduplicated
    raise UnreadableReplyError(
        f"tool call {index} of the stream has a name sent in pieces that repeat "
        f"({' + '.join(repr(p) for p in pieces[:4])}{' + ...' if len(pieces) > 4 else ''}), "
        "and neither reading names a tool; run with --no-stream (stream=False) so the server "
        "sends each call whole",
        format=False,
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def chat_reply(completion: Any) -> Reply:
    """A non-streamed ``chat.completion`` as a :class:`Reply`; anything else (an HTML page,
    a JSON object without choices) an :class:`UnreadableReplyError` saying what came."""
    from haversack.adapters import openai as fmt

    if isinstance(completion, str | bytes):
        start = completion[:80].strip()
        raise UnreadableReplyError(
            f"the server answered with text, not a chat completion: {start!r}"
            if start
            else "the server answered with an empty body, not a chat completion"
        )
    choices = getattr(completion, "choices", None)
    if not choices:
        raise UnreadableReplyError("the server's reply has no choices (no message in it)")
    choice = choices[0]
    message = getattr(choice, "message", None)
    if message is None:
        raise UnreadableReplyError("the server's reply has a choice without a message")
    usage = getattr(completion, "usage", None)
    finish = getattr(choice, "finish_reason", None)
    text = getattr(message, "content", None)
    return Reply(
        text=text if isinstance(text, str) else "",
        calls=tuple(fmt.read_chat_tool_call(call) for call in message.tool_calls or ()),
        usage=Usage(_count(usage.prompt_tokens), _count(usage.completion_tokens))
        if usage
        else Usage(),
        stop=str(finish),
        truncated=finish == "length",
        raw=completion,
    )
