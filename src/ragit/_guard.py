"""The early runtime guard (contract.md §1).

Runs before zvec is imported. An unsupported Python or platform, or a zvec that
cannot load, ends the process with one clear line on stderr and exit 3 — never
a native crash or a traceback. Loading zvec is probed once in a child process
(a broken native build can kill its process outright) and the verdict is
cached per (python, platform, zvec version) in the user cache directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from ragit import _json

SUPPORTED_PLATFORMS = {
    ("linux", "x86_64"),
    ("linux", "amd64"),
    ("linux", "aarch64"),
    ("linux", "arm64"),
    ("darwin", "arm64"),
}
SUPPORTED_TEXT = "CPython 3.10+ on linux/x86_64, linux/arm64, darwin/arm64"
EXIT_NOT_READY = 3


class RuntimeUnsupported(Exception):
    """The runtime cannot run RAGit; the message is the one line to print."""


def check_interpreter() -> None:
    """Reject unsupported Python versions and platforms (cheap: no imports).

    Raises:
        RuntimeUnsupported: with the line to print.
    """
    if sys.version_info < (3, 10) or sys.implementation.name != "cpython":
        version = platform.python_version()
        raise RuntimeUnsupported(
            f"unsupported Python runtime: {sys.implementation.name} {version} "
            f"(supported: {SUPPORTED_TEXT})"
        )
    key = (sys.platform if sys.platform != "linux2" else "linux", platform.machine().lower())
    if key not in SUPPORTED_PLATFORMS:
        raise RuntimeUnsupported(
            f"zvec not supported on this platform: {key[0]}/{key[1]} (supported: {SUPPORTED_TEXT})"
        )


def _zvec_version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("zvec")
    except metadata.PackageNotFoundError:
        return None


def _probe_cache_path() -> Path:
    from ragit.workspace import user_cache_dir

    return user_cache_dir() / "runtime-probe.json"


def check_zvec() -> None:
    """Make sure ``import zvec`` works here, probing in a child process once.

    Raises:
        RuntimeUnsupported: zvec is missing or cannot load on this machine.
    """
    if os.environ.get("RAGIT_FORCE_ZVEC_UNAVAILABLE") == "1":  # documented test switch
        raise RuntimeUnsupported(
            f"zvec cannot load on this machine (forced) (supported: {SUPPORTED_TEXT})"
        )
    version = _zvec_version()
    if version is None:
        raise RuntimeUnsupported(
            "zvec is not installed; reinstall ragit-cli (pip install ragit-cli)"
        )
    key = f"{sys.version}|{platform.platform()}|{version}"
    cache = _probe_cache_path()
    try:
        cached = _json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("key") == key and cached.get("ok") is True:
            return
    except (OSError, ValueError):
        pass
    proc = subprocess.run(
        [sys.executable, "-c", "import zvec"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        reason = "crashed" if proc.returncode < 0 else "import failed"
        raise RuntimeUnsupported(
            f"zvec {version} cannot load on this machine ({reason}) (supported: {SUPPORTED_TEXT})"
        )
    from ragit._fs import atomic_write_text

    with contextlib.suppress(OSError):  # a cache: without it the probe runs again next time
        atomic_write_text(cache, json.dumps({"key": key, "ok": True}), fsync=False, mode=0o644)


def exit_unsupported(exc: RuntimeUnsupported) -> None:
    """Print the guard's one line and exit 3."""
    sys.stderr.write(f"[ragit] {exc}\n")
    sys.stderr.flush()
    raise SystemExit(EXIT_NOT_READY)
