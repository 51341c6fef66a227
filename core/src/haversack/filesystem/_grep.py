"""Line-oriented regular-expression search on RE2, a linear-time engine, with a work budget.

Why RE2 (``google-re2``) rather than :mod:`re` or ``regex`` with a timeout: the model writes
the pattern, and a backtracking engine can take exponential time on ``(a+)+$`` over one long
line. RE2 guarantees time linear in the text for a given pattern, so a search never has to be
abandoned in a worker thread; it also scans a whole file in one call with its DFA instead of
one call per line. The price is RE2 syntax: no backreferences and no lookaround, which the
error message says.

Linear in the text is not cheap enough on its own: when RE2 leaves its DFA (a long literal, a
pattern whose DFA outgrows its memory) the cost becomes *program size x text* (measured
here at about 5 ns per instruction per byte: a 100,000-character literal over a
100,000-character line took 44 s). So every search is bounded before it starts:

* the pattern's length (:data:`DEFAULT_MAX_PATTERN_CHARS`) and RE2's memory
  (:data:`RE2_MAX_MEM`, which also caps the compiled program's size) are capped;
* a long pattern without metacharacters is searched with ``bytes.find`` (linear, no
  program);
* the text is searched in line-aligned chunks whose worst case is at most
  :data:`WORK_PER_CHUNK` instruction-bytes (about 0.1 s), and the budget
  (:class:`GrepBudget`: bytes scanned and seconds) is checked between chunks, so a runaway
  search ends with the matches found so far and says where it stopped;
* a single line too long to search within one chunk's worst case is skipped and counted
  (a plain-text pattern searches lines of any length).

Semantics: a line ends at ``\\n``; the pattern is searched in each line without its ending
(``\\n`` or ``\\r\\n``), so ``^`` and ``$`` mean the line's start and end.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final, Protocol

from haversack.errors import InvalidArgumentError, InvalidPatternError

from ._protocol import GrepMatch, GrepResult

__all__ = [
    "DEFAULT_GREP_SCAN_BYTES",
    "DEFAULT_GREP_SECONDS",
    "DEFAULT_MAX_MATCH_LINE_BYTES",
    "DEFAULT_MAX_PATTERN_CHARS",
    "MAX_GREP_SCAN_BYTES",
    "MAX_GREP_SECONDS",
    "MAX_PATTERN_CHARS",
    "RE2_MAX_MEM",
    "WORK_PER_CHUNK",
    "GrepBudget",
    "GrepPattern",
    "compile_grep_pattern",
    "grep_texts",
]

#: Longest grep pattern accepted by default, in characters.
DEFAULT_MAX_PATTERN_CHARS: Final = 1_000
#: The highest value a pattern-length limit may be configured to.
MAX_PATTERN_CHARS: Final = 100_000
#: RE2's memory budget per compiled pattern (program and DFA cache), in bytes. It also caps
#: the program's size: a pattern that compiles larger is refused.
RE2_MAX_MEM: Final = 4 * 1024 * 1024
#: Most text bytes one grep call scans by default (after that it stops and says so).
DEFAULT_GREP_SCAN_BYTES: Final = 64 * 1024 * 1024
#: The highest value the scanned-bytes budget may be configured to.
MAX_GREP_SCAN_BYTES: Final = 1024 * 1024 * 1024
#: Longest one grep call searches by default, in seconds, checked between chunks.
DEFAULT_GREP_SECONDS: Final = 0.5
#: The highest value the time budget may be configured to.
MAX_GREP_SECONDS: Final = 30.0
#: Bytes of each matching line a match keeps (the rest is counted in ``cut_bytes``).
DEFAULT_MAX_MATCH_LINE_BYTES: Final = 4096
#: Worst-case work of one chunk, in program instructions x bytes (~0.1 s at ~5 ns each).
WORK_PER_CHUNK: Final = 1 << 24

#: Constructs whose meaning changes between "one line" and "the whole text in multi-line
#: mode" (text anchors, turning multi-line off, single bytes). Their presence, even
#: escaped, sends the search down the exact line-by-line path.
_LINE_BY_LINE: Final = re.compile(r"\\[AzC]|\(\?[a-zA-Z]*-[a-zA-Z]*m")
#: Any of these makes a pattern a regular expression rather than plain text.
_META: Final = frozenset("\\^$.|?*+()[]{}")
#: Plain text longer than this is searched with ``bytes.find`` (two-way: linear whatever its
#: length); shorter text is cheap for RE2's DFA, which scans faster than ``find`` does.
_LITERAL_FROM: Final = 32
# Compiled patterns kept: each may hold up to RE2_MAX_MEM of DFA cache.
_CACHE_SIZE: Final = 8


@dataclass(frozen=True, slots=True)
class GrepBudget:
    """How much work one grep call may do before it stops with what it found.

    ``max_scan_bytes`` bounds the text searched (deterministic), ``max_seconds`` the time
    (checked between chunks, each at most :data:`WORK_PER_CHUNK` of worst-case work), and
    ``max_line_bytes`` how much of each matching line a match keeps. ``clock`` is the time
    source (``time.monotonic``).
    """

    max_scan_bytes: int = DEFAULT_GREP_SCAN_BYTES
    max_seconds: float = DEFAULT_GREP_SECONDS
    max_line_bytes: int = DEFAULT_MAX_MATCH_LINE_BYTES
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    def __post_init__(self) -> None:
        for name, value, top in (
            ("max_scan_bytes", self.max_scan_bytes, MAX_GREP_SCAN_BYTES),
            ("max_line_bytes", self.max_line_bytes, MAX_GREP_SCAN_BYTES),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
                raise ValueError(f"{name} must be an integer from 1 to {top}, got {value!r}.")
        seconds = self.max_seconds
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, int | float)
            or not 0 < seconds <= MAX_GREP_SECONDS
        ):
            raise ValueError(
                f"max_seconds must be a number above 0 and at most {MAX_GREP_SECONDS}, got "
                f"{seconds!r}."
            )


class _Match(Protocol):
    def start(self) -> int: ...


class _Regex(Protocol):
    def search(self, text: bytes, pos: int = 0, endpos: int = ...) -> _Match | None: ...


class GrepPattern:
    """A compiled grep pattern; :meth:`search_lines` yields the matching lines of a text.

    ``cost`` is the worst-case work per byte searched (the RE2 program's size, 1 for plain
    text); ``chunk_bytes`` the most bytes one search call covers.
    """

    __slots__ = ("_line", "_literal", "_text", "chunk_bytes", "cost", "pattern")

    def __init__(
        self,
        pattern: str,
        line: _Regex | None,
        text: _Regex | None,
        *,
        literal: bytes | None = None,
        cost: int = 1,
    ) -> None:
        #: The pattern as given.
        self.pattern = pattern
        self._line = line
        self._text = text
        self._literal = literal
        self.cost = max(1, cost)
        self.chunk_bytes = max(1, WORK_PER_CHUNK // self.cost)

    def search_lines(self, text: str) -> Iterator[tuple[int, str]]:
        """Yield ``(line_number, line)`` for each matching line, 1-based, line ending removed.

        Unbudgeted (for callers that bound the text themselves): :func:`grep_texts` is the
        budgeted search.
        """
        data = _prepare(text)
        for line_number, start, end in self._scan(data, 0, len(data), 1):
            yield line_number, data[start:end].decode("utf-8")

    def _scan(self, data: bytes, pos: int, end: int, line_number: int) -> Iterator[_Hit]:
        """Matching lines of ``data[pos:end]`` (``pos`` a line start, ``end`` a line end or the
        text's end), numbering from ``line_number``; yields ``(number, start, end)``."""
        if self._literal is not None:
            return self._scan_literal(data, pos, end, line_number, self._literal)
        if self._text is None:
            return self._scan_each_line(data, pos, end, line_number)
        return self._scan_whole(data, pos, end, line_number, self._text)

    @staticmethod
    def _scan_literal(
        data: bytes, pos: int, end: int, line_number: int, literal: bytes
    ) -> Iterator[_Hit]:
        if b"\n" in literal:
            return  # a line never contains a newline (RE2 ``never_nl`` does the same)
        counted = pos
        while pos <= end:
            start = data.find(literal, pos, end)
            if start < 0:
                return
            line_start = data.rfind(b"\n", pos, start) + 1 or pos
            line_number += data.count(b"\n", counted, line_start)
            counted = line_start
            line_end = data.find(b"\n", start, end)
            if line_end < 0:
                line_end = end
            yield line_number, line_start, line_end
            pos = line_end + 1

    @staticmethod
    def _scan_whole(
        data: bytes, pos: int, end: int, line_number: int, regex: _Regex
    ) -> Iterator[_Hit]:
        # The multi-line regex never matches a newline (RE2 ``never_nl``), so every match
        # lies inside one line, and the leftmost match is in the first matching line.
        size = len(data)
        virtual_end = end == size and (size == 0 or data.endswith(b"\n"))
        counted = pos
        while pos <= end:
            found = regex.search(data, pos, end)
            if found is None:
                return
            start = found.start()
            line_start = data.rfind(b"\n", pos, start) + 1 or pos
            if line_start == size and virtual_end:
                return  # no line starts at the text's end after a final newline
            line_number += data.count(b"\n", counted, line_start)
            counted = line_start
            line_end = data.find(b"\n", start, end)
            if line_end < 0:
                line_end = end
            yield line_number, line_start, line_end
            pos = line_end + 1

    def _scan_each_line(self, data: bytes, pos: int, end: int, line_number: int) -> Iterator[_Hit]:
        regex = self._line
        assert regex is not None
        lines = data[pos:end].split(b"\n")
        if end == len(data) and lines[-1] == b"":
            lines.pop()  # a final newline ends the last line; no empty line follows it
        for line in lines:
            stop = pos + len(line)
            if regex.search(line) is not None:
                yield line_number, pos, stop
            line_number += 1
            pos = stop + 1

    @property
    def is_literal(self) -> bool:
        """Whether the pattern is plain text (no metacharacters), searched without RE2."""
        return self._literal is not None

    def __repr__(self) -> str:
        return f"GrepPattern({self.pattern!r})"


_Hit = tuple[int, int, int]


def _prepare(text: str) -> bytes:
    data = text.encode("utf-8")
    if b"\r" in data:
        # Count-preserving: every line keeps its number and loses only its ``\r\n``.
        data = data.replace(b"\r\n", b"\n")
    return data


def _re2() -> Any:
    # Imported on the first grep: building the pack's tools must not load the engine.
    import re2  # type: ignore[import-untyped]

    return re2


def _options() -> Any:
    options = _re2().Options()
    options.max_mem = RE2_MAX_MEM
    options.never_capture = True  # only whether a line matches: lets RE2 stay on its DFA
    options.never_nl = True
    options.log_errors = False  # errors go into the exception, not onto stderr
    return options


def _compile(pattern: str, options: Any) -> Any:
    re2 = _re2()
    # ``re2.compile`` keeps 128 regexes in a module-wide cache, each holding up to max_mem
    # of DFA; building the object directly keeps only what our own small cache holds.
    regexp = getattr(re2, "_Regexp", None)
    return regexp(pattern, options) if regexp is not None else re2.compile(pattern, options)


def compile_grep_pattern(
    pattern: str, *, max_chars: int = DEFAULT_MAX_PATTERN_CHARS
) -> GrepPattern:
    """Compile ``pattern`` (RE2 syntax) for line search; cached.

    Raises :class:`InvalidPatternError` for a pattern longer than ``max_chars`` characters,
    or one the engine refuses, with the reason and how to fix it.
    """
    if not isinstance(pattern, str):
        raise InvalidPatternError(f"The grep pattern must be a string, got {type(pattern)}.")
    if len(pattern) > max_chars:
        raise InvalidPatternError(
            f"The grep pattern is {len(pattern)} characters long; the limit is {max_chars}. "
            "Search for a shorter, distinctive part of the text (a few words of one line)."
        )
    return _compile_cached(pattern)


@lru_cache(maxsize=_CACHE_SIZE)
def _compile_cached(pattern: str) -> GrepPattern:
    if len(pattern) > _LITERAL_FROM and not _META.intersection(pattern):
        try:
            literal = pattern.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidPatternError(
                f"The grep pattern has an unpaired surrogate at character {exc.start}; it is "
                "not valid Unicode text. Remove or replace that character."
            ) from None
        return GrepPattern(pattern, None, None, literal=literal)
    re2 = _re2()
    options = _options()
    try:
        if _LINE_BY_LINE.search(pattern):
            line = _compile(pattern, options)
            return GrepPattern(pattern, line, None, cost=line.programsize)
        text = _compile(f"(?m){pattern}", options)
    except re2.error as exc:
        reason = str(exc)
        if "too large" in reason or "too big" in reason:
            raise InvalidPatternError(
                f"The grep pattern {pattern[:80]!r} compiles to more than the search engine's "
                f"{RE2_MAX_MEM // (1024 * 1024)} MiB budget ({reason}); use fewer or smaller "
                "counted repetitions such as {1000}, or a shorter pattern."
            ) from None
        raise InvalidPatternError(
            f"Invalid regular expression {pattern[:200]!r}: {reason}. Patterns use RE2 syntax, "
            "which is Python's re syntax without backreferences (\\1) or lookaround ((?=...), "
            "(?!...), (?<=...)); write \\z instead of \\Z, and escape literal characters such "
            "as '(' or '[' with a backslash."
        ) from None
    return GrepPattern(pattern, None, text, cost=text.programsize)


def grep_texts(
    pattern: str | GrepPattern,
    texts: Iterable[tuple[str, str]],
    *,
    max_matches: int = 100,
    budget: GrepBudget | None = None,
) -> GrepResult:
    """Search ``(path, text)`` pairs in the order given; stop after ``max_matches`` matches
    or when ``budget`` (default :class:`GrepBudget`) runs out.

    ``texts`` may be lazy (a generator reading files): it is consumed only as far as needed.
    ``truncated`` is true only when at least one more match exists beyond the cap;
    ``stopped`` says when the budget ended the search, after how much, and how to narrow it.
    """
    if isinstance(max_matches, bool) or not isinstance(max_matches, int) or max_matches < 1:
        raise InvalidArgumentError(f"max_matches must be a positive integer, got {max_matches!r}.")
    compiled = pattern if isinstance(pattern, GrepPattern) else compile_grep_pattern(pattern)
    return _Search(compiled, budget if budget is not None else GrepBudget(), max_matches).run(texts)


class _Search:
    """One budgeted grep over a sequence of texts."""

    def __init__(self, pattern: GrepPattern, budget: GrepBudget, max_matches: int) -> None:
        self.pattern = pattern
        self.budget = budget
        self.max_matches = max_matches
        self.matches: list[GrepMatch] = []
        self.scanned = 0
        self.files = 0
        self.skipped = 0
        self.deadline = budget.clock() + budget.max_seconds

    def run(self, texts: Iterable[tuple[str, str]]) -> GrepResult:
        stopped = ""
        truncated = False
        for path, text in texts:
            try:
                self._file(path, _prepare(text))
            except _FullError:
                truncated = True
                break
            except _OutOfBudgetError as exc:
                stopped = exc.reason
                break
        return GrepResult(
            tuple(self.matches),
            truncated=truncated,
            stopped=stopped,
            skipped_lines=self.skipped,
            scanned_bytes=self.scanned,
            scanned_files=self.files,
        )

    def _file(self, path: str, data: bytes) -> None:
        self.files += 1
        size = len(data)
        chunk = self.pattern.chunk_bytes
        if size <= chunk and size <= self.budget.max_scan_bytes - self.scanned:
            # The common case, a file that is one chunk: one clock check, one scan.
            if self.budget.clock() > self.deadline:
                raise _OutOfBudgetError(self._stop(self._time_budget()))
            self._collect(path, data, 0, size, 1)
            self.scanned += size
            return
        literal = self.pattern.is_literal
        pos = 0
        line_number = 1
        while pos < size:
            left = self.budget.max_scan_bytes - self.scanned
            if left <= 0:
                raise _OutOfBudgetError(self._stop(self._bytes_budget()))
            if self.budget.clock() > self.deadline:
                raise _OutOfBudgetError(self._stop(self._time_budget()))
            want = min(chunk, left)
            end = size if pos + want >= size else data.rfind(b"\n", pos, pos + want)
            if end < pos:  # no line ends inside the window: one line longer than it
                end = data.find(b"\n", pos + want)
                if end < 0:
                    end = size
                if not literal and end - pos > chunk:
                    self.skipped += 1  # its worst case alone would exceed a chunk's work
                    self.scanned += end - pos
                    pos, line_number = end + 1, line_number + 1
                    continue
                if end - pos > left:
                    raise _OutOfBudgetError(self._stop(self._bytes_budget()))
            self._collect(path, data, pos, end, line_number)
            if end >= size:
                self.scanned += size - pos
                return
            line_number += data.count(b"\n", pos, end) + 1
            self.scanned += end - pos + 1
            pos = end + 1

    def _collect(self, path: str, data: bytes, pos: int, end: int, line_number: int) -> None:
        matches = self.matches
        for number, start, stop in self.pattern._scan(data, pos, end, line_number):
            if len(matches) == self.max_matches:
                raise _FullError
            matches.append(self._match(path, number, data, start, stop))

    def _match(self, path: str, number: int, data: bytes, start: int, stop: int) -> GrepMatch:
        keep = self.budget.max_line_bytes
        if stop - start <= keep:
            return GrepMatch(path, number, data[start:stop].decode("utf-8"))
        head = data[start : start + keep].decode("utf-8", "ignore")  # cut at a character
        return GrepMatch(path, number, head, stop - start - len(head.encode("utf-8")))

    def _bytes_budget(self) -> str:
        return f"the {self.budget.max_scan_bytes}-byte budget"

    def _time_budget(self) -> str:
        return f"the {self.budget.max_seconds:g}-second budget"

    def _stop(self, budget: str) -> str:
        return (
            f"stopped after scanning {self.scanned} bytes in {self.files} file(s), at "
            f"{budget} of one search; narrow the path or glob, or search for a more specific "
            "pattern."
        )


class _FullError(Exception):
    """``max_matches`` matches were found and one more exists."""


class _OutOfBudgetError(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
