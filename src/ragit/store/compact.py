"""Merging store segments, in a background process (inline only when overdue).

Every write adds a zvec segment. No score depends on segments — keyword statistics come from
RAGit's own index, per snapshot (:mod:`ragit.store.terms`) — so merging is for speed only (fewer
files to search and fetch from). Merging rewrites the whole collection (about 1.3 s at 17.8k
chunks), so:

* a store of at most :data:`ragit.store.meta.INLINE_MAX_ROWS` rows (0: none, by default; tests
  raise it with ``RAGIT_COMPACT_INLINE_ROWS``) is merged inline by the writer
  (:meth:`ragit.store.writer.StoreWriter.compact`), with the same copy-merge-swap as below, all
  under the lock the writer holds and without a publish of its own (:func:`merge_held`): zvec's
  ``optimize()`` never runs on the canonical collection, because a kill inside it left that
  collection inconsistent;
* a store of more than :data:`ragit.store.meta.BACKGROUND_MIN_ROWS` rows is merged by a
  detached ``python -m ragit.store.compact <root>``
  started after the ingest released the lock. It copies the canonical collection
  under the lock (a fraction of a second), merges the copy without the lock, then
  takes the lock again and — only if no writer changed the store meanwhile —
  swaps the merged copy in through ``.ragit/store.next`` (the same verified swap as
  a store rebuild) and publishes it. Until then queries use the published,
  unmerged generation, with the same results.

Writers wait for it in turn: a writer that finds the compactor holding the lock waits until it
releases it (bounded, :func:`ragit.store.lock.compactor_wait_s`) instead of failing with
``STORE_WRITE_BUSY``, so the next commit's ingest never fails over the previous one's merge.

Under a steady stream of writes the compactor must still make progress: one runs at a time
(the ``flock`` on ``.ragit/runtime/compact.run``; a second one exits at once), it waits for
the writer lock (bounded, :data:`LOCK_WAIT_SECONDS`) instead of giving up when a writer holds
it, and it merges again when a writer changed the store while it merged; the last of its
:data:`ATTEMPTS` holds the lock from the copy to the swap (writers wait those seconds, the
merge lands). A merge that is overdue anyway (:data:`ragit.store.meta.OVERDUE_SEGMENTS` segments)
is done inline by the next writer (:meth:`ragit.store.writer.StoreWriter.compact`); that is also
when a smaller store merges (its few segments cost nothing measurable, and no background process
then competes with the next commit's ingest for the lock).

The copy is of the whole store directory (every file of the collection, whatever its name, and
the records beside it) into ``.ragit/runtime/compact-<pid>``; a killed merger's copy is removed by
the next merge. A kill at any instant leaves the canonical collection either as it was or
replaced by the complete merged copy (:func:`ragit.store.replace.recover_swap` finishes a swap
cut between its two renames).

Its one-line outcome goes to ``.ragit/runtime/compact.log``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ragit._fs import atomic_write_text
from ragit._lock import pid_alive

LOCK_WAIT_SECONDS = 60.0  # how long the compactor waits for a busy writer lock, each time
LOCK_POLL_SECONDS = 0.1
ATTEMPTS = 3  # merges of a copy a concurrent writer made stale, before leaving it
RUN_NAME = "compact.run"


def start_background(root: Path) -> None:
    """Start the detached compactor for the repository at ``root`` (never waits for it)."""
    if os.environ.get("RAGIT_COMPACT_BACKGROUND") == "0":  # test-only: leave segments alone
        return
    log = root / ".ragit" / "runtime" / "compact.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        # posix_spawn in a new session: nothing here waits for it or keeps a handle on it.
        os.posix_spawn(
            sys.executable,
            [sys.executable, "-m", "ragit.store.compact", str(root)],
            dict(os.environ),
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, fd, 1),
                (os.POSIX_SPAWN_DUP2, fd, 2),
            ],
            setsid=True,
        )
    finally:
        os.close(fd)


def _log(**fields: object) -> None:
    record = {"recordedAt": datetime.now(timezone.utc).isoformat(timespec="seconds"), **fields}
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def _acquire(ws: Any, wait_s: float) -> Any:
    """The writer lock, waiting (bounded) while a live writer holds it.

    Raises:
        StoreWriteBusy: still held after ``wait_s``.
        StoreWriteLockStale: the owner is on another host or unreadable.
    """
    from ragit.contract.errors import StoreWriteBusy
    from ragit.store.lock import COMPACTOR_COMMAND, WriterLock

    deadline = time.monotonic() + wait_s
    while True:
        try:
            return WriterLock.acquire(ws, command=COMPACTOR_COMMAND, head_sha=None)
        except StoreWriteBusy:
            if time.monotonic() >= deadline:
                raise
            time.sleep(LOCK_POLL_SECONDS)  # background job: waiting for the writer is the point


def compact(root: Path, *, wait_s: float = LOCK_WAIT_SECONDS) -> str:
    """Merge the store of ``root`` off the lock; returns what happened.

    Raises:
        StoreWriteBusy, StoreWriteLockStale: a writer held the lock for ``wait_s`` at a step
            that needs it.
    """
    from ragit._lock import flocked
    from ragit.workspace import Workspace

    ws = Workspace(root)
    try:
        with flocked(ws.runtime_dir / RUN_NAME, wait_s=0):
            outcome = "no attempt"
            for attempt in range(1, ATTEMPTS + 1):
                # The last attempt holds the lock throughout: writers wait, the merge lands.
                outcome = _compact_once(ws, wait_s, hold=attempt == ATTEMPTS)
                if outcome != "changed":
                    return outcome if attempt == 1 else f"{outcome} (attempt {attempt})"
            return outcome
    except TimeoutError:
        return "another compaction is running"


def _compact_once(ws: Any, wait_s: float, *, hold: bool) -> str:
    """One merge: of a copy made under the lock and swapped in under it again (``"changed"``
    when a writer changed the store meanwhile), or with ``hold`` all under one lock."""
    with contextlib.ExitStack() as held:
        lock = held.enter_context(_acquire(ws, wait_s)) if hold else None
        return _merge(ws, wait_s, lock)


def merge_held(ws: Any, lock: Any) -> str:
    """Merge the store's segments for a writer that holds ``lock`` and has closed the
    canonical collection: copy, merge the copy, swap it in through ``.ragit/store.next``.

    The canonical collection is never merged in place: zvec's ``optimize()`` rewrites every
    segment and a kill inside it left the collection inconsistent (later writes failed with
    "field is sealed", "inconsistent total row counts"). Nothing is published: the writer
    publishes (and verifies) the merged store with the rest of its write. A kill before the
    swap leaves the canonical collection as it was and a discarded ``store.next``; a kill
    between the two renames of the swap is finished by the next writer
    (:func:`ragit.store.replace.recover_swap`).

    Returns ``"merged"``, ``"already one segment"`` or ``"no store"``.

    Raises:
        StoreWriteBusy: ``lock`` is no longer held.
        SnapshotStoreUnavailable: zvec could not open or merge the copy.
        OSError: the copy failed (disk full).
    """
    lock.assert_held()
    return _merge(ws, 0.0, lock, publish=False)


def _segments(collection_dir: Path) -> int:
    return sum(
        1
        for p in collection_dir.iterdir()
        if p.is_dir() and p.name.isdigit() and any(p.glob("scalar.*.ipc"))
    )


def _remove_dead_work(runtime_dir: Path) -> None:
    """Remove the merge copies of processes that died before they cleaned up."""
    if not runtime_dir.is_dir():
        return
    from ragit.store._copy import remove_tree

    for path in runtime_dir.glob(f"{WORK_PREFIX}*"):
        pid = path.name[len(WORK_PREFIX) :]
        if pid.isdigit() and int(pid) != os.getpid() and not pid_alive(int(pid)):
            remove_tree(path)


WORK_PREFIX = "compact-"


def _refresh_siblings(live: Path, nxt: Path, collection: str) -> None:
    """Bring the files beside the collection (the referenced-ids record) up to date in the
    merged store: an ingest that did not touch the collection may have grown them."""
    import shutil

    from ragit.store.meta import META_NAME

    for path in live.iterdir():
        if path.name in (META_NAME, collection) or not path.is_file():
            continue
        shutil.copyfile(path, nxt / f".{path.name}.tmp")
        os.replace(nxt / f".{path.name}.tmp", nxt / path.name)


def _merge(ws: Any, wait_s: float, held: Any, *, publish: bool = True) -> str:
    """Copy the canonical collection (under the lock), merge the copy (without the lock
    unless ``held``), swap it in through ``store.next`` (under the lock again, only if no
    writer changed the store meanwhile) and, with ``publish``, publish it."""
    from ragit import _faults as faults
    from ragit.store._copy import copy_tree, remove_tree
    from ragit.store._zvec import Collection
    from ragit.store.meta import META_NAME, next_dir, read_meta
    from ragit.store.replace import COMPLETE_MARK, recover_swap, swap_in

    def locked() -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext(held) if held is not None else _acquire(ws, wait_s)

    work = ws.runtime_dir / f"{WORK_PREFIX}{os.getpid()}"
    remove_tree(work)
    with locked() as lock:
        faults.reach("compact-locked")
        recover_swap(ws, lock)
        _remove_dead_work(ws.runtime_dir)
        meta = read_meta(ws)
        if meta is None:
            return "no store"
        collection_dir = ws.store_dir / meta.collection
        if _segments(collection_dir) <= 1:
            return "already one segment"
        stamp = meta.stamp
        # The whole store directory: the collection with every file in it, and whatever
        # else lives beside it (the referenced-ids record); meta.json is written anew.
        copy_tree(ws.store_dir, work, skip=frozenset({META_NAME}))
    faults.reach("compact-copied")
    try:
        collection = Collection.open(work / meta.collection, read_only=False)
        try:
            collection.optimize()
            count = collection.count()
        finally:
            collection.close()
        faults.reach("compact-merged")
        with locked() as lock:
            current = read_meta(ws)
            if current is None or current.stamp != stamp:
                return "changed"
            nxt = next_dir(ws)
            remove_tree(nxt)
            os.replace(work, nxt)
            _refresh_siblings(ws.store_dir, nxt, meta.collection)
            extra = {k: v for k, v in current.extra.items() if k != "canonicalDigest"}
            # Unpublished (a writer's merge), meta.json keeps the published count until the
            # writer's publish sets it.
            merged = current.evolve(
                chunk_count=count if publish else current.chunk_count, extra=extra
            )
            wire = {**merged.to_wire(), "buildState": COMPLETE_MARK}
            atomic_write_text(nxt / META_NAME, json.dumps(wire, indent=2, sort_keys=True) + "\n")
            swap_in(ws, lock, publish_after=publish)
        return "merged"
    finally:
        remove_tree(work)


def main(argv: list[str]) -> int:
    """Entry point of the background compactor; always exits 0 (nothing waits on it)."""
    from ragit.contract.errors import RagitError

    root = Path(argv[0]) if argv else Path.cwd()
    try:
        outcome = compact(root)
    except RagitError as exc:
        _log(ok=False, code=exc.code, message=exc.message)
        return 0
    except Exception as exc:  # a background job reports, never raises
        _log(ok=False, code="UNEXPECTED", message=str(exc) or type(exc).__name__)
        return 0
    _log(ok=True, outcome=outcome)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
