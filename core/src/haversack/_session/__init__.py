"""The session: typed slices of state with reducers, subscribers and cheap snapshots."""

from __future__ import annotations

from ._core import Session, Slice
from ._reducers import append, replace_latest, upsert_by
from ._slices import Append, Clear, Extend, Reducer, Replace, SliceOp, SlicePolicy, SliceView
from ._snapshot import SessionSnapshot

__all__ = [
    "Append",
    "Clear",
    "Extend",
    "Reducer",
    "Replace",
    "Session",
    "SessionSnapshot",
    "Slice",
    "SliceOp",
    "SlicePolicy",
    "SliceView",
    "append",
    "replace_latest",
    "upsert_by",
]
