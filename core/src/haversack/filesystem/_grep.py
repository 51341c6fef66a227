"""Line-oriented regular-expression search on RE2, a linear-time engine.

Why RE2 (``google-re2``) rather than :mod:`re` or ``regex`` with a timeout: the model writes
the pattern, and a backtracking engine can take exponential time on ``(a+)+$`` over one long
line. RE2 guarantees time linear in the text for every pattern, so there is nothing to time
out, no worker thread to abandon and no partial result; it also scans a whole file in one
call with its DFA instead of one call per line. The price is RE2 syntax: no backreferences
and no lookaround, which the error message says.

Semantics: a line ends at ``\\n``; the pattern is searched in each line without its ending
(``\\n`` or ``\\r\\n``), so ``^`` and ``$`` mean the line's start and end.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, Final, Protocol

from haversack.errors import InvalidArgumentError, InvalidPatternError

from ._protocol import GrepMatch, GrepResult

__all__ = ["GrepPattern", "compile_grep_pattern", "grep_texts"]

#: Constructs whose meaning changes between "one line" and "the whole text in multi-line
#: mode" (text anchors, turning multi-line off, single bytes). Their presence, even
#: escaped, sends the search down the exact line-by-line path.
_LINE_BY_LINE: Final = re.compile(r"\\[AzC]|\(\?[a-zA-Z]*-[a-zA-Z]*m")


class _Match(Protocol):
    def start(self) -> int: ...


class _Regex(Protocol):
    def search(self, text: bytes, pos: int = 0) -> _Match | None: ...


class GrepPattern:
    """A compiled grep pattern; :meth:`search_lines` yields the matching lines of a text."""

    __slots__ = ("_line", "_text", "pattern")

    def __init__(self, pattern: str, line: _Regex, text: _Regex | None) -> None:
        #: The pattern as given.
        self.pattern = pattern
        self._line = line
        self._text = text

    def search_lines(self, text: str) -> Iterator[tuple[int, str]]:
        """Yield ``(line_number, line)`` for each matching line, 1-based, line ending removed."""
        data = text.encode("utf-8")
        if b"\r" in data:
            # Count-preserving: every line keeps its number and loses only its ``\r\n``.
            data = data.replace(b"\r\n", b"\n")
        if self._text is None:
            yield from self._search_each_line(data)
        else:
            yield from self._search_whole(data, self._text)

    def _search_whole(self, data: bytes, regex: _Regex) -> Iterator[tuple[int, str]]:
        # The multi-line regex never matches a newline (RE2 ``never_nl``), so every match
        # lies inside one line, and the leftmost match is in the first matching line.
        size = len(data)
        virtual_end = size == 0 or data.endswith(b"\n")  # no line starts at ``size``
        pos = 0
        line_number = 1
        counted = 0
        while pos <= size:
            found = regex.search(data, pos)
            if found is None:
                return
            start = found.start()
            line_start = data.rfind(b"\n", pos, start) + 1 or pos
            if line_start == size and virtual_end:
                return
            line_number += data.count(b"\n", counted, line_start)
            counted = line_start
            line_end = data.find(b"\n", start)
            if line_end < 0:
                line_end = size
            yield line_number, data[line_start:line_end].decode("utf-8")
            pos = line_end + 1

    def _search_each_line(self, data: bytes) -> Iterator[tuple[int, str]]:
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        for index, line in enumerate(lines):
            if self._line.search(line) is not None:
                yield index + 1, line.decode("utf-8")

    def __repr__(self) -> str:
        return f"GrepPattern({self.pattern!r})"


def _re2() -> Any:
    # Imported on the first grep: building the pack's tools must not load the engine.
    import re2  # type: ignore[import-untyped]

    return re2


def _options() -> Any:
    options = _re2().Options()
    options.never_capture = True  # only whether a line matches: lets RE2 stay on its DFA
    options.never_nl = True
    options.log_errors = False  # errors go into the exception, not onto stderr
    return options


@lru_cache(maxsize=256)
def compile_grep_pattern(pattern: str) -> GrepPattern:
    """Compile ``pattern`` (RE2 syntax) for line search; cached.

    Raises :class:`InvalidPatternError` with the engine's reason and how to fix it.
    """
    if not isinstance(pattern, str):
        raise InvalidPatternError(f"The grep pattern must be a string, got {type(pattern)}.")
    re2 = _re2()
    options = _options()
    try:
        line = re2.compile(pattern, options)
        text = None if _LINE_BY_LINE.search(pattern) else re2.compile(f"(?m){pattern}", options)
    except re2.error as exc:
        raise InvalidPatternError(
            f"Invalid regular expression {pattern!r}: {exc}. Patterns use RE2 syntax, which is "
            "Python's re syntax without backreferences (\\1) or lookaround ((?=...), (?!...), "
            "(?<=...)); write \\z instead of \\Z, and escape literal characters such as '(' "
            "or '[' with a backslash."
        ) from None
    return GrepPattern(pattern, line, text)


def grep_texts(
    pattern: str | GrepPattern, texts: Iterable[tuple[str, str]], *, max_matches: int = 100
) -> GrepResult:
    """Search ``(path, text)`` pairs in the order given; stop after ``max_matches`` matches.

    ``texts`` may be lazy (a generator reading files): it is consumed only as far as needed.
    ``truncated`` is true only when at least one more match exists beyond the cap.
    """
    if isinstance(max_matches, bool) or not isinstance(max_matches, int) or max_matches < 1:
        raise InvalidArgumentError(f"max_matches must be a positive integer, got {max_matches!r}.")
    compiled = pattern if isinstance(pattern, GrepPattern) else compile_grep_pattern(pattern)
    matches: list[GrepMatch] = []
    for path, text in texts:
        for line_number, line in compiled.search_lines(text):
            if len(matches) == max_matches:
                return GrepResult(tuple(matches), truncated=True)
            matches.append(GrepMatch(path, line_number, line))
    return GrepResult(tuple(matches), truncated=False)
