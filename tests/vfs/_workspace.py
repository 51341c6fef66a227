"""Test helper: a prompt composed from the installed ``vfs`` pack, with a session and executor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from haversack import Filesystem, Prompt, Section, Session, ToolExecutor, ToolResult, compose

from ._dump import dump

#: Environment variables that change pack selection; tests clear them.
SELECTION_VARIABLES = ("HAVERSACK_PACKS", "HAVERSACK_DISABLE", "HAVERSACK_STRICT")


def compose_vfs(
    tmp_path: Path,
    config: Mapping[str, Any] | None = None,
    *,
    packs: Sequence[str] = ("vfs",),
    extra_config: Mapping[str, Mapping[str, Any]] | None = None,
    sections: Sequence[Section[Any]] = (),
    resources: Mapping[type, object] | None = None,
) -> Prompt:
    """Compose strictly from exactly ``packs``, ignoring the environment and config files."""
    empty = tmp_path / "haversack.toml"
    empty.write_text("", encoding="utf-8")
    configs: dict[str, Mapping[str, Any]] = {"vfs": dict(config or {})}
    configs.update(extra_config or {})
    return compose(
        ns="t",
        key="t",
        packs=list(packs),
        config=configs,
        strict=True,
        config_file=empty,
        sections=sections,
        resources=resources,
    )


class Workspace:
    """One composed prompt, one session, one executor; helpers to call tools and inspect."""

    def __init__(self, prompt: Prompt) -> None:
        self.prompt = prompt
        self.rendered = prompt.render()
        self.session = Session()
        self.executor = ToolExecutor(self.rendered, session=self.session)

    @property
    def fs(self) -> Filesystem:
        return self.executor.resources.get(Filesystem)  # type: ignore[type-abstract]

    def call(self, name: str, **arguments: Any) -> ToolResult[Any]:
        return self.executor.execute(name, arguments)

    def ok(self, name: str, **arguments: Any) -> ToolResult[Any]:
        result = self.call(name, **arguments)
        assert result.success, result.render()
        return result

    def fail(self, name: str, **arguments: Any) -> ToolResult[Any]:
        """Call, assert failure, and assert the tree is exactly as before."""
        before = dump(self.fs)
        result = self.call(name, **arguments)
        assert not result.success, result.render()
        assert dump(self.fs) == before
        return result

    def tree(self) -> dict[str, str | None]:
        return dump(self.fs)

    def close(self) -> None:
        self.executor.close()
