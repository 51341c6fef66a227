"""Where the plan lives: the ``Plan`` STATE slice of the session, holding at most one item."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._model import Plan

if TYPE_CHECKING:
    from haversack import Session

__all__ = ["current_plan", "save_plan"]


def current_plan(session: Session) -> Plan | None:
    """The session's plan, or ``None`` before the first setup."""
    return session[Plan].latest()


def save_plan(session: Session, plan: Plan) -> None:
    """Make ``plan`` the session's only plan (a STATE slice: rolled back with a failed call)."""
    session[Plan].seed((plan,))
