"""Several `ragit` command lines in one interpreter (imported, not collected).

Each command runs through the CLI's own entry point (``ragit.cli.main.main``) and prints its
JSON envelope as the real process does; one interpreter start serves them all, which keeps
tests that check one state with many commands cheap. ``prelude`` (Python source) runs first,
e.g. to make a package unimportable; ``preexec`` runs in the child before it starts (e.g. to
drop privileges).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_RUNNER = """
import contextlib, io, json, sys
{prelude}
from ragit.cli.main import main
for line in sys.stdin:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main([*json.loads(line), "--format", "json"])
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
    print(json.dumps({{"code": code, "stdout": out.getvalue()}}), flush=True)
"""

# Each command line as given (no ``--format`` added); both streams captured.
_LINES_RUNNER = """
import contextlib, io, json, sys
from ragit.cli.main import main
for line in sys.stdin:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(json.loads(line))
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
    print(json.dumps({"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}),
          flush=True)
"""


@dataclass
class Ran:
    """One command's exit status, envelope and stdout."""

    code: int
    envelope: dict[str, Any]
    output: str

    @property
    def error(self) -> dict[str, Any]:
        assert self.envelope["ok"] is False, self.envelope
        error: dict[str, Any] = self.envelope["error"]
        return error


def run_many(
    root: Path,
    commands: Sequence[Sequence[str]],
    *,
    env: Mapping[str, str] | None = None,
    prelude: str = "",
    preexec: Callable[[], None] | None = None,
) -> dict[str, Ran]:
    """Run each of ``commands`` (argv without ``ragit``) in ``root``; results by the command
    line joined with spaces. The interpreter itself must exit 0, with no traceback."""
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER.format(prelude=prelude)],
        cwd=root,
        input="".join(json.dumps(list(args)) + "\n" for args in commands),
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, **(env or {})},
        preexec_fn=preexec,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(results) == len(commands), proc.stdout + proc.stderr
    out: dict[str, Ran] = {}
    for args, result in zip(commands, results, strict=True):
        lines = [line for line in result["stdout"].splitlines() if line.strip()]
        assert lines, (args, result, proc.stderr)
        out[" ".join(args)] = Ran(result["code"], json.loads(lines[-1]), result["stdout"])
    return out


@dataclass
class Lines:
    """One command's exit status and both streams, as a pipe would have them."""

    code: int
    stdout: str
    stderr: str


def run_lines(
    root: Path, commands: Sequence[Sequence[str]], *, env: Mapping[str, str] | None = None
) -> list[Lines]:
    """Run each of ``commands`` (argv without ``ragit``, taken as written) in ``root`` in one
    interpreter; one :class:`Lines` per command, in order. For tests about what many command
    lines print, where the process boundary is not the point."""
    proc = subprocess.run(
        [sys.executable, "-c", _LINES_RUNNER],
        cwd=root,
        input="".join(json.dumps(list(args)) + "\n" for args in commands),
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, **(env or {})},
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(results) == len(commands), proc.stdout + proc.stderr
    return [Lines(r["code"], r["stdout"], r["stderr"]) for r in results]
