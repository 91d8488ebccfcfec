"""The ``--input`` JSON of `ragit ingest` (contract §6), apart from
:mod:`ragit.ingest.request`: building its model imports and sets up pydantic (tens of
milliseconds), which an ingest run from flags — every git hook's — never needs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictBool

from ragit.contract.models import InputModel
from ragit.ingest.request import IngestRequest


class IngestInput(InputModel):
    """The ``--input`` JSON of `ragit ingest`."""

    all: StrictBool | None = None
    since: str | None = Field(default=None, min_length=1)
    files: str | list[str] | None = None
    paths: list[str] | None = None
    at: str | None = Field(default=None, min_length=1)
    scope: Literal["durable", "all"] | None = None


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
