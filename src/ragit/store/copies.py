"""Reader copies: immutable copies of published store generations, outside the repository.

``<user cache dir>/stores/<repo id>/<store id>-<generation>/`` (``$XDG_CACHE_HOME/ragit`` or
``~/.cache/ragit``). A copy is assembled in a ``.tmp-<store>-<gen>-<pid>-<rand>`` sibling, opened
read-only once (zvec rewrites the ``*.proxima`` index file on its first open, so that rewrite
happens before anyone can see the copy), then renamed into place: a reader sees a complete copy
or none. The writer makes the copy of each generation it publishes; a reader makes one only
when the cache was cleared (see :mod:`ragit.store.reader`). Files no process changes in place
(:func:`shared_file`) are hard-linked, not copied, when the cache and the repository share a
file system: the copies of successive generations and the canonical collection then hold one
inode for each; removing a copy or a merge replacing the canonical files unlinks, never
changes, them.

A reader holds the copy it has open (:func:`hold_copy`: a shared ``flock`` on the copy's
directory, which the kernel drops when the process ends), and a publish removes every copy but
the new one that no reader holds (:func:`prune_copies`, an exclusive ``flock`` tried without
waiting). Neither side ever waits for the other: a reader that finds its copy gone or being
removed reads ``meta.json`` again, and a held copy stays until a later publish finds it free.
A published generation therefore costs one copy in the cache, not two.
"""

from __future__ import annotations

import fcntl
import os
import re
import uuid
from collections.abc import Callable
from pathlib import Path

from ragit._lock import pid_alive
from ragit.contract.errors import SnapshotStoreUnavailable
from ragit.store._copy import copy_tree, remove_tree
from ragit.store._zvec import Collection
from ragit.store.meta import COLLECTION_DIR
from ragit.store.terms import TermReader
from ragit.workspace import Workspace, user_cache_dir

# Collection files no process changes in place once written, shared by hard link between the
# canonical collection and its copies: a segment's column files (``<segment>/scalar.<n>.ipc``,
# written once at flush; deletions go to ``del.<n>``) and the id map's SST tables (immutable in
# RocksDB), and the keyword index (``ragit-terms.sqlite``), which a writer gives an inode of
# its own before it changes it (``_copy.own_inode``, from ``TermWriter.open``). Everything
# else is copied: zvec rewrites a segment's ``*.proxima`` vector index in place on every open
# (read-only ones too: a timestamp and a checksum in the index's meta page, through a shared
# writable mapping), and RocksDB appends to its MANIFEST and log. Checked by
# tests/store/test_copy_sharing.py after inserts, deletions, merges and read-only opens.
_SHARED = re.compile(r"^(\d+/scalar\.\d+\.ipc|idmap\.\d+/\d+\.sst|ragit-terms\.sqlite)$")


def shared_file(rel: str) -> bool:
    """Whether the collection file at ``rel`` (POSIX path inside the collection) is shared
    with copies by hard link rather than copied."""
    return _SHARED.match(rel) is not None


_TMP = re.compile(r"^\.(tmp|trash)-[0-9a-f]+-\d+-(\d+)-[0-9a-f]+$")


def canonical_path(ws: Workspace) -> Path:
    """The canonical zvec collection inside the repository."""
    return ws.store_dir / COLLECTION_DIR


def copies_root(ws: Workspace) -> Path:
    """Where this repository's reader copies live."""
    return user_cache_dir() / "stores" / ws.repo_id


def copy_name(store_id: str, generation: int) -> str:
    """Directory name of a generation's copy."""
    return f"{store_id}-{generation}"


def copy_path(ws: Workspace, store_id: str, generation: int) -> Path:
    """Path of a generation's copy (it may not exist)."""
    return copies_root(ws) / copy_name(store_id, generation)


def _save_chunk_table(collection_dir: Path, base: tuple[Path, frozenset[str]] | None) -> None:
    """Leave the keyword index's chunk table beside it in a copy being made (readers then
    skip reading every chunk row from SQLite), derived from ``base`` (the previous copy
    and the ids an insert-only write inserted) when it can be. Without it readers read
    SQLite: a copy of a store without a keyword index, or a failed write, is still a copy."""
    try:
        reader = TermReader.open(collection_dir)
    except SnapshotStoreUnavailable:
        return
    try:
        if base is not None and base[0].is_dir():
            reader.save_table(base=base[0], touched=base[1])
        else:
            reader.save_table()
    except (OSError, SnapshotStoreUnavailable):
        pass
    finally:
        reader.close()


def make_copy(
    ws: Workspace,
    store_id: str,
    generation: int,
    *,
    replace: bool,
    still_valid: Callable[[], bool] | None = None,
    verify: Callable[[Collection], None] | None = None,
    table_base: tuple[Path, frozenset[str]] | None = None,
) -> tuple[Path, int] | None:
    """Copy the canonical collection to the copy of ``(store_id, generation)``.

    ``still_valid`` runs after the files are copied and before zvec first opens them; when it
    says no, the copy is dropped and ``None`` returned (the source changed while copying).
    With ``replace`` an existing copy of that name is swapped out (a publish overwriting the
    orphan of a crashed publish); without it an existing copy wins (a concurrent reader made
    it). ``verify`` runs on the open copy before it is put in place; what it raises drops
    the copy. ``table_base`` (the previous copy, the ids a write that only inserted added)
    lets the copy's chunk table be derived from that copy's. Returns the copy's path and
    its row count.

    Raises:
        FileNotFoundError: a canonical file vanished during the copy.
        OSError: the cache directory is not writable or full.
        SnapshotStoreUnavailable: zvec could not open the copy.
    """
    root = copies_root(ws)
    root.mkdir(parents=True, exist_ok=True)
    tag = f"{store_id}-{generation}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp = root / f".tmp-{tag}"
    final = root / copy_name(store_id, generation)
    try:
        copy_tree(canonical_path(ws), tmp, shared=shared_file)
        if still_valid is not None and not still_valid():
            remove_tree(tmp)
            return None
        _save_chunk_table(tmp, table_base)
        collection = Collection.open(tmp, read_only=True)
        try:
            count = collection.count()
            if verify is not None:
                verify(collection)
        finally:
            collection.close()
        if final.exists():
            if not replace:
                remove_tree(tmp)
                return final, count
            trash = root / f".trash-{tag}"
            os.rename(final, trash)
            remove_tree(trash)
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.is_dir():
                raise
            remove_tree(tmp)  # another process put the same copy in place first
    except BaseException:
        remove_tree(tmp)
        raise
    return final, count


def hold_copy(path: Path) -> int | None:
    """A shared hold on the copy at ``path`` for as long as a reader has it open: a file
    descriptor of its directory with a shared ``flock`` (close it to let go). ``None`` when
    the copy is gone, or a publish is removing it (never waits)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise
        except OSError:
            pass  # a file system without flock: read unheld (copies there are kept longer)
        held, named = os.fstat(fd), os.stat(path)
    except OSError:
        os.close(fd)
        return None
    if (held.st_dev, held.st_ino) != (named.st_dev, named.st_ino):
        os.close(fd)  # removed (renamed away) after it was opened
        return None
    return fd


def _remove_unheld(root: Path, entry: Path, *, unlockable_ok: bool) -> bool:
    """Remove the copy ``entry`` unless a reader holds it (:func:`hold_copy`). Where the file
    system has no ``flock``, only when ``unlockable_ok`` (an older copy than the previous
    generation's, as before holds existed)."""
    try:
        fd = os.open(entry, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        remove_tree(entry)  # not a directory: nothing can hold it
        return True
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a reader has it open: a later publish removes it
        except OSError:
            if not unlockable_ok:
                return False
        # Renamed away under the lock: a reader that opens the name from now on finds
        # nothing, and one that opened it before fails its hold or its name check.
        trash = root / f".trash-{entry.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            os.rename(entry, trash)
        except OSError:
            return False
        remove_tree(trash)
        return True
    finally:
        os.close(fd)


def prune_copies(ws: Workspace, keep: set[str], previous: str | None = None) -> list[str]:
    """Remove copies not named in ``keep`` that no reader holds, and temp dirs of processes
    that are gone. ``previous`` (the previous generation's copy) stays where holds cannot
    be told, on a file system without ``flock``."""
    root = copies_root(ws)
    removed: list[str] = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            match = _TMP.match(name)
            if match is None or pid_alive(int(match.group(2))):
                continue
            remove_tree(entry)
        elif name in keep or not _remove_unheld(root, entry, unlockable_ok=name != previous):
            continue
        removed.append(name)
    return removed
