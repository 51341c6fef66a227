"""``serde.dump``: values to JSON-compatible data."""

from __future__ import annotations

import datetime
import enum
import json
from dataclasses import dataclass, field

from haversack import serde


class Level(enum.Enum):
    LOW = "low"


@dataclass(frozen=True)
class Inner:
    value: int
    note: str | None = None


@dataclass(frozen=True)
class Outer:
    name: str
    inner: Inner
    items: tuple[Inner, ...] = ()
    level: Level = Level.LOW
    when: datetime.date = datetime.date(2026, 1, 2)
    tags: frozenset[str] = frozenset()
    extra: str | None = None
    meta: dict[str, int | None] = field(default_factory=dict)


VALUE = Outer("o", Inner(1), items=(Inner(2, "n"),), tags=frozenset({"t"}), meta={"a": None})


def test_dump_gives_json_compatible_data() -> None:
    data = serde.dump(VALUE)
    assert data == {
        "name": "o",
        "inner": {"value": 1, "note": None},
        "items": [{"value": 2, "note": "n"}],
        "level": "low",
        "when": "2026-01-02",
        "tags": ["t"],
        "extra": None,
        "meta": {"a": None},
    }
    assert json.loads(json.dumps(data)) == data


def test_exclude_none_drops_none_fields_at_every_level() -> None:
    data = serde.dump(VALUE, exclude_none=True)
    assert data["inner"] == {"value": 1}
    assert data["items"] == [{"value": 2, "note": "n"}]
    assert "extra" not in data
    assert data["level"] == "low"
    assert data["when"] == "2026-01-02"


def test_dump_round_trips_through_parse() -> None:
    @dataclass(frozen=True)
    class Simple:
        name: str
        inner: Inner

    value = Simple("s", Inner(3))
    assert serde.parse(Simple, serde.dump(value)) == value


def test_dump_of_plain_values() -> None:
    assert serde.dump([Inner(1)]) == [{"value": 1, "note": None}]
    assert serde.dump(None) is None
    assert serde.dump((1, "a")) == [1, "a"]
