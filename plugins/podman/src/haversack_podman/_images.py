"""Offline sandbox images (busybox, and busybox plus the host's CPython) via ``podman import``.

The python image also carries the host's ``git`` when there is one (its binary, the shared
libraries it needs and the templates), so ``git add`` and ``git commit`` work in the sandbox.

Python image method: **hostcopy** (copy the host's Debian ``python3.11``, its stdlib and the
shared libraries ``ldd`` reports onto the busybox rootfs). Measured on the 2-core CI VM:
hostcopy builds in ~3 s with no network (40 MB image); mmdebstrap (Debian minbase +
python3) takes 28-38 s, needs the Debian mirror and gives 121 MB. Both start
``python3 -c pass`` in ~0.2 s. Hostcopy has no pip/apt inside, which a network-less
sandbox cannot use anyway.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ._config import BUSYBOX_IMAGE, PYTHON_IMAGE
from ._containers_conf import podman_env
from ._errors import SandboxError
from ._runtime_dir import runtime_dir
from ._service import podman_binary

__all__ = ["IMAGE_LABEL", "ImageBuild", "build_images", "image_exists"]

#: Label on every image the pack builds (``podman images --filter label=haversack.image=1``).
IMAGE_LABEL: Final = "haversack.image"
#: What the build puts in an image; an image with an older revision label is rebuilt by
#: ``build_images`` (2: git in the python image).
_REVISION: Final = 2
_AGENT_UID: Final = 1000
_USER_DB: Final = (
    "root:x:0:0:root:/root:/bin/sh\n"
    "agent:x:1000:1000:agent:/home/agent:/bin/sh\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
)
_GROUP: Final = "root:x:0:\nagent:x:1000:\nnogroup:x:65534:\n"


@dataclass(frozen=True, slots=True)
class ImageBuild:
    """What ``build_images`` did for one image: ``built`` False means it already existed."""

    name: str
    built: bool
    seconds: float
    size_bytes: int


def _podman(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [podman_binary(), *args], capture_output=True, text=True, env=podman_env(), check=False
    )
    if check and proc.returncode != 0:
        raise SandboxError(
            f"'podman {' '.join(args[:2])}' failed (exit {proc.returncode}): "
            f"{proc.stderr.strip() or proc.stdout.strip()}"
        )
    return proc


def image_exists(name: str) -> bool:
    """Whether ``name`` is in the local image store."""
    return _podman("image", "exists", name, check=False).returncode == 0


def _revision(name: str) -> int:
    """The build revision of a stored image (0: built before revisions were labelled)."""
    proc = _podman(
        "image",
        "inspect",
        "--format",
        f'{{{{index .Labels "{IMAGE_LABEL}.revision"}}}}',
        name,
        check=False,
    )
    text = proc.stdout.strip()
    return int(text) if proc.returncode == 0 and text.isdigit() else 0


def _image_size(name: str) -> int:
    proc = _podman("image", "inspect", "--format", "{{.Size}}", name, check=False)
    return int(proc.stdout.strip() or 0) if proc.returncode == 0 else 0


def _busybox_rootfs(root: Path) -> None:
    busybox = shutil.which("busybox") or "/bin/busybox"
    if not Path(busybox).exists():
        raise SandboxError(
            "busybox is not installed on the host; install it: apt-get install busybox-static "
            "(or, as root: python -m haversack_podman setup)."
        )
    # mktemp-style dirs are 0700; a 0700 "/" breaks --user 1000 in rootless mode.
    root.chmod(0o755)
    for sub in (
        "bin",
        "sbin",
        "usr/bin",
        "usr/sbin",
        "etc",
        "root",
        "home/agent",
        "workspace",
        "proc",
        "sys",
        "dev",
        "run",
        "tmp",
        "var/tmp",
    ):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "tmp").chmod(0o1777)
    (root / "var/tmp").chmod(0o1777)
    shutil.copy2(busybox, root / "bin/busybox")
    applets = subprocess.run(
        [str(root / "bin/busybox"), "--list-full"], capture_output=True, text=True, check=True
    ).stdout.split()
    for applet in applets:
        if applet == "linuxrc":
            continue
        link = root / applet
        if not link.exists() and not link.is_symlink():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to("/bin/busybox")
    (root / "etc/passwd").write_text(_USER_DB, encoding="utf-8")
    (root / "etc/group").write_text(_GROUP, encoding="utf-8")
    for owned in ("home/agent", "workspace"):
        os.chown(root / owned, _AGENT_UID, _AGENT_UID)


def _ldd_libs(paths: list[Path]) -> set[str]:
    libs: set[str] = set()
    for path in paths:
        proc = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=False)
        for line in proc.stdout.splitlines():
            parts = line.split()
            if "=>" in parts and len(parts) >= 3 and parts[2].startswith("/"):
                libs.add(parts[2])
    return libs


def _python_rootfs(root: Path) -> None:
    _busybox_rootfs(root)
    python = Path("/usr/bin/python3").resolve()
    if not python.exists():
        raise SandboxError(
            "The host has no /usr/bin/python3 to copy into the python image; install it: "
            "apt-get install python3-minimal libpython3.11-stdlib (or, as root: "
            "python -m haversack_podman setup)."
        )
    version = python.name  # python3.11
    multiarch = f"{os.uname().machine}-linux-gnu"
    libdir = root / "usr/lib" / multiarch
    libdir.mkdir(parents=True, exist_ok=True)
    (root / "lib64").mkdir(exist_ok=True)
    (root / "lib").symlink_to("usr/lib")
    shutil.copy2(python, root / "usr/bin" / version)
    for alias, target in (("python3", version), ("python", "python3")):
        (root / "usr/bin" / alias).unlink(missing_ok=True)
        (root / "usr/bin" / alias).symlink_to(target)
    # tar keeps permissions and symlinks and is much faster than copytree for ~4,000 files.
    excludes = [
        "__pycache__",
        f"usr/lib/{version}/test",
        f"usr/lib/{version}/idlelib",
        f"usr/lib/{version}/tkinter",
        f"usr/lib/{version}/lib2to3/tests",
        f"usr/lib/{version}/config-*",
        f"usr/lib/{version}/ensurepip",
    ]
    pack = subprocess.Popen(
        ["tar", "-C", "/", *(f"--exclude={e}" for e in excludes), "-cf", "-", f"usr/lib/{version}"],
        stdout=subprocess.PIPE,
    )
    subprocess.run(["tar", "-C", str(root), "-xf", "-"], stdin=pack.stdout, check=True)
    assert pack.stdout is not None
    pack.stdout.close()
    if pack.wait() != 0:
        raise SandboxError(f"Copying /usr/lib/{version} failed; is libpython3.11-stdlib installed?")
    dynload = sorted((Path("/usr/lib") / version / "lib-dynload").glob("*.so"))
    for lib in sorted(_ldd_libs([python, *dynload])):
        real = Path(lib).resolve()
        shutil.copy2(real, libdir / real.name)
        if Path(lib).name != real.name:
            (libdir / Path(lib).name).unlink(missing_ok=True)
            (libdir / Path(lib).name).symlink_to(real.name)
    shutil.copy2(Path("/lib64/ld-linux-x86-64.so.2").resolve(), root / "lib64/ld-linux-x86-64.so.2")
    _git_rootfs(root, libdir)


def _git_rootfs(root: Path, libdir: Path) -> None:
    """Copy the host's git (binary, libraries, templates) in; nothing when it has none."""
    found = shutil.which("git", path="/usr/bin:/bin")
    if found is None:
        return
    git = Path(found).resolve()
    shutil.copy2(git, root / "usr/bin/git")
    for lib in sorted(_ldd_libs([git])):
        real = Path(lib).resolve()
        if not (libdir / real.name).exists():
            shutil.copy2(real, libdir / real.name)
        if Path(lib).name != real.name and not (libdir / Path(lib).name).exists():
            (libdir / Path(lib).name).symlink_to(real.name)
    # git looks for helpers here; the builtins (add, commit, status, diff, log) need none.
    (root / "usr/lib/git-core").mkdir(parents=True, exist_ok=True)
    templates = Path("/usr/share/git-core/templates")
    if templates.is_dir():
        shutil.copytree(templates, root / "usr/share/git-core/templates", symlinks=True)


def _import(root: Path, name: str, kind: str, cmd: str) -> None:
    tarball = root.parent / f"{kind}.tar"
    subprocess.run(["tar", "-C", str(root), "-cf", str(tarball), "."], check=True)
    changes = [
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "ENV LANG=C.UTF-8",
        "WORKDIR /workspace",
        f"LABEL {IMAGE_LABEL}=1",
        f"LABEL {IMAGE_LABEL}.kind={kind}",
        f"LABEL {IMAGE_LABEL}.revision={_REVISION}",
        f'CMD ["{cmd}"]',
    ]
    args = ["import", "-q"]
    for change in changes:
        args += ["--change", change]
    _podman(*args, str(tarball), name)


def build_images(*, force: bool = False, python: bool = True) -> list[ImageBuild]:
    """Build the busybox (and python) sandbox images offline; existing ones are kept unless
    ``force`` or built by an older revision of this function. Returns one ``ImageBuild`` per
    image."""
    plans: list[tuple[str, str, Callable[[Path], None]]] = [
        (BUSYBOX_IMAGE, "busybox", _busybox_rootfs)
    ]
    if python:
        plans.append((PYTHON_IMAGE, "python", _python_rootfs))
    results: list[ImageBuild] = []
    # Parallel callers (pytest -n auto workers) build each image once.
    with (runtime_dir() / "build-images.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for name, kind, make_rootfs in plans:
            results.append(_build_one(name, kind, make_rootfs, force=force))
    return results


def _build_one(
    name: str, kind: str, make_rootfs: Callable[[Path], None], *, force: bool
) -> ImageBuild:
    if not force and image_exists(name) and _revision(name) >= _REVISION:
        return ImageBuild(name, False, 0.0, _image_size(name))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="haversack-image-") as tmp:
        root = Path(tmp) / "rootfs"
        root.mkdir()
        make_rootfs(root)
        _import(root, name, kind, "/bin/sh")
    return ImageBuild(name, True, time.perf_counter() - start, _image_size(name))
