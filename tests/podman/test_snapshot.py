"""A workspace snapshot undoes what shell commands in a real sandbox did to the tree; the
snapshotter alone is tested in tests/core/test_filesystem_snapshot_restore.py."""

from __future__ import annotations

import pytest

from haversack.filesystem import DirectorySnapshotter

from ..core.test_filesystem_snapshot_restore import fingerprint  # noqa: TID252 - one fingerprint

pytestmark = pytest.mark.podman


def test_restore_undoes_shell_commands_in_the_sandbox(sandbox, tmp_path):
    setup = sandbox.exec(
        "mkdir -p src/pkg && printf 'x = 1\\n' > src/pkg/mod.py && echo keep > keep.txt "
        "&& chmod 640 keep.txt && ln -s keep.txt alias && mkdir emptydir"
    )
    assert setup.exit_code == 0, setup.stderr
    store = tmp_path / "snapstore"
    store.mkdir()
    snapper = DirectorySnapshotter(sandbox.workspace, storage_parent=store)
    try:
        before = fingerprint(sandbox.workspace)
        snap = snapper.snapshot()
        damage = sandbox.exec(
            "echo x >> src/pkg/mod.py; rm keep.txt; mkdir -p build/out && touch build/out/o; "
            "chmod 700 src; rm alias; ln -s /etc/passwd alias; rmdir emptydir; "
            "sed -i s/1/2/ src/pkg/mod.py"
        )
        assert damage.exit_code == 0, damage.stderr
        assert fingerprint(sandbox.workspace) != before
        snapper.restore(snap)
        assert fingerprint(sandbox.workspace) == before
        # The container still sees the restored tree through the same bind mount.
        seen = sandbox.exec("cat src/pkg/mod.py keep.txt; ls build 2>&1; test -d emptydir")
        assert seen.stdout.startswith("x = 1\nkeep\n"), seen
        assert seen.exit_code == 0
        assert sandbox.exec("echo y >> keep.txt").exit_code == 0  # still agent-owned
    finally:
        snapper.close()
