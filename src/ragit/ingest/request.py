"""What `ragit ingest` is asked to do: the ``--input`` model and the request (contract §6).

Flags and ``--input`` JSON both become an :class:`IngestRequest`;
:func:`validate_request` rejects contradictory selectors and unsafe globs or paths
before anything is read. Planning is :mod:`ragit.ingest.plan`, the run
:mod:`ragit.ingest.apply`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field, StrictBool

from ragit.contract.errors import InputInvalid
from ragit.contract.models import InputModel


class IngestInput(InputModel):
    """The ``--input`` JSON of `ragit ingest`."""

    all: StrictBool | None = None
    since: str | None = Field(default=None, min_length=1)
    files: str | list[str] | None = None
    paths: list[str] | None = None
    at: str | None = Field(default=None, min_length=1)
    scope: Literal["durable", "all"] | None = None


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


def request_from_input(payload: IngestInput, *, dry_run: bool) -> IngestRequest:
    """Translate the JSON request into an :class:`IngestRequest`."""
    from ragit.snapshot.surface import split_globs

    files: list[str] = []
    if isinstance(payload.files, str):
        files = split_globs(payload.files)
    elif payload.files:
        files = list(payload.files)
    return IngestRequest(
        all=bool(payload.all),
        since=payload.since,
        files=files,
        paths=list(payload.paths or []),
        at=payload.at,
        scope=payload.scope or "durable",
        dry_run=dry_run,
    )


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
