"""``serde.parse`` of a mapping gives exactly what parsing its JSON text gives.

A plain dict for a flat params dataclass skips the JSON round trip; these tests compare every
outcome (value, or error message and field path) with the JSON path on the same data.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from haversack import serde
from haversack.errors import ToolValidationError
from haversack.serde import _parse


@dataclass(frozen=True, slots=True)
class Flat:
    path: str
    count: int = 0
    flag: bool = False
    limit: int | None = None
    note: str | None = None


@dataclass
class Checked:
    name: str
    size: int = 1

    def __post_init__(self) -> None:
        if self.size < 0:
            raise ValueError("size must not be negative")


@dataclass(frozen=True)
class Defaults:
    tags: list[str] = field(default_factory=list)
    name: str = "x"


@dataclass(frozen=True)
class Mixed:
    mode: Literal["a", "b"] = "a"
    ratio: float = 1.0
    items: tuple[int, ...] = ()


class Colour(enum.IntEnum):
    RED = 1


class Text(str):
    pass


class Data(dict[str, Any]):
    pass


def _via_json(tp: type[Any], data: Any) -> tuple[str, Any]:
    """The outcome of the JSON path: ("ok", value) or ("error", (message, field_path))."""
    try:
        text = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return "error", (f"Invalid arguments: they are not JSON data ({exc}).", None)
    return _outcome(tp, text)


def _outcome(tp: type[Any], data: Any) -> tuple[str, Any]:
    try:
        return "ok", serde.parse(tp, data)
    except ToolValidationError as exc:
        return "error", (str(exc), exc.field_path)


CASES: list[tuple[type[Any], Any]] = [
    (Flat, {"path": "a.txt"}),
    (Flat, {"path": "a.txt", "count": 3, "flag": True, "limit": None, "note": "n"}),
    (Flat, {"path": "a.txt", "limit": 7}),
    (Flat, {"path": 'é \u2028 \x00 \U0001f600 \\ " \n\r\t' * 50}),
    (Flat, {"path": "x", "count": 2**63 - 1}),
    (Flat, {"path": "x", "count": 2**63}),
    (Flat, {"path": "x", "count": -(2**63)}),
    (Flat, {"path": "x", "count": 10**5000}),  # past the int-to-str digit limit
    (Flat, {"path": "x", "count": True}),  # bool is not an int
    (Flat, {"path": "x", "flag": 1}),  # int is not a bool
    (Flat, {"path": "x", "count": 1.0}),
    (Flat, {"path": "x", "count": "5"}),
    (Flat, {"path": 5}),
    (Flat, {"path": None}),
    (Flat, {"path": "x", "limit": "3"}),
    (Flat, {"path": Text("x")}),
    (Flat, {"path": "x", "count": Colour.RED}),
    (Flat, {"path": "x", "count": float("nan")}),
    (Flat, {"path": "x", "unknown": 1}),
    (Flat, {"count": 1}),
    (Flat, {}),
    (Flat, {1: "x"}),
    (Flat, {"path": ["x"]}),
    (Flat, {"path": ("x",)}),
    (Flat, {"path": {"x": 1}}),
    (Flat, Data(path="x")),
    (Checked, {"name": "n"}),
    (Checked, {"name": "n", "size": -1}),
    (Defaults, {"name": "y"}),
    (Defaults, {"tags": ["a"], "name": "y"}),
    (Defaults, {"tags": ("a",)}),
    (Mixed, {"mode": "b"}),
    (Mixed, {"mode": "c"}),
    (Mixed, {"ratio": 2}),
    (Mixed, {"items": [1, 2]}),
    (Mixed, {"items": (1, 2)}),
]


@pytest.mark.parametrize(("tp", "data"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_mapping_parses_exactly_like_its_json_text(tp: type[Any], data: Any) -> None:
    got = _outcome(tp, data)
    expected = _via_json(tp, data)
    assert got == expected
    if got[0] == "ok":
        assert type(got[1]) is tp
        for name in tp.__dataclass_fields__:
            assert type(getattr(got[1], name)) is type(getattr(expected[1], name))


def test_flat_params_take_the_fast_path() -> None:
    assert _parse._kinds_of(Flat) == {
        "path": (str,),
        "count": (int,),
        "flag": (bool,),
        "limit": (int, type(None)),
        "note": (str, type(None)),
    }


@pytest.mark.parametrize("tp", [Defaults, Mixed])
def test_other_shapes_keep_the_json_path(tp: type[Any]) -> None:
    assert _parse._kinds_of(tp) is None


@pytest.mark.parametrize("text", ["a\ud800b", "\udc00"])
def test_lone_surrogates_fail_on_both_paths(text: str) -> None:
    # The mapping path words it as invalid Unicode (the caller sent no JSON text); the
    # JSON path as malformed JSON. Both refuse, with no field to blame.
    got = _outcome(Flat, {"path": text})
    expected = _via_json(Flat, {"path": text})
    assert got[0] == expected[0] == "error"
    assert "not valid Unicode" in got[1][0]
    assert "not valid JSON" in expected[1][0]
