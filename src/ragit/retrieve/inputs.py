"""The ``--input`` JSON of `ragit query` and `ragit context pack` (pydantic models: loaded
only when a request comes as JSON, and by ``describe``'s schema generation)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictBool, StrictInt

from ragit.contract.models import InputModel

Scope = Literal["durable", "session", "harness", "evidence", "all"]


class QueryInput(InputModel):
    """The ``--input`` JSON of `ragit query`."""

    question: str = Field(min_length=1)
    top_k: StrictInt | None = None
    at: str | None = Field(default=None, min_length=1)
    scope: Scope | None = None
    explain: StrictBool | None = None


class ContextPackInput(InputModel):
    """The ``--input`` JSON of `ragit context pack`."""

    goal: str = Field(min_length=1)
    budget: StrictInt | None = None
    at: str | None = Field(default=None, min_length=1)
    scope: Scope | None = None
