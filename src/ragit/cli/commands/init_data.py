"""The shape of `ragit init` data for ``describe`` (pydantic models: loaded when the contract
is generated, never by `init` itself, which builds the data as a plain mapping)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ragit.contract.models import WireModel


class GitignorePlan(WireModel):
    path: str
    policy: Literal["safe"]
    planned_entries: list[str]
    added_entries: list[str]
    existing_entries: list[str]


class ConfigPlan(WireModel):
    path: str
    status: Literal["created", "exists", "planned"]


class InitData(WireModel):
    """Result of `ragit init`."""

    dry_run: bool
    root: str
    git_initialized: bool
    config: ConfigPlan
    gitignore: GitignorePlan
    next_actions: list[str]
    execution_mode: Literal["interactive", "non-interactive"] = "non-interactive"
    repository_mode: Literal["empty", "existing", "monorepo", "docs-heavy"] = "existing"
    strategy: Literal["minimal", "balanced", "full"] = "minimal"
    scan: dict[str, Any] = Field(default_factory=dict)
    coverage: dict[str, Any] = Field(default_factory=dict)
    maturity: dict[str, int] = Field(default_factory=dict)
    knowledge_map: list[dict[str, Any]] = Field(default_factory=list)
    actions: dict[str, Any] = Field(default_factory=dict)
    bootstrap: dict[str, Any] = Field(default_factory=dict)
    # The ingest surface against the documents found (ragit.ops.authority.discover.surface).
    surface: dict[str, Any] = Field(default_factory=dict)
    # Asked at a terminal and answered no: nothing was written.
    declined: bool = False
