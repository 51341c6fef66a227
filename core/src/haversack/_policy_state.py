"""Per-policy state kept in a session STATE slice, so rolled-back calls leave no trace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._session import Session

__all__ = ["PolicyState", "policy_values", "set_policy_values"]


@dataclass(frozen=True, slots=True)
class PolicyState:
    """The remembered values (tool names, paths) of the policy called ``policy``.

    One entry per policy name: two policies never share or overwrite each other's state.
    """

    policy: str
    values: frozenset[str] = frozenset()


def policy_values(session: Session, policy: str) -> frozenset[str]:
    """What ``policy`` has recorded in ``session`` so far."""
    for state in session[PolicyState].all():
        if state.policy == policy:
            return state.values
    return frozenset()


def set_policy_values(session: Session, policy: str, values: frozenset[str]) -> None:
    """Replace what ``policy`` has recorded in ``session``."""
    others = tuple(s for s in session[PolicyState].all() if s.policy != policy)
    session[PolicyState].seed((*others, PolicyState(policy, values)))
