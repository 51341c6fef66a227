"""The one glob dialect of the project: ``compile_glob`` matches normalised relative paths.

Rules (each pinned by ``tests/core/test_glob.py``):

* Patterns are normalised with :func:`haversack.normalize_path` first, so ``/workspace/src/*.py``,
  ``./src/*.py`` and ``src//*.py`` are one pattern; ``..`` is rejected.
* ``*`` matches any run of characters and ``?`` exactly one, neither ever crossing ``/``:
  ``*.py`` matches ``a.py`` but not ``src/a.py``. Both match a leading dot (``*`` matches
  ``.env``).
* ``[abc]``, ``[a-z]`` and ``[!abc]`` / ``[^abc]`` match one character of a class; a ``]``
  right after the opening bracket (or its ``!``) is literal, so ``[]]`` matches ``]``. Wrap a
  metacharacter in brackets to match it literally: ``[*]``, ``[?]``, ``[[]``. There is no
  backslash escape; ``\\`` is an ordinary character.
* ``**`` as a whole segment matches zero or more directories: ``**/*.py`` matches ``a.py`` and
  ``x/y/a.py``, ``src/**/test_*.py`` matches ``src/test_a.py``. A trailing ``**`` matches
  everything below: ``src/**`` matches ``src/a`` and ``src/x/y`` but not ``src`` itself.
  ``**`` inside a segment (``a**``, ``**.py``) is an error, so a pattern never means two things.
* Matching is case-sensitive and whole-path (the pattern must match the entire path).

The translation to :mod:`re` wraps every ``*`` but the last of a segment, and every ``**``
but the last, in an atomic group that takes the leftmost occurrence of what follows. That is
the classic greedy wildcard algorithm, so matching time stays polynomial (quadratic at worst)
whatever the pattern, instead of the exponential backtracking a naive translation of
``*a*a*a*a*b`` gives.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from haversack.errors import InvalidPathError

from ._paths import WORKSPACE_MOUNT, normalize_path

__all__ = ["DEFAULT_MAX_GLOB_CHARS", "GlobMatcher", "compile_glob"]

#: Longest glob pattern accepted by default, in characters.
DEFAULT_MAX_GLOB_CHARS: Final = 1_000

_SEGMENT: Final = "[^/]+"
_META: Final = frozenset("*?[")


class GlobMatcher:
    """A compiled glob pattern; ``match(path)`` tests one normalised relative path."""

    __slots__ = ("_regex", "pattern", "prefix")

    def __init__(self, pattern: str, prefix: str, regex: re.Pattern[str]) -> None:
        #: The normalised pattern.
        self.pattern = pattern
        #: The literal leading directories every match lies under (``"src"`` for
        #: ``src/**/*.py``, ``""`` for ``*.py``): walk only that subtree.
        self.prefix = prefix
        self._regex = regex

    def match(self, path: str) -> bool:
        """Whether the normalised relative ``path`` matches the whole pattern.

        The root (``""``) never matches: it is not a file.
        """
        return bool(path) and self._regex.fullmatch(path) is not None

    def __call__(self, path: str) -> bool:
        """Same as :meth:`match`, so a matcher can be passed where a predicate is wanted."""
        return self.match(path)

    def __repr__(self) -> str:
        return f"GlobMatcher({self.pattern!r})"


def compile_glob(
    pattern: str, *, mount_point: str = WORKSPACE_MOUNT, max_chars: int = DEFAULT_MAX_GLOB_CHARS
) -> GlobMatcher:
    """Compile ``pattern`` (see the module rules) into a cached :class:`GlobMatcher`.

    Raises :class:`InvalidPathError` for a pattern longer than ``max_chars`` characters (a
    match costs up to pattern x path length), an empty pattern, ``..``, ``**`` inside a
    segment or an unclosed or reversed ``[...]`` class, with a message saying how to fix it.
    """
    if not isinstance(pattern, str):
        raise InvalidPathError(f"Glob pattern must be a string, got {type(pattern).__name__}.")
    if len(pattern) > max_chars:
        raise InvalidPathError(
            f"The glob pattern is {len(pattern)} characters long; the limit is {max_chars}. "
            "Use a shorter pattern such as '**/*.py' or 'src/**'.",
            path=pattern[:200],
        )
    return _compile_glob(pattern, mount_point)


@lru_cache(maxsize=1024)
def _compile_glob(pattern: str, mount_point: str) -> GlobMatcher:
    normalised = normalize_path(pattern, mount_point=mount_point)
    if not normalised:
        raise InvalidPathError(
            f"Glob pattern {pattern!r} is empty after normalisation; use '**' to match every "
            "file or '*' for the files at the top level.",
            path=pattern,
        )
    segments = normalised.split("/")
    prefix_parts: list[str] = []
    for segment in segments[:-1]:
        if _META.intersection(segment):
            break
        prefix_parts.append(segment)
    regex = _translate(segments, pattern)
    return GlobMatcher(normalised, "/".join(prefix_parts), re.compile(regex, re.DOTALL))


def _translate(segments: list[str], original: str) -> str:
    """Regex source for the whole path: chunks of segment patterns separated by ``**``."""
    items: list[list[str] | None] = []  # None stands for a ``**`` segment
    for segment in segments:
        if segment == "**":
            if items and items[-1] is None:
                continue  # ``**/**`` means the same as ``**``
            items.append(None)
        elif "**" in segment:
            raise InvalidPathError(
                f"Glob pattern {original!r}: '**' must be a whole path segment (as in "
                f"'**/*.py' or 'src/**'); inside the segment {segment!r} use a single '*'.",
                path=original,
            )
        else:
            regex = _translate_segment(segment, original)
            if items and items[-1] is not None:
                chunk = items[-1]
                assert chunk is not None
                chunk.append(regex)
            else:
                items.append([regex])

    out: list[str] = []
    need_sep = False
    index = 0
    while index < len(items):
        item = items[index]
        sep = "/" if need_sep else ""
        if item is not None:  # only the first chunk; later ones are consumed by their ``**``
            out.append(sep + "/".join(item))
            need_sep = True
            index += 1
            continue
        following = items[index + 1] if index + 1 < len(items) else None
        if following is None:
            out.append(f"{sep}{_SEGMENT}(?:/{_SEGMENT})*")  # trailing ``**``: one or more
        elif index + 2 >= len(items):
            out.append(f"{sep}(?:{_SEGMENT}/)*" + "/".join(following))
            need_sep = True
        else:
            # Leftmost occurrence of the chunk, committed: never worse than a later one.
            out.append(f"{sep}(?>(?:{_SEGMENT}/)*?" + "/".join(following) + "/)")
            need_sep = False
        index += 2
    return "".join(out)


def _translate_segment(segment: str, original: str) -> str:
    """Regex source for one segment; ``*`` runs are committed leftmost except the last."""
    chunks: list[list[str]] = [[]]
    i = 0
    n = len(segment)
    while i < n:
        ch = segment[i]
        if ch == "*":
            chunks.append([])
            i += 1
        elif ch == "?":
            chunks[-1].append("[^/]")
            i += 1
        elif ch == "[":
            regex, i = _translate_class(segment, i, original)
            chunks[-1].append(regex)
        else:
            chunks[-1].append(re.escape(ch))
            i += 1
    texts = ["".join(chunk) for chunk in chunks]
    if len(texts) == 1:
        return texts[0]
    middle = "".join(f"(?>[^/]*?{text})" for text in texts[1:-1])
    return f"{texts[0]}{middle}[^/]*{texts[-1]}"


def _translate_class(segment: str, start: int, original: str) -> tuple[str, int]:
    """Translate the ``[...]`` class opening at ``start``; return its regex and the next index."""
    i = start + 1
    negate = i < len(segment) and segment[i] in "!^"
    if negate:
        i += 1
    body_start = i
    if i < len(segment) and segment[i] == "]":
        i += 1  # a leading ``]`` is literal
    while i < len(segment) and segment[i] != "]":
        i += 1
    if i >= len(segment):
        raise InvalidPathError(
            f"Glob pattern {original!r}: the '[' in segment {segment!r} is never closed. "
            "Close the class with ']' (classes cannot contain '/'), or write '[[]' to match a "
            "literal '['.",
            path=original,
        )
    body = segment[body_start:i]
    parts: list[str] = []
    j = 0
    while j < len(body):
        if j + 2 < len(body) and body[j + 1] == "-":
            low, high = body[j], body[j + 2]
            if low > high:
                raise InvalidPathError(
                    f"Glob pattern {original!r}: the range '{low}-{high}' is reversed; write "
                    f"'{high}-{low}'.",
                    path=original,
                )
            parts.append(f"{re.escape(low)}-{re.escape(high)}")
            j += 3
        else:
            parts.append(re.escape(body[j]) if body[j] != "-" else r"\-")
            j += 1
    inner = "".join(parts)
    regex = f"[^/{inner}]" if negate else f"[{inner}]"
    return regex, i + 1
