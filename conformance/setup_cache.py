"""Setup prefixes shared by cases, run once per process and restored per case.

Many cases start the same way (the same fixture, then ``init``, ``git add``, ``git commit``,
``ingest --all``). :class:`SetupCache` runs such a leading run of setup steps once, keeps a
copy of the case directory it left, and restores that copy for every later case with the
same prefix. The implementation may record absolute paths (a repository's user caches are
named by its path), so a prefix always lives at one fixed directory: the copy is restored to
the very path it was built at, and the case then runs there as if it had run the steps itself.

Only on the embedded store (a shared store keeps state outside the directory), only steps
whose effect is the directory alone (``run``, ``git``, ``write``, ``mkdir``, ``delete``
without captures, judged steps or other implementations), and never for a case that installs
hooks (a hook may start a process that outlives the case). A prefix that fails is not cached:
the case runs its setup itself and reports the failure as usual. Cases sharing a prefix run
one at a time (a per-prefix lock), so the cache is safe in a thread pool but meant for the
pytest plugin, where each process runs its cases in turn.
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
from typing import Any

from conformance.suite import Case

_KINDS = ("run", "git", "write", "mkdir", "delete")
_UNCACHEABLE_KEYS = ("capture", "judged", "impl", "env", "stdin", "stdinBase64", "cwd")


def _prefix_key(case: Case, length: int) -> str:
    return json.dumps([case.data.get("fixture"), case.data.get("setup", [])[:length]])


def cacheable_prefix(case: Case, backend: str) -> int:
    """How many leading setup steps of ``case`` may come from the cache (0: none)."""
    if backend != "zvec" or '"hooks"' in json.dumps(case.data):
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


class SetupCache:
    """Case directories after a setup prefix, built once per process and restored per case.

    Given the whole suite's ``cases``, a case shares the longest of its cacheable prefixes
    that another case starts with too (a prefix no other case has would be built for one
    case only); without them, its whole cacheable prefix.
    """

    def __init__(self, cases: Iterable[Case] = ()) -> None:
        self._shared: Counter[str] = Counter()
        for case in cases:
            for length in range(1, cacheable_prefix(case, "zvec") + 1):
                self._shared[_prefix_key(case, length)] += 1
        self._dir: Path | None = None
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._built: dict[str, bool] = {}

    def prefix(self, case: Case, backend: str) -> int:
        """How many leading setup steps of ``case`` to take from this cache (0: none)."""
        longest = cacheable_prefix(case, backend)
        if not self._shared:
            return longest
        steps = case.data.get("setup", [])
        for length in range(longest, 0, -1):
            if self._shared[_prefix_key(case, length)] < 2:
                continue
            return length if any("run" in step for step in steps[:length]) else 0
        return 0

    @contextmanager
    def directory(
        self,
        key_parts: Any,
        build: Callable[[Path], bool],
        env: Callable[[Path], dict[str, str]],
    ) -> Iterator[Path | None]:
        """The case directory for the prefix named by ``key_parts``, restored as ``build``
        left it; ``None`` when ``build`` (run once, at that directory) said it failed.
        ``env`` gives the environment of git commands in a case directory."""
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
                ok = build(home)
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
                yield home
            finally:
                shutil.rmtree(home, ignore_errors=True)

    def close(self) -> None:
        """Remove every saved directory."""
        with self._lock:
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None
                self._built.clear()
