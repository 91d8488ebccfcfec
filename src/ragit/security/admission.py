"""Admission control: may this text be persisted, and how (docs/reference/security.md).

:func:`evaluate` inspects one candidate (an ingest document, a session turn, a
memory write…) and returns an :class:`AdmissionDecision`: ``allow``,
``quarantine`` (store it masked and record it) or ``block``. It is pure; the
ledger, the quarantine file and the mode are the caller's business, with
:func:`required_handling` stating what a caller must do for a decision and
:class:`AdmissionSummary` building the ``admission`` object of command outputs.

Reason codes (canonical order of ``reason_codes``):

* ``high_risk_path`` — the path names a secret store (below);
* ``private_key_block`` — a PEM ``-----BEGIN … PRIVATE KEY-----`` block with a
  real base64 body (a lone header line or a ``...`` placeholder body does not count);
* ``header_or_cookie_dump`` — a line that starts (after quote/list markers) with
  ``Authorization:``, ``Proxy-Authorization:``, ``Cookie:``, ``Set-Cookie:``,
  ``X-Api-Key:`` or ``X-Auth-Token:`` and carries a plausible credential (same
  value rule as masking, so ``Authorization: Bearer <token>`` in a how-to is fine);
* ``env_dump`` — 3+ lines of ``UPPER_CASE=value`` (optionally ``export``-ed) of
  which at least one assigns a secret-named variable (``*TOKEN*``, ``*SECRET*``,
  ``*PASSWORD*``, ``*PASSWD*``, ``*_PWD``, ``*API_KEY*``, ``*ACCESS_KEY*``,
  ``*PRIVATE_KEY*``, ``*CREDENTIAL*``, or ending ``_KEY``) a plausible value. A
  documented list of harmless settings (``PORT=8080``, ``LOG_LEVEL=info``) or of
  placeholders (``OPENAI_API_KEY=<your key>``) is not a dump. This tightens the
  original, which blocked any three such lines;
* ``credential_dump`` — added with ``header_or_cookie_dump`` and with ``env_dump``;
* ``multi_secret_payload`` — masking replaced 3 or more secrets;
* ``secret_pattern`` — masking replaced at least one secret.

Action: any reason but ``secret_pattern`` → ``block``; otherwise a masked secret
→ ``quarantine``; else ``allow``.

High-risk paths (POSIX repo paths, compared case-insensitively):

* file names ``.env`` and ``.env.*``, ``.npmrc``, ``.pypirc``, ``.netrc``,
  ``.git-credentials``, ``kubeconfig``, ``credentials`` and ``credentials.json``,
  ``id_rsa``/``id_dsa``/``id_ecdsa``/``id_ed25519`` (``.pub`` public keys excluded),
  and extensions ``.pem .key .p12 .pfx .jks .keystore .ppk``;
* a directory segment ``secret``, ``secrets``, ``credential`` or ``credentials``, or
  a dot-directory ``.ssh``, ``.aws``, ``.gcloud``, ``.kube``, ``.docker``, or
  ``gcloud`` under ``.config``;
* bare ``ssh``, ``aws`` and ``gcloud`` directory segments flag only files that are
  not markdown: ``docs/aws/overview.md`` or ``docs/ssh/setup.md`` is knowledge
  *about* a vendor, not a credential store, and only markdown reaches admission on
  the ingest path; ``deploy/aws/config`` is still flagged;
* ``config.json`` (listed by the original, after Docker's credential file) only
  under ``.docker``: a repository's ``config.json`` is ordinary configuration
  and its content is still scanned for secrets;
* a file *named* ``secrets.md`` is a document about secrets, not a secret store:
  the segment rule applies to directories only.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Literal

from ragit.contract.errors import InputInvalid
from ragit.security.masking import mask_text
from ragit.security.secret_values import looks_like_secret_value

BLOCKED_SENTINEL = "[BLOCKED BY RAGIT ADMISSION CONTROL]"

Action = Literal["allow", "quarantine", "block"]
AdmissionMode = Literal["report-only", "enforce"]
ADMISSION_MODES: tuple[str, ...] = ("report-only", "enforce")

REASON_CODES: tuple[str, ...] = (
    "high_risk_path",
    "private_key_block",
    "header_or_cookie_dump",
    "env_dump",
    "credential_dump",
    "multi_secret_payload",
    "secret_pattern",
)
_BLOCKING = frozenset(REASON_CODES) - {"secret_pattern"}

SURFACES: tuple[str, ...] = (
    "ingest.document",
    "session.turn",
    "session.toolTrace",
    "memory.wrap",
    "memory.recall",
    "memory.promote",
    "harness.capture",
    "harness.run",
    "harness.pack",
    "harness.promote",
    "event.ledger",
    "retrieval.query",
    "retrieval.hit",
    "query.output",
    "context.pack",
    "timeline.output",
    "log.output",
    "narrative.output",
    "audit",
    "purge",
)

__all__ = [
    "ADMISSION_MODES",
    "BLOCKED_SENTINEL",
    "REASON_CODES",
    "SURFACES",
    "AdmissionDecision",
    "AdmissionItem",
    "AdmissionReport",
    "AdmissionSummary",
    "Handling",
    "evaluate",
    "is_high_risk_path",
    "required_handling",
    "validate_mode",
]


@dataclass(frozen=True)
class AdmissionDecision:
    """The verdict on one candidate.

    ``masked_text`` is the candidate with every secret masked (what report-only
    mode and quarantine store); ``masked_count`` counts the replacements.
    """

    action: Action
    reason_codes: tuple[str, ...]
    masked_text: str
    masked_count: int
    source_ref: str
    surface: str
    path: str | None = None


# ---------------------------------------------------------------- paths

_HIGH_RISK_NAMES = frozenset(
    {
        ".env",
        ".npmrc",
        ".pypirc",
        ".netrc",
        ".git-credentials",
        "kubeconfig",
        "credentials",
        "credentials.json",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
    }
)
_KEY_NAME_PREFIXES = ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
_HIGH_RISK_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk")
_SECRET_DIRS = frozenset({"secret", "secrets", "credential", "credentials"})
_DOT_DIRS = frozenset({".ssh", ".aws", ".gcloud", ".kube", ".docker"})
_VENDOR_DIRS = frozenset({"ssh", "aws", "gcloud"})
_MARKDOWN_SUFFIXES = (".md", ".mdx", ".markdown")


def is_high_risk_path(path: str) -> bool:
    """Whether a repo path names a credential store (rules in the module docstring)."""
    segments = [s for s in path.replace("\\", "/").lower().split("/") if s and s != "."]
    if not segments:
        return False
    name, directories = segments[-1], segments[:-1]
    if name in _HIGH_RISK_NAMES or name.startswith(".env."):
        return True
    if name.startswith(_KEY_NAME_PREFIXES) and not name.endswith(".pub"):
        return True
    if name.endswith(_HIGH_RISK_SUFFIXES):
        return True
    if name == "config.json" and ".docker" in directories:
        return True
    for index, segment in enumerate(directories):
        if segment in _SECRET_DIRS or segment in _DOT_DIRS:
            return True
        if segment == "gcloud" and index > 0 and directories[index - 1] == ".config":
            return True
    is_markdown = name.endswith(_MARKDOWN_SUFFIXES)
    return not is_markdown and any(segment in _VENDOR_DIRS for segment in directories)


# ---------------------------------------------------------------- content

_HEADER_LINE = re.compile(
    r"(?im)^[ \t>*+-]*(?P<name>authorization|proxy-authorization|cookie|set-cookie|"
    r"x-api-key|x-auth-token)[ \t]*:[ \t]*(?P<value>[^\n]*)$"
)
_AUTH_VALUE = re.compile(r"(?:(?i:bearer|basic|token|bot|digest)[ \t]+)?(?P<cred>\S+)")
_COOKIE_PAIR = re.compile(r"[A-Za-z0-9_.-]+=([^;\s]+)")
_ENV_LINE = re.compile(
    r"(?m)^[ \t]*(?:export[ \t]+)?(?P<name>[A-Z][A-Z0-9_]*)=(?P<value>[\"']?[^\s\"']*[\"']?)"
)
_SECRET_ENV_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|_PWD\b|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|_KEY$"
)


def _has_header_dump(text: str) -> bool:
    for match in _HEADER_LINE.finditer(text):
        name = match.group("name").lower()
        value = match.group("value").strip()
        if name in ("cookie", "set-cookie"):
            if any(looks_like_secret_value(p.group(1)) for p in _COOKIE_PAIR.finditer(value)):
                return True
            continue
        cred = _AUTH_VALUE.match(value)
        if cred is not None and looks_like_secret_value(cred.group("cred").strip("\"'")):
            return True
    return False


def _has_env_dump(text: str) -> bool:
    secret_assignment = False
    for lines, match in enumerate(_ENV_LINE.finditer(text), start=1):
        value = match.group("value").strip("\"'")
        if _SECRET_ENV_NAME.search(match.group("name")) and looks_like_secret_value(
            value, password="PASS" in match.group("name") or "PWD" in match.group("name")
        ):
            secret_assignment = True
        if lines >= 3 and secret_assignment:
            return True
    return False


def evaluate(
    text: str, *, source_ref: str, surface: str, path: str | None = None
) -> AdmissionDecision:
    """Decide whether ``text`` may be persisted.

    ``source_ref`` identifies the candidate in reports (a repo path, ``turns[3]``);
    ``surface`` is one of :data:`SURFACES`; ``path`` (repo-relative) enables the
    high-risk path rule.

    Raises:
        ValueError: ``surface`` is not a known surface (a programming error).
    """
    if surface not in SURFACES:
        raise ValueError(f"unknown admission surface {surface!r}")
    masked = mask_text(text)
    reasons: set[str] = set()
    if path is not None and is_high_risk_path(path):
        reasons.add("high_risk_path")
    # Masking replaces exactly the PEM blocks with a real body: reuse its verdict.
    if "private_key" in masked.labels:
        reasons.add("private_key_block")
    if _has_header_dump(text):
        reasons.update(("header_or_cookie_dump", "credential_dump"))
    if _has_env_dump(text):
        reasons.update(("env_dump", "credential_dump"))
    if masked.masked_count >= 3:
        reasons.add("multi_secret_payload")
    if masked.masked_count >= 1:
        reasons.add("secret_pattern")
    action: Action
    if reasons & _BLOCKING:
        action = "block"
    elif masked.masked_count:
        action = "quarantine"
    else:
        action = "allow"
    return AdmissionDecision(
        action=action,
        reason_codes=tuple(code for code in REASON_CODES if code in reasons),
        masked_text=masked.text,
        masked_count=masked.masked_count,
        source_ref=source_ref,
        surface=surface,
        path=path,
    )


# ---------------------------------------------------------------- modes


class Handling(str, enum.Enum):
    """What a caller must do with a candidate after admission."""

    STORE = "store"
    """Allowed: store the text (masked text equals the input)."""
    STORE_MASKED = "store-masked"
    """Store ``masked_text`` and record the finding (quarantine; block in report-only)."""
    STORE_SENTINEL = "store-sentinel"
    """Enforce, non-ingest surface: store :data:`BLOCKED_SENTINEL` instead of the text."""
    SKIP = "skip"
    """Enforce, implicit ingest candidate: leave the document out of the snapshot."""
    FAIL = "fail"
    """Enforce, explicit ingest candidate: fail the whole apply."""


def validate_mode(mode: str) -> AdmissionMode:
    """Return ``mode`` if it is an admission mode.

    Raises:
        InputInvalid: ``mode`` is not ``report-only`` or ``enforce``
            (field ``security.admission_mode``).
    """
    if mode == "report-only":
        return "report-only"
    if mode == "enforce":
        return "enforce"
    raise InputInvalid("security.admission_mode", "must be 'report-only' or 'enforce'")


def required_handling(
    decision: AdmissionDecision, *, mode: str, explicit: bool = False
) -> Handling:
    """What the caller must do with ``decision`` under ``mode``.

    ``explicit`` says whether an ingest candidate was named explicitly
    (``--files``, ``--path``, JSON ``paths``); it matters only for the
    ``ingest.document`` surface. Quarantined text is always stored masked; a block
    is stored masked in ``report-only`` mode, and in ``enforce`` mode it is
    skipped (implicit ingest), fails the apply (explicit ingest) or is replaced by
    the sentinel (every other surface).

    Raises:
        InputInvalid: ``mode`` is not an admission mode.
    """
    checked = validate_mode(mode)
    if decision.action == "allow":
        return Handling.STORE
    if decision.action == "quarantine" or checked == "report-only":
        return Handling.STORE_MASKED
    if decision.surface != "ingest.document":
        return Handling.STORE_SENTINEL
    return Handling.FAIL if explicit else Handling.SKIP


# ---------------------------------------------------------------- summary


# Plain dataclasses, not wire models: every ingest reports admission, and a pydantic model
# here would import and set up pydantic for an ingest that needs it nowhere else.
@dataclass(frozen=True)
class AdmissionItem:
    """One ``admission.items[]`` entry."""

    source_ref: str
    surface: str
    action: str
    reason_codes: list[str]
    operation: str

    def dump(self) -> dict[str, object]:
        """The wire form (camelCase keys)."""
        return {
            "sourceRef": self.source_ref,
            "surface": self.surface,
            "action": self.action,
            "reasonCodes": list(self.reason_codes),
            "operation": self.operation,
        }


@dataclass(frozen=True)
class AdmissionReport:
    """The ``admission`` object of ingest, session materialize and harness run."""

    mode: str
    allowed: int = 0
    quarantined: int = 0
    blocked: int = 0
    items: list[AdmissionItem] = field(default_factory=list)

    def dump(self) -> dict[str, object]:
        """The wire form ``{mode, allowed, quarantined, blocked, items}``."""
        return {
            "mode": self.mode,
            "allowed": self.allowed,
            "quarantined": self.quarantined,
            "blocked": self.blocked,
            "items": [item.dump() for item in self.items],
        }


@dataclass
class AdmissionSummary:
    """Accumulates decisions into an :class:`AdmissionReport`.

    Allowed candidates are counted but not listed (an ``ingest --all`` of 10,000
    clean documents would otherwise print 10,000 items); quarantined and blocked
    ones are listed, sorted by ``(sourceRef, surface, operation)`` so the output does
    not depend on processing order.
    """

    mode: str
    _counts: dict[str, int] = field(
        init=False, default_factory=lambda: {"allow": 0, "quarantine": 0, "block": 0}
    )
    _items: list[AdmissionItem] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        validate_mode(self.mode)

    def record(self, decision: AdmissionDecision, *, operation: str) -> None:
        """Count ``decision``; list it when it is not ``allow``."""
        self._counts[decision.action] += 1
        if decision.action != "allow":
            self._items.append(
                AdmissionItem(
                    source_ref=decision.source_ref,
                    surface=decision.surface,
                    action=decision.action,
                    reason_codes=list(decision.reason_codes),
                    operation=operation,
                )
            )

    def report(self) -> AdmissionReport:
        """The summary so far."""
        items = sorted(self._items, key=lambda i: (i.source_ref, i.surface, i.operation))
        return AdmissionReport(
            mode=self.mode,
            allowed=self._counts["allow"],
            quarantined=self._counts["quarantine"],
            blocked=self._counts["block"],
            items=items,
        )

    def dump(self) -> dict[str, object]:
        """The wire form ``{mode, allowed, quarantined, blocked, items}``."""
        return self.report().dump()
