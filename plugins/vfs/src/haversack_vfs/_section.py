"""``vfs_section``: workspace guidance, the seven file tools and the read-before-write policy."""

from __future__ import annotations

from haversack import MarkdownSection, ToolPolicy, normalize_path

from ._config import VfsConfig
from ._mounts import HostMount, mount_preview
from ._policy import VfsReadBeforeWritePolicy
from ._tools import vfs_tools

__all__ = ["SECTION_KEY", "vfs_section"]

#: The VFS section's key in a composed prompt.
SECTION_KEY = "vfs"

_MAX_MOUNTS_LISTED = 10
WORKSPACE = "/workspace"


def _size(n: int) -> str:
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


def _mount_line(mount: HostMount, cfg: VfsConfig) -> str:
    relative = normalize_path(mount.mount_path)
    target = f"{WORKSPACE}/{relative}" if relative else WORKSPACE
    parts = [f"- `{target}`: a copy of host `{mount.host_path.strip()}`"]
    if mount.include:
        parts.append(f"only {', '.join(mount.include)}")
    if mount.exclude:
        parts.append(f"without {', '.join(mount.exclude)}")
    line = ", ".join(parts) + f": {mount_preview(mount, cfg.allowed_host_roots)}"
    return line.replace("$", "$$")  # a literal dollar in a path is not a template field


def _template(cfg: VfsConfig) -> str:
    lines = [
        "You have a workspace of text files rooted at `/workspace`. Paths are relative to "
        "that root: `src/app.py` and `/workspace/src/app.py` are the same file. Paths cannot "
        "leave the workspace (`..` is refused).",
        "",
        # Each tool's sentences exist only while it does (exclude_tools = ["rm"] works).
        "${if tool:ls}",
        "- List a directory with ${tool:ls}.",
        "${endif}",
        "${if tool:glob}",
        "- Find files with ${tool:glob} (`**` spans any number of directories, so `**/*.py` "
        "also finds top-level files).",
        "${endif}",
        "${if tool:grep}",
        "- Search contents with ${tool:grep} (regular expressions, RE2 syntax).",
        "${endif}",
        "${if tool:read_file}",
        "- ${tool:read_file} shows numbered lines as `<number><tab><text>`; the number and "
        "the tab are not part of the file. `\\ No newline at end of file` and line-ending "
        "notes describe the file's exact bytes.",
        "${endif}",
        "${if tool:write_file}",
        "- ${tool:write_file} only creates new files.",
        "${endif}",
        "${if tool:edit_file}",
        "- Change an existing file with ${tool:edit_file}: old_string must be copied exactly "
        "(whitespace and line endings included) and match once, unless replace_all is true.",
        "${endif}",
        "${if tool:rm}",
        "- ${tool:rm} removes a file or a whole directory tree.",
        "${endif}",
        "- Content is stored exactly as you write it: nothing is added, stripped or converted.",
    ]
    if cfg.read_before_write:
        lines += [
            "${if tool:read_file}${if tool:edit_file}",
            "- Read a file with ${tool:read_file} before editing it; editing a file you "
            "have not read (or created) in this session is refused.",
            "${endif}${endif}",
        ]
    lines.append(
        f"- Limits: {_size(cfg.max_write_bytes)} per write or edit, "
        f"{cfg.max_read_lines} lines or {_size(cfg.max_read_bytes)} per read (page with "
        f"offset), {cfg.max_grep_matches} matches per search, {cfg.max_list_entries} entries per "
        f"listing, {_size(cfg.max_file_bytes)} per file."
    )
    if cfg.workspace is not None:
        lines += [
            "",
            "This workspace is the user's own project directory, shared with them: they and "
            "their tools may change files while you work, and when one of your calls fails, "
            "only that call's own changes are undone (anyone else's are kept, and you are told "
            "which paths were left as they are). "
            + cfg.protected_paths().summary().replace("$", "$$"),
        ]
    if cfg.mounts:
        lines += ["", "Host files copied in when the workspace was created (edits stay here):"]
        lines += [_mount_line(m, cfg) for m in cfg.mounts[:_MAX_MOUNTS_LISTED]]
        if len(cfg.mounts) > _MAX_MOUNTS_LISTED:
            lines.append(f"- ... and {len(cfg.mounts) - _MAX_MOUNTS_LISTED} more")
    return "\n".join(lines)


def vfs_section(config: VfsConfig | None = None) -> MarkdownSection[None]:
    """The ``vfs`` section for ``config`` (defaults when ``None``).

    It carries the seven file tools and, unless ``read_before_write`` is off, a
    :class:`VfsReadBeforeWritePolicy` governing them.
    """
    cfg = config if config is not None else VfsConfig()
    policies: tuple[ToolPolicy, ...] = (
        (VfsReadBeforeWritePolicy(),) if cfg.read_before_write else ()
    )
    return MarkdownSection[None](
        title="Workspace files",
        key=SECTION_KEY,
        template=_template(cfg),
        tools=vfs_tools(cfg),
        policies=policies,
    )
