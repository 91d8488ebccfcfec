"""Admission control: reason codes, actions, high-risk paths, modes and the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragit.contract.errors import InputInvalid
from ragit.security.admission import (
    BLOCKED_SENTINEL,
    REASON_CODES,
    AdmissionDecision,
    AdmissionSummary,
    Handling,
    evaluate,
    is_high_risk_path,
    required_handling,
)

SECRETS_FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "secrets"


def _fixture_head_files() -> tuple[dict[str, Any], dict[str, str]]:
    spec = json.loads((SECRETS_FIXTURE / "fixture.json").read_text(encoding="utf-8"))
    files: dict[str, str] = {}
    for step in spec["steps"]:
        if step["op"] == "writeTree":
            root = SECRETS_FIXTURE / "files" / step["source"]
            for path in sorted(p for p in root.rglob("*") if p.is_file()):
                files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
    return spec, files


SPEC, FILES = _fixture_head_files()


def _doc(text: str, path: str | None = "docs/notes/x.md") -> AdmissionDecision:
    return evaluate(text, source_ref=path or "inline", surface="ingest.document", path=path)


@pytest.mark.parametrize(("path", "expected"), sorted(SPEC["expect"]["admission"].items()))
def test_secrets_fixture_documents_get_their_intended_action(path: str, expected: str) -> None:
    """Contract-mandated (docs/reference/security.md actions), as pinned by the secrets fixture."""
    assert _doc(FILES[path], path).action == expected


@pytest.mark.parametrize("secret", SPEC["plantedSecrets"], ids=lambda s: f"{s['kind']}@{s['path']}")
def test_no_planted_secret_survives_in_the_masked_text(secret: dict[str, str]) -> None:
    """Contract-mandated (contract §7: content is stored masked)."""
    decision = _doc(FILES[secret["path"]], secret["path"])
    assert secret["value"] not in decision.masked_text


def test_reason_codes_for_the_fixture_block_kinds() -> None:
    """Contract-mandated (docs/reference/security.md reason codes)."""
    assert _doc(FILES["docs/runbooks/key-rotation.md"]).reason_codes == (
        "private_key_block",
        "secret_pattern",
    )
    assert _doc(FILES["docs/incidents/2026-01-07-auth-outage.md"]).reason_codes == (
        "header_or_cookie_dump",
        "credential_dump",
        "secret_pattern",
    )
    assert _doc(FILES["docs/incidents/2026-01-12-config-leak.md"]).reason_codes[:2] == (
        "env_dump",
        "credential_dump",
    )
    assert "multi_secret_payload" in _doc(FILES["docs/notes/integrations-overview.md"]).reason_codes
    break_glass = _doc(FILES["docs/secrets/break-glass.md"], "docs/secrets/break-glass.md")
    assert break_glass.reason_codes[0] == "high_risk_path"


def test_clean_text_is_allowed_unchanged() -> None:
    """Contract-mandated (docs/reference/security.md: no finding → allow)."""
    text = "# 운영 가이드\n\nThe token budget is 1200 words. 비밀번호 정책은 엄격합니다.\n"
    decision = _doc(text)
    assert decision.action == "allow"
    assert decision.reason_codes == ()
    assert decision.masked_text == text
    assert decision.masked_count == 0


def test_one_secret_quarantines_and_masks() -> None:
    """Contract-mandated (docs/reference/security.md: a masked secret → quarantine)."""
    decision = _doc("Use api_key: FAKEapiKey000000001 for staging.")
    assert decision.action == "quarantine"
    assert decision.reason_codes == ("secret_pattern",)
    assert decision.masked_count == 1
    assert "FAKEapiKey000000001" not in decision.masked_text


def test_three_secrets_block_as_a_multi_secret_payload() -> None:
    """Contract-mandated (docs/reference/security.md: ≥3 masked secrets → block)."""
    text = (
        "a sk-FAKE00000000000000000000001 b ghp_FAKE0000000000000000000000000002 "
        "c AKIAFAKE000000000TST"
    )
    decision = _doc(text)
    assert decision.action == "block"
    assert decision.reason_codes == ("multi_secret_payload", "secret_pattern")


def test_header_line_with_a_placeholder_is_not_a_dump() -> None:
    """Implementation choice: a how-to showing the header shape is knowledge, not a leak."""
    text = "```http\nGET /v1/items\nAuthorization: Bearer <token>\nCookie: session=<id>\n```\n"
    assert _doc(text).action == "allow"


def test_cookie_header_with_a_session_value_is_a_dump() -> None:
    """Contract-mandated (docs/reference/security.md header_or_cookie_dump)."""
    decision = _doc("```\nSet-Cookie: sid=FAKEsession000001; HttpOnly\n```\n")
    assert decision.action == "block"
    assert "header_or_cookie_dump" in decision.reason_codes


def test_a_list_of_harmless_settings_is_not_an_env_dump() -> None:
    """Implementation choice: tightens docs/reference/security.md (which blocked any 3 UPPER=value
    lines)."""
    text = "```\nPORT=8080\nLOG_LEVEL=info\nRAGIT_DEBUG=1\nOPENAI_API_KEY=<your key>\n```\n"
    assert _doc(text).action == "allow"


def test_three_env_lines_with_a_real_looking_secret_are_an_env_dump() -> None:
    """Contract-mandated (docs/reference/security.md env_dump), with the documented secret-name
    condition."""
    text = "export PORT=8080\nexport LOG_LEVEL=info\nexport DB_PASSWORD=FAKEpassw0rd01\n"
    decision = _doc(text)
    assert decision.action == "block"
    assert decision.reason_codes[:2] == ("env_dump", "credential_dump")


def test_a_private_key_header_alone_is_not_a_key_block() -> None:
    """Implementation choice: documentation may name the header line."""
    text = "Keys start with `-----BEGIN RSA PRIVATE KEY-----` and must never be committed."
    assert _doc(text).action == "allow"


def test_reason_codes_follow_the_canonical_order() -> None:
    """Implementation choice: stable output order for reason codes."""
    text = (
        FILES["docs/runbooks/key-rotation.md"]
        + "\nexport A=1\nexport B=2\nexport TOKEN=FAKE0000001\n"
    )
    codes = _doc(text, ".env.production").reason_codes
    assert list(codes) == [code for code in REASON_CODES if code in codes]
    assert codes[0] == "high_risk_path"


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        ".env.local",
        "deploy/.env.production",
        ".npmrc",
        "tools/.pypirc",
        ".netrc",
        ".git-credentials",
        "ops/kubeconfig",
        "ops/credentials",
        "ops/credentials.json",
        "home/.ssh/id_rsa",
        "keys/id_ed25519",
        "certs/server.pem",
        "certs/server.KEY",
        "certs/client.p12",
        "certs/client.pfx",
        "config/secrets/prod.md",
        "docs/credentials/break-glass.md",
        "docs/secret/x.md",
        ".aws/config",
        ".ssh/config",
        ".config/gcloud/application_default_credentials.json",
        ".docker/config.json",
        "deploy/aws/config",
        "infra/gcloud/service-account.json",
    ],
)
def test_high_risk_paths_are_flagged(path: str) -> None:
    """Contract-mandated (docs/reference/security.md high-risk paths)."""
    assert is_high_risk_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "docs/aws/overview.md",
        "docs/ssh/setup.md",
        "docs/gcloud/deploy.mdx",
        "docs/security/secrets.md",
        "docs/security/credentials.md",
        "config.json",
        "web/config.json",
        "keys/id_rsa.pub",
        "docs/keynote-notes.md",
        "docs/environment.md",
        "docs/env/overview.md",
        "README.md",
    ],
)
def test_knowledge_about_vendors_and_secrets_is_not_a_high_risk_path(path: str) -> None:
    """Implementation choice: bare vendor dirs flag non-markdown only; names are not dirs."""
    assert not is_high_risk_path(path)


def test_high_risk_path_blocks_clean_text() -> None:
    """Contract-mandated (docs/reference/security.md: high_risk_path → block)."""
    decision = _doc("just notes", "config/secrets/notes.md")
    assert decision.action == "block"
    assert decision.reason_codes == ("high_risk_path",)


def test_unknown_surface_is_a_programming_error() -> None:
    """Implementation choice: surfaces are a closed list (docs/reference/security.md)."""
    with pytest.raises(ValueError, match="surface"):
        evaluate("x", source_ref="x", surface="ingest.doc")


@pytest.mark.parametrize(
    ("action_text", "surface", "mode", "explicit", "expected"),
    [
        ("clean", "ingest.document", "enforce", False, Handling.STORE),
        ("quarantine", "ingest.document", "enforce", False, Handling.STORE_MASKED),
        ("quarantine", "ingest.document", "enforce", True, Handling.STORE_MASKED),
        ("block", "ingest.document", "report-only", False, Handling.STORE_MASKED),
        ("block", "ingest.document", "report-only", True, Handling.STORE_MASKED),
        ("block", "ingest.document", "enforce", False, Handling.SKIP),
        ("block", "ingest.document", "enforce", True, Handling.FAIL),
        ("block", "session.turn", "enforce", False, Handling.STORE_SENTINEL),
        ("block", "memory.wrap", "enforce", True, Handling.STORE_SENTINEL),
        ("block", "memory.wrap", "report-only", False, Handling.STORE_MASKED),
    ],
)
def test_required_handling_per_mode_and_selector(
    action_text: str, surface: str, mode: str, explicit: bool, expected: Handling
) -> None:
    """Contract-mandated (docs/reference/security.md modes; contract §6 explicit selectors never
    bypass)."""
    texts = {
        "clean": "nothing secret",
        "quarantine": "api_key: FAKEapiKey000000001",
        "block": FILES["docs/runbooks/key-rotation.md"],
    }
    decision = evaluate(texts[action_text], source_ref="x", surface=surface)
    assert decision.action == ("allow" if action_text == "clean" else action_text)
    assert required_handling(decision, mode=mode, explicit=explicit) is expected


def test_unknown_mode_is_invalid_input() -> None:
    """Contract-mandated (contract §3: invalid configuration values are INPUT_INVALID)."""
    decision = _doc("x")
    with pytest.raises(InputInvalid) as caught:
        required_handling(decision, mode="strict")
    assert caught.value.code == "INPUT_INVALID"
    assert caught.value.details["field"] == "security.admission_mode"
    with pytest.raises(InputInvalid):
        AdmissionSummary(mode="warn")


def test_blocked_sentinel_is_the_documented_string() -> None:
    """Contract-mandated (docs/reference/security.md sentinel)."""
    assert BLOCKED_SENTINEL == "[BLOCKED BY RAGIT ADMISSION CONTROL]"


def test_summary_counts_everything_and_lists_findings_in_path_order() -> None:
    """Contract-mandated shape (docs/reference/security.md); listing only findings is an
    implementation choice."""
    summary = AdmissionSummary(mode="enforce")
    for path in ("docs/z.md", "docs/runbooks/key-rotation.md", "docs/a.md"):
        text = FILES.get(path, "api_key: FAKEapiKey000000001" if path == "docs/z.md" else "ok")
        summary.record(_doc(text, path), operation="ingest")
    assert summary.dump() == {
        "mode": "enforce",
        "allowed": 1,
        "quarantined": 1,
        "blocked": 1,
        "items": [
            {
                "sourceRef": "docs/runbooks/key-rotation.md",
                "surface": "ingest.document",
                "action": "block",
                "reasonCodes": ["private_key_block", "secret_pattern"],
                "operation": "ingest",
            },
            {
                "sourceRef": "docs/z.md",
                "surface": "ingest.document",
                "action": "quarantine",
                "reasonCodes": ["secret_pattern"],
                "operation": "ingest",
            },
        ],
    }


def test_empty_summary_reports_the_mode_and_zero_counts() -> None:
    """Contract-mandated shape (contract §6 admission {mode, allowed, ..., items})."""
    assert AdmissionSummary(mode="report-only").dump() == {
        "mode": "report-only",
        "allowed": 0,
        "quarantined": 0,
        "blocked": 0,
        "items": [],
    }
