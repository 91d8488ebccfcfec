"""What a store write that could not finish leaves for `doctor` and `repair` (reads only).

Two records in ``.ragit/runtime/``, each removed by the next publish (a store rebuild's):

* ``store-unverified.json`` — a publish refused because the new generation lacked chunks that
  manifests name (the canonical store lost them);
* ``store-unopenable.json`` — zvec could not open the canonical collection after an
  interrupted write (a probe in a child process crashed or failed) and no published copy
  was left to restore it from.

Either way every ingest refuses the store, and only a store rebuild from git repairs it, so
``doctor`` reports the record as a failing check whose recovery is that rebuild, and
``repair --apply`` plans it.
"""

from __future__ import annotations

from typing import Any

from ragit import _json
from ragit.workspace import Workspace


def _record(path: Any) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        record = _json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def failed_writes(ws: Workspace) -> list[tuple[str, str]]:
    """``(check name, detail)`` for each record present: ``store.verified``,
    ``store.openable``."""
    found: list[tuple[str, str]] = []
    unverified = _record(ws.store_unverified_path)
    if unverified is not None:
        missing = unverified.get("missingChunks", "some")
        reason = unverified.get("reason", "chunks are missing")
        found.append(
            (
                "store.verified",
                f"the last store write was not published ({reason}: {missing} chunk(s)); "
                "only a store rebuild from git brings them back",
            )
        )
    unopenable = _record(ws.store_unopenable_path)
    if unopenable is not None:
        reason = unopenable.get("reason", "unknown")
        found.append(
            (
                "store.openable",
                f"the canonical store cannot be opened after an interrupted write ({reason}); "
                "only a store rebuild from git brings it back",
            )
        )
    return found
