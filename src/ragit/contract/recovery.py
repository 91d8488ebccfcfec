"""Recovery commands that name paths (docs/contract.md, "Recoveries").

A recovery command runs as written in a POSIX shell with no terminal and no editor.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Sequence

# git reads glob characters and a leading ':' in a pathspec as magic; ':(literal)' turns it off.
_PATHSPEC_MAGIC = re.compile(r"[*?\[\\]|^:")
COMMIT_MESSAGE_NAMES = 10


def _literal_pathspec(path: str) -> str:
    return f":(literal){path}" if _PATHSPEC_MAGIC.search(path) else path


def commit_recovery(paths: Sequence[str], already_staged: Collection[str] = ()) -> str:
    """The command that commits ``paths``: ``git add -- <paths> && git commit -m '<message>'``.

    It runs as written in a POSIX shell with no terminal and no editor: every path and the
    message are single-quoted (a name holding quotes, ``$(…)`` or a newline stays a name),
    a path with glob characters or a leading ``:`` is a ``:(literal)`` pathspec, and
    ``already_staged`` paths (deletions already in the index, which ``git add`` would refuse)
    are left to the commit alone (docs/contract.md, "Recoveries").
    """
    named = ", ".join(paths[:COMMIT_MESSAGE_NAMES])
    if len(paths) > COMMIT_MESSAGE_NAMES:
        named += f" and {len(paths) - COMMIT_MESSAGE_NAMES} more"
    commit = f"git commit -m {shlex.quote(f'Update {named}')}"
    staged = set(already_staged)
    add = [shlex.quote(_literal_pathspec(p)) for p in paths if p not in staged]
    if not add:
        return commit
    return f"git add -- {' '.join(add)} && {commit}"
