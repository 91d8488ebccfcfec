"""What `ragit ingest` is asked to do: the request (contract §6).

Flags and ``--input`` JSON (:mod:`ragit.ingest.inputs`) both become an
:class:`IngestRequest`; :func:`validate_request` rejects contradictory selectors and unsafe
globs or paths before anything is read. Planning is :mod:`ragit.ingest.plan`, the run
:mod:`ragit.ingest.apply`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ragit.contract.errors import InputInvalid


@dataclass
class IngestRequest:
    """What to ingest; built from flags or from :class:`IngestInput`."""

    all: bool = False
    since: str | None = None
    files: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    at: str | None = None
    scope: str = "durable"
    dry_run: bool = False
    # A hook's ingest: it reads committed blobs only, so uncommitted edits to candidates
    # (a partial commit) are a warning, not INGEST_CANDIDATES_DIRTY.
    committed_only: bool = False

    @property
    def mode(self) -> str:
        if self.all:
            return "full"
        if self.since is not None:
            return "since"
        if self.files or self.paths:
            return "partial"
        return "auto"


def validate_request(req: IngestRequest) -> None:
    """Reject contradictory selectors and unsafe globs/paths.

    Raises:
        InputInvalid: several modes at once, or a glob/path that escapes the repository.
    """
    from ragit.snapshot.surface import validate_repo_glob, validate_repo_path

    chosen = [
        name
        for name, on in (
            ("all", req.all),
            ("since", req.since is not None),
            ("files/paths", bool(req.files or req.paths)),
        )
        if on
    ]
    if len(chosen) > 1:
        raise InputInvalid("mode", f"choose one of --all, --since, --files/--path (got {chosen})")
    for glob in req.files:
        validate_repo_glob(glob, "files")
    for path in req.paths:
        validate_repo_path(path, "paths")
    if req.scope not in ("durable", "all"):
        raise InputInvalid("scope", "must be durable or all")
