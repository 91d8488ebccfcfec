"""A pager for long text at a terminal, as git has one (docs/history.md, `ragit log`).

Only when stdout is a terminal and the output format is ``text``; never in a pipe, a file
or an agent's shell tool. The command is ``RAGIT_PAGER``, else ``PAGER``, else ``less``
when it is installed; an empty value or ``cat`` means no pager. ``less`` gets ``LESS=FRX``
unless ``LESS`` is set (quit when the text fits one screen, keep colour, leave it on the
screen), as git does. The pager runs through ``sh -c`` so a ``PAGER`` with arguments works.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from typing import IO


def pager_command() -> str | None:
    """The pager to run, or None for none (an empty value, ``cat``, nothing installed)."""
    for name in ("RAGIT_PAGER", "PAGER"):
        if name in os.environ:
            command = os.environ[name].strip()
            return None if command in ("", "cat") else command
    return "less" if shutil.which("less") else None


def wants_pager(stream: IO[str] | None = None) -> bool:
    """Whether text for ``stream`` (stdout) should go through a pager: a terminal only."""
    target = stream if stream is not None else sys.stdout
    try:
        return bool(target.isatty()) and pager_command() is not None
    except (AttributeError, ValueError):
        return False


def page(text: str) -> bool:
    """Show ``text`` through the pager; False when none could be started (print it instead).

    The pager owns the terminal until it exits: SIGINT is ignored meanwhile (``less``
    handles it), and a pager that quits before reading everything is not an error.
    """
    command = pager_command()
    if command is None:
        return False
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    sys.stdout.flush()
    try:
        proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.PIPE, env=env)
    except OSError:
        return False
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert proc.stdin is not None
        try:
            proc.stdin.write(text.encode("utf-8", "replace"))
            proc.stdin.close()
        except BrokenPipeError:  # the reader quit early (`q` in less)
            pass
        proc.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    return True
