"""Runtime-visible type arguments: ``Tool[P, R]`` and ``MarkdownSection[P]`` as real classes.

``typing.Generic`` only records type arguments after ``__init__`` has run, too late to
validate anything. Subscripting a :class:`Specializable` class with concrete types instead
returns a cached subclass whose ``__type_args__`` holds them, so the constructor can check
them. Subscripting with type variables keeps the ordinary ``Generic`` behaviour, so generic
subclasses and annotations still work.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar, TypeVar

__all__ = ["Specializable", "type_name"]

_cache: dict[tuple[type, tuple[object, ...]], type] = {}
_lock = threading.Lock()


class Specializable:
    """Mixin for generic classes whose type arguments the constructor must see."""

    __type_args__: ClassVar[tuple[object, ...] | None] = None
    __slots__ = ()

    def __class_getitem__(cls, params: object) -> Any:
        args = params if isinstance(params, tuple) else (params,)
        key = (cls, args)
        special = _cache.get(key)  # first: subscripting sits on the hot path of building tools
        if special is not None:
            return special
        if any(isinstance(arg, TypeVar) for arg in args):
            return super().__class_getitem__(params)  # type: ignore[misc]
        with _lock:
            special = _cache.get(key)
            if special is None:
                name = f"{cls.__name__}[{', '.join(type_name(a) for a in args)}]"
                namespace = {
                    "__type_args__": args,
                    "__module__": cls.__module__,
                    "__qualname__": name,
                    "__slots__": (),
                }
                special = type(name, (cls,), namespace)
                _cache[key] = special
        return special


def type_name(tp: object) -> str:
    """A short readable name for a type or type expression."""
    if tp is None or tp is type(None):
        return "None"
    if isinstance(tp, type):
        return tp.__qualname__
    return repr(tp).replace("typing.", "")
