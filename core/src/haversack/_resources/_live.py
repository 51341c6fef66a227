"""``Resources``: the live instances of an opened registry, their scopes and lifetimes."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from haversack._bindings._binding import Binding, Scope, conforms, describe, type_name
from haversack._bindings._registry import unbound_error
from haversack.errors import ResourceError
from haversack.filesystem._protocol import Snapshottable

from ._memory import HoldsMemory

if TYPE_CHECKING:
    from haversack._bindings import ResourceRegistry

__all__ = ["Resources", "ToolCallScope"]

T = TypeVar("T")


class Resources:
    """Live resources of one opened :class:`ResourceRegistry`; a context manager.

    ``get(T)`` builds on first use (``SINGLETON``, cached), once per tool call (``TOOL_CALL``)
    or on every call (``PROTOTYPE``). Closing (leaving the ``with`` block) closes, in reverse
    creation order, every instance this object built that has ``close()`` (or else
    ``__exit__``); pre-built ``Binding.instance`` objects are never closed. Factories run
    under a lock, so two threads never build the same singleton twice.
    """

    def __init__(self, registry: ResourceRegistry, *, eager: bool = False) -> None:
        self._registry = registry
        self._lock = threading.RLock()
        self._singletons: dict[type, object] = {}
        self._owned: list[object] = []
        self._closed = False
        # The resolution stack (cycle detection) and the open tool call are per thread.
        self._local = threading.local()
        if eager:
            try:
                for binding in registry.bindings:
                    if binding.scope is Scope.SINGLETON:
                        self.get(binding.provides)
            except BaseException:
                self._close(quiet=True)
                raise

    @property
    def registry(self) -> ResourceRegistry:
        """The registry these resources were opened from."""
        return self._registry

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run; ``get`` then raises."""
        return self._closed

    def __enter__(self) -> Resources:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # With an exception already in flight, close failures are logged so they don't mask it.
        self._close(quiet=exc_type is not None)

    def close(self) -> None:
        """Close every instance built here (reverse creation order); idempotent.

        Every close is attempted; failures are raised afterwards as one ``ResourceError``.
        """
        self._close(quiet=False)

    def _close(self, *, quiet: bool) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            owned, self._owned = self._owned, []
            self._singletons.clear()
        _close_all(owned, "closing resources", quiet=quiet)

    def __contains__(self, tp: object) -> bool:
        return tp in self._registry

    def get(self, tp: type[T], /) -> T:
        """The instance for ``tp`` under its binding's scope.

        Raises ``ResourceError`` when ``tp`` is unbound (listing the bound types), when the
        factory fails (naming the binding, chained), on a dependency cycle (naming it), when
        a ``TOOL_CALL`` resource is asked for outside ``tool_call()`` or by a singleton, and
        after close.
        """
        binding = self._registry.get_optional(tp)
        if binding is None:
            raise unbound_error(tp, dict.fromkeys(self._registry))
        instance: T = self._get(binding)
        return instance

    def get_optional(self, tp: type[T], /) -> T | None:
        """The instance for ``tp``, or ``None`` if unbound (a failing factory still raises)."""
        # A built singleton needs neither the lock nor its binding (policies ask on every
        # call). Read before the flag: found and not yet closed is a get that came first.
        built = self._singletons.get(tp)
        if built is not None and not self._closed:
            return built  # type: ignore[return-value]
        binding = self._registry.get_optional(tp)
        return None if binding is None else self._get(binding)

    def _get(self, binding: Binding[Any]) -> Any:
        tp = binding.provides
        with self._lock:
            if self._closed:
                raise ResourceError(
                    f"Cannot get {type_name(tp)}: these resources are closed. Get resources "
                    "inside the `with registry.open() as resources:` block."
                )
            if binding.scope is Scope.SINGLETON:
                if tp in self._singletons:
                    return self._singletons[tp]
                obj = self._build(binding)
                self._singletons[tp] = obj
                if not binding.prebuilt:
                    self._owned.append(obj)
                return obj
            frame: ToolCallScope | None = getattr(self._local, "frame", None)
            needed_by_singleton = any(b.scope is Scope.SINGLETON for b in self._stack())
            if binding.scope is Scope.TOOL_CALL:
                if needed_by_singleton:
                    raise ResourceError(
                        f"{type_name(tp)} is TOOL_CALL-scoped, so the singleton "
                        f"{self._path(binding)} cannot depend on it: it would outlive the call. "
                        "Make the dependant TOOL_CALL or PROTOTYPE, or the dependency SINGLETON."
                    )
                if frame is None:
                    raise ResourceError(
                        f"{type_name(tp)} is TOOL_CALL-scoped: get it inside "
                        "`with resources.tool_call():`."
                    )
                if tp in frame._instances:
                    return frame._instances[tp]
                obj = self._build(binding)
                frame._instances[tp] = obj
                frame._owned.append(obj)
                return obj
            obj = self._build(binding)
            # A prototype lives as long as what asked for it: a singleton keeps it to the end.
            owner = frame._owned if frame is not None and not needed_by_singleton else self._owned
            owner.append(obj)
            return obj

    def _stack(self) -> list[Binding[Any]]:
        stack: list[Binding[Any]] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def _path(self, binding: Binding[Any]) -> str:
        return " -> ".join(b.provides.__qualname__ for b in [*self._stack(), binding])

    def _build(self, binding: Binding[Any]) -> object:
        stack = self._stack()
        if any(b.provides is binding.provides for b in stack):
            start = next(i for i, b in enumerate(stack) if b.provides is binding.provides)
            cycle = " -> ".join(b.provides.__qualname__ for b in [*stack[start:], binding])
            raise ResourceError(
                f"Dependency cycle among resources: {cycle}. A factory asks, directly or "
                "through others, for the type it is building; break the cycle."
            )
        path = self._path(binding)
        stack.append(binding)
        try:
            obj = binding.factory(self)
        except ResourceError as exc:
            # Errors from nested gets already name their cause; record the path once.
            if not getattr(exc, "_haversack_path_noted", False):
                exc.add_note(f"while building {path}")
                exc._haversack_path_noted = True  # type: ignore[attr-defined]
            raise
        except Exception as exc:
            where = f" while building {path}" if len(stack) > 1 else ""
            raise ResourceError(
                f"The binding {describe(binding)} failed{where}: its factory raised "
                f"{type(exc).__qualname__}: {exc}"
            ) from exc
        finally:
            stack.pop()
        if not conforms(obj, binding.provides):
            _close_all([obj], "discarding a wrong-typed resource", quiet=True)
            raise ResourceError(
                f"The binding {describe(binding)} returned a {type(obj).__qualname__}, not a "
                f"{binding.provides.__qualname__}."
            )
        return obj

    def tool_call(self) -> ToolCallScope:
        """A context manager scoping one tool call: ``TOOL_CALL`` instances (and prototypes)
        built inside it are closed when it ends. Tool calls do not nest within a thread."""
        return ToolCallScope(self)

    def snapshottables(self) -> tuple[Snapshottable, ...]:
        """The live singletons implementing :class:`~haversack.Snapshottable`, in binding order.

        Pre-built instances count even before their first ``get``; singletons from factories
        count once built (open with ``eager=True`` to have all of them from the start).
        """
        found: list[Snapshottable] = []
        seen: set[int] = set()
        with self._lock:
            for binding in self._registry.bindings:
                if binding.scope is not Scope.SINGLETON:
                    continue
                if binding.provides in self._singletons:
                    obj = self._singletons[binding.provides]
                elif binding.prebuilt and not self._closed:
                    obj = self._get(binding)
                else:
                    continue
                if isinstance(obj, Snapshottable) and id(obj) not in seen:
                    seen.add(id(obj))
                    found.append(obj)
        return tuple(found)

    def held_bytes(self) -> int:
        """What the singletons these resources built hold in memory: the sum of
        :meth:`HoldsMemory.held_bytes` over them (0 once closed).

        Pre-built ``Binding.instance`` objects are left out: they are shared, not this
        session's. Takes no lock, so a caller on another thread (a server summing every
        session) never waits for a factory that is building.
        """
        if self._closed:
            return 0
        owned = {id(obj) for obj in tuple(self._owned)}
        total = 0
        for obj in tuple(self._singletons.values()):
            if id(obj) in owned and isinstance(obj, HoldsMemory):
                total += obj.held_bytes()
        return total

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._singletons)} singletons built"
        return f"<Resources {state} of {self._registry!r}>"


class ToolCallScope:
    """The ``TOOL_CALL`` scope opened by :meth:`Resources.tool_call`; yields the resources.

    While open it is its thread's frame: it holds the ``TOOL_CALL`` instances of the call
    and what the call built (closed when it ends).
    """

    __slots__ = ("_instances", "_owned", "_resources", "_used")

    def __init__(self, resources: Resources) -> None:
        self._resources = resources
        self._used = False
        self._instances: dict[type, object] = {}
        self._owned: list[object] = []

    def __enter__(self) -> Resources:
        resources = self._resources
        local = resources._local
        if resources._closed:
            raise ResourceError("Cannot open a tool call: these resources are closed.")
        if getattr(local, "frame", None) is not None:
            raise ResourceError(
                "A tool call scope is already open in this thread; tool calls do not nest."
            )
        if self._used:
            raise ResourceError("This tool call scope was already used; call tool_call() again.")
        self._used = True
        local.frame = self
        return resources

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._used
        self._resources._local.frame = None
        if self._owned:
            _close_all(self._owned, "ending a tool call", quiet=exc_type is not None)


def _close_all(owned: list[object], during: str, *, quiet: bool) -> None:
    failures: list[tuple[object, Exception]] = []
    for obj in reversed(owned):
        try:
            close = getattr(obj, "close", None)
            if callable(close):
                close()
            elif hasattr(obj, "__exit__"):
                obj.__exit__(None, None, None)
        # One failing close must not leak the others; every failure is reported below.
        except Exception as exc:  # noqa: BLE001
            failures.append((obj, exc))
    if not failures:
        return
    summary = "; ".join(f"{type(o).__qualname__}: {type(e).__qualname__}: {e}" for o, e in failures)
    if quiet:
        import logging  # only when a close failed: keeps it off the import path

        logger = logging.getLogger("haversack.resources")
        for failed, error in failures:
            logger.error(
                "Closing %s failed while %s", type(failed).__qualname__, during, exc_info=error
            )
        return
    raise ResourceError(
        f"Closing {len(failures)} resource(s) failed while {during}: {summary}"
    ) from failures[0][1]
