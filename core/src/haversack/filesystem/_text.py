"""Text helpers shared by the filesystems (in-memory and Podman's host workspace): UTF-8
encoding and sizes, line windows (a line ends at ``\\n``, ending kept), exact replacement.

Every helper bounds its own cost before doing the work: occurrences are counted in linear
time up to a small cap (:func:`count_occurrences`), and the size of a replacement is computed
arithmetically (``count x (len(new) - len(old))``) and checked against the per-file limit
before the new text is built, so a hostile edit costs at most one pass over the file and one
file-sized result.
"""

from __future__ import annotations

from typing import Final

from haversack.errors import InvalidArgumentError

from ._rules import DEFAULT_MAX_FILE_BYTES, file_size_error

__all__ = [
    "MATCH_COUNT_CAP",
    "check_old_text",
    "check_window",
    "count_lines",
    "count_occurrences",
    "encode_text",
    "line_window",
    "replace_exact",
    "replaced_size",
    "utf8_size",
]

#: Past this many occurrences an ambiguous match is reported as "at least N": counting
#: every overlapping occurrence of a long text is quadratic (each check costs its length).
MATCH_COUNT_CAP: Final = 20


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
    concatenate back to ``text`` byte for byte. Linear in ``text`` and never splits it into
    lines: memory is the window itself, however many lines the file has.
    """
    total = count_lines(text)
    start = min(offset, total)
    end = total if limit is None else min(total, offset + limit)
    if start >= end:
        return "", total
    begin = _line_start(text, start)
    stop = len(text) if end == total else _line_start(text, end, begin, start)
    return text[begin:stop], total


#: Characters counted per step when looking for the n-th line (one C-level count each).
_BLOCK: Final = 1 << 13


def _line_start(text: str, line: int, pos: int = 0, at: int = 0) -> int:
    """Index where 0-based ``line`` starts, scanning from ``pos`` (the start of line ``at``)."""
    need = line - at
    size = len(text)
    while need > 0:  # skip whole blocks with str.count, then walk the last one
        block_end = min(size, pos + _BLOCK)
        inside = text.count("\n", pos, block_end)
        if inside >= need:
            break
        need -= inside
        pos = block_end
    while need > 0:
        pos = text.index("\n", pos) + 1
        need -= 1
    return pos


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


def count_occurrences(
    content: str, old: str, *, start: int = 0, cap: int = MATCH_COUNT_CAP
) -> tuple[int, bool]:
    """Overlapping occurrences of ``old`` in ``content`` from ``start``, counted up to ``cap``.

    Returns ``(count, exact)``: ``exact`` is false when counting stopped at ``cap`` (there are
    at least ``cap``). Each step is one linear ``str.find``, so the cost is at most
    ``cap x (len(content) + len(old))`` however many occurrences there are.
    """
    count = 0
    index = content.find(old, start)
    while index >= 0:
        count += 1
        if count >= cap:
            return count, content.find(old, index + 1) < 0
        index = content.find(old, index + 1)
    return count, True


def replaced_size(size: int, count: int, old_size: int, new_size: int) -> int:
    """The UTF-8 size of a text of ``size`` bytes after ``count`` replacements of a text of
    ``old_size`` bytes by one of ``new_size`` bytes: arithmetic, nothing is built."""
    return size + count * (new_size - old_size)


def replace_exact(
    content: str,
    old: str,
    new: str,
    *,
    replace_all: bool,
    where: str,
    path: str,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
    content_bytes: int | None = None,
) -> tuple[str, int]:
    """``content`` with ``old`` (non-empty: :func:`check_old_text`) replaced by ``new``, and
    how many times it was replaced.

    ``old`` must be present; without ``replace_all`` it must occur exactly once (overlapping
    occurrences count), so an edit never lands somewhere the caller did not mean. ``where``
    names the file in messages. The result's size is computed before it is built and
    refused (:func:`~haversack.filesystem.file_size_error`) past ``max_bytes``;
    ``content_bytes`` is ``content``'s UTF-8 size when the caller knows it.
    """
    first = content.find(old)
    if first < 0:
        raise InvalidArgumentError(
            f"The text to replace was not found in {where}. Read the file again and copy the "
            "text exactly, including whitespace, indentation and line endings.",
            path=path,
        )
    if replace_all:
        count = content.count(old)  # non-overlapping, as str.replace replaces: linear
    else:
        if content.find(old, first + 1) >= 0:
            times, exact = count_occurrences(content, old, start=first)
            amount = f"{times}" if exact else f"at least {times}"
            raise InvalidArgumentError(
                f"The text to replace occurs {amount} times in {where}; include more of the "
                "surrounding lines so it matches exactly once, or set replace_all to replace "
                "every occurrence.",
                path=path,
            )
        count = 1
    size = content_bytes if content_bytes is not None else utf8_size(content, path=path)
    after = replaced_size(size, count, utf8_size(old, path=path), utf8_size(new, path=path))
    if after > max_bytes:
        raise file_size_error(path, where, after, max_bytes)
    if replace_all:
        return content.replace(old, new), count
    return content[:first] + new + content[first + len(old) :], 1
