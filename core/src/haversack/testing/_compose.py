"""``compose_packs``: a prompt from exactly the packs a test names, isolated from its setting."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from haversack import Prompt, ResourceRegistry, Section, ToolPolicy

__all__ = ["compose_packs", "isolated_selection"]

#: Environment variables that change which packs load or how; cleared while composing.
SELECTION_VARIABLES = ("HAVERSACK_PACKS", "HAVERSACK_DISABLE", "HAVERSACK_STRICT")


@contextmanager
def isolated_selection() -> Iterator[Path]:
    """Clear the pack-selection environment variables and yield an empty config file.

    Inside the block, composing with that file sees neither ``HAVERSACK_PACKS`` /
    ``HAVERSACK_DISABLE`` / ``HAVERSACK_STRICT`` nor the ``[tool.haversack]`` table of the
    project under test, so a test gets the same packs on every machine. Both are restored
    on exit.
    """
    saved = {name: os.environ.pop(name) for name in SELECTION_VARIABLES if name in os.environ}
    try:
        with tempfile.TemporaryDirectory(prefix="haversack-testing-") as folder:
            empty = Path(folder) / "haversack.toml"
            empty.write_text("", encoding="utf-8")
            yield empty
    finally:
        os.environ.update(saved)


def compose_packs(
    packs: Sequence[str] | str,
    *,
    config: Mapping[str, Mapping[str, Any]] | None = None,
    sections: Sequence[Section[Any]] = (),
    policies: Sequence[ToolPolicy] = (),
    resources: ResourceRegistry | Mapping[type, object] | None = None,
    strict: bool = True,
    config_file: str | Path | None = None,
    ns: str = "tests",
    key: str = "prompt",
) -> Prompt:
    """Compose a prompt from ``packs`` only (plus your ``sections``), strictly by default.

    No other installed pack is imported. The selection environment variables are ignored
    and, unless ``config_file`` is given, so is the project's config file: ``config``
    (``{"pack": {option: value}}``) is the only configuration. With ``strict`` (the
    default) a pack that fails to load raises instead of being left out.
    """
    from haversack._packs import compose

    names = [packs] if isinstance(packs, str) else list(packs)
    with isolated_selection() as empty:
        return compose(
            ns=ns,
            key=key,
            sections=sections,
            packs=names,
            config=config,
            strict=strict,
            config_file=config_file if config_file is not None else empty,
            policies=policies,
            resources=resources,
        )
