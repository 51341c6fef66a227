"""Hypothesis strategies for hostile tool arguments, derived from a tool's JSON Schema."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from haversack.testing._fuzz import _allowed_types, _json_types, sample

#: Path attacks also used by the escape tests: traversal, absolute, encoded, look-alikes.
PATH_ATTACKS: tuple[str, ...] = (
    "..",
    "../",
    "../..",
    "../../../../../../../../etc/passwd",
    "a/../../b",
    "./../x",
    "/etc/passwd",
    "/workspace/../etc/passwd",
    "/workspace/../../..",
    "//etc//passwd",
    "..\\..\\windows\\win.ini",
    "\\..\\..\\etc\\passwd",
    "C:\\Windows\\System32",
    "%2e%2e/%2e%2e/etc/passwd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "..%2f..%2fetc",
    "%252e%252e/etc",
    "\uff0e\uff0e/\uff0e\uff0e/etc/passwd",  # fullwidth full stops
    "\u2024\u2024/\u2024\u2024/etc",  # one-dot leaders
    "\u2025/etc",  # two-dot leader
    "..\u2215..\u2215etc",  # division slash
    "..\uff0f..\uff0fetc",  # fullwidth solidus
    ".\u200b./etc",  # zero-width space between the dots
    "a\x00/../../etc/passwd",
    "\x00",
    "a\nb",
    "a\rb\x1b[2J",
    "\u202e/dwssap/cte",
    "~/.ssh/id_rsa",
    "~root",
    "$HOME/x",
    "file:///etc/passwd",
    "/proc/self/environ",
    "/dev/zero",
    ".",
    "./",
    "",
    " ",
    "\t",
    "/".join(["d"] * 300),
    "x" * 5000,
    "/".join(["a" * 255] * 20),
)

#: Regular expressions that are catastrophic for backtracking engines, or invalid.
REGEX_ATTACKS: tuple[str, ...] = (
    "(a+)+$",
    "(a|aa)*b",
    "(a*)*b",
    "(x+x+)+y",
    "^(([a-z])+.)+[A-Z]([a-z])+$",
    "(.*a){20}",
    "a{1000000}",
    "a{1000}{1000}",
    "(?:(?:(?:(?:a*)*)*)*)*b",
    "(",
    "[",
    "*",
    "(?P<x>a)(?P=x)",
    "(a)\\1",
    "(?=a)a",
    "(?<!a)b",
    "\\",
    "[\\d-z]",
    "(?i)" * 50,
    "(" * 5000 + ")" * 5000,
    "|" * 10000,
    "\x00",
    "\ud800",
)

#: Globs with pathological or broken syntax.
GLOB_ATTACKS: tuple[str, ...] = (
    "**/" * 200 + "*",
    "*" * 5000,
    "?" * 5000,
    "[",
    "[!",
    "[]",
    "[z-a]",
    "{a,b}",
    "**",
    "***",
    "**/..",
    "../**",
    "/**",
    "/etc/*",
    "\\*",
    "*\x00",
    "[" * 1000,
    "a/**/b/**/c/**/d/**/e/**/f",
)

WHITESPACE = ("", " ", "   ", "\t", "\n", "\r\n", "\u3000", "\u200b", "\ufeff", "\u00a0")
EXTREME_NUMBERS: tuple[Any, ...] = (
    0,
    -1,
    1,
    -(2**31),
    2**31,
    -(2**63),
    2**63,
    2**64,
    10**100,
    -(10**100),
    0.5,
    -0.0,
    1e308,
    -1e308,
    5e-324,
)


def nested(depth: int, *, kind: str = "mixed") -> Any:
    value: Any = "leaf"
    for level in range(depth):
        value = [value] if kind == "list" or (kind == "mixed" and level % 2) else {"d": value}
    return value


def json_values() -> st.SearchStrategy[Any]:
    """Any JSON value, small."""
    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(st.text(max_size=8), children, max_size=4)
        ),
        max_leaves=12,
    )


def hostile_strings(known_paths: tuple[str, ...] = ()) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(PATH_ATTACKS),
        st.sampled_from(REGEX_ATTACKS),
        st.sampled_from(GLOB_ATTACKS),
        st.sampled_from(WHITESPACE),
        st.text(),
        # Control characters, lone surrogates, format characters (bidi, zero-width).
        st.text(st.characters(categories=["Cc", "Cs", "Cf", "Zl", "Zp", "Co"]), max_size=40),
        st.integers(10_000, 300_000).map(lambda n: "x" * n),
        st.integers(1_000, 20_000).map(lambda n: "line\n" * n),
        st.lists(
            st.sampled_from(["..", ".", "a", "%2e%2e", "\uff0e\uff0e", "\\", ""]), max_size=12
        ).map("/".join),
        *((st.sampled_from(known_paths),) if known_paths else ()),
    )


def hostile_values(known_paths: tuple[str, ...] = ()) -> st.SearchStrategy[Any]:
    return st.one_of(
        hostile_strings(known_paths),
        st.sampled_from(EXTREME_NUMBERS),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.booleans(),
        st.none(),
        st.integers(2, 3000).map(nested),
        st.lists(hostile_strings(known_paths), max_size=5),
        st.integers(1_000, 20_000).map(lambda n: ["x"] * n),
        json_values(),
    )


def must_reject(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``value`` is clearly of a JSON type ``schema`` refuses."""
    allowed = _allowed_types(schema)
    if allowed is None:
        return False
    kinds = _json_types(value)
    if "number" in allowed:
        allowed = allowed | {"integer"}
    if isinstance(value, float) and "integer" in allowed:
        return False  # 1.0 for an integer: lax parsing may accept it
    return not (kinds & allowed)


@st.composite
def hostile_call(
    draw: st.DrawFn, schema: Mapping[str, Any], takes_params: bool, known: tuple[str, ...]
) -> tuple[str, Any, bool]:
    """``(label, arguments, must_fail)`` for one hostile call."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    base: dict[str, Any] = dict(sample(schema)) if takes_params else {}
    kind = draw(
        st.sampled_from(
            ["mutate", "mutate", "mutate", "unknown", "raw", "escape", "bytes", "truncated"]
        )
    )
    if kind == "mutate" and properties:
        names = draw(st.lists(st.sampled_from(sorted(properties)), min_size=1, unique=True))
        must_fail = False
        args = dict(base)
        for name in names:
            value = draw(hostile_values(known))
            args[name] = value
            must_fail = must_fail or must_reject(value, properties[name])
        return (f"hostile {', '.join(names)}", args, must_fail)
    if kind in ("mutate", "unknown"):
        key = draw(st.text(min_size=1, max_size=30).filter(lambda k: k not in properties))
        return ("an unknown field", {**base, key: draw(json_values())}, True)
    if kind == "raw":
        text = draw(
            st.one_of(
                st.text(),
                st.sampled_from(
                    [
                        "{",
                        "}",
                        "{}}",
                        "{'path': 'a'}",
                        '{"a": NaN}',
                        '{"a": Infinity}',
                        '{"a": 1e999}',
                        '{"a": -1e999}',
                        "[" * 100_000,
                        "[" * 50_000 + "]" * 50_000,
                        '{"a":' * 50_000,
                        "null",
                        "true",
                        "0",
                        '""',
                        "\ufeff{}",
                        "{}\x00",
                        '{"a": 1, "a": 2}',
                        "/* comment */ {}",
                    ]
                ),
            )
        )
        return ("JSON text", text, False)
    if kind == "escape":
        field = draw(st.sampled_from(sorted(properties) or ["path"]))
        escape = draw(
            st.sampled_from(
                [
                    "\\ud800",
                    "\\udfff",
                    "\\ud800\\ud800",
                    "\\udc00x",
                    "\\u0000",
                    "\\x41",
                    "\\u12",
                    "\\",
                    "\\uZZZZ",
                    "\\ud83d\\ude00",
                ]
            )
        )
        return (f"JSON escape {escape} in {field!r}", f'{{"{field}": "a{escape}b"}}', False)
    if kind == "bytes":
        blob = draw(
            st.one_of(
                st.binary(max_size=200),
                st.sampled_from([b"\xff\xfe{}", b'{"a": "\xc3\x28"}', b'{"path": "\xed\xa0\x80"}']),
            )
        )
        return ("raw bytes", blob, False)
    text = json.dumps(base)
    cut = draw(st.integers(0, max(0, len(text) - 1)))
    return ("truncated JSON", text[:cut], takes_params and cut > 0)
