"""Media a tool returns: images, audio, embedded resources and text, as MCP content blocks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import HaversackError

__all__ = [
    "MAX_CONTENT_BYTES",
    "Audio",
    "Content",
    "EmbeddedResource",
    "Image",
    "Text",
    "content_blocks",
]

MAX_CONTENT_BYTES = 10 * 1024 * 1024
"""The most bytes one result's media may hold: each block's ``data``/``blob``/``text``, and
all of a result's blocks together (MCP sends them base64-encoded in one JSON message, and a
client keeps the whole of it)."""

_MIME_PART = r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}"
_MIME = re.compile(rf"{_MIME_PART}/{_MIME_PART}", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Content:
    """The base of the content blocks a tool may return as its value (alone, or a list of
    them): the MCP server sends each as its own content block; every other provider shows
    the model :meth:`render`'s short text. Declare ``ToolResult[Image]`` for one kind, or
    ``ToolResult[list[Content]]`` for a list mixing them."""

    def render(self) -> str:
        """The text a provider without media blocks shows the model."""
        raise NotImplementedError

    def size(self) -> int:
        """How many bytes it holds (counted against :data:`MAX_CONTENT_BYTES`)."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Text(Content):
    """Text among media (an MCP ``TextContent`` block)."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise HaversackError(f"Text.text must be a str, got {type(self.text).__name__}.")
        _check_size("Text", len(self.text.encode("utf-8", "surrogatepass")))

    def render(self) -> str:
        return self.text

    def size(self) -> int:
        return len(self.text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True, slots=True)
class Image(Content):
    """An image (an MCP ``ImageContent`` block): its bytes and an ``image/*`` MIME type."""

    data: bytes
    mime_type: str = "image/png"

    def __post_init__(self) -> None:
        _check_media("Image", self.data, self.mime_type, "image")

    def render(self) -> str:
        return f"[{self.mime_type}, {len(self.data)} bytes]"

    def size(self) -> int:
        return len(self.data)


@dataclass(frozen=True, slots=True)
class Audio(Content):
    """Audio (an MCP ``AudioContent`` block): its bytes and an ``audio/*`` MIME type."""

    data: bytes
    mime_type: str = "audio/wav"

    def __post_init__(self) -> None:
        _check_media("Audio", self.data, self.mime_type, "audio")

    def render(self) -> str:
        return f"[{self.mime_type}, {len(self.data)} bytes]"

    def size(self) -> int:
        return len(self.data)


@dataclass(frozen=True, slots=True)
class EmbeddedResource(Content):
    """A resource's contents carried in the result (an MCP ``EmbeddedResource`` block):
    its ``uri``, an optional MIME type, and exactly one of ``text`` and ``blob``."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: bytes | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.uri, str) or not self.uri or len(self.uri) > 2048:
            raise HaversackError("EmbeddedResource.uri must be a non-empty str (at most 2048).")
        if any(ch.isspace() or ord(ch) < 0x20 for ch in self.uri):
            raise HaversackError(f"EmbeddedResource.uri {self.uri!r} has spaces or controls.")
        if self.mime_type is not None:
            _check_mime("EmbeddedResource", self.mime_type, None)
        if (self.text is None) == (self.blob is None):
            raise HaversackError("EmbeddedResource needs exactly one of text and blob.")
        if self.text is not None and not isinstance(self.text, str):
            raise HaversackError("EmbeddedResource.text must be a str.")
        if self.blob is not None and not isinstance(self.blob, bytes):
            raise HaversackError("EmbeddedResource.blob must be bytes.")
        _check_size("EmbeddedResource", self.size())

    def render(self) -> str:
        kind = self.mime_type or ("text" if self.text is not None else "binary")
        return f"[resource {self.uri}, {kind}, {self.size()} bytes]"

    def size(self) -> int:
        if self.text is not None:
            return len(self.text.encode("utf-8", "surrogatepass"))
        return len(self.blob or b"")


def _check_media(kind: str, data: object, mime_type: object, family: str) -> None:
    if not isinstance(data, bytes):
        raise HaversackError(f"{kind}.data must be bytes, got {type(data).__name__}.")
    _check_mime(kind, mime_type, family)
    _check_size(kind, len(data))


def _check_mime(kind: str, mime_type: object, family: str | None) -> None:
    if not isinstance(mime_type, str) or not _MIME.fullmatch(mime_type):
        raise HaversackError(f"{kind}.mime_type must be a MIME type like 'x/y', got {mime_type!r}.")
    if family is not None and not mime_type.startswith(family + "/"):
        raise HaversackError(f"{kind}.mime_type must be {family}/*, got {mime_type!r}.")


def _check_size(kind: str, size: int) -> None:
    if size > MAX_CONTENT_BYTES:
        raise HaversackError(
            f"{kind} holds {size} bytes; a tool result's media may hold at most "
            f"{MAX_CONTENT_BYTES} (haversack.MAX_CONTENT_BYTES)."
        )


def content_blocks(value: object) -> tuple[Content, ...] | None:
    """``value`` as content blocks when it is one :class:`Content` or a non-empty sequence of
    only such blocks; ``None`` for any other value (rendered as text)."""
    if isinstance(value, Content):
        return (value,)
    if (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes)
        and value
        and all(isinstance(item, Content) for item in value)
    ):
        return tuple(value)
    return None
