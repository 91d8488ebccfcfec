"""Ids, instants and slugs of memory, artifacts, runs and events (docs/reference/memory.md).

Id formats:

============  ==============================================  ============================
id            form                                            derived from
============  ==============================================  ============================
session       ``20260410T090000Z-a1b2c3d4`` (``-2`` on clash)  UTC instant + sha1(goal)
goal          ``goal_`` + 12 hex                              sha1(goal)
artifact      ``art_<session|harness>_<kind>_`` + 16 hex      sha1 of its identity parts
evidence      ``evid_`` + 12 hex                              sha1(artifact id, source)
event         ``evt_`` + 16 hex                               sha256 of type and content
harness run   ``run_`` + 16 hex                               sha256 of suite, start, cases
decision      ``dec_`` + 12 hex (unless given)                sha1(title:summary)
open loop     ``loop_`` + 12 hex (unless given)               sha1(title)
============  ==============================================  ============================

Every id that names a file is built here from a fixed alphabet
(``[A-Za-z0-9_-]``) and matched against a strict pattern before it is joined to
a directory, so no user text reaches a file name. Ids given by a user (decision,
open-loop, turn and trace ids) must match :data:`USER_ID` and never name files.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import datetime, timezone
from typing import Literal, get_args

from ragit.contract.errors import InputInvalid

USER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
SESSION_ID = re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}(?:-[0-9]{1,4})?")
GOAL_ID = re.compile(r"goal_[0-9a-f]{12}")
ARTIFACT_ID = re.compile(r"art_(session|harness)_([A-Za-z]{1,32})_([0-9a-f]{16})")
RUN_ID = re.compile(r"run_[0-9a-f]{16}")
EVENT_ID = re.compile(r"evt_[0-9a-f]{16}")

SESSION_KINDS: tuple[str, ...] = ("feedback", "constraint", "failure", "insight", "openLoop")
# The kinds of harness resources: the type of `harness capture`'s input and the runtime check.
HarnessKind = Literal[
    "case",
    "oracle",
    "failure",
    "fixture",
    "golden",
    "checker",
    "rubric",
    "promptTemplate",
    "trace",
    "envAssumption",
    "suite",
]
HARNESS_KINDS: tuple[str, ...] = get_args(HarnessKind)

_INSTANT = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]"
    r"(?P<time>[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]{1,9})?)?)"
    r"(?P<zone>[Zz]|[+-][0-9]{2}:?[0-9]{2})"
)


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()


def _sha256(*parts: str) -> str:
    raw = "\x00".join(parts).encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()


def content_hash(text: str) -> str:
    """SHA-256 hex of ``text`` (provenance ``contentHash``)."""
    return _sha256(text)


# ---------------------------------------------------------------- instants


def parse_instant(value: str, field: str) -> datetime:
    """Parse an ISO-8601 instant: a date, a time and a zone (``Z`` or ``±hh:mm``).

    Raises:
        InputInvalid: not an instant (a bare date, no zone, out-of-range fields).
    """
    match = _INSTANT.fullmatch(value.strip())
    if match is None:
        raise InputInvalid(
            field, "must be an ISO-8601 instant with a zone, e.g. 2026-04-10T09:00:00Z"
        )
    time = match.group("time").replace(",", ".")
    if "." in time:
        whole, frac = time.split(".", 1)
        time = f"{whole}.{(frac + '000000')[:6]}"
    zone = match.group("zone")
    if zone in ("Z", "z"):
        zone = "+00:00"
    elif ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:]}"
    try:
        parsed = datetime.fromisoformat(f"{match.group('date')}T{time}{zone}")
    except ValueError:
        raise InputInvalid(field, "is not a valid calendar instant") from None
    return parsed.astimezone(timezone.utc)


def format_instant(moment: datetime) -> str:
    """UTC ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z`` (six fraction digits, only when non-zero)."""
    utc = moment.astimezone(timezone.utc)
    base = utc.strftime("%Y-%m-%dT%H:%M:%S")
    if utc.microsecond:
        return f"{base}.{utc.microsecond:06d}Z"
    return base + "Z"


def now_utc() -> datetime:
    """The wall clock in UTC (used for ``recordedAt`` and defaults, never for ranking)."""
    return datetime.now(timezone.utc)


def normalize_instant(value: str | None, field: str) -> str:
    """A given instant normalized to UTC, or now.

    Raises:
        InputInvalid: ``value`` is given and not an instant.
    """
    moment = parse_instant(value, field) if value is not None else now_utc()
    return format_instant(moment)


def instant_seconds(value: str | None) -> float | None:
    """Epoch seconds of a stored (already normalized) instant, None when absent or bad."""
    if not value:
        return None
    try:
        return parse_instant(value, "instant").timestamp()
    except InputInvalid:
        return None


# ---------------------------------------------------------------- ids


def goal_id(goal: str) -> str:
    return "goal_" + _sha1(goal)[:12]


def session_id(created_at: str, goal: str) -> str:
    """``<compact UTC instant>-<8 hex of sha1(goal)>``; ``created_at`` is a normalized instant.

    Only digits of the parsed instant reach the id, so a hostile ``createdAt``
    cannot shape a file name.
    """
    moment = parse_instant(created_at, "createdAt")
    return moment.strftime("%Y%m%dT%H%M%SZ") + "-" + _sha1(goal)[:8]


def decision_id(title: str, summary: str) -> str:
    return "dec_" + _sha1(f"{title}:{summary}")[:12]


def loop_id(title: str) -> str:
    return "loop_" + _sha1(title)[:12]


def artifact_id(scope: str, kind: str, *parts: str) -> str:
    """``art_<scope>_<kind>_<16 hex>``; ``kind`` must be a known kind of ``scope``."""
    kinds = SESSION_KINDS if scope == "session" else HARNESS_KINDS
    if scope not in ("session", "harness") or kind not in kinds:
        raise ValueError(f"unknown artifact kind {scope}/{kind}")
    return f"art_{scope}_{kind}_" + _sha1("\x00".join((scope, kind, *parts)))[:16]


def evidence_id(artifact: str, source: str) -> str:
    return "evid_" + _sha1(f"{artifact}\x00{source}")[:12]


def event_id(event_type: str, scope_key: str, digest: str) -> str:
    return "evt_" + _sha256("event", event_type, scope_key, digest)[:16]


def run_id(suite: str, started_at: str, case_ids: list[str]) -> str:
    return "run_" + _sha256("run", suite, started_at, *case_ids)[:16]


def parse_artifact_id(value: str) -> tuple[str, str] | None:
    """``(scope, kind)`` of a well-formed artifact id, else None."""
    match = ARTIFACT_ID.fullmatch(value)
    if match is None:
        return None
    scope, kind = match.group(1), match.group(2)
    kinds = SESSION_KINDS if scope == "session" else HARNESS_KINDS
    return (scope, kind) if kind in kinds else None


def check_user_id(value: str, field: str) -> str:
    """A caller-chosen id (decision, loop, turn, trace, episode).

    Raises:
        InputInvalid: outside ``[A-Za-z0-9][A-Za-z0-9._:-]{0,127}``.
    """
    if USER_ID.fullmatch(value) is None:
        raise InputInvalid(field, "ids use letters, digits and . _ : - (at most 128)")
    return value


# ---------------------------------------------------------------- slugs

_SLUG_SEP = re.compile(r"[^a-z0-9]+")
SLUG_MAX = 64


def slugify(title: str, fallback_prefix: str = "memory") -> str:
    """An ASCII file-name stem: lower-case letters, digits and single ``-``.

    Non-ASCII letters are transliterated where Unicode allows (``é`` → ``e``) and
    dropped otherwise; a title with nothing left (Korean, symbols) gets
    ``<prefix>-<8 hex>``. Never empty, never ``.`` or ``..``, at most 64 characters.
    """
    ascii_text = (
        unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii").lower()
    )
    slug = _SLUG_SEP.sub("-", ascii_text).strip("-")[:SLUG_MAX].strip("-")
    if not slug:
        slug = f"{fallback_prefix}-{_sha1(title)[:8]}"
    return slug
