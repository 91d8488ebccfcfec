"""Hermetic environment for every test: no user config, fixed git identity and clock.

Session-scoped so that package conftests may still override a variable for their own
session (the MiniLM tests keep one model cache per worker). Tests that inspect the user
cache set their own per-test ``XDG_CACHE_HOME``.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

# A suite started in the background of a non-interactive shell (`cmd &`, nohup) inherits SIGINT
# ignored, and so would every process it starts: a Python child then never installs its
# KeyboardInterrupt handler, and the tests that interrupt a writer with SIGINT would wait for
# an exit that cannot come. Restored here, every child starts with SIGINT's default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

_IDENTITY = {
    "GIT_AUTHOR_NAME": "RAGit Test",
    "GIT_AUTHOR_EMAIL": "test@ragit.invalid",
    "GIT_COMMITTER_NAME": "RAGit Test",
    "GIT_COMMITTER_EMAIL": "test@ragit.invalid",
    # git's test_tick epoch; a fixed date keeps commit SHAs reproducible
    "GIT_AUTHOR_DATE": "1767225600 +0000",
    "GIT_COMMITTER_DATE": "1767225600 +0000",
}


@pytest.fixture(scope="session", autouse=True)
def _hermetic_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    base = tmp_path_factory.mktemp("hermetic")
    home, config, cache = base / "home", base / "xdg-config", base / "xdg-cache"
    for path in (home, config, cache):
        path.mkdir()
    (home / ".gitconfig").write_text(
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        "[core]\n\tautocrlf = false\n[advice]\n\tdetachedHead = false\n",
        encoding="utf-8",
    )
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith(("GIT_", "RAGIT_")):
                patch.delenv(name)
        patch.setenv("HOME", str(home))
        patch.setenv("XDG_CONFIG_HOME", str(config))
        patch.setenv("XDG_CACHE_HOME", str(cache))
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        patch.setenv("RAGIT_PROGRESS", "0")
        for name, value in _IDENTITY.items():
            patch.setenv(name, value)
        try:
            import pygit2  # noqa: TID251 - reset libgit2's config search path (style §12)
        except ImportError:  # pragma: no cover - pygit2 is a runtime dependency
            pygit2 = None
        if pygit2 is not None:
            # libgit2 caches the config search path at first use: point it at the fake home.
            for level in (pygit2.GIT_CONFIG_LEVEL_GLOBAL, pygit2.GIT_CONFIG_LEVEL_XDG):
                pygit2.settings.search_path[level] = str(home)
            pygit2.settings.search_path[pygit2.GIT_CONFIG_LEVEL_SYSTEM] = str(base / "no-system")
        yield
