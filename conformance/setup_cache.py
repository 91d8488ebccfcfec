"""Setup prefixes shared by cases, run once per process and restored per case.

Many cases start the same way (the same fixture, then ``init``, ``git add``, ``git commit``,
``ingest --all``). :class:`SetupCache` runs such a leading run of setup steps once, keeps a
copy of the case directory it left, and restores that copy for every later case with the
same prefix. The implementation may record absolute paths (a repository's user caches are
named by its path), so a prefix always lives at one fixed directory: the copy is restored to
the very path it was built at, and the case then runs there as if it had run the steps itself.

On a shared store (PostgreSQL) the store's state lives on the server: the prefix is shared
only when the run can copy that state too (:class:`ServerState`, conformance.backends'
``Databases``): the prefix runs against a database of its own, kept as a template, and each
case gets a fresh copy under the same name, besides the directory.

Only steps whose effect is the directory (and the store) alone (``run``, ``git``, ``write``,
``mkdir``, ``delete`` without captures, judged steps or other implementations), and never for
a case that installs hooks (a hook may start a process that outlives the case). A prefix that
fails is not cached: the case runs its setup itself and reports the failure as usual. Cases
sharing a prefix run one at a time (a per-prefix lock), so the cache is safe in a thread pool
but meant for the pytest plugin, where each process runs its cases in turn.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from conformance.backends import BACKENDS, DEFAULT_BACKEND, not_applicable
from conformance.suite import Case

_KINDS = ("run", "git", "write", "mkdir", "delete")
_UNCACHEABLE_KEYS = ("capture", "judged", "impl", "env", "stdin", "stdinBase64", "cwd")


def _prefix_key(case: Case, length: int) -> str:
    return json.dumps([case.data.get("fixture"), case.data.get("setup", [])[:length]])


class ServerState(Protocol):
    """The state a shared store keeps outside the case directory, per setup prefix ``key``:
    each method gives the environment that names that state for the implementation."""

    def fresh(self, key: str) -> dict[str, str]:
        """Empty state for building the prefix."""
        ...

    def save(self, key: str) -> bool:
        """Keep what the prefix left (False: it cannot be kept, the prefix is not shared)."""
        ...

    def restore(self, key: str) -> dict[str, str]:
        """A fresh copy of what the prefix left, for one case."""
        ...

    def discard(self, key: str) -> None:
        """Remove that case's copy."""
        ...


def cacheable_prefix(case: Case, backend: str, *, server_copies: bool = False) -> int:
    """How many leading setup steps of ``case`` may come from the cache (0: none); on a
    shared store only with ``server_copies`` (the run can copy the server's state)."""
    if (backend != "zvec" and not server_copies) or '"hooks"' in json.dumps(case.data):
        return 0
    count = 0
    for step in case.data.get("setup", []):
        kinds = [kind for kind in _KINDS if kind in step]
        if len(kinds) != 1 or any(key in step for key in _UNCACHEABLE_KEYS):
            break
        if "${" in json.dumps(step):
            break
        count += 1
    steps = case.data.get("setup", [])[:count]
    return count if any("run" in step for step in steps) else 0


def _build(
    home: Path, key: str, build: Callable[[Path, dict[str, str]], bool], server: ServerState | None
) -> bool:
    """Run the prefix ``key`` at ``home`` (on fresh server state, kept when it succeeds)."""
    if server is None:
        return build(home, {})
    try:
        env = server.fresh(key)
    except Exception:  # no state to build on: the cases run every step themselves
        return False
    try:
        return build(home, env) and server.save(key)
    finally:
        server.discard(key)


class SetupCache:
    """Case directories after a setup prefix, built once per process and restored per case.

    Given the whole suite's ``cases``, a case shares the longest of its cacheable prefixes
    that another case of the same backend starts with too (a prefix no other case has would
    be built for one case only); without them, its whole cacheable prefix.
    """

    def __init__(self, cases: Iterable[Case] = ()) -> None:
        self._shared: dict[str, Counter[str]] = {backend: Counter() for backend in BACKENDS}
        for case in cases:
            for backend, counter in self._shared.items():
                if backend != DEFAULT_BACKEND and not_applicable(case, backend) is not None:
                    continue
                longest = cacheable_prefix(case, backend, server_copies=True)
                for length in range(1, longest + 1):
                    counter[_prefix_key(case, length)] += 1
        self._dir: Path | None = None
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._built: dict[str, bool] = {}

    def prefix(self, case: Case, backend: str, *, server_copies: bool = False) -> int:
        """How many leading setup steps of ``case`` to take from this cache (0: none)."""
        longest = cacheable_prefix(case, backend, server_copies=server_copies)
        shared = self._shared.get(backend)
        if not shared:
            return longest
        steps = case.data.get("setup", [])
        for length in range(longest, 0, -1):
            if shared[_prefix_key(case, length)] < 2:
                continue
            return length if any("run" in step for step in steps[:length]) else 0
        return 0

    @contextmanager
    def directory(
        self,
        key_parts: Any,
        build: Callable[[Path, dict[str, str]], bool],
        env: Callable[[Path], dict[str, str]],
        server: ServerState | None = None,
    ) -> Iterator[tuple[Path, dict[str, str]] | None]:
        """The case directory for the prefix named by ``key_parts``, restored as ``build``
        left it, with the environment naming the ``server`` state restored likewise (empty
        without one); ``None`` when ``build`` (run once, at that directory, given the
        environment of a fresh server state) said it failed. ``env`` gives the environment
        of git commands in a case directory."""
        key = hashlib.sha256(json.dumps(key_parts, sort_keys=True).encode()).hexdigest()[:16]
        with self._lock:
            if self._dir is None:
                self._dir = Path(tempfile.mkdtemp(prefix="ragit-conformance-setups-")).resolve()
            lock = self._key_locks.setdefault(key, threading.Lock())
            base = self._dir
        home, saved = base / key / "case", base / key / "saved"
        with lock:
            if key not in self._built:
                home.parent.mkdir(parents=True, exist_ok=True)
                ok = _build(home, key, build, server)
                if ok:
                    shutil.copytree(home, saved, symlinks=True)
                shutil.rmtree(home, ignore_errors=True)
                self._built[key] = ok
            if not self._built[key]:
                yield None
                return
            shutil.rmtree(home, ignore_errors=True)
            shutil.copytree(saved, home, symlinks=True)
            repo = home / "repo"
            if (repo / ".git").exists():
                # New inodes and ctimes: refresh git's stat cache (the content is the same).
                subprocess.run(
                    ["git", "update-index", "-q", "--refresh"],
                    cwd=repo,
                    env=env(home),
                    capture_output=True,
                    check=False,
                )
            try:
                server_env = server.restore(key) if server is not None else {}
                yield home, server_env
            finally:
                if server is not None:
                    server.discard(key)
                shutil.rmtree(home, ignore_errors=True)

    def close(self) -> None:
        """Remove every saved directory."""
        with self._lock:
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None
                self._built.clear()
