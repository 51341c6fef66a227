"""Read-only JSON containers: schemas built once and handed to every caller without a copy."""

from __future__ import annotations

import copy
from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList", "freeze"]

_MESSAGE = (
    "this JSON Schema is shared by every caller and read-only; take a copy to change it "
    "(copy.deepcopy(...) or serde.schema(params_type) give a plain, mutable one)"
)


def _read_only(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(_MESSAGE)


class FrozenDict(dict[str, Any]):
    """A ``dict`` that refuses every change; a copy (``copy``/``deepcopy``/pickle) is a plain one.

    A ``dict`` subclass rather than a mapping proxy, so ``json.dumps``, ``isinstance(x, dict)``
    and the provider SDKs treat it exactly as the dict it stands for.
    """

    __slots__ = ()

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        # The default reduction rebuilds through __setitem__, which refuses.
        return (dict, (dict(self),))


class FrozenList(list[Any]):
    """A ``list`` that refuses every change; a copy (``copy``, ``deepcopy``, pickle) is plain."""

    __slots__ = ()

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = remove = pop = clear = sort = reverse = _read_only

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(item, memo) for item in self]

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


def freeze(value: Any) -> Any:
    """``value`` (JSON data: dicts, lists, scalars) rebuilt from read-only containers."""
    if isinstance(value, dict):
        return FrozenDict({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return FrozenList(freeze(item) for item in value)
    return value
