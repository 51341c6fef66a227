"""Discovery, selection and compatibility: decided from metadata, before any import."""

from __future__ import annotations

import sys

import pytest

from haversack import discover
from haversack._packs import _compat, _discovery
from haversack._packs._loader import PackLoader
from haversack.errors import PackConfigError, PackLoadError

RECORDING = """
from pathlib import Path
Path({marker!r}).write_text("imported")
from haversack.hookspecs import hookimpl

@hookimpl
def register_tools(register):
    pass
"""


def test_discover_lists_without_importing(site, tmp_path):
    marker = tmp_path / "imported.txt"
    site.add("recorder", RECORDING.format(marker=str(marker)))
    report = discover()
    assert [p.name for p in report] == ["recorder"]
    info = report["recorder"]
    assert info.status == "not-imported"
    assert info.distribution == "hvt-recorder"
    assert info.version == "1.0"
    assert info.requires == ">=0.1"
    assert not marker.exists()
    assert not any(name.startswith("hvt_recorder") for name in sys.modules)


def test_a_pack_whose_metadata_is_not_utf8_is_still_listed(site):
    site.add("latin", "")
    metadata = site.root / "hvt_latin-1.0.dist-info" / "METADATA"
    text = metadata.read_bytes().replace(b"Version: 1.0", b"Version: 1.0\nAuthor: Jos\xe9")
    metadata.write_bytes(text)
    info = discover()["latin"]
    assert (info.distribution, info.version, info.requires) == ("hvt-latin", "1.0", ">=0.1")


def test_discover_load_imports_and_reports_contributions(site, tmp_path):
    marker = tmp_path / "imported.txt"
    site.add("recorder", RECORDING.format(marker=str(marker)))
    report = discover(load=True)
    assert report["recorder"].reason == ""
    assert marker.exists()
    assert report["recorder"].status == "loaded"
    assert report["recorder"].token_estimate == 0


def test_same_distribution_twice_on_path_is_listed_once(site, tmp_path, monkeypatch):
    site.add("dup")
    monkeypatch.setattr(_discovery, "search_path", [str(site.root), str(site.root)])
    assert [p.name for p in discover()] == ["dup"]


def test_two_distributions_claiming_one_pack_name_conflict(site):
    site.add("same", distribution="hvt-first")
    site.add("same", distribution="hvt-second")
    report = discover(load=True)
    assert report["same"].status == "broken"
    (conflict,) = report.conflicts
    assert conflict.kind == "pack"
    assert "hvt-first 1.0" in conflict.contributors[0]
    assert "hvt-second 1.0" in conflict.contributors[1]
    assert "HAVERSACK_DISABLE=hvt-second" in conflict.message
    # Disabling one distribution by its distribution name resolves it.
    report = discover(load=True, exclude=["hvt-second"])
    assert report["same"].status == "loaded"
    assert not report.conflicts


def test_env_allowlist_and_empty_allowlist(site, monkeypatch):
    site.add("alpha")
    site.add("beta")
    monkeypatch.setenv("HAVERSACK_PACKS", "alpha")
    report = discover()
    assert report["alpha"].status == "not-imported"
    assert report["beta"].status == "disabled"
    assert "HAVERSACK_PACKS" in report["beta"].reason
    monkeypatch.setenv("HAVERSACK_PACKS", "")
    assert {p.status for p in discover()} == {"disabled"}


def test_argument_allowlist_beats_env(site, monkeypatch):
    site.add("alpha")
    site.add("beta")
    monkeypatch.setenv("HAVERSACK_PACKS", "alpha")
    report = discover(packs=["beta"])
    assert report["alpha"].status == "disabled"
    assert report["beta"].status == "not-imported"


def test_denylists_add_up_and_star_disables_all(site, monkeypatch):
    for name in ("alpha", "beta", "gamma"):
        site.add(name)
    monkeypatch.setenv("HAVERSACK_DISABLE", "alpha")
    report = discover(exclude=["beta"])
    assert [p.status for p in report] == ["disabled", "disabled", "not-imported"]
    monkeypatch.setenv("HAVERSACK_DISABLE", "*")
    assert {p.status for p in discover()} == {"disabled"}


def test_selection_matches_distribution_name(site):
    site.add("alpha", distribution="Hvt_Alpha.Dist")
    assert discover(exclude=["hvt-alpha-dist"])["alpha"].status == "disabled"


def test_file_selection(site, tmp_path):
    site.add("alpha")
    site.add("beta")
    (tmp_path / "haversack.toml").write_text('packs = ["alpha"]\ndisable = ["alpha"]\n')
    assert {p.status for p in discover()} == {"disabled"}
    (tmp_path / "haversack.toml").write_text('enable = ["beta"]\n')
    report = discover()
    assert report["alpha"].status == "disabled"
    assert "haversack.toml" in report["alpha"].reason


def test_unknown_allowlisted_name_is_a_problem(site):
    site.add("alpha")
    report = discover(packs=["alpah"])
    assert "'alpah'" in report.problems[0]
    assert "installed packs: alpha" in report.problems[0]
    assert not report.ok


def test_unknown_allowlisted_name_raises_in_strict(site):
    site.add("alpha")
    with pytest.raises(PackConfigError, match="alpah"):
        PackLoader(packs=["alpah"], strict=True).discover()


def test_incompatible_pack_is_not_imported(site, tmp_path):
    marker = tmp_path / "imported.txt"
    site.add("old", RECORDING.format(marker=str(marker)), requires=["haversack<0.0.1"])
    report = discover(load=True)
    info = report["old"]
    assert info.status == "incompatible"
    assert "haversack<0.0.1" in info.reason
    assert f"haversack {_compat.core_version()} is installed" in info.reason
    assert not marker.exists()


def test_incompatible_pack_raises_in_strict_mode(site, monkeypatch):
    site.add("old", requires=["haversack<0.0.1"])
    loader = PackLoader(strict=True)
    loader.discover()
    with pytest.raises(PackLoadError, match="'old'") as info:
        loader.select(load=True)
    assert info.value.pack == "old"
    monkeypatch.setenv("HAVERSACK_STRICT", "1")
    loader = PackLoader()
    loader.discover()
    with pytest.raises(PackLoadError):
        loader.select(load=True)


@pytest.mark.parametrize(
    ("requires", "compatible"),
    [
        (["haversack>=0.1"], True),
        (["haversack>=99"], False),
        (["haversack>=99; extra == 'dev'"], True),  # only with an extra: not a requirement
        (["Haversack_Core>=99", "haversack"], True),  # other dist; no specifier
        ([], True),
        (["haversack>=0.1.0rc1,<0.2"], True),
    ],
)
def test_requirement_check(site, requires, compatible):
    site.add("p", requires=requires)
    assert (discover()["p"].status == "not-imported") is compatible


def test_prerelease_core_satisfies_specifier(site, monkeypatch):
    site.add("p", requires=["haversack>=0.1"])
    monkeypatch.setattr(_compat, "core_version", lambda: "0.2.0a1")
    assert discover()["p"].status == "not-imported"


def test_real_environment_scan_finds_installed_packs(monkeypatch):
    # The development venv has the three real packs installed (editable).
    monkeypatch.delenv("HAVERSACK_PACKS", raising=False)
    monkeypatch.delenv("HAVERSACK_DISABLE", raising=False)
    names = {p.name for p in discover()}
    assert {"vfs", "planning", "podman"} <= names
