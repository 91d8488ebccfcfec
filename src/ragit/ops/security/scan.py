"""What `ragit security audit` and `ragit security purge` both read (docs/reference/security.md).

Writes mask secrets before anything is persisted, so a raw secret on disk means
an older RAGit (or a hand edit) wrote it. Both commands look for such leftovers
with the current masking rules: a string that :func:`mask_text` would change
still holds a raw secret. This module holds what they share: that probe, the
control-plane files and their scanner (which also yields the re-sanitized text a
purge writes), and the record of the snapshots a purge removed
(``.ragit/security/state.json``), which audit reports until they are re-indexed.
The commands are :mod:`ragit.ops.security.audit` and :mod:`ragit.ops.security.purge`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragit import _json
from ragit.workspace import Workspace

STATE_NAME = "state.json"

# (directory under .ragit, file suffixes) of the control-plane files (docs/reference/security.md).
_CONTROL_PLANE = (
    ("log", (".jsonl", ".json")),
    ("artifacts", (".json",)),
    ("memory", (".json",)),
    ("security", (".jsonl",)),
)


def security_dir(ws: Workspace) -> Path:
    """``.ragit/security``: the admission and quarantine ledgers and the purge state."""
    return ws.ragit_dir / "security"


# ---------------------------------------------------------------- secrets


def secret_labels(value: str) -> set[str]:
    """Rule labels of the secrets masking would still replace in ``value`` (empty: clean)."""
    from ragit.security.masking import mask_text

    return set(mask_text(value).labels)


def json_hits(value: Any, path: str, out: dict[str, set[str]]) -> None:
    """Field path → labels of every string that still holds a secret (keys are schema, as
    for :func:`mask_json`)."""
    if isinstance(value, str):
        labels = secret_labels(value)
        if labels:
            out.setdefault(path or "$", set()).update(labels)
    elif isinstance(value, dict):
        for key, item in value.items():
            json_hits(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            json_hits(item, f"{path}[{index}]", out)


# ---------------------------------------------------------------- control plane


def control_plane_files(ws: Workspace) -> list[Path]:
    """Regular files of the control plane, sorted (symlinks are never followed)."""
    found: list[Path] = []
    for sub, suffixes in _CONTROL_PLANE:
        base = ws.ragit_dir / sub
        if not base.is_dir() or base.is_symlink():
            continue
        for root, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if not (Path(root) / d).is_symlink())
            for name in sorted(files):
                path = Path(root) / name
                regular = path.is_file() and not path.is_symlink()
                if name.endswith(suffixes) and not name.startswith(".") and regular:
                    found.append(path)
    return sorted(found)


@dataclass
class FileScan:
    """Where one control-plane file still holds secrets, and its re-sanitized text."""

    hits: dict[str, set[str]]
    unparseable: bool
    sanitized: str | None  # None when nothing needs masking


def _sanitize_jsonl(text: str) -> FileScan:
    from ragit.security.masking import mask_json, mask_text

    hits: dict[str, set[str]] = {}
    unparseable = False
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    changed = False
    for index, line in enumerate(lines):
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        if not body.strip():
            out.append(line)
            continue
        try:
            value = _json.loads(body)
        except ValueError:
            unparseable = True
            result = mask_text(body)
            if result.masked_count:
                hits.setdefault(f"[{index}]", set()).update(result.labels)
                out.append(result.text + ending)
                changed = True
            else:
                out.append(line)
            continue
        line_hits: dict[str, set[str]] = {}
        json_hits(value, f"[{index}]", line_hits)
        if not line_hits:
            out.append(line)
            continue
        hits.update(line_hits)
        masked, _count, _sources = mask_json(value)
        out.append(json.dumps(masked, ensure_ascii=False, separators=(",", ":")) + ending)
        changed = True
    return FileScan(hits, unparseable, "".join(out) if changed else None)


def _sanitize_json(text: str) -> FileScan:
    from ragit.security.masking import mask_json, mask_text

    try:
        value = _json.loads(text)
    except ValueError:
        result = mask_text(text)
        hits = {"$": set(result.labels)} if result.masked_count else {}
        return FileScan(hits, True, result.text if result.masked_count else None)
    hits = {}
    json_hits(value, "", hits)
    if not hits:
        return FileScan({}, False, None)
    masked, _count, _sources = mask_json(value)
    # The layout every memory/artifact record is written with
    # (ragit.artifacts.storage.dumps_record).
    return FileScan(hits, False, json.dumps(masked, ensure_ascii=False, indent=2) + "\n")


def scan_control_plane_file(path: Path) -> FileScan:
    """Scan one control-plane file (undecodable bytes are scanned as replacement text)."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix == ".jsonl":
        return _sanitize_jsonl(text)
    return _sanitize_json(text)


# ---------------------------------------------------------------- stale snapshots


def stale_entries(stale: dict[str, str]) -> list[dict[str, str]]:
    """The ``staleSnapshots`` entries of ``stale`` (sha → reason), with re-index commands."""
    return [
        {"commitSha": sha, "reason": reason, "recovery": f"ragit ingest --all --at {sha}"}
        for sha, reason in sorted(stale.items())
    ]


def _state_path(ws: Workspace) -> Path:
    return security_dir(ws) / STATE_NAME


def pending_stale(ws: Workspace, indexed: Collection[str] | None = None) -> dict[str, str]:
    """Snapshots an earlier purge removed that are not re-indexed yet (sha → reason).

    The record survives a purge killed after it deleted their manifests, so the
    re-index commands are never lost; an entry ends when its manifest exists again
    (on the shared store: when ``indexed``, the commits the server holds, names it).
    """
    try:
        raw = _json.loads(_state_path(ws).read_text(encoding="utf-8"))
        entries = raw["staleSnapshots"]
        pending = {str(e["commitSha"]): str(e["reason"]) for e in entries}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if indexed is not None:
        return {sha: why for sha, why in pending.items() if sha not in indexed}
    return {sha: why for sha, why in pending.items() if not ws.manifest_path(sha).exists()}


def record_stale(ws: Workspace, stale: dict[str, str]) -> None:
    """Write ``stale`` as the purge state (nothing when empty and no state exists yet)."""
    from ragit._fs import atomic_write_text

    path = _state_path(ws)
    if not stale and not path.exists():
        return
    state = {"schemaVersion": 1, "staleSnapshots": stale_entries(stale)}
    atomic_write_text(path, json.dumps(state, indent=2, sort_keys=True) + "\n")
