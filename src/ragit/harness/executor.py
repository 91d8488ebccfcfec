"""The ``command`` executor of `harness run`: one process per case, with a timeout.

stdout and stderr go to temporary files (at most :data:`READ_CAP` bytes of each
are read back); a timed-out case's whole process group is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Any

READ_CAP = 8 * 1024 * 1024


def _read(handle: IO[bytes]) -> str:
    handle.seek(0)
    return handle.read(READ_CAP).decode("utf-8", errors="replace")


def execute(
    argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes, timeout_s: float
) -> dict[str, Any]:
    """Run one command; ``{exitCode, stdout, stderr, timedOut, error, durationMs}``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        except OSError as exc:
            return {
                "exitCode": None,
                "stdout": "",
                "stderr": "",
                "timedOut": False,
                "error": f"could not start the command ({exc.strerror or type(exc).__name__})",
                "durationMs": int((time.monotonic() - start) * 1000),
            }
        timed_out = False
        try:
            proc.communicate(input=stdin, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        duration = int((time.monotonic() - start) * 1000)
        return {
            "exitCode": None if timed_out else proc.returncode,
            "stdout": _read(out),
            "stderr": _read(err),
            "timedOut": timed_out,
            "error": "timed out" if timed_out else None,
            "durationMs": duration,
        }
