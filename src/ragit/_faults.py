"""Fault injection at named write phases — TEST-ONLY hooks, inert unless the variables are set.

The crash-safety promise (contract §6, docs/faults.md) is tested by killing a real writer
process at every phase, not assumed. Writers call :func:`reach` right after each durable step;
with no ``RAGIT_FAULT_*`` variable in the environment it returns immediately.

``RAGIT_FAULT_AT=<phase>[:<n>]``
    The process ends with ``os._exit(137)`` (as if killed with SIGKILL: no ``finally`` blocks,
    no atexit, no flush) the ``n``-th time (default 1st) it reaches ``phase``.

``RAGIT_FAULT_PAUSE_AT=<phase>`` with ``RAGIT_FAULT_RELEASE=<path>``
    The process writes ``ragit-fault: paused at <phase>`` on a line of its own to stderr, then
    blocks until a file exists at ``path``. Waiting polls that file every 10 ms: this is a test
    harness, not a lock, and the only place RAGit polls a file for a writer.

``RAGIT_FAULT_ENOSPC=<phase>``
    A full disk from ``phase`` on: once the process reaches ``phase``, every later atomic file
    write (:func:`ragit._fs.atomic_write_bytes`: manifests, ``meta.json``, journals, memory and
    security records) raises ``OSError(ENOSPC)`` before touching the disk, and so does every
    later ``store-insert-batch`` / ``rebuild-batch`` phase, i.e. the zvec insert batch just
    written reports the failure (a prefix of it may be stored, as after a real crash). The disk
    stays "full" until the process ends.

Phases reached by the store package: the journal phases (``prepared``, ``store-written``,
``store-verified``, ``manifest-committed``, ``published``, ``completed``), plus
``store-insert-batch`` (after each ≤1,024-row insert batch), ``publish-copied`` (reader copy
made, meta.json not yet bumped) and ``publish-meta-written`` (meta.json bumped, old copies not
yet pruned). Callers (the ingest pipeline, snapshot selection) add their own names.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from pathlib import Path

_counts: dict[str, int] = {}
_disk_full = {"on": False}
# Phases that follow a zvec insert batch: a full disk fails the batch just written.
_INSERT_PHASES = frozenset({"store-insert-batch", "rebuild-batch"})


def _enospc() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def before_write() -> None:
    """Called before every atomic file write; raises ENOSPC once ``RAGIT_FAULT_ENOSPC`` fired.

    Raises:
        OSError: errno ENOSPC (test-only fault injection).
    """
    if _disk_full["on"]:
        raise _enospc()


def reach(phase: str) -> None:
    """Mark that the running process reached ``phase``; honour the test-only fault variables.

    Raises:
        OSError: errno ENOSPC, only under ``RAGIT_FAULT_ENOSPC`` (test-only).
    """
    if _disk_full["on"] and phase in _INSERT_PHASES:
        raise _enospc()
    if os.environ.get("RAGIT_FAULT_ENOSPC") == phase:
        _disk_full["on"] = True
    at = os.environ.get("RAGIT_FAULT_AT")
    if at:
        name, _, nth = at.partition(":")
        if name == phase:
            _counts[phase] = _counts.get(phase, 0) + 1
            if _counts[phase] >= (int(nth) if nth.isdigit() else 1):
                os._exit(137)
    pause = os.environ.get("RAGIT_FAULT_PAUSE_AT")
    release = os.environ.get("RAGIT_FAULT_RELEASE")
    if pause and release and pause == phase:
        sys.stderr.write(f"ragit-fault: paused at {phase}\n")
        sys.stderr.flush()
        marker = Path(release)
        while not marker.exists():
            time.sleep(0.01)
