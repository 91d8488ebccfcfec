"""Embedding on the second core: a helper process for large local batches.

A full ingest of the default profile spends about a quarter of its time computing placeholder
vectors, pure Python work that holds the GIL. :class:`Helper` starts ``python -m
ragit.embed.parallel <root>``, which builds the repository's embedder exactly as the ingest did
(:func:`ragit.embed.policy.build_embedder` over the same configuration, checked against the
caller's profile) and embeds the texts it is given from the first batch on, writing each batch's
vectors back as float32 while the caller does other work (the keyword index of the same rows).
The caller then takes batches from the *last* one backwards (:meth:`Helper.collect`) until the
two meet, so neither core idles whatever the load on the machine; at most one batch is computed
twice.

Vectors are the same bits either way: both processes run the same embedder on the same texts,
and a float32 narrowing of a double is the same IEEE rounding in numpy as in ``array('f')``.

The helper reads only its configuration and writes no file. It stops when its input is done,
when the caller closes its pipes, or on SIGINT/SIGTERM; any failure of the helper (it could not
start, exited, sent a malformed frame) only means the caller embeds the remaining batches
itself. Used only for local providers that need no network and no model file
(:func:`eligible`), from :data:`MIN_TEXTS` texts on, on a machine with two or more CPUs.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import struct
import subprocess
import sys
import threading
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from ragit import _json

MIN_TEXTS = 2048  # below this, starting a process costs more than it saves
PARALLEL_PROVIDERS = frozenset({"local-placeholder"})
_FRAME = struct.Struct("<ii")  # batch index (-1: failure), payload bytes


def eligible(provider: str, texts: int) -> bool:
    """Whether a helper process is worth starting for ``texts`` texts of ``provider``."""
    if os.environ.get("RAGIT_EMBED_HELPER") == "0":  # test-only: the single-process path
        return False
    return provider in PARALLEL_PROVIDERS and texts >= MIN_TEXTS and (os.cpu_count() or 1) >= 2


class Helper:
    """A helper process embedding ``texts`` in batches of ``batch`` from the first one on."""

    def __init__(
        self, root: Path, profile: dict[str, Any], texts: Sequence[str], batch: int
    ) -> None:
        self.batch = batch
        self.count = (len(texts) + batch - 1) // batch
        self._texts = texts
        self._done: dict[int, bytes] = {}
        self._front = 0  # batches [0, front) have arrived
        self.helped = 0  # batches the helper computed (after collect)
        self._cond = threading.Condition()
        self._proc: subprocess.Popen[bytes] | None = None
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "ragit.embed.parallel", str(root)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:  # this process embeds every batch itself
            return
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._writer = threading.Thread(
            target=self._send, args=(self._proc.stdin, profile), daemon=True
        )
        self._reader = threading.Thread(
            target=self._receive, args=(self._proc.stdout,), daemon=True
        )
        self._writer.start()
        self._reader.start()

    def _send(self, pipe: IO[bytes], profile: dict[str, Any]) -> None:
        """The job header, then the texts batch by batch (encoded one batch at a time, so
        neither process holds a second copy of every text)."""
        with contextlib.suppress(OSError, ValueError):
            _write_frame(pipe, [profile, self.batch, self.count])
            for index in range(self.count):
                _write_frame(pipe, list(self._texts[index * self.batch : (index + 1) * self.batch]))
            pipe.close()

    def _receive(self, pipe: IO[bytes]) -> None:
        try:
            while True:
                head = pipe.read(_FRAME.size)
                if len(head) < _FRAME.size:
                    break
                index, size = _FRAME.unpack(head)
                if index < 0 or index >= self.count:
                    break
                data = pipe.read(size)
                if len(data) < size:
                    break
                with self._cond:
                    self._done[index] = data
                    while self._front in self._done:
                        self._front += 1
                    self._cond.notify_all()
        except (OSError, ValueError):
            pass  # a helper that stopped: this process embeds the batches it did not send

    def collect(
        self, embed_local: Callable[[list[str]], list[Any]], progress: Callable[[int], None]
    ) -> list[array[float]]:
        """Every text's vector (float32 ``array``), in order: the helper's batches from the
        front, this process's (``embed_local``) from the back until they meet.

        ``progress`` gets the number of texts with a vector so far, after each batch.
        """
        mine: dict[int, list[array[float]]] = {}
        back = self.count  # this process has embedded batches [back, count)
        while True:
            with self._cond:
                front = self._front
            if front >= back:
                break
            back -= 1
            part = list(self._texts[back * self.batch : (back + 1) * self.batch])
            mine[back] = [array("f", v) for v in embed_local(part)]
            progress(min(len(self._texts), (front + self.count - back) * self.batch))
        self.close()
        self.helped = sum(1 for index in range(self.count) if index not in mine)
        dims = 0
        out: list[array[float]] = []
        for index in range(self.count):
            if index in mine:
                out.extend(mine.pop(index))
                continue
            # Popped as they are unpacked: the vectors are never held twice.
            data = self._done.pop(index)
            rows = min(self.batch, len(self._texts) - index * self.batch)
            dims = len(data) // 4 // rows
            for r in range(rows):
                vector = array("f")
                vector.frombytes(data[r * dims * 4 : (r + 1) * dims * 4])
                out.append(vector)
        return out

    def close(self) -> None:
        """Stop the helper (it may be inside a batch the caller took over); idempotent."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.terminate()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        for pipe in (proc.stdout, proc.stdin):
            with contextlib.suppress(OSError, ValueError):
                if pipe is not None:
                    pipe.close()


def _write_frame(pipe: IO[bytes], value: Any) -> None:
    data = json.dumps(value).encode("utf-8")
    pipe.write(struct.pack("<q", len(data)))
    pipe.write(data)


def _read_frame(pipe: IO[bytes]) -> Any:
    """The next JSON frame, or None at the end of the input."""
    head = pipe.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack("<q", head)
    data = pipe.read(size)
    return _json.loads(data) if len(data) == size else None


def _serve(root: Path) -> int:
    """The helper's side: read the job, embed batch after batch, write each one's vectors."""
    import numpy as np

    from ragit.config import load_config
    from ragit.embed.policy import build_embedder
    from ragit.workspace import Workspace

    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    header = _read_frame(stdin)
    if header is None:
        return 0
    profile, _batch, count = header
    cfg = load_config(Workspace(root))
    embedder = build_embedder(root, cfg.embedding, cfg.security, mode="cli")
    if _json.loads(json.dumps(embedder.profile.as_dict())) != profile:
        stdout.write(_FRAME.pack(-1, 0))
        return 1
    for index in range(count):
        texts = _read_frame(stdin)
        if texts is None:
            return 0
        vectors = embedder.embed(texts)
        data = np.asarray(vectors, dtype=np.float32).tobytes()
        stdout.write(_FRAME.pack(index, len(data)))
        stdout.write(data)
        stdout.flush()
    return 0


def main(argv: list[str]) -> int:
    """Entry point of the helper process (``python -m ragit.embed.parallel <root>``)."""
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    try:
        return _serve(Path(argv[0]))
    except (KeyboardInterrupt, BrokenPipeError):
        os._exit(0)
    except Exception:  # the caller embeds what is missing itself
        return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
