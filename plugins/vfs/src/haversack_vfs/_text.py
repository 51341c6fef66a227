"""Text helpers: UTF-8 sizes and line windows (a line ends at ``\\n``, ending kept)."""

from __future__ import annotations

from ._errors import InvalidArgumentError

__all__ = ["count_lines", "line_window", "utf8_size"]


def utf8_size(content: object, *, what: str = "content", path: str | None = None) -> int:
    """Size of ``content`` in UTF-8 bytes; refuse non-strings and unpaired surrogates."""
    if not isinstance(content, str):
        raise InvalidArgumentError(
            f"The {what} must be text (a string), got {type(content).__name__}.", path=path
        )
    if content.isascii():
        return len(content)
    try:
        return len(content.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidArgumentError(
            f"The {what} contains an unpaired surrogate at character {exc.start}; it is not "
            "valid Unicode text. Remove or replace that character.",
            path=path,
        ) from None


def count_lines(text: str) -> int:
    """Number of lines: a final line without ``\\n`` counts, the empty text has none."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def line_window(text: str, offset: int, limit: int | None) -> tuple[str, int]:
    """The exact text of lines ``offset`` .. ``offset + limit`` and the total line count.

    Line endings (``\\n`` or ``\\r\\n``) stay attached to their line, so consecutive windows
    concatenate back to ``text`` byte for byte.
    """
    pieces = text.split("\n")
    total = len(pieces) - 1 if pieces[-1] == "" else len(pieces)
    start = min(offset, total)
    end = total if limit is None else min(total, offset + limit)
    if start >= end:
        return "", total
    window = "\n".join(pieces[start:end])
    if end < len(pieces):  # that last line had a newline after it
        window += "\n"
    return window, total
