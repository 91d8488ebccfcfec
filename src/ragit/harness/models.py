"""Strict ``--input`` models of the harness commands (capture, run, promote).

They use the field types and limits of :mod:`ragit.memory.models`, and are
validated with :func:`ragit.memory.models.validate_input`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StrictInt, StringConstraints

from ragit.artifacts.ids import HarnessKind
from ragit.contract.models import InputModel
from ragit.memory.models import (
    LIST_MAX,
    ArtifactRef,
    Goal,
    Item,
    RepoDir,
    ResourceRef,
    Text,
    Title,
    UserId,
)


class HarnessResource(InputModel):
    """One resource of `harness capture`.

    ``expected`` may carry the deterministic rules (``exitCode``, ``mustInclude``,
    ``mustNotInclude``, ``stderrMustInclude``, ``stderrMustNotInclude``,
    ``jsonSubset``); a case's ``input`` may carry ``args`` (appended to the
    executor argv), ``stdin`` (default: the input as JSON), ``env`` and
    ``timeoutMs``. ``oracleRefs``/``resourceRefs`` name artifact ids or the titles
    of resources captured in the same request.
    """

    kind: HarnessKind
    title: Title
    summary: Text | None = None
    input: dict[str, Any] | None = None
    expected: dict[str, Any] | None = None
    oracle_refs: list[ResourceRef] = Field(default_factory=list, max_length=50)
    evidence_refs: list[Item] = Field(default_factory=list, max_length=50)
    resource_refs: list[ResourceRef] = Field(default_factory=list, max_length=500)


class HarnessCaptureInput(InputModel):
    """The ``--input`` of `harness capture` (docs/reference/harness.md)."""

    goal: Goal
    episode_id: UserId | None = None
    source_session_id: UserId | None = None
    artifact_refs: list[ArtifactRef] = Field(default_factory=list, max_length=LIST_MAX)
    resources: list[HarnessResource] = Field(min_length=1, max_length=500)


EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]
Arg = Annotated[str, StringConstraints(max_length=4_096)]


class ExecutorInput(InputModel):
    kind: Literal["command"]
    argv: list[Arg] = Field(min_length=1, max_length=256)
    cwd: RepoDir | None = None
    env: dict[EnvName, Annotated[str, StringConstraints(max_length=32_768)]] = Field(
        default_factory=dict, max_length=100
    )
    timeout_ms: Annotated[StrictInt, Field(ge=1, le=3_600_000)] | None = None


class HarnessRunInput(InputModel):
    """The ``--input`` of `harness run` (docs/reference/harness.md); v1 runs cases one at a time."""

    suite_ref: Annotated[str, StringConstraints(min_length=1, max_length=1_024)]
    executor: ExecutorInput
    cases: list[ArtifactRef] | None = Field(default=None, max_length=1_000)
    concurrency: Annotated[StrictInt, Field(ge=1, le=1)] | None = None


class HarnessPromoteInput(InputModel):
    """The ``--input`` of `harness promote` (docs/reference/harness.md)."""

    artifact_refs: list[ArtifactRef] = Field(min_length=1, max_length=LIST_MAX)
