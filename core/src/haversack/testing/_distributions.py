"""Fake installed distributions (``*.dist-info`` folders and modules) for tests of packs."""

from __future__ import annotations

import importlib
import sys
import textwrap
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

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

    ``entry_points`` maps entry-point names (pack names in the default ``haversack`` group)
    to ``module[:attr]``; ``requires`` become ``Requires-Dist`` lines; ``modules`` maps
    module names to source text (dedented). Put ``root`` on ``sys.path`` to import them, or
    use :class:`FakeSite`, which does that. Returns the ``.dist-info`` folder.
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
    """A folder of fake installed distributions, one per pack, with uniquely named modules.

    ``FakeSite(tmp_path).activate(monkeypatch)`` makes pack discovery see only this folder
    for the rest of the test; :meth:`add` then installs a pack from its plugin source.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def activate(
        self, monkeypatch: pytest.MonkeyPatch, *, keep_installed: bool = False
    ) -> FakeSite:
        """Point pack discovery at this folder and put it on ``sys.path``, until the test ends.

        Discovery then sees only the packs added here; ``keep_installed=True`` puts this
        folder first and still finds the distributions really installed (to fake one pack
        next to the real ones). Returns ``self``.
        """
        from haversack._packs import _discovery

        self.root.mkdir(parents=True, exist_ok=True)
        path = [str(self.root), *sys.path] if keep_installed else [str(self.root)]
        monkeypatch.setattr(_discovery, "search_path", path)
        monkeypatch.syspath_prepend(str(self.root))
        return self

    def add(
        self,
        pack: str,
        source: str = "",
        *,
        distribution: str | None = None,
        version: str = "1.0",
        requires: Sequence[str] = ("haversack>=0.1",),
    ) -> str:
        """Install pack ``pack`` whose plugin module has ``source``; returns the module name.

        The module is named ``hvt_<pack>_<random>`` so packs added by different tests never
        collide in ``sys.modules``; the distribution is ``hvt-<pack>`` unless ``distribution``
        is given.
        """
        module = f"hvt_{pack.replace('-', '_')}_{uuid.uuid4().hex[:8]}"
        write_distribution(
            self.root,
            distribution or f"hvt-{pack}",
            version=version,
            entry_points={pack: module},
            requires=requires,
            modules={module: source},
        )
        # The finder caches directory listings: without this, a module written after the
        # folder was first searched is not found.
        importlib.invalidate_caches()
        return module
