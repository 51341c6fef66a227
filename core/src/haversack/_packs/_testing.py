"""Write fake installed distributions (``*.dist-info`` + modules) for tests of packs."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["FakeSite", "write_distribution"]


def write_distribution(
    root: Path,
    distribution: str,
    *,
    version: str = "1.0",
    entry_points: Mapping[str, str] = {},
    requires: Sequence[str] = (),
    modules: Mapping[str, str] = {},
    group: str = "haversack",
) -> Path:
    """Create ``<root>/<dist>-<version>.dist-info`` and the given top-level modules.

    ``entry_points`` maps pack names to ``module[:attr]`` in ``group``; ``modules`` maps
    module names to source text (dedented). Put ``root`` on ``sys.path`` to import them.
    Returns the ``.dist-info`` folder.
    """
    folder = root / f"{distribution.replace('-', '_')}-{version}.dist-info"
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["Metadata-Version: 2.1", f"Name: {distribution}", f"Version: {version}"]
    lines += [f"Requires-Dist: {req}" for req in requires]
    (folder / "METADATA").write_text("\n".join(lines) + "\n\nA fake distribution.\n")
    if entry_points:
        body = "\n".join(f"{name} = {target}" for name, target in entry_points.items())
        (folder / "entry_points.txt").write_text(f"[{group}]\n{body}\n")
    for name, source in modules.items():
        (root / f"{name}.py").write_text(textwrap.dedent(source))
    return folder


class FakeSite:
    """A folder of fake distributions, one per pack, with uniquely named modules.

    Point discovery at it (``_discovery.search_path = [str(root)]``) and put ``root`` on
    ``sys.path``; :meth:`add` invalidates the import caches so new modules are found.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def add(
        self,
        pack: str,
        source: str = "",
        *,
        distribution: str | None = None,
        version: str = "1.0",
        requires: Sequence[str] = ("haversack>=0.1",),
    ) -> str:
        """Install a pack whose plugin module has ``source``; returns the module name."""
        import importlib
        import uuid

        module = f"hvt_{pack.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
        write_distribution(
            self.root,
            distribution or f"hvt-{pack}",
            version=version,
            entry_points={pack: module},
            requires=requires,
            modules={module: source},
        )
        importlib.invalidate_caches()
        return module
