"""`ragit security audit` and `ragit security purge` (UR §11, §12.27).

Writes mask secrets before anything is persisted, so a raw secret on disk means
an older RAGit (or a hand edit) wrote it. ``audit`` looks for such leftovers
with the current masking rules — a string that :func:`mask_text` would change
still holds a raw secret — and ``purge`` removes them.

audit (reads only; it records nothing, not even a "last audit" time, so it can
run wherever a read can):

* control-plane files (``.ragit/log/**/*.json[l]``, ``.ragit/artifacts/**/*.json``,
  ``.ragit/memory/**/*.json``, ``.ragit/security/**/*.jsonl``) → ``warn``;
* chunks of the published store (every row of the reader copy) → ``critical``;
* documents of the implicit ingest surface at HEAD → ``critical`` when admission
  would block them, ``warn`` when they merely hold a secret;
* a remote-egress embedding provider under ``remote_embedding_policy = "local-only"``
  → ``critical``.

Findings name a file and a field, never a value: no excerpt is reported at all.

purge (under the writer lock; ``--dry-run`` writes nothing and returns the plan):

* ``control-plane`` — re-sanitizes the files above in place (also under the memory
  lock): JSON files through :func:`mask_json`, JSONL files line by line (clean lines
  keep their bytes), each written atomically;
* ``quarantine`` — deletes the quarantine ledger files;
* ``store`` — regenerates the store from git with the current masking rules (as
  ``store rebuild`` does: every manifest's document blobs are re-read, masked and
  chunked), verifies it in ``.ragit/store.next`` and swaps it in; the old store, its
  replacement residue and its reader copies go. A snapshot whose chunk ids change
  under the current rules (its stored text held a secret the rules now mask) cannot
  be served from the new store: its manifest is deleted before the swap and it is
  reported in ``staleSnapshots`` with the ``ragit ingest --all --at <sha>`` that
  re-indexes it. Every other snapshot keeps its manifest and answers as before. The
  list is written to ``.ragit/security/state.json`` before any manifest goes, so a
  purge killed halfway still reports it (next purge, and audit as ``warn`` findings)
  until each snapshot is re-indexed;
* ``cache`` — deletes the embedding cache (the whole directory when it lies inside
  ``.ragit/``, else only the ``v1/`` layout RAGit writes inside it);
* ``all`` — the four, in the order control-plane, quarantine, store, cache (the
  store's artifact chunks are regenerated from the already re-sanitized records).

Repository documents are never rewritten: fix the document, commit, then ingest.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragit.config import RagitConfig
from ragit.contract.errors import NotInitialized, RagitError
from ragit.workspace import Workspace

Progress = Callable[[str], None]

TARGETS = ("control-plane", "store", "cache", "quarantine", "all")
SEVERITIES = ("critical", "warn", "info")
PURGE_CONTROL_PLANE = "ragit security purge --target control-plane"
PURGE_STORE = "ragit security purge --target store"
LOCK_COMMAND = "security-purge"
STATE_NAME = "state.json"

# (directory under .ragit, file suffixes) of the control-plane files (UR §12.27).
_CONTROL_PLANE = (
    ("log", (".jsonl", ".json")),
    ("artifacts", (".json",)),
    ("memory", (".json",)),
    ("security", (".jsonl",)),
)
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


def _secret_labels(value: str) -> set[str]:
    """Rule labels of the secrets masking would still replace in ``value`` (empty: clean)."""
    from ragit.security.masking import mask_text

    return set(mask_text(value).labels)


def _json_hits(value: Any, path: str, out: dict[str, set[str]]) -> None:
    """Field path → labels of every string that still holds a secret (keys are schema, as
    for :func:`mask_json`)."""
    if isinstance(value, str):
        labels = _secret_labels(value)
        if labels:
            out.setdefault(path or "$", set()).update(labels)
    elif isinstance(value, dict):
        for key, item in value.items():
            _json_hits(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _json_hits(item, f"{path}[{index}]", out)


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
class _FileScan:
    """Where one control-plane file still holds secrets, and its re-sanitized text."""

    hits: dict[str, set[str]]
    unparseable: bool
    sanitized: str | None  # None when nothing needs masking


def _sanitize_jsonl(text: str) -> _FileScan:
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
            value = json.loads(body)
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
        _json_hits(value, f"[{index}]", line_hits)
        if not line_hits:
            out.append(line)
            continue
        hits.update(line_hits)
        masked, _count, _sources = mask_json(value)
        out.append(json.dumps(masked, ensure_ascii=False, separators=(",", ":")) + ending)
        changed = True
    return _FileScan(hits, unparseable, "".join(out) if changed else None)


def _sanitize_json(text: str) -> _FileScan:
    from ragit.security.masking import mask_json, mask_text

    try:
        value = json.loads(text)
    except ValueError:
        result = mask_text(text)
        hits = {"$": set(result.labels)} if result.masked_count else {}
        return _FileScan(hits, True, result.text if result.masked_count else None)
    hits = {}
    _json_hits(value, "", hits)
    if not hits:
        return _FileScan({}, False, None)
    masked, _count, _sources = mask_json(value)
    # The layout every memory/artifact record is written with (memory._store.dumps_record).
    return _FileScan(hits, False, json.dumps(masked, ensure_ascii=False, indent=2) + "\n")


def scan_control_plane_file(path: Path) -> _FileScan:
    """Scan one control-plane file (undecodable bytes are scanned as replacement text)."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix == ".jsonl":
        return _sanitize_jsonl(text)
    return _sanitize_json(text)


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
        for doc in manifest.docs:
            for cid in doc.chunk_ids:
                owners.setdefault(cid, set()).add(doc.path)
        for entry in manifest.artifact_entries:
            for cid in entry.get("chunkIds", []):
                owners.setdefault(str(cid), set()).add(str(entry.get("path") or "artifact"))
    return owners


def _audit_stale(ws: Workspace) -> list[dict[str, str]]:
    return [
        _finding(
            "warn",
            "store",
            ws.relative(ws.manifest_path(entry["commitSha"])),
            "manifest",
            f"removed by a security purge and not re-indexed yet ({entry['reason']})",
            entry["recovery"],
        )
        for entry in _stale_entries(pending_stale(ws))
    ]


def _audit_store(ws: Workspace) -> list[dict[str, str]]:
    from ragit.store import StoreReader, read_meta

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
                for name, value in (
                    ("text", chunk.text),
                    ("sectionTitle", chunk.section_title),
                    ("headingPath", chunk.heading_path),
                ):
                    labels = _secret_labels(value)
                    if not labels:
                        continue
                    for path in sorted(owners.get(cid, {".ragit/store"})):
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
    from ragit.ingest.surface import SurfaceMatcher, is_markdown
    from ragit.security.admission import evaluate
    from ragit.snapshot._git import GitRepo

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
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*.jsonl")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except ValueError:
                value = {}
            yield value if isinstance(value, dict) else {}


def _security_dir(ws: Workspace) -> Path:
    return ws.ragit_dir / "security"


# ---------------------------------------------------------------- audit


def run_audit(ws: Workspace, cfg: RagitConfig) -> dict[str, Any]:
    """Every place a raw secret may remain, as findings (reads only; contract §12)."""
    from ragit.security.masking import mask_json

    control, control_files = _audit_control_plane(ws)
    store = _audit_store(ws) + _audit_stale(ws)
    docs = _audit_repo_docs(ws, cfg)
    egress, config = _provider_egress(cfg)
    order = {name: n for n, name in enumerate(SEVERITIES)}
    findings = sorted(
        control + store + docs + config,
        key=lambda f: (order[f["severity"]], f["surface"], f["path"], f["field"]),
    )
    admission = list(_ledger_lines(_security_dir(ws) / "admission"))
    summary = {
        **{
            severity: sum(1 for f in findings if f["severity"] == severity)
            for severity in SEVERITIES
        },
        "quarantineEntries": sum(1 for _ in _ledger_lines(_security_dir(ws) / "quarantine")),
        "admissionBlocked": sum(1 for line in admission if line.get("action") == "block"),
        "admissionQuarantined": sum(1 for line in admission if line.get("action") == "quarantine"),
        "legacyControlPlaneFiles": control_files,
        "legacyStoreFindings": sum(1 for f in store if f["severity"] == "critical"),
        "repoDocsFlagged": len(docs),
    }
    data = {"summary": summary, "providerEgress": egress, "findings": findings}
    # Output re-masking is always on (UR §11.1): file names and field paths are data too.
    masked, _count, _sources = mask_json(data)
    assert isinstance(masked, dict)
    return masked


def render_audit(data: dict[str, Any]) -> str:
    summary = data["summary"]
    egress = data["providerEgress"]
    lines = [
        f"security audit: {summary['critical']} critical, {summary['warn']} warn, "
        f"{summary['info']} info",
        f"- embedding egress: {egress['provider']} ({egress['class']}), policy {egress['policy']}",
    ]
    for finding in data["findings"]:
        lines.append(
            f"- [{finding['severity']}] {finding['surface']} {finding['path']} "
            f"{finding['field']}: {finding['reason']}"
        )
        lines.append(f"    fix: {finding['suggestedAction']}")
    if not data["findings"]:
        lines.append("no findings")
    return "\n".join(lines)


# ---------------------------------------------------------------- purge: planning


def _targets(target: str) -> list[str]:
    # Store after control-plane: artifact chunks are regenerated from the sanitized records.
    if target == "all":
        return ["control-plane", "quarantine", "store", "cache"]
    return [target]


def _quarantine_files(ws: Workspace) -> list[Path]:
    directory = _security_dir(ws) / "quarantine"
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob("*.jsonl") if p.is_file() and not p.is_symlink())


def _cache_target(ws: Workspace, cfg: RagitConfig) -> tuple[Path | None, str | None]:
    """The directory a cache purge deletes, or a warning saying why nothing is deleted."""
    from ragit.embed.cache import CACHE_LAYOUT

    raw = Path(cfg.embedding.cache_dir)
    base = (raw if raw.is_absolute() else ws.root / raw).resolve()
    root = ws.root.resolve()
    ragit = ws.ragit_dir.resolve()
    if ragit in base.parents:
        return base, None
    if root in base.parents and ragit != base and not base.is_relative_to(root / ".git"):
        # A cache dir among the user's own files: delete only what RAGit wrote there.
        return base / CACHE_LAYOUT, None
    return None, (
        f"embedding.cache_dir {cfg.embedding.cache_dir} is not a directory inside the "
        "repository that RAGit owns; nothing was deleted there"
    )


def _residue_dirs(ws: Workspace) -> list[Path]:
    from ragit.store.replace import next_dir, prev_dir

    return [d for d in (next_dir(ws), prev_dir(ws)) if d.exists()]


@dataclass
class _StorePlan:
    manifests: dict[str, Any]
    rows: list[Any]
    expected: set[str]
    stale: dict[str, str]  # manifest sha → reason


def _plan_store(ws: Workspace, cfg: RagitConfig, progress: Progress) -> _StorePlan:
    """Regenerate every chunk from git with the current rules (reads only).

    A snapshot is stale when any chunk it cites cannot be regenerated exactly: its
    stored text was made under other masking (or chunking) rules, its blob no longer
    reads, or a regenerated artifact chunk still holds a raw secret.
    """
    from ragit.ops.rebuild import _manifests, _regenerate

    manifests, _bad = _manifests(ws)
    rows, problems, expected = _regenerate(ws, cfg, manifests, progress)
    clean = [
        row
        for row in rows
        if not any(
            _secret_labels(value)
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
    return _StorePlan(manifests, clean, expected & good, stale)


def _stale_entries(stale: dict[str, str]) -> list[dict[str, str]]:
    return [
        {"commitSha": sha, "reason": reason, "recovery": f"ragit ingest --all --at {sha}"}
        for sha, reason in sorted(stale.items())
    ]


def _state_path(ws: Workspace) -> Path:
    return _security_dir(ws) / STATE_NAME


def pending_stale(ws: Workspace) -> dict[str, str]:
    """Snapshots an earlier purge removed that are not re-indexed yet (sha → reason).

    The record survives a purge killed after it deleted their manifests, so the
    re-index commands are never lost; an entry ends when its manifest exists again.
    """
    try:
        raw = json.loads(_state_path(ws).read_text(encoding="utf-8"))
        entries = raw["staleSnapshots"]
        pending = {str(e["commitSha"]): str(e["reason"]) for e in entries}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {sha: why for sha, why in pending.items() if not ws.manifest_path(sha).exists()}


def _record_stale(ws: Workspace, stale: dict[str, str]) -> None:
    from ragit._fs import atomic_write_text

    path = _state_path(ws)
    if not stale and not path.exists():
        return
    state = {"schemaVersion": 1, "staleSnapshots": _stale_entries(stale)}
    atomic_write_text(path, json.dumps(state, indent=2, sort_keys=True) + "\n")


def plan_purge(
    ws: Workspace, cfg: RagitConfig, target: str, progress: Progress
) -> tuple[list[dict[str, Any]], _StorePlan | None, list[str]]:
    """What a purge of ``target`` would do (reads only): planned items, store plan, warnings."""
    from ragit.store import read_meta

    planned: list[dict[str, Any]] = []
    warnings: list[str] = []
    store_plan: _StorePlan | None = None
    for part in _targets(target):
        if part == "control-plane":
            for path in control_plane_files(ws):
                scan = scan_control_plane_file(path)
                if scan.sanitized is not None:
                    planned.append(
                        {
                            "target": part,
                            "action": "rewrite",
                            "path": ws.relative(path),
                            "fields": len(scan.hits),
                        }
                    )
        elif part == "quarantine":
            for path in _quarantine_files(ws):
                planned.append({"target": part, "action": "delete", "path": ws.relative(path)})
        elif part == "cache":
            directory, warning = _cache_target(ws, cfg)
            if warning:
                warnings.append(warning)
            elif directory is not None and directory.exists():
                planned.append({"target": part, "action": "delete", "path": _shown(ws, directory)})
        elif part == "store":
            for residue in _residue_dirs(ws):
                planned.append({"target": part, "action": "delete", "path": ws.relative(residue)})
            try:
                meta = read_meta(ws)
            except RagitError:
                meta = None
                present = ws.store_dir.exists()
            else:
                present = meta is not None
            if not present:
                continue
            store_plan = _plan_store(ws, cfg, progress)
            planned.append(
                {
                    "target": part,
                    "action": "rebuild",
                    "path": ws.relative(ws.store_dir),
                    "chunks": len(store_plan.rows),
                }
            )
            for sha, reason in sorted(store_plan.stale.items()):
                planned.append(
                    {
                        "target": part,
                        "action": "delete",
                        "path": ws.relative(ws.manifest_path(sha)),
                        "reason": reason,
                    }
                )
    return planned, store_plan, warnings


def _shown(ws: Workspace, path: Path) -> str:
    try:
        return path.resolve().relative_to(ws.root.resolve()).as_posix()
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- purge: applying


def _rewrite_control_plane(ws: Workspace) -> list[str]:
    from ragit import _faults as faults
    from ragit._fs import atomic_write_text
    from ragit.artifacts.lock import memory_lock

    rewritten: list[str] = []
    with memory_lock(ws):
        for path in control_plane_files(ws):
            scan = scan_control_plane_file(path)
            if scan.sanitized is None:
                continue
            atomic_write_text(path, scan.sanitized)
            rewritten.append(ws.relative(path))
            faults.reach("purge-control-plane-rewritten")
    return rewritten


def _clear_quarantine(ws: Workspace) -> list[str]:
    from ragit import _faults as faults
    from ragit._fs import fsync_dir
    from ragit.artifacts.lock import memory_lock

    deleted: list[str] = []
    with memory_lock(ws):
        for path in _quarantine_files(ws):
            path.unlink(missing_ok=True)
            deleted.append(ws.relative(path))
        if deleted:
            fsync_dir(_security_dir(ws) / "quarantine")
    faults.reach("purge-quarantine-cleared")
    return deleted


def _delete_cache(ws: Workspace, cfg: RagitConfig) -> tuple[list[str], list[str]]:
    from ragit import _faults as faults
    from ragit.store._copy import remove_tree

    directory, warning = _cache_target(ws, cfg)
    if warning or directory is None:
        return [], [warning] if warning else []
    if not directory.exists():
        return [], []
    remove_tree(directory)
    faults.reach("purge-cache-deleted")
    return [_shown(ws, directory)], []


def _purge_store(
    ws: Workspace, cfg: RagitConfig, lock: Any, plan: _StorePlan | None, progress: Progress
) -> tuple[list[str], dict[str, Any] | None, list[str]]:
    """Replace the store with one regenerated under the current rules; returns
    (deleted paths, store summary, warnings)."""
    from ragit._fs import fsync_dir
    from ragit.embed import build_embedder
    from ragit.ops.rebuild import _close_out_journals, _embedded_batches
    from ragit import _faults as faults
    from ragit.store.replace import build_replacement, recover_swap, swap_in

    deleted: list[str] = []
    residue = [ws.relative(d) for d in _residue_dirs(ws)]
    warnings = recover_swap(ws, lock)
    for rel in residue:
        if not (ws.root / rel).exists():
            deleted.append(rel)
    if plan is None:
        return deleted, None, warnings
    embedder = build_embedder(ws.root, cfg.embedding, cfg.security, mode="cli")
    try:
        progress(f"embedding {len(plan.rows)} chunks with {embedder.profile.provider}")
        build_replacement(
            ws,
            lock,
            embedding=embedder.profile.as_dict(),
            batches=_embedded_batches(plan.rows, embedder, progress),
            expected_ids=plan.expected,
        )
    finally:
        embedder.close()
    # Recorded first, so a crash cannot lose which snapshots need re-indexing; deleted
    # before the swap, so no reader ever sees a manifest whose chunks the new store lacks.
    _record_stale(ws, {**pending_stale(ws), **plan.stale})
    for sha in sorted(plan.stale):
        path = ws.manifest_path(sha)
        if path.exists():
            path.unlink()
            deleted.append(ws.relative(path))
    if plan.stale:
        fsync_dir(ws.manifest_dir)
        faults.reach("purge-manifests-deleted")
    published = swap_in(ws, lock)
    _close_out_journals(ws)
    summary = {
        "manifests": len(plan.manifests) - len(plan.stale),
        "chunks": published.chunk_count,
        "storeId": published.store_id,
        "generation": published.generation,
    }
    return deleted, summary, warnings


def run_purge(
    ws: Workspace, cfg: RagitConfig, *, target: str, dry_run: bool, progress: Progress
) -> dict[str, Any]:
    """Plan, and unless ``dry_run`` apply, a purge of ``target`` (see the module docstring).

    Raises:
        NotInitialized: apply mode in a repository without ``ragit init``.
        StoreWriteBusy, StoreWriteLockStale: another writer holds the lock.
        SnapshotStoreUnavailable: the regenerated store failed verification (nothing swapped).
    """
    from ragit.store import WriterLock

    if target not in TARGETS:
        raise ValueError(f"unknown purge target {target!r}")
    data: dict[str, Any] = {
        "mode": "dry-run" if dry_run else "apply",
        "target": target,
        "planned": [],
        "rewritten": [],
        "deleted": [],
        "staleSnapshots": [],
        "store": None,
        "warnings": [],
    }
    if dry_run:
        planned, store_plan, warnings = plan_purge(ws, cfg, target, progress)
        data.update(planned=planned, warnings=warnings)
        if "store" in _targets(target):
            stale = {**pending_stale(ws), **(store_plan.stale if store_plan else {})}
            data["staleSnapshots"] = _stale_entries(stale)
        return data
    if not ws.is_initialized():
        # Without init, .ragit/ is not git-ignored: the lock file alone would dirty the worktree.
        raise NotInitialized(str(ws.root))
    with WriterLock.acquire(ws, command=LOCK_COMMAND, head_sha=None) as lock:
        data["warnings"].extend(lock.warnings)
        for part in _targets(target):
            if part == "control-plane":
                planned, _plan, _w = plan_purge(ws, cfg, part, progress)
                data["planned"].extend(planned)
                data["rewritten"].extend(_rewrite_control_plane(ws))
            elif part == "quarantine":
                planned, _plan, _w = plan_purge(ws, cfg, part, progress)
                data["planned"].extend(planned)
                data["deleted"].extend(_clear_quarantine(ws))
            elif part == "store":
                planned, store_plan, _w = plan_purge(ws, cfg, part, progress)
                data["planned"].extend(planned)
                deleted, summary, warnings = _purge_store(ws, cfg, lock, store_plan, progress)
                data["deleted"].extend(deleted)
                data["warnings"].extend(warnings)
                data["store"] = summary
                stale = pending_stale(ws)
                _record_stale(ws, stale)  # drops the entries re-indexed since
                data["staleSnapshots"] = _stale_entries(stale)
                data["warnings"].extend(
                    f"snapshot {s['commitSha']} cannot be served from the purged store; "
                    f"re-index it with: {s['recovery']}"
                    for s in data["staleSnapshots"]
                )
            elif part == "cache":
                planned, _plan, _w = plan_purge(ws, cfg, part, progress)
                data["planned"].extend(planned)
                deleted, warnings = _delete_cache(ws, cfg)
                data["deleted"].extend(deleted)
                data["warnings"].extend(warnings)
    return data


def render_purge(data: dict[str, Any]) -> str:
    lines = [f"security purge ({data['mode']}), target {data['target']}"]
    for item in data["planned"]:
        lines.append(f"- {item['action']} {item['path']} [{item['target']}]")
    if not data["planned"]:
        lines.append("- nothing to purge")
    if data["mode"] == "apply":
        lines.append(f"rewritten: {len(data['rewritten'])}, deleted: {len(data['deleted'])}")
    for stale in data["staleSnapshots"]:
        lines.append(f"stale snapshot {stale['commitSha']}: {stale['recovery']}")
    return "\n".join(lines)
