"""Throwaway faulty distributions, written as real projects and installed with uv."""

from __future__ import annotations

import textwrap
from pathlib import Path

_PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[project]
name = "hvrel-{name}"
version = "0.9.0"
requires-python = ">=3.11"
dependencies = ["haversack>=0.1"]

[project.entry-points.haversack]
{name} = "hvrel_{name}.plugin"

[tool.hatch.build.targets.wheel]
packages = ["src/hvrel_{name}"]
"""

_HEAD = """\
from __future__ import annotations
import fractions
import haversack
from haversack import Binding, MarkdownSection, ReadBeforeWritePolicy, Tool, ToolResult
from haversack.hookspecs import hookimpl
"""

#: pack name -> plugin source; each is a fault (or half of a clash) the matrix installs.
PLUGINS: dict[str, str] = {
    "hookraise": """
        @hookimpl
        def register_tools(register):
            raise RuntimeError("hookraise exploded while registering")
    """,
    "wrongreg": """
        @hookimpl
        def register_tools(register):
            register("this is not a Tool")
    """,
    "wrongret": """
        @hookimpl
        def config_type():
            return 42
    """,
    "wrongsect": """
        @hookimpl
        def register_sections(register):
            register({"key": "a dict, not a Section"})
    """,
    "secta": """
        @hookimpl
        def register_sections(register):
            register(MarkdownSection(title="Notes", key="shared-notes", template="A."))
    """,
    "sectb": """
        @hookimpl
        def register_sections(register):
            register(MarkdownSection(title="Notes", key="shared-notes", template="B."))
    """,
    "pola": """
        @hookimpl
        def register_policies(register):
            register(ReadBeforeWritePolicy(read_tools=["r"], write_tools=["w"], name="same-policy"))
    """,
    "polb": """
        @hookimpl
        def register_policies(register):
            register(ReadBeforeWritePolicy(read_tools=["r"], write_tools=["w"], name="same-policy"))
    """,
    "resa": """
        @hookimpl
        def register_resources(register):
            register(Binding(fractions.Fraction, lambda r: fractions.Fraction(1, 2)))
    """,
    "resb": """
        @hookimpl
        def register_resources(register):
            register(Binding(fractions.Fraction, lambda r: fractions.Fraction(1, 3)))
    """,
    "slow": """
        import time
        time.sleep(1.5)  # a pack with a heavy import

        def _slow(params, *, context):
            return ToolResult.ok(message="slow but fine")

        @hookimpl
        def register_tools(register):
            register(Tool[None, None](name="slow_tool", description="Slow.", handler=_slow))
    """,
}


def write_pack(folder: Path, name: str) -> Path:
    """Write project ``hvrel-<name>`` under ``folder``; returns its directory."""
    project = folder / name
    package = project / "src" / f"hvrel_{name}"
    package.mkdir(parents=True)
    (project / "pyproject.toml").write_text(_PYPROJECT.format(name=name))
    (package / "__init__.py").write_text('"""Throwaway pack."""\n')
    (package / "plugin.py").write_text(_HEAD + textwrap.dedent(PLUGINS[name]))
    return project


def wheel_from_project(project: Path, out: Path) -> Path:
    """Pack a pure-Python hatchling-style project into a wheel, without a build backend.

    Building 15 throwaway projects with hatchling takes ~20 s; zipping them takes
    milliseconds. The wheel is then installed by ``uv pip install`` like any other.
    Reads ``[project]`` (name, version, dependencies, entry points) and the packages listed
    under ``[tool.hatch.build.targets.wheel]``.
    """
    import base64
    import hashlib
    import tomllib
    import zipfile

    meta = tomllib.loads((project / "pyproject.toml").read_text())
    info = meta["project"]
    name, version = info["name"], info["version"]
    stem = f"{name.replace('-', '_')}-{version}"
    dist_info = f"{stem}.dist-info"
    files: dict[str, bytes] = {}
    for package in meta["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]:
        src = project / package
        for path in sorted(src.rglob("*.py")):
            files[f"{src.name}/{path.relative_to(src).as_posix()}"] = path.read_bytes()
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {dep}" for dep in info.get("dependencies", ())]
    files[f"{dist_info}/METADATA"] = ("\n".join(lines) + "\n").encode()
    files[f"{dist_info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: haversack-reliability\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n"
    )
    groups = info.get("entry-points", {})
    entry = "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
        for group, points in groups.items()
    )
    files[f"{dist_info}/entry_points.txt"] = entry.encode()
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel
