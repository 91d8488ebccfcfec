"""A real writer process for the store tests (not a test module).

    python writer_proc.py <repo> ingest <sha> <prefix> <n> <shared>
        Runs the whole write protocol the ingest pipeline follows: lock, recover, existing,
        begin, insert (n rows ``<prefix>-NNNNN`` plus ``shared`` rows ``shared-NNNNN``),
        store-written, verify, store-verified, manifest (a small JSON file listing the chunk
        ids), manifest-committed, publish, published, complete. Prints a JSON summary.
        Fault injection comes from the RAGIT_FAULT_* variables (ragit._faults).
    python writer_proc.py <repo> hold
        Takes the writer lock, prints ``held``, keeps it until stdin closes.

A typed failure prints ``{"error": CODE, "details": {...}}`` and exits 3.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _store_helpers import DIMS, PROFILE, row

from ragit._fs import atomic_write_text
from ragit.contract.errors import RagitError
from ragit.store.journal import Journal, recover
from ragit.store.lock import WriterLock
from ragit.store.publishing import publish
from ragit.store.writer import StoreWriter
from ragit.workspace import Workspace


def ingest(ws: Workspace, sha: str, prefix: str, n: int, shared: int) -> dict[str, object]:
    ids = [f"{prefix}-{i:05d}" for i in range(n)] + [f"shared-{i:05d}" for i in range(shared)]
    manifest = ws.manifest_path(sha)
    with WriterLock.acquire(ws, command="ingest", head_sha=sha) as lock:
        warnings = list(lock.warnings)
        report = recover(ws, lock, lambda s: ws.manifest_path(s).is_file())
        warnings += report.warnings
        with StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS) as writer:
            present = writer.existing(ids)
        tx = Journal.begin(
            ws,
            lock,
            kind="ingest",
            target_sha=sha,
            base_sha=None,
            manifest_path=ws.relative(manifest),
            chunk_ids=ids,
        )
        with StoreWriter.open(ws, lock, embedding=PROFILE, dimensions=DIMS) as writer:
            writer.insert([row(i) for i in ids if i not in present])
            tx.advance("store-written")
            missing = writer.verify(ids)
            assert not missing, missing
            tx.advance("store-verified")
        atomic_write_text(manifest, json.dumps({"commitSha": sha, "chunkIds": ids}))
        tx.advance("manifest-committed")
        meta = publish(ws, lock)
        tx.advance("published")
        tx.complete()
    return {
        "generation": meta.generation,
        "chunkCount": meta.chunk_count,
        "warnings": warnings,
        "rolledBack": report.rolled_back,
        "finalized": report.finalized,
    }


def hold(ws: Workspace) -> None:
    with WriterLock.acquire(ws, command="hold", head_sha=None):
        print("held", flush=True)
        sys.stdin.read()


def main(argv: list[str]) -> int:
    ws = Workspace(Path(argv[0]))
    try:
        if argv[1] == "ingest":
            print(json.dumps(ingest(ws, argv[2], argv[3], int(argv[4]), int(argv[5]))), flush=True)
        elif argv[1] == "hold":
            hold(ws)
        else:
            raise SystemExit(f"unknown mode {argv[1]}")
    except RagitError as exc:
        print(json.dumps({"error": exc.code, "details": exc.details}), flush=True)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
