"""Transaction journals ``.ragit/runtime/transactions/<id>.json`` and crash recovery
(docs/store.md).

A write transaction records each durable step before moving on, so that after a crash the
next writer can tell what happened. Ingest phases, in order::

    prepared → store-written → store-verified → manifest-committed → published → completed

The caller writes the manifest (temp file, fsync, rename) between ``store-verified`` and
``manifest-committed``. Journal file (camelCase, rewritten atomically at every step)::

    {"schemaVersion": 1, "transactionId", "kind": "ingest", "status", "phase", "targetSha",
     "baseSha", "manifestPath": ".ragit/manifest/<sha>.json", "priorManifestSha256",
     "storeId", "lockToken", "startedAt", "updatedAt", "chunkIds": [...],
     "insertedChunkIds": [...], "lastError"?: {name, message, code}, ...caller fields}

A completed journal keeps ``chunkCount``/``insertedChunkCount`` instead of the two lists; the
newest 20 completed journals are kept.

``insertedChunkIds`` is written by :meth:`StoreWriter.insert` *before* zvec sees the rows: the
ids that were not in the store yet, i.e. exactly what rolling back must delete (``chunkIds``
are all the ids the manifest will cite, most of them shared with published snapshots).
``status`` is ``in-progress``, ``failed-precommit``/``failed-postcommit`` (after
:meth:`Transaction.fail`, split at ``manifest-committed``) or ``completed``.

Classification (:func:`scan_journals`, read-only and defined with the rest of the read
half in :mod:`.journal_scan`; :func:`recover`, under the lock):

- ``completed`` — status completed.
- ``precommit-incomplete`` — phase before ``manifest-committed`` and this transaction's manifest
  is not in place (absent, or still the bytes that were there at ``begin``).
- ``finalization-pending`` — its manifest is in place (phase ``manifest-committed`` or later, or
  ``store-verified`` with a manifest renamed into place just before the crash) but the
  transaction did not complete.
- ``inconsistent`` — a committed phase whose manifest is gone, a manifest that appeared before
  the store was verified, or (found by :func:`recover`) manifest chunks missing from the store.
- ``invalid`` — unreadable, malformed, an unsafe file name or manifest path.

:func:`recover` deletes the inserted rows of ``precommit-incomplete`` transactions and drops
their journals, finishes ``finalization-pending`` ones (publish + optional caller callback +
``completed``), reports ``invalid`` ones as warnings, and raises
:class:`IngestRecoveryRequired` only for ``inconsistent`` ones.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ragit import _faults as faults
from ragit._fs import atomic_write_text
from ragit.contract.errors import IngestRecoveryRequired
from ragit.store.journal_scan import (
    _COMMIT,
    _SHA,
    JOURNAL_SCHEMA_VERSION,
    PHASES,
    STATUSES,
    Classification,
    JournalState,
    _check_manifest_path,
    _scan,
    _sha256,
    journal_files,
    scan_journals,
)
from ragit.store.lock import WriterLock
from ragit.store.meta import now_iso, read_meta
from ragit.store.publishing import publish
from ragit.store.writer import StoreWriter
from ragit.workspace import Workspace

__all__ = [
    "JOURNAL_SCHEMA_VERSION",
    "KEEP_COMPLETED",
    "PHASES",
    "STATUSES",
    "Classification",
    "Journal",
    "JournalState",
    "RecoveryReport",
    "Transaction",
    "begin",
    "journal_files",
    "recover",
    "scan_journals",
]

KEEP_COMPLETED = 20


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _write(path: Path, data: dict[str, Any]) -> None:
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")


@dataclass
class RecoveryReport:
    """What :func:`recover` did."""

    rolled_back: list[str] = field(default_factory=list)
    finalized: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    published_generation: int | None = None
    warnings: list[str] = field(default_factory=list)


class Transaction:
    """A journaled write transaction; created by :func:`begin` under a held lock."""

    def __init__(self, ws: Workspace, lock: WriterLock, path: Path, data: dict[str, Any]) -> None:
        self.ws = ws
        self.lock = lock
        self.path = path
        self.data = data

    @property
    def transaction_id(self) -> str:
        return str(self.data["transactionId"])

    @property
    def phase(self) -> str:
        return str(self.data["phase"])

    def _save(self) -> None:
        self.lock.assert_held()
        self.data["updatedAt"] = now_iso()
        _write(self.path, self.data)

    def advance(self, phase: str, *, record: bool = True, **fields: Any) -> None:
        """Record that ``phase`` is reached (durably), then honour fault injection.

        Extra ``fields`` (snake_case keywords become camelCase keys) are merged in. With
        ``record=False`` the phase is only noted in memory (the next write carries it): for
        a step whose journal record would change no recovery decision — ``store-written``
        (classified like ``prepared``: the inserted ids are already on disk) and
        ``published`` right after ``manifest-committed`` (both finish the same way).

        Raises:
            ValueError: unknown phase, or not after the current one.
            StoreWriteBusy: the lock is no longer held.
        """
        if phase not in PHASES or phase == "completed":
            raise ValueError(f"unknown or terminal phase {phase!r} (use complete())")
        if PHASES.index(phase) <= PHASES.index(self.phase):
            raise ValueError(f"phase {phase!r} does not follow {self.phase!r}")
        self.data.update({_camel(k): v for k, v in fields.items()})
        self.data["phase"] = phase
        if record:
            self._save()
        else:
            self.lock.assert_held()
        faults.reach(phase)

    def record_inserted(self, ids: Iterable[str]) -> None:
        """Durably add ``ids`` to the rows this transaction inserts (before inserting them)."""
        merged = set(self.data.get("insertedChunkIds", []))
        merged.update(ids)
        self.data["insertedChunkIds"] = sorted(merged)
        self._save()

    def fail(self, error: BaseException) -> None:
        """Mark the transaction failed (the next writer's recovery cleans up); never raises
        for a lost lock, since it runs on error paths."""
        committed = PHASES.index(self.phase) >= _COMMIT
        self.data["status"] = "failed-postcommit" if committed else "failed-precommit"
        self.data["lastError"] = {
            "name": type(error).__name__,
            "message": str(error)[:500],
            "code": getattr(error, "code", None),
        }
        if self.lock.is_held():
            self.data["updatedAt"] = now_iso()
            _write(self.path, self.data)
        if self.lock.transaction is self:
            self.lock.transaction = None

    def complete(self) -> None:
        """Mark the transaction completed (its chunk id lists shrink to counts)."""
        _close_out(self.data)
        self._save()
        if self.lock.transaction is self:
            self.lock.transaction = None
        faults.reach("completed")


def _close_out(data: dict[str, Any]) -> None:
    """Mark ``data`` completed. The id lists only serve recovery; a completed journal keeps
    their sizes, so that status and begin() never parse megabytes of finished history."""
    data["phase"] = "completed"
    data["status"] = "completed"
    for key in ("chunkIds", "insertedChunkIds"):
        data[key.replace("Ids", "Count")] = len(data.pop(key, []) or [])


def _new_id(kind: str) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    safe = re.sub(r"[^A-Za-z0-9]", "", kind)[:24] or "tx"
    return f"{safe}-{stamp}-{uuid.uuid4().hex[:8]}"


def _prune_completed(states: list[JournalState]) -> None:
    done = sorted(
        (s for s in states if s.classification == "completed"), key=lambda s: s.transaction_id
    )
    for state in done[:-KEEP_COMPLETED] if len(done) > KEEP_COMPLETED else []:
        state.path.unlink(missing_ok=True)


def begin(
    ws: Workspace,
    lock: WriterLock,
    *,
    kind: str,
    target_sha: str,
    base_sha: str | None,
    manifest_path: str,
    chunk_ids: Iterable[str] = (),
    **extra: Any,
) -> Transaction:
    """Start a journaled transaction at phase ``prepared`` (the journal is on disk on return).

    Raises:
        IngestRecoveryRequired: an earlier transaction still needs recovery (call
            :func:`recover` first).
        ValueError: ``target_sha`` or ``manifest_path`` is not well formed.
        StoreWriteBusy: the lock is no longer held.
    """
    lock.assert_held()
    if not _SHA.match(target_sha):
        raise ValueError("target_sha must be a full lowercase commit SHA")
    _check_manifest_path(manifest_path, target_sha)
    states = scan_journals(ws)
    pending = [
        s.transaction_id
        for s in states
        if s.classification in ("precommit-incomplete", "finalization-pending", "inconsistent")
    ]
    if pending:
        raise IngestRecoveryRequired(pending)
    _prune_completed(states)
    meta = read_meta(ws)
    tx_id = _new_id(kind)
    stamp = now_iso()
    data: dict[str, Any] = {_camel(k): v for k, v in extra.items()}
    data.update(
        {
            "schemaVersion": JOURNAL_SCHEMA_VERSION,
            "transactionId": tx_id,
            "kind": kind,
            "status": "in-progress",
            "phase": "prepared",
            "targetSha": target_sha,
            "baseSha": base_sha,
            "manifestPath": manifest_path,
            "priorManifestSha256": _sha256(ws.root / manifest_path),
            "storeId": meta.store_id if meta is not None else None,
            "lockToken": lock.token,
            "startedAt": stamp,
            "updatedAt": stamp,
            "chunkIds": sorted(set(chunk_ids)),
            "insertedChunkIds": [],
        }
    )
    ws.transactions_dir.mkdir(parents=True, exist_ok=True)
    tx = Transaction(ws, lock, ws.transactions_dir / f"{tx_id}.json", data)
    _write(tx.path, data)
    lock.transaction = tx
    faults.reach("prepared")
    return tx


def recover(
    ws: Workspace,
    lock: WriterLock,
    manifest_exists: Callable[[str], bool],
    *,
    finalize: Callable[[JournalState], None] | None = None,
) -> RecoveryReport:
    """Clean up after interrupted transactions; call it first thing under the writer lock.

    ``manifest_exists(target_sha)`` says whether the snapshot manifest of a commit is in
    place. ``finalize`` (optional) runs the caller's own finishing steps for a transaction
    whose manifest was committed, before it is marked completed.

    Raises:
        IngestRecoveryRequired: inconsistent journals remain (after the others were handled).
        StoreWriteBusy: ``lock`` is no longer held.
        SnapshotStoreUnavailable: the store could not be opened or published.
    """
    lock.assert_held()
    report = RecoveryReport()
    states = _scan(ws, manifest_exists)
    rollback = [s for s in states if s.classification == "precommit-incomplete"]
    pending = [s for s in states if s.classification == "finalization-pending"]
    inconsistent = [s for s in states if s.classification == "inconsistent"]
    for state in states:
        if state.classification == "invalid":
            report.invalid.append(state.transaction_id)
            report.warnings.append(f"ignored transaction journal {state.path.name}: {state.reason}")
    finishing: list[JournalState] = []
    meta = read_meta(ws)
    touched = False
    if (rollback or pending) and meta is not None and (ws.store_dir / meta.collection).is_dir():
        writer = StoreWriter.open(ws, lock, embedding=meta.embedding, dimensions=meta.dimensions)
        touched = True
        try:
            for state in rollback:
                writer.delete([str(i) for i in state.data.get("insertedChunkIds", [])])
            for state in pending:
                missing = writer.verify(str(i) for i in state.data.get("chunkIds", []))
                if missing:
                    inconsistent.append(
                        JournalState(
                            state.transaction_id,
                            state.path,
                            "inconsistent",
                            f"{len(missing)} manifest chunk(s) are missing from the store",
                            state.data,
                        )
                    )
                else:
                    finishing.append(state)
        finally:
            writer.close()
    elif pending:
        for state in pending:
            inconsistent.append(
                JournalState(
                    state.transaction_id,
                    state.path,
                    "inconsistent",
                    "the manifest was committed but the store is missing",
                    state.data,
                )
            )
    meta = read_meta(ws)
    if meta is not None and touched and (meta.generation > 0 or finishing):
        report.published_generation = publish(ws, lock).generation
    for state in rollback:
        inserted = len(state.data.get("insertedChunkIds", []))
        state.path.unlink(missing_ok=True)
        report.rolled_back.append(state.transaction_id)
        report.warnings.append(
            f"rolled back interrupted transaction {state.transaction_id} "
            f"(phase {state.phase}; {inserted} unpublished chunk row(s) removed)"
        )
    for state in finishing:
        if finalize is not None:
            finalize(state)
        data = dict(state.data)
        _close_out(data)
        data.update(recoveredAt=now_iso(), updatedAt=now_iso())
        _write(state.path, data)
        report.finalized.append(state.transaction_id)
        report.warnings.append(
            f"finished interrupted transaction {state.transaction_id} whose manifest "
            f"for {state.target_sha} was already committed"
        )
    if inconsistent:
        raise IngestRecoveryRequired(sorted(s.transaction_id for s in inconsistent))
    return report


class Journal:
    """Namespace for the journal entry points (``Journal.begin(...)`` etc.)."""

    begin = staticmethod(begin)
    scan = staticmethod(scan_journals)
    recover = staticmethod(recover)
