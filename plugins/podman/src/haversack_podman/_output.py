"""Capped capture of one output stream and its decoding for the model."""

from __future__ import annotations

import codecs

__all__ = ["CappedBuffer"]


class CappedBuffer:
    """Keeps the first ``limit`` bytes written and counts the rest."""

    __slots__ = ("_chunks", "_kept", "dropped", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._chunks: list[bytes] = []
        self._kept = 0
        self.dropped = 0

    def write(self, data: bytes) -> None:
        """Append ``data``, dropping whatever exceeds the limit."""
        room = self.limit - self._kept
        if room > 0:
            piece = data[:room]
            self._chunks.append(piece)
            self._kept += len(piece)
        self.dropped += max(0, len(data) - max(room, 0))

    @property
    def truncated(self) -> bool:
        """Whether any byte was dropped."""
        return self.dropped > 0

    def text(self) -> str:
        """The kept bytes as UTF-8 (invalid sequences replaced), with a visible marker when
        bytes were dropped."""
        raw = b"".join(self._chunks)
        if not self.truncated:
            return raw.decode("utf-8", errors="replace")
        # A non-final incremental decode leaves out a character the cut split in two.
        text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(raw, final=False)
        return f"{text}\n[... output truncated: {self.dropped} more bytes not shown ...]"
