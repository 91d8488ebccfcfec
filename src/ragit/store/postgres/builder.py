"""Starting the detached builder of a namespace's HNSW graph (:mod:`ragit.store.postgres.graph`),
which outlives the ingest that starts it: the ingest waits only until the builder holds the
namespace's bulk lock."""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys

# How long a builder process may take to connect and join the namespace's loaders.
BUILDER_START_SECONDS = 60.0
# Builders this process started and has not seen end (kept so a long-lived caller reaps
# them; a builder outlives an ingest process, which does not wait for it).
_builders: list[subprocess.Popen[bytes]] = []


def start_builder(
    repository_id: str, namespace: str, dimensions: int, min_rows: int
) -> subprocess.Popen[bytes] | None:
    """Start the detached graph builder (:mod:`ragit.store.postgres.graph`) and wait until
    it holds the namespace's bulk lock (it prints ``ready``); it builds once its input is
    closed, once the namespace holds ``min_rows`` rows. The connection comes from this
    process's environment, as every connection does. Returns the builder, or None when it
    did not get ready."""
    try:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ragit.store.postgres.graph",
                repository_id,
                namespace,
                str(dimensions),
                str(min_rows),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=dict(os.environ),
        )
    except OSError:
        return None
    _builders[:] = [b for b in _builders if b.poll() is None]
    _builders.append(proc)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        ready, _, _ = select.select([proc.stdout], [], [], BUILDER_START_SECONDS)
        line = proc.stdout.readline() if ready else b""
    finally:
        proc.stdout.close()
    if line.strip() != b"ready":
        with contextlib.suppress(OSError):
            proc.kill()
            proc.stdin.close()
        return None
    return proc
