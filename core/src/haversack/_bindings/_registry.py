"""``ResourceRegistry``: an immutable set of bindings, one per type, that can be merged."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from haversack.errors import NameConflictError, ResourceError

from ._binding import Binding, describe, type_name

if TYPE_CHECKING:
    from haversack._resources import Resources

__all__ = ["ResourceRegistry", "as_registry", "prevailing", "unbound_error"]

T = TypeVar("T")


class ResourceRegistry:
    """Bindings keyed by the type they provide; immutable, merged with :meth:`merge`.

    Open it to get live instances: ``with registry.open() as resources: resources.get(T)``.
    """

    __slots__ = ("_bindings",)

    def __init__(self, bindings: Mapping[type, Binding[Any]] | None = None) -> None:
        table: dict[type, Binding[Any]] = {}
        for key, binding in (bindings or {}).items():
            if not isinstance(binding, Binding):
                raise TypeError(
                    f"ResourceRegistry values must be Binding objects; the value for "
                    f"{getattr(key, '__qualname__', key)} is a {type(binding).__qualname__}. "
                    "Use Binding.instance(T, obj) for a pre-built object."
                )
            if key is not binding.provides:
                raise ValueError(
                    f"ResourceRegistry key {getattr(key, '__qualname__', key)} does not match "
                    f"its binding, which provides {binding.provides.__qualname__}."
                )
            table[key] = binding
        self._bindings = table

    @classmethod
    def of(cls, *bindings: Binding[Any]) -> ResourceRegistry:
        """A registry of ``bindings``; two for one type combine as in :meth:`merge`."""
        table: dict[type, Binding[Any]] = {}
        for binding in bindings:
            if not isinstance(binding, Binding):
                raise TypeError(f"ResourceRegistry.of takes Binding objects, got {binding!r}.")
            current = table.get(binding.provides)
            table[binding.provides] = binding if current is None else _combine(current, binding)
        return cls(table)

    def merge(self, other: ResourceRegistry) -> ResourceRegistry:
        """A new registry with the bindings of both.

        For a type bound in both, a ``default=True`` binding gives way to a non-default one.
        Two different non-default bindings (or two different defaults) for one type raise
        :class:`~haversack.errors.NameConflictError` with ``kind="resource"`` naming the type.
        """
        if not isinstance(other, ResourceRegistry):
            raise TypeError(f"merge() needs a ResourceRegistry, got {type(other).__qualname__}.")
        table = dict(self._bindings)
        for tp, binding in other._bindings.items():
            current = table.get(tp)
            table[tp] = binding if current is None else _combine(current, binding)
        return ResourceRegistry(table)

    def get(self, tp: type[T]) -> Binding[T]:
        """The binding for ``tp``; ``ResourceError`` listing the bound types if there is none."""
        binding = self._bindings.get(tp)
        if binding is None:
            raise unbound_error(tp, self._bindings)
        return binding

    def get_optional(self, tp: type[T]) -> Binding[T] | None:
        """The binding for ``tp``, or ``None``."""
        return self._bindings.get(tp)

    @property
    def bindings(self) -> tuple[Binding[Any], ...]:
        """Every binding, in the order the types were first bound."""
        return tuple(self._bindings.values())

    def open(self, *, eager: bool = False) -> Resources:
        """Live resources; use as ``with registry.open() as resources:``.

        Instances are built lazily on first ``get`` unless ``eager``, which builds every
        ``SINGLETON`` now, in binding order (so ``snapshottables()`` covers them from the
        start). Leaving the ``with`` block closes what was built.
        """
        # The one place the declarations reach into the runtime, and only when called.
        from haversack._resources._live import Resources

        return Resources(self, eager=eager)

    def __contains__(self, tp: object) -> bool:
        return tp in self._bindings

    def __iter__(self) -> Iterator[type]:
        return iter(self._bindings)

    def __len__(self) -> int:
        return len(self._bindings)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceRegistry):
            return NotImplemented
        return self._bindings == other._bindings

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ResourceRegistry({', '.join(describe(b) for b in self._bindings.values())})"


def as_registry(resources: ResourceRegistry | Mapping[type, object]) -> ResourceRegistry:
    """``resources`` as a registry: a ``ResourceRegistry`` as it is, or a mapping from each
    type to a pre-built instance (bound with :meth:`Binding.instance`) or to a ``Binding``.

    What ``compose(resources=...)`` and ``Prompt.bind(resources=...)`` accept.
    """
    if isinstance(resources, ResourceRegistry):
        return resources
    if not isinstance(resources, Mapping):
        raise TypeError(
            "resources must be a ResourceRegistry or a mapping from type to an instance or a "
            f"Binding, got {type(resources).__qualname__}."
        )
    bindings: list[Binding[Any]] = []
    for tp, value in resources.items():
        if not isinstance(value, Binding):
            bindings.append(Binding.instance(tp, value))
        elif value.provides is tp:
            bindings.append(value)
        else:
            raise ValueError(
                f"resources[{getattr(tp, '__qualname__', tp)}] is a binding that provides "
                f"{value.provides.__qualname__}; key each binding by the type it provides."
            )
    return ResourceRegistry.of(*bindings)


def prevailing(bindings: Sequence[Binding[Any]]) -> tuple[Binding[Any], Binding[Any] | None]:
    """Of several bindings for one type, the one that wins, and the first that clashes with it.

    A non-default binding beats every ``default=True`` one; two different bindings of the
    same rank clash (equal ones, such as one ``Binding.instance`` given twice, do not).
    """
    strong = [b for b in bindings if not b.default] or list(bindings)
    winner = strong[0]
    return winner, next((b for b in strong[1:] if b != winner), None)


def _combine(current: Binding[Any], new: Binding[Any]) -> Binding[Any]:
    winner, rival = prevailing((current, new))
    if rival is None:
        return winner
    name = type_name(current.provides)
    if current.default:
        message = (
            f"Two default bindings provide {name}: {describe(current)} and {describe(new)}. "
            f"Neither gives way to the other; bind a non-default {current.provides.__qualname__} "
            "to choose one."
        )
    else:
        message = (
            f"Two bindings provide {name}: {describe(current)} and {describe(new)}. A type can "
            "have only one non-default binding; remove one, or mark the fallback default=True."
        )
    raise NameConflictError(
        message, kind="resource", name=name, contributors=(describe(current), describe(new))
    )


def unbound_error(tp: object, bound: Mapping[type, object]) -> ResourceError:
    """The error for asking for a type nothing binds."""
    wanted = type_name(tp) if isinstance(tp, type) else repr(tp)
    names = sorted(type_name(t) for t in bound)
    listing = f"Bound types: {', '.join(names)}." if names else "No types are bound."
    return ResourceError(f"No resource is bound for {wanted}. {listing}")
