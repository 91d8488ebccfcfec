"""The configuration that decides a snapshot, read from the commit (contract §6).

A snapshot's content depends on the ingest surface (``ingest.doc_globs``, ``include``,
``exclude``), the size limit (``ingest.max_file_bytes``) and the masking and admission rules
(``security.secret_masking``, ``security.admission_mode``). Those keys are read from
``.ragit/config.toml`` as committed in the target commit — defaults when the commit has no
such file or leaves a key out — so a manifest is a function of its commit alone and
re-ingesting an indexed commit never changes it. Every other key (the embedding profile,
retrieval, the store, output) is the working tree's: one snapshot can be embedded under
several profiles.

A working-tree config that differs from HEAD's committed one in those keys is reported by
:func:`drift_warning` (``ingest``, ``status``, ``config set``), with the commit step that
puts it into effect.
"""

from __future__ import annotations

from typing import Any

from ragit.config import RagitConfig, parse_toml, validate_config
from ragit.snapshot._git import GitRepo
from ragit.workspace import Workspace

CONFIG_PATH = ".ragit/config.toml"
SNAPSHOT_KEYS: tuple[str, ...] = (
    "ingest.doc_globs",
    "ingest.include",
    "ingest.exclude",
    "ingest.max_file_bytes",
    "security.secret_masking",
    "security.admission_mode",
)
COMMIT_STEP = "git add .ragit/config.toml && git commit -m 'Update the RAGit config'"

# Settings by the committed file's blob id (content-addressed: an entry never goes stale);
# None is the key of "no committed file".
_SETTINGS: dict[str | None, dict[str, Any]] = {}


def settings_of(cfg: RagitConfig) -> dict[str, Any]:
    """The snapshot-deciding keys of ``cfg`` as ``{section.key: value}``."""
    out: dict[str, Any] = {}
    for dotted in SNAPSHOT_KEYS:
        section, _, name = dotted.partition(".")
        value = getattr(getattr(cfg, section), name)
        out[dotted] = list(value) if isinstance(value, list) else value
    return out


def committed_settings(git: GitRepo, sha: str) -> dict[str, Any]:
    """The snapshot-deciding keys as committed at ``sha`` (defaults for what it lacks).

    Only these keys are validated: a committed value of another key that this RAGit no
    longer accepts never stops a commit from being indexed.

    Raises:
        ConfigInvalid: the committed file is not TOML, or holds a wrong value for one of
            these keys (``path`` names ``<sha>:.ragit/config.toml``).
    """
    blob = git.blob_at(sha, CONFIG_PATH)
    kept = _SETTINGS.get(blob)
    if kept is not None:
        return dict(kept)
    subset: dict[str, Any] = {}
    if blob is not None:
        shown = f"{sha[:12]}:{CONFIG_PATH}"
        data = parse_toml(git.read_blob(blob), shown)
        for dotted in SNAPSHOT_KEYS:
            section, _, name = dotted.partition(".")
            table = data.get(section)
            if isinstance(table, dict) and name in table:
                subset.setdefault(section, {})[name] = table[name]
        settings = settings_of(validate_config(subset, shown))
    else:
        settings = settings_of(RagitConfig())
    if len(_SETTINGS) > 64:
        _SETTINGS.clear()
    _SETTINGS[blob] = settings
    return dict(settings)


def config_for_commit(git: GitRepo, sha: str, worktree: RagitConfig) -> RagitConfig:
    """``worktree`` with the snapshot-deciding keys replaced by the ones committed at ``sha``.

    Raises:
        ConfigInvalid: as :func:`committed_settings`.
    """
    out = worktree.model_copy(deep=True)
    for dotted, value in committed_settings(git, sha).items():
        section, _, name = dotted.partition(".")
        setattr(getattr(out, section), name, value)
    return out


def worktree_differences(ws: Workspace, worktree: RagitConfig) -> list[str]:
    """The snapshot-deciding keys whose working-tree value differs from HEAD's committed one
    (none before the first commit: that commit takes the file as it is).

    Raises:
        ConfigInvalid: HEAD's committed file is not valid (as :func:`committed_settings`).
    """
    git = GitRepo(ws.root)
    head = git.head().sha
    if head is None:
        return []
    committed = committed_settings(git, head)
    current = settings_of(worktree)
    return [key for key in SNAPSHOT_KEYS if committed[key] != current[key]]


def drift_warning(ws: Workspace, worktree: RagitConfig) -> str | None:
    """The warning for a working-tree config that differs from HEAD's committed one in
    snapshot-deciding keys, naming them and the commit step; None when they agree.

    Raises:
        ConfigInvalid: HEAD's committed file is not valid.
    """
    keys = worktree_differences(ws, worktree)
    return drift_message(keys) if keys else None


def drift_message(keys: list[str]) -> str:
    """The warning text of :func:`drift_warning` for the differing ``keys``."""
    return (
        f"the working-tree {CONFIG_PATH} differs from the one committed at HEAD in "
        f"{', '.join(keys)}: snapshots read the committed config, so the change takes effect "
        f"once committed: {COMMIT_STEP} && ragit ingest"
    )
