"""A security purge's judgment of snapshots: every chunk they cite regenerated from git with
the current masking rules (as ``store rebuild`` regenerates them; reads only)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragit.config import RagitConfig
from ragit.ops.security.scan import secret_labels
from ragit.workspace import Workspace

Progress = Callable[[str], None]


@dataclass
class StorePlan:
    manifests: dict[str, Any]
    rows: list[Any]
    expected: set[str]
    stale: dict[str, str]  # manifest sha → reason


def plan_store(
    ws: Workspace,
    cfg: RagitConfig,
    progress: Progress,
    manifests: dict[str, Any] | None = None,
) -> StorePlan:
    """Regenerate every chunk of ``manifests`` (default: the local manifest files) from git
    with the current rules (reads only).

    A snapshot is stale when any chunk it cites cannot be regenerated exactly: its
    stored text was made under other masking (or chunking) rules, its blob no longer
    reads, or a regenerated artifact chunk still holds a raw secret.
    """
    from ragit.ops.maintenance.rebuild import _manifests, _regenerate

    if manifests is None:
        manifests, _bad = _manifests(ws)
    rows, problems, expected = _regenerate(ws, cfg, manifests, progress)
    clean = [
        row
        for row in rows
        if not any(
            secret_labels(value)
            for value in (row.text, row.search_en, row.section_title, row.heading_path)
        )
    ]
    good = {row.chunk_id for row in clean}
    reasons = {p["versionId"]: p["reason"] for p in problems}
    stale: dict[str, str] = {}
    for sha, manifest in sorted(manifests.items()):
        lost = manifest.all_chunk_ids() - good
        if not lost:
            continue
        why = sorted({reasons[d.version_id] for d in manifest.docs if d.version_id in reasons})
        stale[sha] = "; ".join(why) or f"{len(lost)} chunk(s) cannot be regenerated clean"
    return StorePlan(manifests, clean, expected & good, stale)
