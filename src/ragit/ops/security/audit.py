"""`ragit security audit` (docs/reference/security.md).

Writes mask secrets before anything is persisted, so a raw secret on disk means
an older RAGit (or a hand edit) wrote it. ``audit`` looks for such leftovers
with the current masking rules — a string that :func:`mask_text` would change
still holds a raw secret — and ``ragit security purge``
(:mod:`ragit.ops.security.purge`) removes them.

audit (reads only; it records nothing, not even a "last audit" time, so it can
run wherever a read can):

* control-plane files (``.ragit/log/**/*.json[l]``, ``.ragit/artifacts/**/*.json``,
  ``.ragit/memory/**/*.json``, ``.ragit/security/**/*.jsonl``) → ``warn``;
* chunks of the published store (every row of the reader copy; on the shared store,
  ``store.backend = "postgres"``: every chunk the repository's snapshots on the server cite,
  read-only) → ``critical``;
* documents of the implicit ingest surface at HEAD → ``critical`` when admission
  would block them, ``warn`` when they merely hold a secret;
* a remote-egress embedding provider under ``remote_embedding_policy = "local-only"``
  → ``critical``.

Findings name a file and a field, never a value: no excerpt is reported at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragit import _json
from ragit.config import RagitConfig
from ragit.contract.errors import RagitError, StoreClientMissing
from ragit.ops.security.scan import (
    control_plane_files,
    pending_stale,
    scan_control_plane_file,
    secret_labels,
    security_dir,
    stale_entries,
)
from ragit.store.backend import SharedSource, store_backend
from ragit.workspace import Workspace

SEVERITIES = ("critical", "warn", "info")
PURGE_CONTROL_PLANE = "ragit security purge --target control-plane"
PURGE_STORE = "ragit security purge --target store"
_FETCH_BATCH = 1000


# ---------------------------------------------------------------- findings


def _finding(
    severity: str, surface: str, path: str, field: str, reason: str, action: str
) -> dict[str, str]:
    key = "\0".join((surface, path, field, reason))
    return {
        "findingId": "finding_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12],
        "severity": severity,
        "surface": surface,
        "path": path,
        "field": field,
        "reason": reason,
        "suggestedAction": action,
    }


def _labels_reason(labels: set[str]) -> str:
    return "raw-looking secret (" + ", ".join(sorted(labels)) + ")"


# ---------------------------------------------------------------- control plane


def _audit_control_plane(ws: Workspace) -> tuple[list[dict[str, str]], int]:
    findings: list[dict[str, str]] = []
    files = 0
    for path in control_plane_files(ws):
        rel = ws.relative(path)
        try:
            scan = scan_control_plane_file(path)
        except OSError as exc:
            findings.append(
                _finding(
                    "info",
                    "control-plane",
                    rel,
                    "$",
                    f"unreadable ({exc.__class__.__name__}); not scanned",
                    "ragit doctor",
                )
            )
            continue
        if scan.hits:
            files += 1
        for field, labels in sorted(scan.hits.items()):
            findings.append(
                _finding(
                    "warn", "control-plane", rel, field, _labels_reason(labels), PURGE_CONTROL_PLANE
                )
            )
    return findings, files


# ---------------------------------------------------------------- store


def _chunk_paths(ws: Workspace) -> dict[str, set[str]]:
    """Chunk id → the document (or artifact) paths that cite it in any readable manifest."""
    from ragit.snapshot.manifest import list_manifest_shas, load_manifest

    owners: dict[str, set[str]] = {}
    for sha in list_manifest_shas(ws):
        try:
            manifest = load_manifest(ws, sha)
        except RagitError:
            continue
        _add_owners(manifest, owners)
    return owners


def _add_owners(manifest: Any, owners: dict[str, set[str]]) -> None:
    for doc in manifest.docs:
        for cid in doc.chunk_ids:
            owners.setdefault(cid, set()).add(doc.path)
    for entry in manifest.artifact_entries:
        for cid in entry.get("chunkIds", []):
            owners.setdefault(str(cid), set()).add(str(entry.get("path") or "artifact"))


def _audit_stale(ws: Workspace, indexed: set[str] | None = None) -> list[dict[str, str]]:
    """The snapshots a purge removed and nobody re-indexed yet (``indexed``: the commits the
    shared store holds; None: the local store, judged by its manifest files)."""
    return [
        _finding(
            "warn",
            "store",
            ws.relative(ws.manifest_path(entry["commitSha"])),
            "manifest",
            f"removed by a security purge and not re-indexed yet ({entry['reason']})",
            entry["recovery"],
        )
        for entry in stale_entries(pending_stale(ws, indexed))
    ]


def _chunk_findings(
    cid: str, fields: dict[str, str], owners: dict[str, set[str]], where: str
) -> list[dict[str, str]]:
    findings: list[dict[str, str]] = []
    for name, value in fields.items():
        labels = secret_labels(value)
        if not labels:
            continue
        for path in sorted(owners.get(cid, {where})):
            findings.append(
                _finding(
                    "critical",
                    "store",
                    path,
                    f"chunks[{cid}].{name}",
                    _labels_reason(labels),
                    PURGE_STORE,
                )
            )
    return findings


def _audit_shared(ws: Workspace, cfg: RagitConfig) -> list[dict[str, str]]:
    """The shared store (``store.backend = "postgres"``): every chunk the repository's
    snapshots on the server cite (read-only), and the snapshots a purge removed that the
    server does not hold again."""
    from ragit.snapshot.manifest import parse_manifest
    from ragit.snapshot.repository import store_repository

    backend = store_backend(cfg.store.backend)
    where = backend.name
    reader: SharedSource | None = None
    failure: str | None = None
    try:
        repository = store_repository(ws, cfg)
        where = f"{backend.name}:{repository}"
        reader = backend.server(ws, repository)
        snapshots = reader.snapshots()  # connects: a store it cannot reach is not scanned
    except StoreClientMissing as exc:
        failure = exc.message
    except RagitError as exc:
        failure = exc.code
    if failure is not None:
        if reader is not None:
            reader.close()
        return [
            _finding(
                "info",
                "store",
                where,
                "$",
                f"the shared store could not be read ({failure}); not scanned",
                "ragit doctor",
            )
        ]
    assert reader is not None
    findings: list[dict[str, str]] = []
    try:
        owners: dict[str, set[str]] = {}
        cited: dict[int, set[str]] = {}
        for snap in snapshots:
            cited.setdefault(snap.namespace_id, set()).update(snap.chunk_ids)
            try:
                manifest = parse_manifest(snap.commit_sha, snap.manifest, "the shared store")
            except RagitError:
                continue
            _add_owners(manifest, owners)
        for namespace_id, ids in sorted(cited.items()):
            ordered = sorted(ids)
            for start in range(0, len(ordered), _FETCH_BATCH):
                texts = reader.chunk_texts(namespace_id, ordered[start : start + _FETCH_BATCH])
                for cid, chunk in sorted(texts.items()):
                    fields = {
                        "text": chunk["text"],
                        "sectionTitle": chunk["sectionTitle"],
                        "headingPath": chunk["headingPath"],
                    }
                    findings.extend(_chunk_findings(cid, fields, owners, where))
    except RagitError as exc:
        findings.append(
            _finding(
                "info",
                "store",
                where,
                "$",
                f"the shared store could not be read ({exc.code}); not scanned",
                "ragit doctor",
            )
        )
        return findings
    finally:
        reader.close()
    return findings + _audit_stale(ws, {snap.commit_sha for snap in snapshots})


def _audit_store(ws: Workspace) -> list[dict[str, str]]:
    from ragit.store.meta import read_meta
    from ragit.store.reader import StoreReader

    try:
        if read_meta(ws) is None:
            return []
        reader = StoreReader.open_latest(ws, wait_ms=2000)
    except RagitError as exc:
        return [
            _finding(
                "info",
                "store",
                ".ragit/store",
                "$",
                f"the published store could not be read ({exc.code}); not scanned",
                "ragit doctor",
            )
        ]
    findings: list[dict[str, str]] = []
    owners = _chunk_paths(ws)
    try:
        # StoreReader offers no id scan of its own; every row of the copy is audited,
        # including rows no manifest cites any more.
        ids = sorted(reader._c.all_ids())
        for start in range(0, len(ids), _FETCH_BATCH):
            for cid, chunk in sorted(reader.fetch(ids[start : start + _FETCH_BATCH]).items()):
                fields = {
                    "text": chunk.text,
                    "sectionTitle": chunk.section_title,
                    "headingPath": chunk.heading_path,
                }
                findings.extend(_chunk_findings(cid, fields, owners, ".ragit/store"))
    finally:
        reader.close()
    return findings


# ---------------------------------------------------------------- repository documents


def _decode(raw: bytes) -> str | None:
    if b"\x00" in raw[:8192]:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _audit_repo_docs(ws: Workspace, cfg: RagitConfig) -> list[dict[str, str]]:
    """Documents ``ragit ingest`` would consider at HEAD, judged by admission control."""
    from ragit.security.admission import evaluate
    from ragit.snapshot._git import GitRepo
    from ragit.snapshot.surface import SurfaceMatcher, is_markdown

    git = GitRepo(ws.root)
    head = git.head().sha
    if head is None:
        return []
    surface = SurfaceMatcher(cfg.ingest.doc_globs, cfg.ingest.include, cfg.ingest.exclude)
    findings: list[dict[str, str]] = []
    for item in git.tree_files(head):
        if item.is_symlink or not is_markdown(item.path) or not surface.matches(item.path):
            continue
        if git.blob_size(item.blob_sha) > cfg.ingest.max_file_bytes:
            continue
        text = _decode(git.read_blob(item.blob_sha))
        if text is None:
            continue
        decision = evaluate(text, source_ref=item.path, surface="audit", path=item.path)
        if decision.action == "allow":
            continue
        severity = "critical" if decision.action == "block" else "warn"
        findings.append(
            _finding(
                severity,
                "repo-doc",
                item.path,
                "text",
                f"admission would {decision.action} it: {', '.join(decision.reason_codes)}",
                f"remove the secret from {item.path}, commit, then run: ragit ingest",
            )
        )
    return findings


# ---------------------------------------------------------------- provider egress


def _provider_egress(cfg: RagitConfig) -> tuple[dict[str, Any], list[dict[str, str]]]:
    from ragit.embed import resolve_profile

    policy = cfg.security.remote_embedding_policy
    egress: dict[str, Any]
    try:
        profile = resolve_profile(cfg.embedding)
    except RagitError as exc:
        egress = {"provider": cfg.embedding.provider, "class": None, "policy": policy}
        return egress, [
            _finding(
                "info",
                "config",
                ".ragit/config.toml",
                "embedding",
                f"the embedding profile does not resolve ({exc.code})",
                "ragit doctor",
            )
        ]
    egress = {"provider": profile.provider, "class": profile.egress, "policy": policy}
    findings: list[dict[str, str]] = []
    if profile.egress == "remote" and policy == "local-only":
        findings.append(
            _finding(
                "critical",
                "config",
                ".ragit/config.toml",
                "security.remote_embedding_policy",
                f"provider {profile.provider} sends text off the machine while the policy is "
                "local-only",
                "ragit config set embedding.provider local-placeholder",
            )
        )
    return egress, findings


# ---------------------------------------------------------------- ledgers


def _ledger_lines(directory: Path) -> Iterator[dict[str, Any]]:
    """Each line of the ledgers in ``directory``; a line that is no JSON object counts as ``{}``."""
    for value in _json.jsonl_objects(directory):
        yield value if value is not None else {}


# ---------------------------------------------------------------- audit


def run_audit(ws: Workspace, cfg: RagitConfig) -> dict[str, Any]:
    """Every place a raw secret may remain, as findings (reads only; contract §12)."""
    from ragit.security.masking import mask_json

    control, control_files = _audit_control_plane(ws)
    if store_backend(cfg.store.backend).shared:
        store = _audit_shared(ws, cfg)
    else:
        store = _audit_store(ws) + _audit_stale(ws)
    docs = _audit_repo_docs(ws, cfg)
    egress, config = _provider_egress(cfg)
    order = {name: n for n, name in enumerate(SEVERITIES)}
    findings = sorted(
        control + store + docs + config,
        key=lambda f: (order[f["severity"]], f["surface"], f["path"], f["field"]),
    )
    admission = list(_ledger_lines(security_dir(ws) / "admission"))
    summary = {
        **{
            severity: sum(1 for f in findings if f["severity"] == severity)
            for severity in SEVERITIES
        },
        "quarantineEntries": sum(1 for _ in _ledger_lines(security_dir(ws) / "quarantine")),
        "admissionBlocked": sum(1 for line in admission if line.get("action") == "block"),
        "admissionQuarantined": sum(1 for line in admission if line.get("action") == "quarantine"),
        "legacyControlPlaneFiles": control_files,
        "legacyStoreFindings": sum(1 for f in store if f["severity"] == "critical"),
        "repoDocsFlagged": len(docs),
    }
    data = {"summary": summary, "providerEgress": egress, "findings": findings}
    # Output re-masking is always on (docs/masking.md): file names and field paths are data too.
    masked, _count, _sources = mask_json(data)
    assert isinstance(masked, dict)
    return masked
