"""``Session``: typed slices of state, reducers, subscribers, snapshot and restore."""

from __future__ import annotations

import dataclasses
import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, TypeVar, overload

from ._chain import EMPTY, Chain
from ._reducers import append
from ._slices import Append, Clear, Extend, Reducer, Replace, SlicePolicy, SliceView
from ._snapshot import SessionSnapshot

__all__ = ["Session", "Slice"]

T = TypeVar("T")
E = TypeVar("E")

logger = logging.getLogger("haversack.session")


class Slice(SliceView[T]):
    """The live slice of one dataclass type in a session: ``session[T]``.

    Reads see the current contents. ``append``, ``extend``, ``seed`` and ``clear`` change the
    slice directly, without running reducers or notifying subscribers (use
    :meth:`Session.dispatch` for events).
    """

    __slots__ = ("_session",)

    def __init__(self, session: Session, slice_type: type[T]) -> None:
        super().__init__(slice_type, EMPTY)
        self._session = session

    def _contents(self) -> Chain[T]:
        # Always the session's current contents, unlike a view's fixed ones.
        return self._session._chains[self._type]

    @property
    def policy(self) -> SlicePolicy:
        """Whether this slice is rolled back (``STATE``) or kept (``LOG``) on failure."""
        return self._session._policies[self._type]

    def append(self, item: T) -> None:
        """Add ``item`` after the existing items (O(1))."""
        self._session._change(self._type, Append(item), "append")

    def extend(self, items: Iterable[T]) -> None:
        """Add ``items`` after the existing items, in order."""
        self._session._change(self._type, Extend(items), "extend")

    def seed(self, items: Iterable[T]) -> None:
        """Replace the slice's contents with ``items``."""
        self._session._change(self._type, Replace(items), "seed")

    def clear(self, where: Callable[[T], bool] | None = None) -> None:
        """Remove the items matching ``where``, or every item when it is ``None``."""
        self._session._change(self._type, Clear(where), "clear")

    def __repr__(self) -> str:
        return f"Slice({self._type.__qualname__}, {self.policy.name}, {len(self)} items)"


class _Subscription:
    __slots__ = ("callback", "event_type")

    def __init__(self, event_type: type | None, callback: Callable[[Any], object]) -> None:
        self.event_type = event_type
        self.callback = callback


class Session:
    """The state of one evaluation: one slice of immutable items per dataclass type.

    * ``session[T]`` is the :class:`Slice` of ``T``. A type becomes a slice the first time it is
      used (indexed, given a reducer or registered); its :class:`SlicePolicy` is fixed then:
      ``STATE`` unless :meth:`register_slice` chose ``LOG`` before any other use.
    * :meth:`dispatch` runs the reducers registered for the event's exact type, then notifies
      subscribers. Reducers are pure: they get a :class:`SliceView` and return an operation.
    * :meth:`snapshot` / :meth:`restore` capture and bring back every ``STATE`` slice; ``LOG``
      slices are left alone. Both cost O(number of slice types), never O(history).

    One session is meant for one executor: every change holds a lock, so a handler running in a
    worker thread is safe, but ordering between threads is the caller's business. Sessions never
    share state.
    """

    def __init__(self, *, session_id: str | None = None) -> None:
        if session_id is not None and (not isinstance(session_id, str) or not session_id):
            raise ValueError(f"session_id must be a non-empty string, got {session_id!r}.")
        self._id = session_id if session_id is not None else uuid.uuid4().hex
        # Identity, not the id string, proves a snapshot's origin: callers may reuse ids.
        self._token = object()
        self._lock = threading.RLock()
        self._policies: dict[type, SlicePolicy] = {}
        self._chains: dict[type, Chain[Any]] = {}
        self._reducers: dict[type, list[tuple[type, Reducer[Any, Any]]]] = {}
        # LOG slices registered with ``max_items``: they keep only their newest items.
        self._bounds: dict[type, int] = {}
        # The reducer register_log installed per log type, so a second call replaces it.
        self._log_reducers: dict[type, Reducer[Any, Any]] = {}
        self._subscribers: dict[type | None, list[_Subscription]] = {}
        # Per dispatched event type, its subscribers then the catch-all ones: built on the
        # first dispatch, forgotten when anyone subscribes or unsubscribes.
        self._audience: dict[type, tuple[_Subscription, ...]] = {}
        self._reducing = False
        # The STATE slice types, for snapshot(); rebuilt when a slice is created.
        self._state_types: tuple[type, ...] = ()
        # The STATE slices' contents as the last snapshot saw them, shared by every snapshot
        # taken until a STATE slice changes (``None`` once one has): executors snapshot before
        # every call, and most calls change no STATE slice.
        self._state_view: Mapping[type, Chain[Any]] | None = None
        # What each policy has recorded (haversack._policy_state), by policy name: rolled
        # back with the STATE slices. Copy-on-write, never changed in place, so a snapshot
        # keeps a reference; recording a value is one dict copy, not a slice write.
        self._policy_state: Mapping[str, object] = {}

    @property
    def session_id(self) -> str:
        """This session's id (a random hex string unless one was given)."""
        return self._id

    @property
    def slice_types(self) -> tuple[type, ...]:
        """Every slice type this session knows, in the order they were first used."""
        return tuple(self._policies)

    def __contains__(self, slice_type: object) -> bool:
        return slice_type in self._policies

    def __repr__(self) -> str:
        return f"Session(session_id={self._id!r}, slices={len(self._policies)})"

    # -- slices -------------------------------------------------------------------------------

    def register_slice(
        self, slice_type: type[T], *, policy: SlicePolicy = SlicePolicy.STATE
    ) -> Slice[T]:
        """Declare ``slice_type``'s policy and return its slice.

        Registering again with the same policy is a no-op; a different policy raises
        ``ValueError``, because the policy is fixed at first use.
        """
        if not isinstance(policy, SlicePolicy):
            raise TypeError(f"policy must be a SlicePolicy, got {policy!r}.")
        with self._lock:
            current = self._policies.get(slice_type)
            if current is None:
                self._create(slice_type, policy)
            elif current is not policy:
                raise ValueError(
                    f"Slice {_name(slice_type)} is already a {current.name} slice, so it cannot "
                    f"be registered as {policy.name}: a slice's policy is fixed when the type is "
                    f"first used. Call register_slice({slice_type.__qualname__}, "
                    f"policy=SlicePolicy.{policy.name}) before indexing the session with it or "
                    "registering reducers for it."
                )
        return Slice(self, slice_type)

    def __getitem__(self, slice_type: type[T]) -> Slice[T]:
        if slice_type not in self._policies:
            with self._lock:
                if slice_type not in self._policies:
                    self._create(slice_type, SlicePolicy.STATE)
        return Slice(self, slice_type)

    def _create(self, slice_type: type, policy: SlicePolicy) -> None:
        if not (isinstance(slice_type, type) and dataclasses.is_dataclass(slice_type)):
            raise TypeError(
                f"Session slices are keyed by dataclass types, got {slice_type!r}; wrap the "
                "value in a (frozen) dataclass."
            )
        self._policies[slice_type] = policy
        self._chains[slice_type] = EMPTY
        if policy is SlicePolicy.STATE:
            self._state_types = (*self._state_types, slice_type)
            self._state_view = None

    def _items(self, slice_type: type[T]) -> tuple[T, ...]:
        """``self[slice_type].all()`` without building a :class:`Slice` (a hot path)."""
        chain = self._chains.get(slice_type)
        return self[slice_type].all() if chain is None else chain.items()

    def _seed(self, slice_type: type[T], items: tuple[T, ...]) -> None:
        """``self[slice_type].seed(items)`` for a tuple, without the Slice and Replace objects."""
        if slice_type not in self._policies:
            self[slice_type]
        with self._lock:
            if self._reducing:
                self._guard(f"{_name(slice_type)}.seed()")
            for item in items:
                _check_item(item, slice_type, "seed")
            self._chains[slice_type] = Chain.of(items)
            self._state_view = None

    def _change(self, slice_type: type, op: object, action: str) -> None:
        with self._lock:
            if self._reducing:  # checked first: formatting the message on every append costs
                self._guard(f"{_name(slice_type)}.{action}()")
            self._chains[slice_type] = _apply(
                self._chains[slice_type], op, slice_type, action, self._bounds.get(slice_type)
            )
            self._state_view = None

    def _guard(self, action: str) -> None:
        if self._reducing:
            raise RuntimeError(
                f"A reducer called {action} on its session. Reducers must be pure: return an "
                "operation (Append, Extend, Replace, Clear) instead of changing the session."
            )

    # -- reducers and events ------------------------------------------------------------------

    @overload
    def register_reducer(
        self, event_type: type[E], reducer: Reducer[E, E] = ..., *, slice_type: None = None
    ) -> None: ...

    @overload
    def register_reducer(
        self, event_type: type[E], reducer: Reducer[T, E], *, slice_type: type[T]
    ) -> None: ...

    def register_reducer(
        self,
        event_type: type[Any],
        reducer: Reducer[Any, Any] = append,
        *,
        slice_type: type[Any] | None = None,
    ) -> None:
        """Run ``reducer`` on ``slice_type``'s slice whenever an ``event_type`` is dispatched.

        ``slice_type`` defaults to ``event_type`` and ``reducer`` to :func:`append`, so
        ``register_reducer(ToolInvoked)`` records every ``ToolInvoked`` event in its own slice.
        Reducers for one event type run in registration order; registering the same reducer
        for the same event and slice again does nothing.
        """
        if not isinstance(event_type, type):
            raise TypeError(f"event_type must be a type, got {event_type!r}.")
        if not callable(reducer):
            raise TypeError(f"reducer must be callable, got {reducer!r}.")
        target = event_type if slice_type is None else slice_type
        with self._lock:
            if target not in self._policies:
                self._create(target, SlicePolicy.STATE)
            entries = self._reducers.setdefault(event_type, [])
            # Idempotent, so components that each install what they need can share a session.
            if not any(t is target and r is reducer for t, r in entries):
                entries.append((target, reducer))

    def register_log(
        self,
        event_type: type[E],
        reducer: Reducer[E, E] = append,
        *,
        max_items: int | None = None,
    ) -> Slice[E]:
        """Record every dispatched ``event_type`` in its own ``LOG`` slice; returns the slice.

        ``reducer`` decides what is kept of each event (default :func:`append`: the event
        itself; a reducer may append a smaller record of the same type). With ``max_items``
        the slice is a ring that keeps only the newest ``max_items`` items, so its memory
        stays flat however many events are dispatched. Calling it again replaces the
        recording reducer and the bound: the last call wins.
        """
        if max_items is not None and (
            isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 1
        ):
            raise ValueError(f"max_items must be a positive integer or None, got {max_items!r}.")
        log = self.register_slice(event_type, policy=SlicePolicy.LOG)
        if not callable(reducer):
            raise TypeError(f"reducer must be callable, got {reducer!r}.")
        with self._lock:
            previous = self._log_reducers.get(event_type)
            entries = self._reducers.setdefault(event_type, [])
            for index, (target, existing) in enumerate(entries):
                if target is event_type and existing is previous:
                    entries[index] = (event_type, reducer)
                    break
            else:
                if not any(t is event_type and r is reducer for t, r in entries):
                    entries.append((event_type, reducer))
            self._log_reducers[event_type] = reducer
            if max_items is None:
                self._bounds.pop(event_type, None)
            else:
                self._bounds[event_type] = max_items
                chain = self._chains[event_type]
                if len(chain) > max_items:
                    self._chains[event_type] = Chain.of(chain.items()[-max_items:])
        return log

    def dispatch(self, event: object) -> None:
        """Apply ``event`` through its reducers, then tell its subscribers.

        Reducers for ``type(event)`` (exact type) run in registration order; each sees the
        changes of the ones before. The changes are applied all together or, if a reducer raises
        or returns something invalid, not at all: the exception propagates with a note naming
        the reducer. Subscribers run afterwards, outside the session lock; a subscriber that
        raises is logged and skipped.
        """
        event_type = type(event)
        with self._lock:
            if self._reducing:
                self._guard(f"dispatch({event_type.__qualname__})")
            entries = self._reducers.get(event_type)
            if entries:
                chains, bounds = self._chains, self._bounds
                working: dict[type, Chain[Any]] = {}
                self._reducing = True
                try:
                    for slice_type, reducer in entries:
                        chain = working[slice_type] if slice_type in working else chains[slice_type]
                        try:
                            op = reducer(SliceView(slice_type, chain), event)
                            working[slice_type] = _apply(
                                chain, op, slice_type, "reducer", bounds.get(slice_type)
                            )
                        except Exception as exc:
                            exc.add_note(
                                f"while reducer {_callable_name(reducer)} handled "
                                f"{event_type.__qualname__} for slice {slice_type.__qualname__}; "
                                "no slice was changed by this dispatch"
                            )
                            raise
                finally:
                    self._reducing = False
                chains.update(working)
                if self._state_view is not None and not working.keys().isdisjoint(
                    self._state_types
                ):
                    self._state_view = None
            subscriptions = self._audience.get(event_type)
            if subscriptions is None:
                subscriptions = self._audience[event_type] = (
                    *self._subscribers.get(event_type, ()),
                    *self._subscribers.get(None, ()),
                )
        for subscription in subscriptions:
            try:
                subscription.callback(event)
            # Telemetry must never break state changes; the failure is logged with its traceback.
            except Exception:
                logger.exception(
                    "Session %s: subscriber %s failed on %s; continuing.",
                    self._id,
                    _callable_name(subscription.callback),
                    event_type.__qualname__,
                )

    @overload
    def subscribe(
        self, event_type: type[E], callback: Callable[[E], object]
    ) -> Callable[[], None]: ...

    @overload
    def subscribe(
        self, event_type: None, callback: Callable[[Any], object]
    ) -> Callable[[], None]: ...

    def subscribe(
        self, event_type: type[Any] | None, callback: Callable[[Any], object]
    ) -> Callable[[], None]:
        """Call ``callback(event)`` after each dispatch of ``event_type`` (``None``: every event).

        Type subscribers run before catch-all ones, each group in subscription order. Returns a
        function that unsubscribes (calling it again does nothing).
        """
        if event_type is not None and not isinstance(event_type, type):
            raise TypeError(f"event_type must be a type or None, got {event_type!r}.")
        if not callable(callback):
            raise TypeError(f"callback must be callable, got {callback!r}.")
        subscription = _Subscription(event_type, callback)
        with self._lock:
            # Copy-on-write so dispatch can iterate a list no one mutates.
            self._subscribers[event_type] = [*self._subscribers.get(event_type, ()), subscription]
            self._audience = {}

        def unsubscribe() -> None:
            with self._lock:
                current = self._subscribers.get(event_type, [])
                self._subscribers[event_type] = [s for s in current if s is not subscription]
                self._audience = {}

        return unsubscribe

    # -- snapshots ----------------------------------------------------------------------------

    def snapshot(self) -> SessionSnapshot:
        """Capture every ``STATE`` slice (and the policies' records); O(number of slice
        types) at most, independent of history, and O(1) while no STATE slice changes."""
        with self._lock:
            view = self._state_view
            if view is None:
                chains = self._chains
                view = self._state_view = MappingProxyType(
                    {tp: chains[tp] for tp in self._state_types}
                )
            return SessionSnapshot(self._token, self._id, view, self._policy_state)

    def restore(self, snapshot: SessionSnapshot) -> None:
        """Put every ``STATE`` slice (and the policies' records) back exactly as they were
        in ``snapshot``.

        ``STATE`` slices first used after the snapshot become empty; ``LOG`` slices, reducers
        and subscribers are untouched. A snapshot of another session raises ``ValueError``.
        """
        if not isinstance(snapshot, SessionSnapshot):
            raise TypeError(
                f"restore() needs a SessionSnapshot, got {type(snapshot).__qualname__}."
            )
        if snapshot._owner is not self._token:
            raise ValueError(
                f"Cannot restore a snapshot of session {snapshot.session_id!r} into session "
                f"{self._id!r}: a snapshot can only be restored into the session that took it."
            )
        with self._lock:
            self._guard("restore()")
            saved = snapshot._slices
            if saved is not self._state_view:  # else every STATE slice is as saved already
                chains = self._chains
                for tp in self._state_types:
                    chains[tp] = saved.get(tp, EMPTY)
                # STATE types only ever grow, so the same count means the same types.
                self._state_view = saved if len(saved) == len(self._state_types) else None
            self._policy_state = snapshot._policy_state

    # -- policy records -----------------------------------------------------------------------

    def _set_policy_state(self, policy: str, value: object) -> None:
        """Make ``value`` what ``policy`` has recorded (the caller holds ``self._lock``)."""
        if self._reducing:
            self._guard(f"add_policy_value({policy!r}, ...)")
        self._policy_state = {**self._policy_state, policy: value}

    def __iter__(self) -> Iterator[type]:
        return iter(self.slice_types)


def _apply(
    chain: Chain[Any], op: object, slice_type: type, source: str, bound: int | None = None
) -> Chain[Any]:
    if op is None:
        return chain
    if isinstance(op, Append):
        item = op.item
        if not isinstance(item, slice_type):  # the check of _check_item, without its call
            _check_item(item, slice_type, source)
        if bound is not None:
            return chain.append_bounded(item, bound)
        return chain.append(item)
    if isinstance(op, Extend):
        for item in op.items:
            _check_item(item, slice_type, source)
        return _bounded(chain.extend(op.items), bound)
    if isinstance(op, Replace):
        for item in op.items:
            _check_item(item, slice_type, source)
        return _bounded(Chain.of(op.items), bound)
    if isinstance(op, Clear):
        if op.where is None:
            return EMPTY
        keep = op.where
        return Chain.of(item for item in chain.items() if not keep(item))
    raise TypeError(
        f"A reducer for slice {slice_type.__qualname__} returned {op!r}; reducers return "
        "Append, Extend, Replace, Clear or None."
    )


def _bounded(chain: Chain[Any], bound: int | None) -> Chain[Any]:
    if bound is None or len(chain) <= bound:
        return chain
    return Chain.of(chain.items()[-bound:])


def _check_item(item: object, slice_type: type, source: str) -> None:
    if not isinstance(item, slice_type):
        raise TypeError(
            f"Slice {slice_type.__qualname__} only holds {slice_type.__qualname__} instances; "
            f"{source} got {type(item).__qualname__}: {item!r}."
        )


def _name(tp: type) -> str:
    return f"{tp.__module__}.{tp.__qualname__}"


def _callable_name(fn: object) -> str:
    return str(getattr(fn, "__qualname__", None) or repr(fn))
