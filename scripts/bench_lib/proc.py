"""Run one command as its own process and account for it the way the kernel does.

Wall time is measured around spawn and reap; CPU time and peak RSS come from the
``rusage`` that ``os.wait4`` returns for exactly that child (on Linux its
``ru_maxrss`` is in KiB and covers the child and any descendants it reaped).
Output goes to temporary files, not pipes, so a command that prints a lot can
never block on a full pipe while we wait for it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

KIB_PER_MIB = 1024


class BenchError(Exception):
    """A command the benchmark depends on failed; the scenario cannot go on."""


@dataclass(frozen=True)
class Sample:
    """One finished process: its argv, exit code, streams and resource figures."""

    argv: tuple[str, ...]
    returncode: int
    wall: float
    cpu: float
    max_rss_mib: float
    stdout: str
    stderr: str

    def describe_failure(self) -> str:
        tail = "\n".join(self.stderr.strip().splitlines()[-15:])
        out_tail = self.stdout.strip()[-1500:]
        return (
            f"`{shlex.join(self.argv)}` exited {self.returncode}\n"
            f"--- stderr (tail) ---\n{tail}\n--- stdout (tail) ---\n{out_tail}"
        )


@dataclass
class Env:
    """A hermetic environment: a fixed base plus per-call overrides."""

    base: dict[str, str]
    overrides: dict[str, str] = field(default_factory=dict)

    def with_(self, **values: str) -> Env:
        return Env(self.base, {**self.overrides, **values})

    def as_dict(self) -> dict[str, str]:
        return {**self.base, **self.overrides}


def run(
    argv: list[str],
    *,
    cwd: Path,
    env: Env,
    check: bool = True,
    stdin_text: str | None = None,
) -> Sample:
    """Run ``argv`` to completion in ``cwd`` and return its figures.

    Raises:
        BenchError: the command exited non-zero and ``check`` is true, or it could not start.
    """
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryFile() as inp,
    ):
        if stdin_text is not None:
            inp.write(stdin_text.encode("utf-8"))
            inp.seek(0)
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(
                argv, cwd=cwd, env=env.as_dict(), stdin=inp, stdout=out, stderr=err
            )
        except OSError as exc:
            raise BenchError(f"cannot start {shlex.join(argv)}: {exc}") from exc
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        # Tell Popen the child is reaped so it never waits on the pid again.
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        sample = Sample(
            argv=tuple(argv),
            returncode=proc.returncode,
            wall=wall,
            cpu=usage.ru_utime + usage.ru_stime,
            max_rss_mib=usage.ru_maxrss / KIB_PER_MIB,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
        )
    if check and sample.returncode != 0:
        raise BenchError(sample.describe_failure())
    return sample


def quiet(argv: list[str], *, cwd: Path, env: Env) -> str:
    """Run a set-up command (not measured) and return its stdout.

    Raises:
        BenchError: the command failed.
    """
    return run(argv, cwd=cwd, env=env).stdout
