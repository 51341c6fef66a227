"""``Scope``, ``Binding`` and the ``ResourceResolver`` a factory receives."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["Binding", "ResourceResolver", "Scope", "conforms", "describe", "type_name"]

T = TypeVar("T")


class Scope(enum.Enum):
    """How long an instance built by a binding lives."""

    SINGLETON = "singleton"
    """One instance per opened registry (per evaluation), closed when it closes."""
    TOOL_CALL = "tool_call"
    """A fresh instance per ``resources.tool_call()``, closed when the call ends."""
    PROTOTYPE = "prototype"
    """A fresh instance on every ``get``, closed with the tool call or the registry."""


class ResourceResolver(Protocol):
    """What a factory may ask for while building its instance (other bound resources), and
    what a handler's ``context.resources`` gives: an instance per bound type."""

    def get(self, tp: type[T], /) -> T: ...

    def get_optional(self, tp: type[T], /) -> T | None: ...


class _Constant:
    """The factory of ``Binding.instance``: returns the one pre-built object."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __call__(self, resolver: ResourceResolver) -> object:
        return self.value

    # Two ``Binding.instance`` of the same object are the same binding, so merging a registry
    # with itself (or a pack contributing twice) is not a conflict.
    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Constant) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)

    def __repr__(self) -> str:
        return f"instance {type(self.value).__qualname__} at {id(self.value):#x}"


# No slots=True: on Python 3.11 and 3.12 the frozen __setattr__ of a slotted generic dataclass
# breaks ``Binding[T](...)`` (typing's __orig_class__ assignment raises TypeError).
@dataclass(frozen=True)
class Binding(Generic[T]):
    """How to get the resource of type ``provides``: ``factory(resolver)`` under ``scope``.

    The factory may ask the resolver for other resources: ``Binding(Client, lambda r:
    Client(r.get(Config)))``. ``default=True`` marks a fallback that gives way to a non-default
    binding of the same type when registries are merged. ``prebuilt`` is set by
    :meth:`instance`: such objects belong to the caller and are never closed by Haversack.
    """

    provides: type[T]
    factory: Callable[[ResourceResolver], T]
    scope: Scope = Scope.SINGLETON
    default: bool = False
    prebuilt: bool = field(default=False, kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.provides, type):
            raise TypeError(f"Binding needs a type to provide, got {self.provides!r}.")
        if not callable(self.factory):
            raise TypeError(
                f"The factory of the binding for {type_name(self.provides)} must be callable "
                f"(resolver) -> instance, got {self.factory!r}; use Binding.instance("
                f"{self.provides.__qualname__}, obj) for a pre-built object."
            )
        if not isinstance(self.factory, _Constant):
            _check_factory(self.factory, self.provides)
        if not isinstance(self.scope, Scope):
            raise TypeError(f"scope must be a Scope, got {self.scope!r}.")
        if self.prebuilt and self.scope is not Scope.SINGLETON:
            raise ValueError("A pre-built instance can only be bound with Scope.SINGLETON.")

    @classmethod
    def instance(cls, provides: type[T], obj: T, *, default: bool = False) -> Binding[T]:
        """Bind the pre-built ``obj``; it is shared, snapshotted if it can be, never closed."""
        if not conforms(obj, provides):
            raise TypeError(
                f"Binding.instance({provides.__qualname__}, obj): obj is a "
                f"{type(obj).__qualname__}, not a {provides.__qualname__}."
            )
        return cls(provides, _Constant(obj), Scope.SINGLETON, default, prebuilt=True)  # type: ignore[arg-type]


_FACTORY_HELP = "factory(resolver) -> instance: one positional parameter, the resolver"


def _check_factory(factory: Callable[..., object], provides: type) -> None:
    """Refuse, when the binding is made, a factory that cannot be called with the resolver.

    Otherwise the mistake shows only when the resource is first built, mid-evaluation.
    """
    import inspect  # already imported by the tool module in practice; kept off import time

    code: Any = getattr(factory, "__code__", None)
    what = f"The factory of the binding for {type_name(provides)}"
    if code is not None and inspect.isfunction(factory):
        # Fast path for plain functions and lambdas (the common case): read the code object.
        defaults = len(factory.__defaults__ or ())
        kw_defaults = factory.__kwdefaults__ or {}
        varargs = bool(code.co_flags & inspect.CO_VARARGS)
        required = code.co_argcount - defaults
        ok = (
            required <= 1
            and (code.co_argcount >= 1 or varargs)
            and all(
                name in kw_defaults
                for name in code.co_varnames[code.co_argcount :][: code.co_kwonlyargcount]
            )
        )
        if inspect.iscoroutinefunction(factory):
            raise TypeError(
                f"{what}, {factory.__qualname__}, is a coroutine function; factories are "
                f"called synchronously: {_FACTORY_HELP}. Build the object in a plain function."
            )
        if ok:
            return
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return  # a builtin without a readable signature: trust it
    try:
        signature.bind(None)
    except TypeError as exc:
        name = getattr(factory, "__qualname__", None) or repr(factory)
        raise TypeError(
            f"{what}, {name}{signature}, cannot be called with the resolver ({exc}); it "
            f"must be {_FACTORY_HELP}. Use Binding.instance({provides.__qualname__}, obj) "
            "for a pre-built object, or lambda resolver: ... to ignore the resolver."
        ) from None


def conforms(obj: object, tp: type) -> bool:
    """``isinstance(obj, tp)``, or ``True`` when ``tp`` cannot be checked at run time."""
    try:
        return isinstance(obj, tp)
    except TypeError:
        # Protocols that are not runtime-checkable cannot be tested; trust the type checker.
        return True


def type_name(tp: type) -> str:
    """``module.QualName`` of a type, for messages."""
    return f"{tp.__module__}.{tp.__qualname__}"


def describe(binding: Binding[Any]) -> str:
    """A one-line description of a binding for error messages."""
    factory = binding.factory
    if isinstance(factory, _Constant):
        made = repr(factory)
    else:
        module = getattr(factory, "__module__", None)
        qualname = getattr(factory, "__qualname__", None) or repr(factory)
        made = f"factory {module}.{qualname}" if module else f"factory {qualname}"
    default = ", default" if binding.default else ""
    return f"{binding.provides.__qualname__} from {made} ({binding.scope.name}{default})"
