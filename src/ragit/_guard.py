"""The early runtime guard (contract.md §1).

Runs before zvec is imported. An unsupported Python or platform, or a zvec that
cannot load, ends the process with one clear line on stderr and exit 3 — never
a native crash or a traceback. Loading zvec is probed once in a child process
(a broken native build can kill its process outright) and the verdict is
cached per (python, kernel, installed zvec files) in the user cache directory.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing itself is not imported on the way to `--version`
if TYPE_CHECKING:
    from pathlib import Path

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
        import platform

        version = platform.python_version()
        raise RuntimeUnsupported(
            f"unsupported Python runtime: {sys.implementation.name} {version} "
            f"(supported: {SUPPORTED_TEXT})"
        )
    # os.uname() is what platform.machine() reads on POSIX, without importing platform.
    machine = os.uname().machine if hasattr(os, "uname") else ""
    key = (sys.platform if sys.platform != "linux2" else "linux", machine.lower())
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


def _zvec_identity() -> str | None:
    """What the probe's verdict is cached for, as cheaply as a path search: the installed
    zvec package's location with the size and mtime of its ``__init__`` (an upgrade or
    reinstall rewrites it), the interpreter and the kernel. None: zvec is not installed.
    (``importlib.metadata`` would scan every installed distribution on each command.)"""
    from importlib.util import find_spec

    try:
        spec = find_spec("zvec")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    try:
        info = os.stat(spec.origin)
    except OSError:
        return None
    uname = os.uname()
    return (
        f"{sys.version}|{uname.sysname}-{uname.release}-{uname.machine}|"
        f"{spec.origin}|{info.st_size}|{info.st_mtime_ns}"
    )


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
    from ragit import _json

    key = _zvec_identity()
    if key is None:
        raise RuntimeUnsupported(
            "zvec is not installed; reinstall ragit-cli (pip install ragit-cli)"
        )
    cache = _probe_cache_path()
    try:
        cached = _json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("key") == key and cached.get("ok") is True:
            return
    except (OSError, ValueError):
        pass
    import contextlib
    import json
    import subprocess

    version = _zvec_version() or "(unknown version)"
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
