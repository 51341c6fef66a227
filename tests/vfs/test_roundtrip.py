"""Content round-trips byte for byte through write_file, read_file and edit_file."""

from __future__ import annotations

import pytest

from ._workspace import Workspace

TRICKY = [
    "",
    "\n",
    "\n\n\n",
    "no final newline",
    "trailing spaces   \n\ttabs\t\n",
    "crlf\r\nlines\r\n",
    "mixed\r\nendings\nhere\r\n",
    "lone\rcarriage\r",
    "unicode: é ß 漢字 🙂 \u200b zero-width, \u00a0nbsp\n",
    "   leading and trailing whitespace   ",
    "line 1\n" * 3000,
    "\ufeffBOM first\n",
    "nul-free \x0b\x0c form feeds \x1b[31m ansi\n",
]


@pytest.mark.parametrize("content", TRICKY, ids=range(len(TRICKY)))
def test_write_then_read_is_exact(ws: Workspace, content: str) -> None:
    ws.ok("write_file", path="f.txt", content=content)
    assert ws.fs.read_text("f.txt") == content
    pieces: list[str] = []
    offset = 0
    while True:
        result = ws.ok("read_file", path="f.txt", offset=offset)
        pieces.append(result.value.content)
        if result.value.last_line >= result.value.total_lines:
            break
        offset = result.value.last_line
    assert "".join(pieces) == content


@pytest.mark.parametrize("content", TRICKY[1:], ids=range(1, len(TRICKY)))
def test_edit_preserves_everything_outside_the_replacement(ws: Workspace, content: str) -> None:
    text = f"{content}<<MARK>>{content}"
    ws.ok("write_file", path="f.txt", content=text)
    ws.ok("read_file", path="f.txt")
    ws.ok("edit_file", path="f.txt", old_string="<<MARK>>", new_string="\r\né\t ")
    assert ws.fs.read_text("f.txt") == f"{content}\r\né\t {content}"
    read = ws.ok("read_file", path="f.txt", limit=2000)
    assert ws.fs.read_text("f.txt").startswith(read.value.content)


def test_edit_with_crlf_strings_spanning_lines(ws: Workspace) -> None:
    ws.ok("write_file", path="w.txt", content="a\r\nb\r\nc\r\n")
    ws.ok("read_file", path="w.txt")
    ws.ok("edit_file", path="w.txt", old_string="a\r\nb\r\n", new_string="x\r\n")
    assert ws.fs.read_text("w.txt") == "x\r\nc\r\n"


def test_numbered_display_round_trips_through_the_render(ws: Workspace) -> None:
    """Stripping the numbers and tabs and undoing the markers gives back the content."""
    content = "a\r\n\tb  \nc"
    ws.ok("write_file", path="f", content=content)
    rendered = ws.ok("read_file", path="f").render().split("\n")[2:]  # header, note
    assert rendered[-1] == "\\ No newline at end of file"
    lines = [row.split("\t", 1)[1] for row in rendered[:-1]]
    rebuilt = "\n".join(line.replace("␍", "\r") for line in lines)
    assert rebuilt == content
