"""The environment every case runs in: the implementation's command and a hermetic env.

Each subprocess of a case sees only the variables built by :func:`hermetic_env`
(docs/conformance.md, "The runner protocol"); :func:`resolve_command` turns an
``--impl`` command line into an absolute argv prefix.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.launcher import Launcher

DEFAULT_TIMEOUT = 120.0
PASSTHROUGH_ENV = ("PATH", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP")
GIT_NAME = "RAGit Conformance"
GIT_EMAIL = "conformance@ragit.invalid"
# 2026-01-02T00:00:00Z: commits made by setup steps get this fixed date.
GIT_DATE = "1767312000 +0000"
GITCONFIG = f"""[user]
\tname = {GIT_NAME}
\temail = {GIT_EMAIL}
[init]
\tdefaultBranch = main
[commit]
\tgpgsign = false
[core]
\tautocrlf = false
\tquotePath = false
"""


class CaseError(Exception):
    """The case cannot be run as written (bad path, unborn ${HEAD}, fixture build failure)."""


@dataclass(frozen=True)
class Impl:
    """The implementation under test: argv prefixes for the CLI and the MCP server, and for a
    Python implementation under pytest the fork server that starts its commands
    (conformance.launcher)."""

    cli: tuple[str, ...]
    mcp: tuple[str, ...] | None = None
    launcher: Launcher | None = field(default=None, compare=False, repr=False)


def resolve_command(command: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Split an ``--impl`` command and make its paths absolute.

    Cases run with the temporary repository as their working directory, so every
    word that contains a ``/`` and exists relative to the runner's working
    directory (``node dist/cli.js``) is made absolute, and a bare program name in
    the first position is looked up on PATH.
    """
    import shlex

    parts = shlex.split(command) if isinstance(command, str) else list(command)
    if not parts:
        raise CaseError("empty implementation command")
    out: list[str] = []
    for index, part in enumerate(parts):
        if "/" in part or os.sep in part:
            # abspath, not resolve(): a venv's python is a symlink whose target lacks the venv.
            out.append(os.path.abspath(part) if Path(part).exists() else part)
        elif index == 0:
            out.append(shutil.which(part) or part)
        else:
            out.append(part)
    return tuple(out)


def hermetic_env(tmp: Path, pass_env: tuple[str, ...] = ()) -> dict[str, str]:
    """The base environment of every subprocess of a case (no inherited GIT_* or RAGIT_*)."""
    env = {
        key: value for key, value in os.environ.items() if key in PASSTHROUGH_ENV or key in pass_env
    }
    home = tmp / "home"
    env.update(
        {
            "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CEILING_DIRECTORIES": str(tmp),
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": GIT_NAME,
            "GIT_AUTHOR_EMAIL": GIT_EMAIL,
            "GIT_AUTHOR_DATE": GIT_DATE,
            "GIT_COMMITTER_NAME": GIT_NAME,
            "GIT_COMMITTER_EMAIL": GIT_EMAIL,
            "GIT_COMMITTER_DATE": GIT_DATE,
            "LC_ALL": "C.UTF-8",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "NO_COLOR": "1",
        }
    )
    return env
