"""``printable()``: text from a model, a tool or a server made safe to write to a terminal."""

from __future__ import annotations

__all__ = ["printable"]

#: Characters that reorder the text shown around them (bidi embeddings, overrides, isolates
#: and marks), so a line can read differently from what it holds ("Trojan Source").
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: Line and paragraph separators: some terminals and editors break lines on them.
_SEPARATORS = frozenset("\u2028\u2029\u0085")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _table(newlines: bool) -> dict[int, str]:
    kept = {"\n", "\t"} if newlines else set()
    table = {code: _escape(chr(code)) for code in range(0x20) if chr(code) not in kept}
    table.update({code: _escape(chr(code)) for code in range(0x7F, 0xA0)})
    table.update({ord(char): _escape(char) for char in _BIDI | _SEPARATORS})
    return table


_MULTILINE = _table(newlines=True)
_ONE_LINE = _table(newlines=False)


def printable(text: str, *, newlines: bool = True) -> str:
    """``text`` with every control character written as an escape (``\\x1b``, ``\\x9b``,
    ``\\u202e``): C0 and C1 controls (so no ESC/CSI/OSC sequence reaches the terminal: no
    clipboard write, clear screen, hidden text or title change), DEL, bidi controls and line
    separators. ``\\n`` and ``\\t`` are kept unless ``newlines`` is false (one-line output).

    Each character is escaped on its own, so a sequence split across streamed pieces is
    escaped just the same. Everything the CLI prints that came from a model, a tool, a pack
    or a server goes through here.
    """
    if text.isprintable():
        return text  # the common case, without a copy
    return text.translate(_MULTILINE if newlines else _ONE_LINE)
