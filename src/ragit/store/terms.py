"""The keyword index: term postings keyed by content-addressed chunk ids (issue 13 §2).

zvec's full-text index keeps its BM25 statistics (document frequencies, average length)
per segment of the whole store, so a snapshot's keyword scores moved whenever other
commits were indexed or segments were merged. RAGit keeps its own postings instead and
computes BM25 per snapshot at query time (:mod:`ragit.retrieve.keyword`): the statistics
come from the snapshot's own chunks, so an answer depends only on the snapshot, the
question, the configuration and the RAGit version.

One SQLite file, ``ragit-terms.sqlite``, *inside* the collection directory
(``.ragit/store/chunks/``), so every copy, merge, swap and publish of the collection
carries it with the rows it describes (zvec 0.8 ignores files it does not know):

``info(key, value)``
    ``version`` (:data:`ragit.text.terms.TERMS_VERSION`), ``seq`` (the last block number).
``chunk(key INTEGER PRIMARY KEY, len_en, len_cjk)``
    One row per indexed chunk: its key (the 16-hex-digit chunk id as a signed 64-bit
    integer) and its length in terms per field.
``block(field, term, seq, data)``
    Postings of one term in one field, appended per write: ``data`` packs
    ``(key int64, tf uint16)`` pairs (10 bytes each). A term's blocks are merged into one
    once it has :data:`MERGE_BLOCKS` of them, dropping postings of removed chunks.

Postings are content-addressed: a chunk's postings never change, so the index answers any
snapshot whose chunks it holds the same way, whatever else it holds. Removing a chunk
deletes its ``chunk`` row (readers then no longer see its postings; merges drop them);
the store rebuild writes a fresh file.

Writes happen only under the writer lock, inside one SQLite transaction per call
(rollback journal: a killed writer leaves the previous committed state, rolled back by the
next writer's open). Readers open the immutable reader copy (``immutable=1``: no lock, no
journal, no byte written).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragit.contract.errors import SnapshotStoreUnavailable
from ragit.store.rows import ChunkRow
from ragit.text.terms import TERMS_VERSION, cjk_terms, en_terms

TERMS_NAME = "ragit-terms.sqlite"
FIELDS = ("en", "cjk")
MERGE_BLOCKS = 8
POSTING = np.dtype([("key", "<i8"), ("tf", "<u2")])
_CHUNK_BATCH = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS info(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunk(
  key INTEGER PRIMARY KEY, len_en INTEGER NOT NULL, len_cjk INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS block(
  field INTEGER NOT NULL, term TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY(field, term, seq)) WITHOUT ROWID;
"""

_HEX = frozenset("0123456789abcdef")


def chunk_key(chunk_id: str) -> int:
    """A chunk id as a signed 64-bit integer: the id itself when it is 16 hex digits (every
    id RAGit makes), else the first 8 bytes of its BLAKE2b hash."""
    if len(chunk_id) == 16 and _HEX.issuperset(chunk_id):
        value = int(chunk_id, 16)
    else:
        value = int.from_bytes(hashlib.blake2b(chunk_id.encode(), digest_size=8).digest(), "big")
    return value - (1 << 64) if value >= 1 << 63 else value


def index_path(collection_dir: Path) -> Path:
    """The keyword index file of a collection directory."""
    return collection_dir / TERMS_NAME


def _unavailable(reason: str) -> SnapshotStoreUnavailable:
    return SnapshotStoreUnavailable(
        None, f"{reason}; rebuild the store from git (ragit repair --apply --action store-rebuild)"
    )


def _pack(pairs: list[tuple[int, int]]) -> bytes:
    arr = np.empty(len(pairs), dtype=POSTING)
    if pairs:
        keys, tfs = zip(*pairs, strict=True)
        arr["key"] = keys
        arr["tf"] = np.minimum(np.asarray(tfs, dtype=np.int64), 65535)
    return arr.tobytes()


class TermWriter:
    """The keyword index of one collection directory, open for writing (under the lock)."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self._con: sqlite3.Connection | None = con

    @classmethod
    def open(cls, collection_dir: Path) -> TermWriter:
        """Open (creating when missing) the index of ``collection_dir``.

        Raises:
            SnapshotStoreUnavailable: the file is not a RAGit keyword index, or one built
                under other term rules.
        """
        try:
            con = sqlite3.connect(index_path(collection_dir), isolation_level=None)
            con.executescript(_SCHEMA)
            row = con.execute("SELECT value FROM info WHERE key='version'").fetchone()
            if row is None:
                con.execute("INSERT INTO info VALUES('version', ?)", (TERMS_VERSION,))
            elif row[0] != TERMS_VERSION:
                con.close()
                raise _unavailable(
                    f"the store's keyword index was built under term rules {row[0]!r}, "
                    f"this RAGit uses {TERMS_VERSION!r}"
                )
        except sqlite3.Error as exc:
            raise _unavailable(f"cannot open the store's keyword index ({exc})") from exc
        return cls(con)

    @property
    def _c(self) -> sqlite3.Connection:
        if self._con is None:
            raise RuntimeError("the keyword index is closed")
        return self._con

    def count(self) -> int:
        """How many chunks the index holds."""
        (n,) = self._c.execute("SELECT count(*) FROM chunk").fetchone()
        return int(n)

    def keys(self) -> set[int]:
        """The keys of every indexed chunk."""
        return {int(k) for (k,) in self._c.execute("SELECT key FROM chunk")}

    def missing(self, ids: Iterable[str]) -> list[str]:
        """The ids of ``ids`` the index does not hold (in the given order, distinct)."""
        wanted = list(dict.fromkeys(ids))
        out: list[str] = []
        for start in range(0, len(wanted), _CHUNK_BATCH):
            part = wanted[start : start + _CHUNK_BATCH]
            keys = [chunk_key(cid) for cid in part]
            found = {
                int(k)
                for (k,) in self._c.execute(
                    "SELECT key FROM chunk WHERE key IN (SELECT value FROM json_each(?))",
                    (json.dumps(keys),),
                )
            }
            out.extend(cid for cid, key in zip(part, keys, strict=True) if key not in found)
        return out

    def add(self, rows: Sequence[ChunkRow]) -> int:
        """Index the rows the index does not hold yet, in one transaction; returns how many."""
        todo_ids = set(self.missing(row.chunk_id for row in rows))
        if not todo_ids:
            return 0
        chunks: list[tuple[int, int, int]] = []
        postings: dict[tuple[int, str], list[tuple[int, int]]] = {}
        for row in rows:
            if row.chunk_id not in todo_ids:
                continue
            todo_ids.discard(row.chunk_id)
            key = chunk_key(row.chunk_id)
            lengths = []
            for field, terms in enumerate((en_terms(row.search_en), cjk_terms(row.search_cjk))):
                lengths.append(len(terms))
                counts: dict[str, int] = {}
                for term in terms:
                    counts[term] = counts.get(term, 0) + 1
                for term, tf in counts.items():
                    postings.setdefault((field, term), []).append((key, tf))
            chunks.append((key, lengths[0], lengths[1]))
        con = self._c
        try:
            con.execute("BEGIN IMMEDIATE")
            row = con.execute("SELECT value FROM info WHERE key='seq'").fetchone()
            seq = int(row[0]) + 1 if row else 1
            con.executemany("INSERT OR IGNORE INTO chunk VALUES(?,?,?)", chunks)
            con.executemany(
                "INSERT INTO block VALUES(?,?,?,?)",
                ((field, term, seq, _pack(pairs)) for (field, term), pairs in postings.items()),
            )
            con.execute("INSERT OR REPLACE INTO info VALUES('seq', ?)", (str(seq),))
            self._merge_crowded(list(postings))
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        return len(chunks)

    def _merge_crowded(self, touched: list[tuple[int, str]]) -> None:
        """Merge the blocks of each touched term that has :data:`MERGE_BLOCKS` or more,
        keeping one posting per live chunk."""
        con = self._c
        crowded = []
        for field, term in touched:
            (count,) = con.execute(
                "SELECT count(*) FROM block WHERE field=? AND term=?", (field, term)
            ).fetchone()
            if count >= MERGE_BLOCKS:
                crowded.append((field, term))
        if not crowded:
            return
        live = np.fromiter(self.keys(), dtype=np.int64)
        live.sort()
        for field, term in crowded:
            blobs = con.execute(
                "SELECT seq, data FROM block WHERE field=? AND term=? ORDER BY seq", (field, term)
            ).fetchall()
            arr = np.frombuffer(b"".join(bytes(b) for _, b in blobs), dtype=POSTING)
            _, first = np.unique(arr["key"], return_index=True)
            arr = arr[np.sort(first)]
            arr = arr[np.isin(arr["key"], live, assume_unique=True)]
            last = int(blobs[-1][0])
            con.execute("DELETE FROM block WHERE field=? AND term=?", (field, term))
            if len(arr):
                con.execute("INSERT INTO block VALUES(?,?,?,?)", (field, term, last, arr.tobytes()))

    def remove(self, ids: Iterable[str]) -> None:
        """Forget chunks (their postings are dropped by the next merge of each term)."""
        keys = [chunk_key(cid) for cid in dict.fromkeys(ids)]
        if not keys:
            return
        con = self._c
        con.execute("BEGIN IMMEDIATE")
        try:
            for start in range(0, len(keys), _CHUNK_BATCH):
                part = keys[start : start + _CHUNK_BATCH]
                con.execute(
                    "DELETE FROM chunk WHERE key IN (SELECT value FROM json_each(?))",
                    (json.dumps(part),),
                )
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close the file; idempotent."""
        if self._con is not None:
            con, self._con = self._con, None
            con.close()


class TermReader:
    """The keyword index of an immutable reader copy."""

    def __init__(self, con: sqlite3.Connection, path: Path) -> None:
        self._con = con
        self.path = path
        self._lengths: tuple[Any, Any, Any] | None = None

    @classmethod
    def open(cls, collection_dir: Path) -> TermReader:
        """Open the index of a reader copy read-only (no lock, no byte written).

        Raises:
            SnapshotStoreUnavailable: the copy has no keyword index (a store written before
                RAGit kept one), or one of other term rules.
        """
        path = index_path(collection_dir)
        if not path.is_file():
            raise _unavailable("the store has no keyword index (it was written by an older RAGit)")
        try:
            con = sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)
            row = con.execute("SELECT value FROM info WHERE key='version'").fetchone()
        except sqlite3.Error as exc:
            raise _unavailable(f"cannot read the store's keyword index ({exc})") from exc
        if row is None or row[0] != TERMS_VERSION:
            con.close()
            raise _unavailable(
                f"the store's keyword index follows term rules {row[0] if row else None!r}, "
                f"this RAGit uses {TERMS_VERSION!r}"
            )
        return cls(con, path)

    def lengths(self) -> tuple[Any, Any, Any]:
        """Every indexed chunk's key (sorted), ``en`` length and ``cjk`` length, as arrays."""
        if self._lengths is None:
            rows = self._con.execute(
                "SELECT key, len_en, len_cjk FROM chunk ORDER BY key"
            ).fetchall()
            table = np.array(rows, dtype=np.int64).reshape(-1, 3)
            self._lengths = (table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy())
        return self._lengths

    def postings(self, field: str, term: str) -> Any:
        """The postings of ``term`` in ``field``: a structured array of ``key``/``tf``, one
        entry per chunk (a chunk indexed twice is listed once), removed chunks included."""
        blobs = self._con.execute(
            "SELECT data FROM block WHERE field=? AND term=? ORDER BY seq",
            (FIELDS.index(field), term),
        ).fetchall()
        if not blobs:
            return np.empty(0, dtype=POSTING)
        arr = np.frombuffer(b"".join(bytes(b) for (b,) in blobs), dtype=POSTING)
        if len(blobs) > 1:
            _, first = np.unique(arr["key"], return_index=True)
            arr = arr[np.sort(first)]
        return arr

    def close(self) -> None:
        """Close the file; idempotent."""
        self._con.close()
