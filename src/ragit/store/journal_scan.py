"""Reading and classifying transaction journals: the read-only half of :mod:`.journal`.

``status``, ``doctor`` and the MCP server import this module only; writing journals,
pruning them and recovering interrupted transactions live in :mod:`.journal`, which
re-exports everything here. The journal format and the meaning of each
classification are described there.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragit import _json
from ragit.workspace import Workspace

PHASES = (
    "prepared",
    "store-written",
    "store-verified",
    "manifest-committed",
    "published",
    "completed",
)
STATUSES = ("in-progress", "failed-precommit", "failed-postcommit", "completed")
JOURNAL_SCHEMA_VERSION = 1
Classification = Literal[
    "completed", "precommit-incomplete", "finalization-pending", "inconsistent", "invalid"
]

_COMMIT = PHASES.index("manifest-committed")
_VERIFIED = PHASES.index("store-verified")
_TX_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_MANIFEST = re.compile(r"^\.ragit/manifest/([0-9a-f]{40})\.json$")


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@dataclass(frozen=True)
class JournalState:
    """One journal as classified by :func:`scan_journals` or :func:`.journal.recover`."""

    transaction_id: str
    path: Path
    classification: Classification
    reason: str | None = None
    data: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def phase(self) -> str | None:
        return self.data.get("phase")

    @property
    def status(self) -> str | None:
        return self.data.get("status")

    @property
    def kind(self) -> str | None:
        return self.data.get("kind")

    @property
    def target_sha(self) -> str | None:
        return self.data.get("targetSha")

    @property
    def manifest_path(self) -> str | None:
        return self.data.get("manifestPath")

    @property
    def updated_at(self) -> str | None:
        return self.data.get("updatedAt")

    def summary(self) -> dict[str, Any]:
        """A JSON-ready summary for status/doctor (no chunk id lists)."""
        return {
            "transactionId": self.transaction_id,
            "classification": self.classification,
            "kind": self.kind,
            "status": self.status,
            "phase": self.phase,
            "targetSha": self.target_sha,
            "updatedAt": self.updated_at,
            "reason": self.reason,
        }


def _check_manifest_path(manifest_path: str, target_sha: str) -> None:
    match = _MANIFEST.match(manifest_path)
    if match is None or match.group(1) != target_sha:
        raise ValueError(f"manifest_path must be .ragit/manifest/{target_sha}.json")


def _invalid(
    tx_id: str, path: Path, reason: str, data: dict[str, Any] | None = None
) -> JournalState:
    return JournalState(tx_id, path, "invalid", reason, data or {})


def _load(path: Path) -> JournalState | dict[str, Any]:
    tx_id = path.name[: -len(".json")]
    if not _TX_ID.match(tx_id):
        return _invalid(tx_id, path, "unsafe journal file name")
    try:
        info = path.lstat()
    except OSError:
        return _invalid(tx_id, path, "unreadable")
    if not stat.S_ISREG(info.st_mode):
        return _invalid(tx_id, path, "not a regular file")
    try:
        data = _json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return _invalid(tx_id, path, "not valid JSON")
    if not isinstance(data, dict):
        return _invalid(tx_id, path, "not a JSON object")
    checks = (
        (data.get("schemaVersion") == JOURNAL_SCHEMA_VERSION, "unsupported schemaVersion"),
        (data.get("transactionId") == tx_id, "transactionId differs from the file name"),
        (data.get("phase") in PHASES, "unknown phase"),
        (data.get("status") in STATUSES, "unknown status"),
        (
            isinstance(data.get("targetSha"), str) and bool(_SHA.match(data["targetSha"])),
            "targetSha is not a commit SHA",
        ),
        (
            isinstance(data.get("chunkIds", []), list)
            and isinstance(data.get("insertedChunkIds", []), list),
            "chunk id lists malformed",
        ),
    )
    for ok, reason in checks:
        if not ok:
            return _invalid(tx_id, path, reason, data)
    manifest = data.get("manifestPath")
    if not isinstance(manifest, str):
        return _invalid(tx_id, path, "manifestPath missing", data)
    try:
        _check_manifest_path(manifest, data["targetSha"])
    except ValueError:
        return _invalid(tx_id, path, "unsafe manifestPath", data)
    return data


def _classify(
    ws: Workspace, path: Path, data: dict[str, Any], exists: Callable[[str], bool]
) -> JournalState:
    tx_id = str(data["transactionId"])
    if data["status"] == "completed" or data["phase"] == "completed":
        return JournalState(tx_id, path, "completed", None, data)
    index = PHASES.index(data["phase"])
    present = exists(data["targetSha"])
    if index >= _COMMIT:
        if present:
            return JournalState(tx_id, path, "finalization-pending", None, data)
        return JournalState(
            tx_id, path, "inconsistent", "the manifest was committed but is missing", data
        )
    prior = data.get("priorManifestSha256")
    fresh = present and (prior is None or _sha256(ws.root / data["manifestPath"]) != prior)
    if not fresh:
        return JournalState(tx_id, path, "precommit-incomplete", None, data)
    if index == _VERIFIED:
        # The manifest was renamed into place after verification; only the journal step is lost.
        return JournalState(tx_id, path, "finalization-pending", None, data)
    return JournalState(
        tx_id,
        path,
        "inconsistent",
        "a new manifest exists although the store was never verified",
        data,
    )


def _default_exists(ws: Workspace) -> Callable[[str], bool]:
    return lambda sha: ws.manifest_path(sha).is_file()


def scan_journals(ws: Workspace) -> list[JournalState]:
    """Every journal, classified, in transaction-id (= start time) order. Read-only."""
    return _scan(ws, _default_exists(ws))


def _scan(ws: Workspace, exists: Callable[[str], bool]) -> list[JournalState]:
    directory = ws.transactions_dir
    try:
        paths = sorted(
            p
            for p in directory.iterdir()
            if p.name.endswith(".json") and not p.name.startswith(".")
        )
    except OSError:
        return []
    states: list[JournalState] = []
    for path in paths:
        loaded = _load(path)
        states.append(
            loaded if isinstance(loaded, JournalState) else _classify(ws, path, loaded, exists)
        )
    return states


def journal_files(ws: Workspace) -> list[str]:
    """Names of the journal files (for tests and doctor)."""
    try:
        return sorted(os.listdir(ws.transactions_dir))
    except OSError:
        return []
