"""Fixture repositories, built once per process by ``fixtures/build.py`` and copied per case."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from conformance.environment import DEFAULT_TIMEOUT, CaseError


class FixtureCache:
    """Builds each fixture once per process (``python fixtures/build.py``) and copies it.

    Thread-safe; :meth:`close` removes the built templates.
    """

    def __init__(self, builder: Path, python: str = sys.executable) -> None:
        self.builder = builder
        self.python = python
        self._dir: Path | None = None
        self._lock = threading.Lock()
        self._name_locks: dict[str, threading.Lock] = {}
        self._built: dict[str, Path] = {}

    def _template(self, name: str) -> Path:
        with self._lock:
            if self._dir is None:
                self._dir = Path(tempfile.mkdtemp(prefix="ragit-conformance-fixtures-"))
            lock = self._name_locks.setdefault(name, threading.Lock())
            base = self._dir
        with lock:
            if name in self._built:
                return self._built[name]
            if not self.builder.is_file():
                raise CaseError(f"fixture builder {self.builder} not found")
            dest = base / name
            proc = subprocess.run(
                [self.python, str(self.builder), name, str(dest)],
                capture_output=True,
                check=False,
                timeout=DEFAULT_TIMEOUT,
            )
            if proc.returncode != 0:
                err = proc.stderr.decode("utf-8", "replace").strip()
                raise CaseError(f"building fixture {name!r} failed ({proc.returncode}): {err}")
            self._built[name] = dest
            return dest

    def materialize(self, name: str, dest: Path, env: dict[str, str]) -> None:
        """Copy fixture ``name`` to ``dest`` (which must not exist).

        Raises:
            CaseError: the builder is missing or fails.
        """
        shutil.copytree(self._template(name), dest, symlinks=True)
        # A copy has new inodes and ctimes; refresh the index's stat cache so the
        # copy starts as the builder left it (content is unchanged either way).
        if (dest / ".git").exists():
            subprocess.run(
                ["git", "update-index", "-q", "--refresh"],
                cwd=dest,
                env=env,
                capture_output=True,
                check=False,
            )

    def close(self) -> None:
        """Remove every built template."""
        with self._lock:
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None
                self._built.clear()
