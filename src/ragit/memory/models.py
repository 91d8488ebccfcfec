"""Strict ``--input`` models of the memory, session and artifact commands.

Unknown keys, wrong types and wrong enums are rejected (``INPUT_INVALID``).
Per-field limits keep one request bounded well below the 16 MiB ``--input`` cap:

==========================================  =========================
field                                       limit
==========================================  =========================
goal                                        2,000 characters
title, term, tag (one line)                 300 (tags 64)
summary, rationale, context, decision…      20,000
list items (constraints, actions…)          2,000 each
turn content, tool-trace output/error       200,000
lists                                       200 (turns 5,000, traces 2,000)
ids chosen by the caller                    ``[A-Za-z0-9][A-Za-z0-9._:-]{0,127}``
paths                                       repo-relative (no ``..``, absolute, NUL…)
==========================================  =========================

The field types here are shared by the harness models (:mod:`ragit.harness.models`),
and :func:`validate_input` validates every one of them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, Discriminator, Field, StringConstraints, Tag, model_validator

from ragit.artifacts.ids import ARTIFACT_ID, USER_ID, parse_instant
from ragit.contract.errors import InputInvalid
from ragit.contract.models import InputModel

M = TypeVar("M", bound=InputModel)

GOAL_MAX = 2_000
TITLE_MAX = 300
TEXT_MAX = 20_000
ITEM_MAX = 2_000
BIG_MAX = 200_000
LIST_MAX = 200


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _one_line(value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError("must be a single line")
    return _non_blank(value)


def _instant(value: str) -> str:
    try:
        parse_instant(value, "instant")
    except InputInvalid:
        raise ValueError("must be an ISO-8601 instant with a zone (2026-04-10T09:00:00Z)") from None
    return value


def _repo_path(value: str) -> str:
    from ragit.snapshot.surface import validate_repo_path

    try:
        return validate_repo_path(value, "path")
    except InputInvalid as exc:
        raise ValueError(str(exc.details.get("reason", "invalid path"))) from None


def _repo_dir(value: str) -> str:
    if value.strip() == ".":
        return "."
    return _repo_path(value)


def _artifact_ref(value: str) -> str:
    if ARTIFACT_ID.fullmatch(value) is None:
        raise ValueError("must be an artifact id (art_<session|harness>_<kind>_<16 hex>)")
    return value


def _date_or_instant(value: str) -> str:
    import re
    from datetime import date

    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
        try:
            date.fromisoformat(value)
        except ValueError:
            raise ValueError("must be a calendar date (YYYY-MM-DD)") from None
        return value
    return _instant(value)


Goal = Annotated[
    str, StringConstraints(min_length=1, max_length=GOAL_MAX), AfterValidator(_non_blank)
]
Title = Annotated[
    str, StringConstraints(min_length=1, max_length=TITLE_MAX), AfterValidator(_one_line)
]
Label = Annotated[str, StringConstraints(min_length=1, max_length=64), AfterValidator(_one_line)]
Text = Annotated[str, StringConstraints(max_length=TEXT_MAX)]
RequiredText = Annotated[
    str, StringConstraints(min_length=1, max_length=TEXT_MAX), AfterValidator(_non_blank)
]
Item = Annotated[
    str, StringConstraints(min_length=1, max_length=ITEM_MAX), AfterValidator(_non_blank)
]
BigText = Annotated[str, StringConstraints(max_length=BIG_MAX)]
UserId = Annotated[str, StringConstraints(pattern=USER_ID.pattern.join("^$"))]
Instant = Annotated[str, StringConstraints(max_length=64), AfterValidator(_instant)]
HeadRef = Annotated[str, StringConstraints(min_length=1, max_length=64)]
RepoPath = Annotated[str, StringConstraints(max_length=1024), AfterValidator(_repo_path)]
RepoDir = Annotated[str, StringConstraints(max_length=1024), AfterValidator(_repo_dir)]
ArtifactRef = Annotated[str, StringConstraints(max_length=128), AfterValidator(_artifact_ref)]
ResourceRef = Annotated[str, StringConstraints(min_length=1, max_length=TITLE_MAX)]


# ---------------------------------------------------------------- memory wrap


class DecisionInput(InputModel):
    """A decision object of `memory wrap` (strings are accepted too)."""

    id: UserId | None = None
    title: Title
    summary: RequiredText
    rationale: Text | None = None
    alternatives: list[Item] = Field(default_factory=list, max_length=50)
    consequences: list[Item] = Field(default_factory=list, max_length=50)
    related_files: list[RepoPath] = Field(default_factory=list, max_length=100)


class OpenLoopInput(InputModel):
    """An open loop of `memory wrap`; ``closed`` removes it from the working set."""

    id: UserId | None = None
    title: Title
    status: Literal["open", "blocked", "in_progress", "closed"] = "open"
    next_action: Item
    blocking_conditions: list[Item] = Field(default_factory=list, max_length=50)
    related_files: list[RepoPath] = Field(default_factory=list, max_length=100)
    source_session_id: UserId | None = None


class PromotionCandidate(InputModel):
    """One candidate of `memory promote` (``kind`` or ``type`` names the document type)."""

    kind: Literal["decision", "glossary", "plan"] | None = None
    type: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None
    id: UserId | None = None
    title: Title
    summary: RequiredText
    tags: list[Label] = Field(default_factory=list, max_length=20)
    context: Text | None = None
    decision: Text | None = None
    rationale: Text | None = None
    consequences: list[Item] = Field(default_factory=list, max_length=50)
    alternatives: list[Item] = Field(default_factory=list, max_length=50)
    term: Title | None = None
    definition: Text | None = None
    aliases: list[Label] = Field(default_factory=list, max_length=50)
    milestones: list[Item] = Field(default_factory=list, max_length=100)
    work_breakdown: list[Item] = Field(default_factory=list, max_length=200)
    next_review_at: (
        Annotated[str, StringConstraints(max_length=64), AfterValidator(_date_or_instant)] | None
    ) = None
    related_files: list[RepoPath] = Field(default_factory=list, max_length=100)

    @model_validator(mode="after")
    def _kind_or_type(self) -> PromotionCandidate:
        from ragit.ingest.doctype import normalize_type

        if self.kind is None and self.type is None:
            raise ValueError(
                "kind (decision|glossary|plan) or type (adr|glossary|plan|<docType>) is required"
            )
        if self.type is not None:
            canonical = normalize_type(self.type)
            if canonical is None:
                raise ValueError(
                    "type must be a document type (adr prd srs spec plan ddd glossary pbd)"
                )
            if self.kind is not None and _KIND_TYPES[self.kind] != canonical:
                raise ValueError("kind and type name different document types")
        return self

    def doc_type(self) -> str:
        """The canonical document type of this candidate."""
        from ragit.ingest.doctype import normalize_type

        if self.type is not None:
            canonical = normalize_type(self.type)
            assert canonical is not None
            return canonical
        assert self.kind is not None
        return _KIND_TYPES[self.kind]


_KIND_TYPES = {"decision": "adr", "glossary": "glossary", "plan": "plan"}


def _decision_shape(value: Any) -> str:
    return "$text" if isinstance(value, str) else "$object"


DecisionItem = Annotated[
    Annotated[Item, Tag("$text")] | Annotated[DecisionInput, Tag("$object")],
    Discriminator(_decision_shape),
]


class WrapInput(InputModel):
    """The ``--input`` of `memory wrap` (docs/reference/memory.md)."""

    goal: Goal
    summary: RequiredText
    constraints: list[Item] = Field(default_factory=list, max_length=LIST_MAX)
    decisions: list[DecisionItem] = Field(default_factory=list, max_length=LIST_MAX)
    open_loops: list[OpenLoopInput] = Field(default_factory=list, max_length=LIST_MAX)
    next_actions: list[Item] = Field(default_factory=list, max_length=LIST_MAX)
    promotion_candidates: list[PromotionCandidate] = Field(default_factory=list, max_length=100)
    source_head_sha: HeadRef | None = None
    created_at: Instant | None = None


class PromoteInput(InputModel):
    """The ``--input`` of `memory promote` (a bare array of candidates is accepted too)."""

    promotion_candidates: list[PromotionCandidate] = Field(min_length=1, max_length=100)
    source_session_id: UserId | None = None
    source_head_sha: HeadRef | None = None
    promoted_at: Instant | None = None


# ---------------------------------------------------------------- session / artifacts


class EpisodeInput(InputModel):
    id: UserId
    title: Title | None = None


class TurnInput(InputModel):
    turn_id: UserId
    role: Literal["user", "assistant", "system"]
    content: BigText
    created_at: Instant


class ToolTraceInput(InputModel):
    trace_id: UserId
    title: Title | None = None
    command: Text | None = None
    output: BigText | None = None
    error: BigText | None = None
    created_at: Instant


class SessionMaterializeInput(InputModel):
    """The ``--input`` of `session materialize` (docs/reference/memory.md)."""

    goal: Goal
    episode: EpisodeInput | None = None
    turns: list[TurnInput] = Field(max_length=5_000)
    tool_traces: list[ToolTraceInput] = Field(default_factory=list, max_length=2_000)
    related_paths: list[RepoPath] = Field(default_factory=list, max_length=LIST_MAX)
    source_head_sha: HeadRef | None = None
    created_at: Instant | None = None


class ReviewUpdate(InputModel):
    artifact_id: ArtifactRef
    next_status: Literal["reviewed", "retracted", "superseded", "archived"]
    reason: Item | None = None
    supersedes: list[ArtifactRef] = Field(default_factory=list, max_length=50)


class ArtifactReviewInput(InputModel):
    """The ``--input`` of `artifact review` (docs/reference/memory.md)."""

    updates: list[ReviewUpdate] = Field(min_length=1, max_length=1_000)


def validate_input(model: type[M], payload: Any) -> M:
    """Validate ``payload`` against ``model``, naming the offending field in wire terms.

    Raises:
        InputInvalid: the first violation (field path and reason, never the value).
    """
    from pydantic import ValidationError

    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        field = ""
        for part in first["loc"]:
            if isinstance(part, int):
                field += f"[{part}]"
            elif part.startswith("$") or "[" in part or "(" in part:
                continue
            else:
                field += f".{part}" if field else part
        kind = first["type"]
        reason = "unknown field" if kind == "extra_forbidden" else str(first["msg"])
        raise InputInvalid(field or "input", reason.removeprefix("Value error, ")) from None
