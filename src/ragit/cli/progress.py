"""Progress of long work on stderr: one in-place display per phase at a terminal.

The core reports progress as short messages ``"<phase>: <text>"`` whose text may hold a count
``n/total`` (``"embed: 512/4096 chunks (830/s, ETA 4s)"``); it may report as often as it likes.
What a person sees depends on where stderr goes:

- ``live`` (stderr is a terminal): one line per phase, redrawn in place with a bar and the
  count, by `rich <https://github.com/Textualize/rich>`_ — imported only when the first
  message arrives, so commands without long work never load it;
- ``lines`` (``-v`` when stderr is not a terminal): ``[ragit] <message>`` lines, at most one
  every two seconds per phase, plus the first and the last of each phase;
- ``off``: nothing (``-q`` everywhere; and by default when stderr is not a terminal, or with
  ``RAGIT_PROGRESS=0``, which the background hook runner sets).
"""

from __future__ import annotations

import os
import re
import sys
import time
from typing import IO, Any

LINE_INTERVAL_S = 2.0
# Phases that are not work done: their line goes away once they end (a wait for another
# writer would otherwise stay on the terminal, frozen at the second it ended).
TRANSIENT_PHASES = frozenset({"wait"})
_COUNT = re.compile(r"(\d+)/(\d+)")


def choose_mode(*, verbose: bool, quiet: bool, stream: IO[str] | None = None) -> str:
    """``off``, ``lines`` or ``live`` for these flags and this stream."""
    if quiet:
        return "off"
    target = stream if stream is not None else sys.stderr
    try:
        terminal = bool(target.isatty())
    except (AttributeError, ValueError):
        terminal = False
    if not verbose and os.environ.get("RAGIT_PROGRESS", "1") == "0":
        return "off"
    if terminal:
        return "live"
    return "lines" if verbose else "off"


def split(message: str) -> tuple[str, str, int | None, int | None]:
    """``(phase, text, done, total)`` of one progress message."""
    phase, sep, text = message.partition(": ")
    if not sep:
        phase, text = "work", message
    found = _COUNT.search(text)
    if found is None:
        return phase, text, None, None
    return phase, text, int(found.group(1)), int(found.group(2))


class ProgressDisplay:
    """The sink a command hands to the core as its ``progress`` callable."""

    def __init__(self, mode: str, stream: IO[str] | None = None) -> None:
        self.mode = mode
        self.stream = stream if stream is not None else sys.stderr
        self._live: Any = None
        self._tasks: dict[str, Any] = {}
        self._last_line: dict[str, float] = {}
        self._last_phase: str | None = None

    def __call__(self, message: str) -> None:
        if self.mode == "off":
            return
        phase, text, done, total = split(message)
        if self.mode == "lines":
            self._line(phase, message, done, total)
        else:
            self._show(phase, text, done, total)

    def _line(self, phase: str, message: str, done: int | None, total: int | None) -> None:
        now = time.monotonic()
        last = self._last_line.get(phase)
        finished = done is not None and done == total
        recent = last is not None and now - last < LINE_INTERVAL_S
        if recent and not finished and phase == self._last_phase:
            return
        self._last_line[phase] = now
        self._last_phase = phase
        self.stream.write(f"[ragit] {message}\n")
        self.stream.flush()

    def _show(self, phase: str, text: str, done: int | None, total: int | None) -> None:
        if self._live is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self._live = Progress(
                SpinnerColumn(),
                TextColumn("{task.fields[phase]:<7}"),
                BarColumn(bar_width=24),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            self._live.start()
        task = self._tasks.get(phase)
        description = _COUNT.sub("", text, count=1).strip()
        if task is None:
            self._end_earlier()
            self._tasks[phase] = self._live.add_task(
                description, total=total, completed=done or 0, phase=phase
            )
        else:
            self._live.update(task, description=description, completed=done, total=total)

    def _end_earlier(self) -> None:
        """Complete the phases shown so far; remove the transient ones."""
        for phase, task in list(self._tasks.items()):
            if phase in TRANSIENT_PHASES:
                self._live.remove_task(task)
                del self._tasks[phase]
            else:
                self._finish(task)

    def _finish(self, task: Any) -> None:
        tasks = self._live.tasks if self._live is not None else []
        found = next((t for t in tasks if t.id == task), None)  # ids outlive removed tasks
        if found is not None and found.total is None:
            self._live.update(task, total=1, completed=1)  # a phase without a count: done

    def close(self) -> None:
        """End the display (its last state stays on the terminal)."""
        if self._live is not None:
            self._end_earlier()
            self._live.stop()
            self._live = None
