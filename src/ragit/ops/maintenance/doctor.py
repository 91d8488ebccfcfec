"""`ragit doctor`: named checks, each with a recovery command that fixes it (contract §12).

Doctor reads only: the store is inspected through the reader copy of the
published generation (never the canonical files), the embedding cache in
read-only mode, manifests without rewriting them. A failing check's
``recovery`` is the command that repairs exactly that problem; the process
exits 1 with ``DOCTOR_CHECKS_FAILED`` when any check fails.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragit.contract.errors import (
    FIRST_COMMIT_RECOVERY,
    DoctorChecksFailed,
    RagitError,
)
from ragit.ops.maintenance.doctor_shared import shared_store_checks
from ragit.store.backend import store_backend
from ragit.workspace import GITIGNORE_ENTRIES, Workspace

REBUILD = "ragit repair --apply --action store-rebuild"


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    recovery: str | None = None
    extra: dict[str, Any] | None = None
    hint: str | None = None  # advice where no command fixes it (recovery None)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "ok": self.ok, "detail": self.detail}
        if not self.ok:
            out["recovery"] = self.recovery
            if self.hint:
                out["hint"] = self.hint
        if self.extra:
            out.update(self.extra)
        return out


class _Doctor:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.checks: list[Check] = []
        self.cfg: Any = None
        self.manifests: dict[str, Any] = {}
        self._shared: Any = None  # ragit.ops.status.report.SharedStore: one connection per run

    def shared(self) -> Any:
        """The shared store, reached once (``store.backend = "postgres"``), else None."""
        if self.cfg is None or not store_backend(self.cfg.store.backend).shared:
            return None
        if self._shared is None:
            from ragit.ops.status.report import SharedStore

            self._shared = SharedStore(self.ws, self.cfg)
        return self._shared

    def close(self) -> None:
        if self._shared is not None:
            self._shared.close()
            self._shared = None

    def add(
        self, name: str, ok: bool, detail: str, recovery: str | None = None, **extra: Any
    ) -> Check:
        check = Check(name, ok, detail, recovery, extra or None)
        self.checks.append(check)
        return check

    def run(self, name: str, fn: Callable[[], None]) -> None:
        from ragit.contract.fs_errors import FilesystemUnusable, filesystem_error

        try:
            fn()
        except RagitError as exc:
            if isinstance(exc, FilesystemUnusable):  # the machine's: no ragit command fixes it
                self.add(name, False, exc.message, exc.recovery)
                return
            self.add(name, False, exc.message, exc.recovery or "ragit doctor --format json")
        except OSError as exc:
            typed = filesystem_error(exc, self.ws.root)
            if typed is None:
                raise
            self.add(name, False, typed.message, typed.recovery)

    # ------------------------------------------------------------ checks
    def structure(self) -> None:
        from ragit.ops.maintenance.filesystem import check_filesystem

        ws = self.ws
        self.add("git.repository", True, f"git worktree at {ws.root}")
        found = check_filesystem(ws)
        self.add("ragit.filesystem", found.ok, found.detail, found.recovery, **found.extra)
        if not ws.is_initialized():
            self.add(
                "ragit.initialized", False, ".ragit/config.toml is missing", "ragit init --yes"
            )
            return
        self.add("ragit.initialized", True, ".ragit/config.toml exists")
        try:
            text = ws.gitignore_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        lines = {line.strip() for line in text.splitlines()}
        missing = [e for e in GITIGNORE_ENTRIES if e not in lines and e.rstrip("/") not in lines]
        self.add(
            "ragit.gitignore",
            not missing,
            "runtime state is git-ignored"
            if not missing
            else f"{len(missing)} runtime path(s) are not git-ignored: {', '.join(missing[:4])}",
            "ragit init --yes",
        )

    def config(self) -> None:
        from ragit.config import load_config, unknown_key_data, unknown_key_fixes

        try:
            self.cfg = load_config(self.ws)
        except RagitError as exc:
            self.add("ragit.config", False, exc.message, exc.recovery)
            return
        fixes = unknown_key_fixes(unknown_key_data(self.ws))
        if fixes:
            named = "; ".join(
                f"'{name}'" + (f" (did you mean '{guess}'?)" if guess else "")
                for name, guess, _fix in fixes
            )
            self.add(
                "ragit.config",
                False,
                f"unknown section(s) or key(s) RAGit ignores: {named}",
                " && ".join(fix for _name, _guess, fix in fixes),
            )
        else:
            self.add("ragit.config", True, "valid")
        sec = self.cfg.security
        self.add(
            "security.masking-config",
            bool(sec.secret_masking),
            "secret masking is on"
            if sec.secret_masking
            else "secret masking is off: ingest refuses",
            "ragit config set security.secret_masking true",
        )
        self.add(
            "security.admission-mode",
            sec.admission_mode == "enforce",
            f"admission mode is {sec.admission_mode}",
            "ragit config set security.admission_mode enforce",
        )

    def manifests_check(self) -> None:
        from ragit.snapshot.manifest import list_manifest_shas, load_manifest

        bad: list[dict[str, str]] = []
        for sha in list_manifest_shas(self.ws):
            try:
                self.manifests[sha] = load_manifest(self.ws, sha)
            except RagitError as exc:
                bad.append({"sha": sha, "code": exc.code, "reason": exc.message})
        if bad:
            first = bad[0]["sha"]
            self.add(
                "snapshot.manifests",
                False,
                f"{len(bad)} manifest(s) unreadable, first {first}: {bad[0]['reason']}",
                f"ragit ingest --all --at {first}",
                invalid=bad,
            )
        else:
            self.add("snapshot.manifests", True, f"{len(self.manifests)} manifest(s) readable")

    def head(self) -> None:
        from ragit.ops.status.report import repository_status

        block = repository_status(self.ws, self.shared())["snapshot"]
        status = block["status"]
        ok = status == "indexed"
        recovery = block.get("recovery")
        if status == "missing" and block.get("resolvedSha") is None:
            recovery = block.get("recovery") or FIRST_COMMIT_RECOVERY
        elif status == "store-unavailable":
            recovery = REBUILD
        elif status == "invalid" and block.get("errorCode") == "SNAPSHOT_MANIFEST_INVALID":
            # status points at doctor; doctor names the command that rebuilds the manifest
            recovery = f"ragit ingest --all --at {block['resolvedSha']}"
        self.add(
            "snapshot.head",
            ok,
            "HEAD's snapshot is indexed"
            if ok
            else f"HEAD snapshot {status}: {block.get('reason')}",
            recovery or "ragit ingest --all",
        )

    def store(self) -> None:
        from ragit.ops.maintenance.store_markers import failed_writes
        from ragit.store.meta import read_meta, read_referenced
        from ragit.store.reader import StoreReader

        try:
            meta = read_meta(self.ws)
        except RagitError as exc:
            self.add("store.meta", False, exc.message, REBUILD)
            return
        if meta is None:
            if self.manifests:
                self.add("store.meta", False, "manifests exist but the store is missing", REBUILD)
            else:
                self.add("store.meta", True, "no store yet (the first ingest creates it)")
            return
        self.add("store.meta", True, f"generation {meta.generation}, {meta.chunk_count} chunks")
        for name, detail in failed_writes(self.ws):
            self.add(name, False, detail, REBUILD)
        self._canonical_files(meta)
        try:
            reader = StoreReader.open_latest(self.ws, wait_ms=2000)
        except RagitError as exc:
            self.add("store.reader", False, exc.message, REBUILD)
            return
        try:
            self.add("store.reader", True, f"reader copy of generation {reader.generation} opens")
            wanted: set[str] = set()
            for manifest in self.manifests.values():
                wanted |= manifest.all_chunk_ids()
            ordered = sorted(wanted)
            present: set[str] = set()
            for i in range(0, len(ordered), 1000):
                present |= set(reader.fetch(ordered[i : i + 1000]))
            missing = sorted(wanted - present)
            recovery = REBUILD
            if missing:
                lost = set(missing)
                affected = sorted(
                    sha for sha, m in self.manifests.items() if m.all_chunk_ids() & lost
                )
                stale = [sha for sha in affected if _built_by_older_chunker(self.manifests[sha])]
                if stale and len(stale) == len(affected):
                    recovery = f"ragit ingest --all --at {stale[0]}"
                elif not lost & read_referenced(self.ws.store_dir) and _recorded(self.ws):
                    # No write of this store ever stored them (a manifest edited or copied
                    # from elsewhere): a rebuild cannot regenerate them, an ingest of the
                    # commit derives its documents again.
                    recovery = f"ragit ingest --all --at {affected[0]}"
            self.add(
                "ragit.manifest-consistency",
                not missing,
                f"all {len(wanted)} chunk(s) named by manifests are in the store"
                if not missing
                else f"{len(missing)} chunk(s) named by manifests are missing from the store",
                recovery,
                missingChunkIds=missing[:20],
            )
            # Chunks missing from the store are the consistency check's to report.
            self._keyword_index(reader, wanted & present)
        finally:
            reader.close()

    def shared_store(self) -> None:
        """``store.backend = "postgres"``:
        :func:`~ragit.ops.maintenance.doctor_shared.shared_store_checks`."""
        shared_store_checks(self.shared(), self.add)

    def _keyword_index(self, reader: Any, wanted: set[str]) -> None:
        """Every chunk manifests name has postings in the reader copy's keyword index."""
        try:
            unindexed = reader.terms().missing(wanted)
        except RagitError as exc:
            self.add("store.keyword-index", False, exc.message, REBUILD)
            return
        self.add(
            "store.keyword-index",
            not unindexed,
            f"all {len(wanted)} chunk(s) named by manifests are in the keyword index"
            if not unindexed
            else f"{len(unindexed)} chunk(s) named by manifests are missing from the keyword index",
            REBUILD,
            missingChunkIds=unindexed[:20],
        )

    def _canonical_files(self, meta: Any) -> None:
        from ragit.store.lock import inspect_lock
        from ragit.store.publishing import canonical_changed

        if not meta.extra.get("canonicalDigest") or inspect_lock(self.ws).state != "missing":
            return  # published before fingerprints existed, or a writer is at work
        if not (self.ws.store_dir / meta.collection).is_dir():
            self.add("store.canonical-files", False, "the store's collection is missing", REBUILD)
            return
        changed = canonical_changed(self.ws)
        if changed is None:
            return  # unfinished work: the journals check reports it
        self.add(
            "store.canonical-files",
            not changed,
            "the canonical store files are as published"
            if not changed
            else "the canonical store files changed outside a RAGit write (damaged or replaced)",
            REBUILD,
        )

    def writer(self) -> None:
        from ragit.store.journal_scan import scan_journals
        from ragit.store.lock import inspect_lock

        info = inspect_lock(self.ws)
        if info.state in ("missing", "active", "stale"):
            detail = {
                "missing": "no writer holds the lock",
                "active": "a writer is running",
                "stale": "a crashed writer's lock remains; the next writer reclaims it",
            }[info.state]
            self.add("store.writer-lock", True, detail, lockState=info.state)
        else:
            self.add(
                "store.writer-lock",
                False,
                "the writer lock's owner cannot be checked (another host or unreadable)",
                "ragit repair --apply --action release-lock",
                lockState=info.state,
            )
        self.memory_lock()
        states = scan_journals(self.ws)
        bad = [s.transaction_id for s in states if s.classification in ("inconsistent", "invalid")]
        pending = [s.transaction_id for s in states if s.classification not in ("completed",)]
        self.add(
            "store.transactions",
            not bad,
            f"{len(pending)} unfinished journal(s), none inconsistent"
            if not bad
            else f"{len(bad)} inconsistent journal(s): {', '.join(bad[:3])}",
            "ragit repair --apply --action ingest-recover",
        )

    def hooks(self) -> None:
        """Managed hooks must find their interpreter, or git runs them and nothing happens."""
        from ragit.hooks import broken_interpreters, inspect_hooks

        managed = [h for h in inspect_hooks(self.ws) if h.state in ("installed", "outdated")]
        if not managed:
            return  # no managed hooks: nothing to check (hooks are optional)
        broken = broken_interpreters(self.ws)
        if broken:
            first = broken[0]
            self.add(
                "hooks.interpreter",
                False,
                f"{len(broken)} hook(s) run an interpreter that no longer exists "
                f"({first['interpreter'] or 'unreadable'}, {first['name']}): "
                "commits are not ingested",
                "ragit hooks install",
                hooks=broken,
            )
        else:
            self.add("hooks.interpreter", True, f"{len(managed)} managed hook(s) can run")

    def memory_lock(self) -> None:
        from ragit._lock import inspect_flocked

        info = inspect_flocked(self.ws.memory_lock_path)
        owner = info.owner or {}
        detail = {
            "missing": "no writer holds the memory lock",
            "active": f"a memory writer is running (pid {owner.get('pid')}, "
            f"command {owner.get('command')!r}, started {owner.get('startedAt')})",
            "unknown": "the memory lock file cannot be opened",
        }.get(info.state, info.state)
        # A flock cannot go stale (the kernel drops it with its holder): never a failure.
        self.add("memory.lock", True, detail, lockState=info.state, owner=info.owner)

    def embedding(self) -> None:
        if self.cfg is None:
            return
        from ragit.embed import build_embedder, resolve_profile
        from ragit.embed.profile import missing_credential
        from ragit.store.meta import read_meta

        try:
            profile = resolve_profile(self.cfg.embedding)
        except RagitError as exc:
            self.add(
                "embedding.config",
                False,
                exc.message,
                "ragit config set embedding.provider local-placeholder",
            )
            return
        self.add("embedding.config", True, f"{profile.provider} / {profile.model}")
        variable = missing_credential(profile, os.environ)
        self.add(
            "embedding.credentials",
            variable is None,
            "not required"
            if profile.spec.credential_env is None
            else ("present" if variable is None else f"{variable} is not set"),
            f"export {variable}=<key>" if variable else None,
        )
        try:
            meta = read_meta(self.ws)
        except RagitError:
            meta = None
        if meta is not None and meta.chunk_count:
            same = meta.embedding.get("namespaceId") == profile.namespace_id
            self.add(
                "embedding.migration-needed",
                same,
                "the store matches the configured profile"
                if same
                else "the configured embedding profile differs from the store's",
                "ragit migrate embeddings",
            )
        try:
            embedder = build_embedder(
                self.ws.root, self.cfg.embedding, self.cfg.security, mode="dry-run"
            )
        except RagitError as exc:
            self.add("embedding.policy", False, exc.message, exc.recovery)
            return
        try:
            for check in embedder.health():
                self.add(check.name, check.ok, check.detail, check.recovery)
        finally:
            embedder.close()


def _recorded(ws: Workspace) -> bool:
    """Whether the store keeps a record of the chunk ids its writes stored."""
    from ragit.store.meta import REFERENCED_NAME

    return (ws.store_dir / REFERENCED_NAME).is_file()


def _built_by_older_chunker(manifest: Any) -> bool:
    from ragit.ingest.ids import version_id

    return any(d.version_id != version_id(d.document_id, d.blob_sha) for d in manifest.docs)


def run_doctor(ws: Workspace) -> tuple[dict[str, Any], RagitError | None]:
    """All checks; returns the data and, when any check failed, the error to report."""
    doc = _Doctor(ws)
    try:
        doc.structure()
        if ws.is_initialized():
            doc.config()
        doc.run("snapshot.manifests", doc.manifests_check)
        doc.run("snapshot.head", doc.head)
        if doc.cfg is not None and store_backend(doc.cfg.store.backend).shared:
            doc.run("store.connection", doc.shared_store)
        else:
            doc.run("store.meta", doc.store)
    finally:
        doc.close()
    doc.run("store.writer-lock", doc.writer)
    doc.run("embedding.config", doc.embedding)
    doc.run("hooks.interpreter", doc.hooks)
    failed = [c for c in doc.checks if not c.ok]
    data = {"checks": [c.as_dict() for c in doc.checks], "hasFailure": bool(failed)}
    error = None
    if failed:
        fix = _first_fix(failed)
        error = DoctorChecksFailed([c.name for c in failed], fix.recovery, hint=fix.hint)
    return data, error


# A broken store defeats every other recovery (an ingest fails on it and points back here):
# when one of these fails, its recovery comes first. So does a writer lock that cannot be
# proven dead, or a journal that needs recovery: every write, a rebuild included, stops on it.
_STORE_CHECKS = (
    "store.writer-lock",
    "store.transactions",
    "store.connection",
    "store.openable",
    "store.schema",
    "store.pgvector",
    "store.meta",
    "store.verified",
    "store.canonical-files",
    "store.reader",
    "ragit.manifest-consistency",
    "store.keyword-index",
)


def _first_fix(failed: list[Check]) -> Check:
    """The failing check whose recovery ``DOCTOR_CHECKS_FAILED`` names (its command or hint)."""
    # An invalid config comes before everything: every other command refuses to run with it,
    # and until it is valid the other checks ran on the defaults (the zvec store when
    # `store.backend` is postgres), so their recoveries may be for the wrong store.
    for check in failed:
        if check.name in ("ragit.filesystem", "ragit.config") and (check.recovery or check.hint):
            return check
    for check in failed:
        if check.name in _STORE_CHECKS and (check.recovery or check.hint):
            return check
    return failed[0]
