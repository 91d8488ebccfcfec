"""Identifiers, instants and slugs of the memory layer."""

from __future__ import annotations

import re

import pytest

from ragit.artifacts.ids import (
    SESSION_ID,
    artifact_id,
    check_user_id,
    format_instant,
    normalize_instant,
    parse_artifact_id,
    parse_instant,
    session_id,
    slugify,
)
from ragit.contract.errors import InputInvalid


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-04-10T09:00:00Z", "2026-04-10T09:00:00Z"),
        ("2026-04-10T11:00:00+02:00", "2026-04-10T09:00:00Z"),
        ("2026-04-10T09:00:00.5Z", "2026-04-10T09:00:00.500000Z"),
        ("2026-04-10t09:00:00z", "2026-04-10T09:00:00Z"),
        ("2026-04-10T04:00:00-0500", "2026-04-10T09:00:00Z"),
    ],
)
def test_instants_are_normalized_to_utc(value: str, expected: str) -> None:
    """Contract-mandated: createdAt is an ISO-8601 instant; stored in UTC."""
    assert normalize_instant(value, "createdAt") == expected


@pytest.mark.parametrize(
    "value",
    [
        "2026-04-10",
        "2026-04-10T09:00:00",
        "2026-13-10T09:00:00Z",
        "2026-04-10T25:00:00Z",
        "yesterday",
        "2026-04-10T09:00:00Z/../../x",
        "../../etc/passwd",
        "2026-04-10T09:00:00Z\x00",
    ],
)
def test_non_instants_are_rejected(value: str) -> None:
    """Contract-mandated: createdAt must be an ISO-8601 instant (with a zone)."""
    with pytest.raises(InputInvalid) as caught:
        parse_instant(value, "createdAt")
    assert caught.value.details["field"] == "createdAt"


def test_session_id_uses_only_digits_of_the_instant_and_a_goal_hash() -> None:
    """Contract-mandated: createdAt never reaches a file name unsanitized."""
    sid = session_id("2026-04-10T11:00:00+02:00", "finish ../../auth")
    assert sid.startswith("20260410T090000Z-")
    assert SESSION_ID.fullmatch(sid)
    assert "/" not in sid and ".." not in sid


def test_format_instant_has_a_fixed_width_fraction() -> None:
    """Implementation choice: six fraction digits keep recordedAt strings comparable."""
    moment = parse_instant("2026-04-10T09:00:00.1Z", "x")
    assert format_instant(moment) == "2026-04-10T09:00:00.100000Z"


@pytest.mark.parametrize(
    ("title", "pattern"),
    [
        ("Use JWT for Auth!", r"use-jwt-for-auth"),
        ("../../etc/passwd", r"etc-passwd"),
        ("Café déjà vu", r"cafe-deja-vu"),
        ("인증 흐름", r"memory-[0-9a-f]{8}"),
        ("...", r"memory-[0-9a-f]{8}"),
        ("/abs/path\\win", r"abs-path-win"),
        ("x" * 300, r"x{64}"),
    ],
)
def test_slugs_are_ascii_and_never_traverse(title: str, pattern: str) -> None:
    """Contract-mandated: promoted file names are safe ASCII slugs."""
    slug = slugify(title)
    assert re.fullmatch(pattern, slug)
    assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", slug)
    assert slug not in (".", "..")


def test_artifact_ids_parse_back_to_scope_and_kind() -> None:
    """Implementation choice: an artifact's file is derived from its id alone."""
    aid = artifact_id("harness", "promptTemplate", "goal", "x")
    assert parse_artifact_id(aid) == ("harness", "promptTemplate")
    assert parse_artifact_id("art_session_suite_0123456789abcdef") is None
    assert parse_artifact_id("art_session_insight_../../../etc") is None
    with pytest.raises(ValueError, match="unknown artifact kind"):
        artifact_id("session", "suite", "x")


@pytest.mark.parametrize("value", ["../x", "a/b", "", "a b", "x" * 129, "-leading"])
def test_user_ids_reject_paths_and_spaces(value: str) -> None:
    """Implementation choice: caller-chosen ids are plain tokens."""
    with pytest.raises(InputInvalid):
        check_user_id(value, "id")
