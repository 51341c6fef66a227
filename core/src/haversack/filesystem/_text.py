"""Text helpers shared by the filesystems (in-memory and Podman's host workspace): UTF-8
encoding and sizes, line windows (a line ends at ``\\n``, ending kept), exact replacement."""

from __future__ import annotations

from haversack.errors import InvalidArgumentError

__all__ = [
    "check_old_text",
    "check_window",
    "count_lines",
    "encode_text",
    "line_window",
    "replace_exact",
    "utf8_size",
]


def utf8_size(content: object, *, what: str = "content", path: str | None = None) -> int:
    """Size of ``content`` in UTF-8 bytes; refuse non-strings and unpaired surrogates."""
    if isinstance(content, str) and content.isascii():
        return len(content)
    return len(encode_text(content, what=what, path=path))


def encode_text(content: object, *, what: str = "content", path: str | None = None) -> bytes:
    """``content`` as UTF-8; refuse non-strings and unpaired surrogates (``what`` names it)."""
    if not isinstance(content, str):
        raise InvalidArgumentError(
            f"The {what} must be text (a string), got {type(content).__name__}.", path=path
        )
    try:
        return content.encode("utf-8")
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


def check_window(offset: object, limit: object, path: str) -> None:
    """Refuse a read window that is not ``offset >= 0`` lines and ``limit >= 1`` (or ``None``)."""
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidArgumentError(
            f"offset must be a non-negative integer (0 is the first line), got {offset!r}.",
            path=path,
        )
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidArgumentError(
            f"limit must be a positive number of lines (or omitted for the rest of the "
            f"file), got {limit!r}.",
            path=path,
        )


def check_old_text(old: str, path: str) -> None:
    """Refuse an empty text to replace (checked before the file is even read)."""
    if not old:
        raise InvalidArgumentError(
            "The text to replace must not be empty; to write a whole file use write.",
            path=path,
        )


def replace_exact(
    content: str, old: str, new: str, *, replace_all: bool, where: str, path: str
) -> tuple[str, int]:
    """``content`` with ``old`` (non-empty: :func:`check_old_text`) replaced by ``new``, and
    how many times it was replaced.

    ``old`` must be present; without ``replace_all`` it must occur exactly once (overlapping
    occurrences count), so an edit never lands somewhere the caller did not mean. ``where``
    names the file in messages.
    """
    first = content.find(old)
    if first < 0:
        raise InvalidArgumentError(
            f"The text to replace was not found in {where}. Read the file again and copy the "
            "text exactly, including whitespace, indentation and line endings.",
            path=path,
        )
    if replace_all:
        return content.replace(old, new), content.count(old)
    if content.find(old, first + 1) >= 0:
        times = max(content.count(old), 2)
        raise InvalidArgumentError(
            f"The text to replace occurs {times} times in {where}; include more of the "
            "surrounding lines so it matches exactly once, or set replace_all to replace "
            "every occurrence.",
            path=path,
        )
    return content[:first] + new + content[first + len(old) :], 1
