"""The pytest plugin of :mod:`haversack.testing` (entry point ``pytest11``).

It only defines fixtures, all prefixed ``haversack_`` and none autouse, so tests that do
not ask for them behave exactly as without the plugin. The core is imported when a fixture
is first used, not when pytest loads the plugin.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from haversack import (
        Deadline,
        Prompt,
        RenderedPrompt,
        ResourceRegistry,
        Resources,
        Section,
        Session,
        ToolExecutor,
        ToolPolicy,
    )

__all__ = [
    "ComposeFactory",
    "ExecutorFactory",
    "haversack_compose",
    "haversack_executor",
    "haversack_session",
]


class ComposeFactory(Protocol):
    """The ``haversack_compose`` fixture: :func:`haversack.testing.compose_packs`."""

    def __call__(
        self,
        packs: Sequence[str] | str,
        *,
        config: Mapping[str, Mapping[str, Any]] | None = ...,
        sections: Sequence[Section[Any]] = ...,
        policies: Sequence[ToolPolicy] = ...,
        resources: ResourceRegistry | Mapping[type, object] | None = ...,
        strict: bool = ...,
        config_file: str | Path | None = ...,
        ns: str = ...,
        key: str = ...,
    ) -> Prompt: ...


class ExecutorFactory(Protocol):
    """The ``haversack_executor`` fixture; see :func:`haversack_executor`."""

    def __call__(
        self,
        prompt: Prompt | RenderedPrompt | None = ...,
        *,
        packs: Sequence[str] | str | None = ...,
        config: Mapping[str, Mapping[str, Any]] | None = ...,
        session: Session | None = ...,
        resources: Resources | ResourceRegistry | None = ...,
        deadline: Deadline | None = ...,
    ) -> ToolExecutor: ...


@pytest.fixture
def haversack_compose() -> ComposeFactory:
    """Compose a prompt from exactly the packs named: ``haversack_compose(["mypack"])``.

    Strict, isolated from ``HAVERSACK_*`` variables and the project's config file; no other
    installed pack is imported. Same arguments as :func:`haversack.testing.compose_packs`.
    """
    from ._compose import compose_packs

    return compose_packs


@pytest.fixture
def haversack_session() -> Session:
    """A fresh, empty :class:`~haversack.Session`."""
    from haversack import Session

    return Session()


@pytest.fixture
def haversack_executor() -> Iterator[ExecutorFactory]:
    """Make :class:`~haversack.ToolExecutor` objects, each on a fresh session; closed at teardown.

    ``haversack_executor(packs=["mypack"], config={...})`` composes the packs (as
    ``haversack_compose`` does); ``haversack_executor(prompt)`` uses a prompt you built (a
    ``Prompt`` is rendered with its defaults). ``session=`` shares a session between
    executors; ``executor.session`` is the one in use.
    """
    from ._compose import compose_packs

    made: list[ToolExecutor] = []

    def make(
        prompt: Prompt | RenderedPrompt | None = None,
        *,
        packs: Sequence[str] | str | None = None,
        config: Mapping[str, Mapping[str, Any]] | None = None,
        session: Session | None = None,
        resources: Resources | ResourceRegistry | None = None,
        deadline: Deadline | None = None,
    ) -> ToolExecutor:
        from haversack import Prompt, Session, ToolExecutor

        if (prompt is None) == (packs is None):
            raise TypeError("haversack_executor needs either a prompt or packs=[...], not both.")
        if prompt is None:
            assert packs is not None
            prompt = compose_packs(packs, config=config)
        elif config is not None:
            raise TypeError("config= is for packs=; configure a prompt you built yourself.")
        rendered = prompt.render() if isinstance(prompt, Prompt) else prompt
        executor = ToolExecutor(
            rendered,
            session=session if session is not None else Session(),
            resources=resources,
            deadline=deadline,
        )
        made.append(executor)
        return executor

    yield make
    errors: list[BaseException] = []
    for executor in reversed(made):
        try:
            executor.close()
        except Exception as exc:  # noqa: BLE001 - close every executor, then report
            errors.append(exc)
    if errors:
        raise errors[0]
