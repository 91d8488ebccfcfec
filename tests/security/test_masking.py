"""Secret masking: what is masked, what prose survives, idempotency, JSON paths."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.security.masking import RedactionSummary, mask_json, mask_text
from ragit.security.secret_values import MASK, looks_like_secret_value

# (id, text, secret that must disappear, expected label). All values are fake.
POSITIVES: list[tuple[str, str, str, str]] = [
    (
        "openai-legacy",
        "Use sk-FAKE0legacy0key000000000000000001 for the batch job.",
        "sk-FAKE0legacy0key000000000000000001",
        "openai_key",
    ),
    (
        "openai-project",
        "key: sk-proj-FAKE_project-key-0000000000000000000000002 here",
        "sk-proj-FAKE_project-key-0000000000000000000000002",
        "openai_key",
    ),
    (
        "openai-svcacct",
        "sk-svcacct-FAKE0000000000000000000000003",
        "sk-svcacct-FAKE0000000000000000000000003",
        "openai_key",
    ),
    (
        "anthropic-style",
        "sk-ant-api03-FAKE000000000000000000000004",
        "sk-ant-api03-FAKE000000000000000000000004",
        "openai_key",
    ),
    (
        "github-classic",
        "token ghp_FAKEclassic000000000000000000000005 in CI",
        "ghp_FAKEclassic000000000000000000000005",
        "github_pat",
    ),
    (
        "github-fine-grained",
        "github_pat_11FAKE0006_FAKEfineGrainedToken0000000000006",
        "github_pat_11FAKE0006_FAKEfineGrainedToken0000000000006",
        "github_pat",
    ),
    (
        "github-oauth",
        "gho_FAKEoauth00000000000000000000000007",
        "gho_FAKEoauth00000000000000000000000007",
        "github_token",
    ),
    (
        "github-server",
        "ghs_FAKEserver0000000000000000000000008",
        "ghs_FAKEserver0000000000000000000000008",
        "github_token",
    ),
    (
        "github-user",
        "ghu_FAKEuser00000000000000000000000009",
        "ghu_FAKEuser00000000000000000000000009",
        "github_token",
    ),
    (
        "github-refresh",
        "ghr_FAKErefresh000000000000000000000010",
        "ghr_FAKErefresh000000000000000000000010",
        "github_token",
    ),
    (
        "gitlab",
        "glpat-FAKE00000000000000011",
        "glpat-FAKE00000000000000011",
        "gitlab_pat",
    ),
    (
        "slack-bot",
        "xoxb-1000000000012-2000000000012-FAKEbot00012",
        "xoxb-1000000000012-2000000000012-FAKEbot00012",
        "slack_token",
    ),
    (
        "slack-user",
        "xoxp-1000000000013-2000000000013-3000000000013-f1c7",
        "xoxp-1000000000013-2000000000013-3000000000013-f1c7",
        "slack_token",
    ),
    ("slack-app", "xoxa-2-FAKE0000000014", "xoxa-2-FAKE0000000014", "slack_token"),
    (
        "slack-webhook",
        "POST to https://hooks.slack.com/services/T00000015/B00000015/FAKEFAKEFAKE0015 now",
        "T00000015/B00000015/FAKEFAKEFAKE0015",
        "slack_webhook",
    ),
    ("aws-access-key", "id AKIAFAKE000000000TST ok", "AKIAFAKE000000000TST", "aws_access_key"),
    ("aws-session-key", "ASIAFAKE000000000TST", "ASIAFAKE000000000TST", "aws_access_key"),
    (
        "aws-secret-kv",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY0000",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY0000",
        "aws_secret_key",
    ),
    (
        "aws-secret-json",
        '{"SecretAccessKey": "FAKEsecretAccessKey0000000000000000000000"}',
        "FAKEsecretAccessKey0000000000000000000000",
        "aws_secret_key",
    ),
    (
        "google-api-key",
        "AIza" + "FAKE_" + "0" * 30,
        "AIza" + "FAKE_" + "0" * 30,
        "google_api_key",
    ),
    ("npm", "npm_FAKE" + "0" * 32, "npm_FAKE" + "0" * 32, "npm_token"),
    (
        "pypi",
        "pypi-AgENdGVzdC5weXBpLm9yZwFAKE" + "0" * 40,
        "pypi-AgENdGVzdC5weXBpLm9yZwFAKE" + "0" * 40,
        "pypi_token",
    ),
    (
        "huggingface",
        "hf_FAKEfakeFAKEfakeFAKEfakeFAKEfake",
        "hf_FAKEfakeFAKEfakeFAKEfakeFAKEfake",
        "huggingface",
    ),
    ("stripe", "sk_live_FAKE0000000000000017", "sk_live_FAKE0000000000000017", "stripe_key"),
    (
        "jwt",
        "cookie value eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFLTAwMTgifQ.FAKEsignature0018 end",
        "eyJzdWIiOiJGQUtFLTAwMTgifQ",
        "jwt",
    ),
    (
        "kv-api-key-yaml",
        "payments:\n  api_key: fixture_FAKE_api_key_0019\n",
        "fixture_FAKE_api_key_0019",
        "kv_secret",
    ),
    (
        "kv-env",
        "OPENAI_API_KEY=FAKEopenaiKeyValue0020",
        "FAKEopenaiKeyValue0020",
        "kv_secret",
    ),
    (
        "kv-json-camel",
        '{"accessToken": "FAKEaccessToken0021"}',
        "FAKEaccessToken0021",
        "kv_secret",
    ),
    (
        "kv-header-style",
        "x-api-key: FAKEapiKey00000022",
        "FAKEapiKey00000022",
        "kv_secret",
    ),
    (
        "kv-client-secret",
        "client_secret='FAKEclientSecret0023'",
        "FAKEclientSecret0023",
        "kv_secret",
    ),
    (
        "kv-prose-api-key",
        "The API key: FAKEproseKey0024 was rotated.",
        "FAKEproseKey0024",
        "kv_secret",
    ),
    (
        "kv-signing-key",
        "LEDGER_SIGNING_KEY=fixture-FAKE-signing-key-0025",
        "fixture-FAKE-signing-key-0025",
        "kv_secret",
    ),
    (
        "kv-webhook-secret",
        "STRIPE_WEBHOOK_SECRET=whsec_FAKE0026",
        "whsec_FAKE0026",
        "kv_secret",
    ),
    (
        "kv-walrus",
        "token := FAKEwalrusToken0027",
        "FAKEwalrusToken0027",
        "kv_secret",
    ),
    ("password-eq", "password=FAKEpassw0rd28", "FAKEpassw0rd28", "password"),
    ("password-symbol", "db_password: 'Fake!pass'", "Fake!pass", "password"),
    ("passwd", "passwd: hunter2029", "hunter2029", "password"),
    ("pwd", "DB_PWD=FAKEpwd0030", "FAKEpwd0030", "password"),
    ("password-korean", "비밀번호: FAKE암호0031", "FAKE암호0031", "password"),
    (
        "url-credentials",
        "DATABASE_URL=postgres://ledger:FAKEdbPass0032@db.example.invalid:5432/ledger",
        "FAKEdbPass0032",
        "url_credentials",
    ),
    (
        "bearer-header",
        "Authorization: Bearer FAKEbearer0033.abcdefghijklmnop",
        "FAKEbearer0033.abcdefghijklmnop",
        "bearer_token",
    ),
    (
        "basic-header",
        "Authorization: Basic RkFLRTpGQUtFMDAzNA==",
        "RkFLRTpGQUtFMDAzNA==",
        "bearer_token",
    ),
    (
        "bearer-in-curl",
        'curl -H "Authorization: bearer FAKEcurl00000035" https://api.example.invalid',
        "FAKEcurl00000035",
        "bearer_token",
    ),
    (
        "cookie-header",
        "Cookie: session=FAKEsession0036; theme=dark",
        "FAKEsession0036",
        "cookie",
    ),
    (
        "set-cookie-header",
        "> Set-Cookie: sid=FAKEsid00000037; HttpOnly",
        "FAKEsid00000037",
        "cookie",
    ),
    (
        "korean-prose-with-key",
        "배포 전에 키를 교체했습니다. 예전 키는 sk-FAKEkorean00000000000000038 였습니다.",
        "sk-FAKEkorean00000000000000038",
        "openai_key",
    ),
]

PEM_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "UkFHSVQgRklYVFVSRSAtLSBUSElTIElTIE5PVCBBIFJFQUwgUlNBIFBSSVZBVEUg\n"
    "S0VZIC0tIFJBR0lUIEZJWFRVUkUgLS0gVEhJUyBJUyBOT1QgQSBSRUFMIFJTQSBQ\n"
    "VCBBIFJFQUwgUlNBIFBSSVZBVEUgS0VZIC0tIA==\n"
    "-----END RSA PRIVATE KEY-----"
)

# Prose and look-alikes that must come out byte-identical.
NEGATIVES: list[str] = [
    "the token budget is 1200 words",
    "secret masking is on by default",
    "our password policy requires 12 characters",
    "the tokenizer splits on whitespace",
    "tokenizer: whitespace",
    "token: 1200",
    "tokens: 4096",
    "max_tokens: 4096",
    "token_count: 12",
    "token: whitespace-separated",
    "secretName: db-credentials",
    "secret: db-credentials",
    "password: required",
    "password: optional",
    "password: <your password>",
    "api_key: ${OPENAI_API_KEY}",
    "api_key: $OPENAI_API_KEY",
    "OPENAI_API_KEY=sk-...",
    "OPENAI_API_KEY=<your key>",
    "token: xxxxxxxxxxxxxxxx",
    "api_key: your-api-key-here",
    "password: changeme",
    "token_url: https://auth.example.com/oauth2/token",
    "pwd: /home/user/project",
    "detoken: abc123def456",
    "password = settings.DB_PASSWORD",
    "password: DB_PASSWORD",
    "api_key: process.env.OPENAI_API_KEY",
    "password: not_set",
    "password: see-vault",
    "token = getToken(user1)",
    "OAuth token: 15 minutes",
    "Bearer tokens issued by the console expire after fifteen minutes.",
    "Authorization: Bearer <token>",
    "Authorization: Bearer $TOKEN",
    "The forecasting code imports sk-learn-style helpers.",
    "risk-free-rate-0000000000000000000000 is a column name",
    "Classic GitHub tokens start with ghp_ and bot tokens start with xoxb.",
    "AWS access key ids start with AKIA followed by sixteen characters.",
    "The password reset flow sends a one-time link.",
    "See https://docs.example.com:8080/path and postgres://user:pass@localhost/db.",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
    "Cookie: a small piece of data the browser keeps",
    "Our address book and Special handling are unrelated.",
    "토큰 예산은 1200 단어입니다.",
    "비밀번호 정책은 12자 이상을 요구합니다.",
    "비밀 마스킹은 기본으로 켜져 있습니다.",
    "검색 결과는 citation과 함께 반환됩니다: snapshotSha=abc",
    "commit 0123456789abcdef0123456789abcdef01234567 is indexed",
    "eyJhbGciOiJIUzI1NiJ9 alone is only a header",
]


@pytest.mark.parametrize(
    ("text", "secret", "label"),
    [pytest.param(text, secret, label, id=name) for name, text, secret, label in POSITIVES],
)
def test_secret_formats_are_masked_with_their_label(text: str, secret: str, label: str) -> None:
    """Contract-mandated (contract §7 pattern list, docs/masking.md), extended by choice."""
    result = mask_text(text)
    assert secret not in result.text
    assert MASK in result.text
    assert result.labels == (label,)
    assert result.masked_count == 1


@pytest.mark.parametrize("text", NEGATIVES)
def test_prose_and_look_alikes_are_left_intact(text: str) -> None:
    """Implementation choice: only plausible secret values are masked, prose survives."""
    result = mask_text(text)
    assert result.text == text
    assert result.masked_count == 0
    assert result.labels == ()


@pytest.mark.parametrize(
    "text",
    [pytest.param(text, id=name) for name, text, _, _ in POSITIVES] + [PEM_KEY],
)
def test_masking_masked_text_changes_nothing(text: str) -> None:
    """Implementation choice: masking is idempotent, so output re-masking counts 0."""
    once = mask_text(text)
    twice = mask_text(once.text)
    assert twice.text == once.text
    assert twice.masked_count == 0


def test_replacement_keeps_a_short_recognizable_prefix() -> None:
    """Implementation choice: 6 characters of a token format, at most 4 of a value."""
    assert mask_text("sk-proj-FAKE0000000000000000000000").text == "sk-pro***"
    assert mask_text("ghp_FAKE00000000000000000000000000").text == "ghp_FA***"
    assert mask_text("api_key: FAKE0000000000000001").text == "api_key: FAKE***"


def test_short_values_reveal_at_most_a_quarter() -> None:
    """Implementation choice: never enough of a value to reconstruct it."""
    assert mask_text("token=FAKE0001").text == "token=FA***"


def test_password_values_reveal_nothing() -> None:
    """Implementation choice: passwords are low-entropy, so no prefix is kept."""
    assert mask_text("password=FAKEpassw0rd").text == "password=***"


def test_private_key_block_is_replaced_as_one_unit() -> None:
    """Contract-mandated (contract §7: PEM private key blocks)."""
    text = f"Before.\n\n{PEM_KEY}\n\nAfter."
    result = mask_text(text)
    assert result.text == "Before.\n\n-----BEGIN RSA PRIVATE KEY-----***\n\nAfter."
    assert result.labels == ("private_key",)


@pytest.mark.parametrize(
    "kind", ["OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY"]
)
def test_every_private_key_kind_is_masked(kind: str) -> None:
    """Contract-mandated (contract §7: PEM private key blocks)."""
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
    text = f"-----BEGIN {kind}-----\n{body}\n{body}\n-----END {kind}-----\n"
    result = mask_text(text)
    assert body not in result.text
    assert result.text == f"-----BEGIN {kind}-----***\n"


def test_indented_and_truncated_private_key_blocks_are_masked() -> None:
    """Implementation choice: a key pasted in a list or cut off is still a key."""
    body = "UkFHSVQgRklYVFVSRSAtLSBUSElTIElTIE5PVCBBIFJFQUwgUlNBIFBSSVZBVEUg"
    indented = f"1. key:\n\n    -----BEGIN RSA PRIVATE KEY-----\n    {body}\n    {body}\n"
    truncated = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n{body}"
    assert body not in mask_text(indented).text
    assert body not in mask_text(truncated).text


def test_private_key_inside_a_json_string_is_masked() -> None:
    """Implementation choice: service-account JSON escapes the key's line breaks."""
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7FAKE"
    text = (
        '{"private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + body
        + "\\n"
        + body
        + '\\n-----END PRIVATE KEY-----\\n"}'
    )
    result = mask_text(text)
    assert body not in result.text
    assert result.labels == ("private_key",)


def test_a_key_assigned_a_token_format_counts_once() -> None:
    """Implementation choice: one secret, one replacement, whatever rules overlap."""
    result = mask_text("OPENAI_API_KEY=sk-proj-FAKE0000000000000000000000001")
    assert result.text == "OPENAI_API_KEY=sk-pro***"
    assert result.masked_count == 1


def test_labels_follow_text_order_within_a_rule_and_count_every_secret() -> None:
    """Implementation choice: len(labels) == masked_count, for the summary and quarantine."""
    text = (
        "a sk-FAKE00000000000000000000001 b ghp_FAKE0000000000000000000000000002 "
        "c AKIAFAKE000000000TST d password=FAKEpass0003"
    )
    result = mask_text(text)
    assert result.masked_count == 4
    assert sorted(result.labels) == ["aws_access_key", "github_pat", "openai_key", "password"]


def test_key_value_trailing_sentence_period_is_kept() -> None:
    """Implementation choice: punctuation after an unquoted value is prose."""
    assert mask_text("Set token=FAKE000000000001.").text == "Set token=FAKE***."


def test_korean_text_around_secrets_is_preserved() -> None:
    """Implementation choice: masking edits only the secret span."""
    text = "설정 파일의 api_key: FAKEkoreanKey0001 값은 교체되었습니다."
    assert mask_text(text).text == "설정 파일의 api_key: FAKE*** 값은 교체되었습니다."


@pytest.mark.parametrize(
    ("value", "password", "expected"),
    [
        ("FAKE0001", False, True),
        ("abcdefgh", False, False),
        ("AbCdEfGhIjKlMnOpQrStUv", False, True),
        ("1200", False, False),
        ("<token>", False, False),
        ("hunter22", True, True),
        ("P@ssword", True, True),
        ("required", True, False),
        ("not_set_yet", True, False),
        ("settings.DB_PASSWORD", True, False),
        ("OPENAI_API_KEY_VALUE_NAME", False, False),
        ("short1", True, True),
        ("abc1", True, False),
    ],
)
def test_secret_value_heuristic(value: str, password: bool, expected: bool) -> None:
    """Implementation choice: the documented plausibility rules."""
    assert looks_like_secret_value(value, password=password) is expected


def test_mask_json_reports_masked_field_paths() -> None:
    """Contract-mandated (docs/reference/security.md: sources are field paths such as
    turns[0].content)."""
    payload = {
        "goal": "rotate sk-FAKE00000000000000000000001",
        "turns": [
            {"role": "user", "content": "ghp_FAKE0000000000000000000000000002"},
            {"role": "assistant", "content": "done"},
        ],
        "count": 3,
        "nested": {"tags": ["clean", "password=FAKEpass0003"]},
    }
    original = copy.deepcopy(payload)
    masked, count, sources = mask_json(payload)
    assert count == 3
    assert sources == ["goal", "turns[0].content", "nested.tags[1]"]
    assert payload == original
    assert isinstance(masked, dict)
    assert masked["count"] == 3
    assert masked["turns"][1]["content"] == "done"
    assert "ghp_FAKE0000000000000000000000000002" not in str(masked)


def test_mask_json_names_a_root_string_and_honours_a_prefix() -> None:
    """Implementation choice: a bare string is reported as '$' or as the given path."""
    assert mask_json("sk-FAKE00000000000000000000001")[2] == ["$"]
    assert mask_json(["sk-FAKE00000000000000000000001"], "hits")[2] == ["hits[0]"]


def test_redaction_summary_merges_counts_and_sources() -> None:
    """Contract-mandated (contract §7: redactionSummary {applied, maskedCount, sources})."""
    empty = RedactionSummary()
    assert empty.dump() == {"applied": False, "maskedCount": 0, "sources": []}
    summary = empty.add("query", 1).add("query", 2).add("hits[0].text", 0)
    _, count, sources = mask_json({"text": "sk-FAKE00000000000000000000001"}, "hits[1]")
    summary = summary.merge_sources(sources, count)
    summary = summary.merge(RedactionSummary().add("goal", 1))
    assert summary.dump() == {
        "applied": True,
        "maskedCount": 5,
        "sources": ["query", "hits[1].text", "goal"],
    }


_alphabet = st.sampled_from(
    [*"abcXYZ019 _-=:'\"\n.", "sk-", "ghp_", "token", "password", "비밀번호", "***", "AKIA"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_alphabet, max_size=60).map("".join))
def test_masking_is_idempotent_on_arbitrary_text(text: str) -> None:
    """Implementation choice: idempotency holds for any input, not only the table."""
    once = mask_text(text)
    twice = mask_text(once.text)
    assert twice.text == once.text
    assert twice.masked_count == 0
    assert len(once.labels) == once.masked_count


def test_seven_megabytes_of_prose_mask_without_changes() -> None:
    """Implementation choice: masking scales linearly (measured by the benchmark, not here)."""
    paragraph = (
        "The token budget of a context pack counts whitespace-separated words; secret "
        "masking runs before anything is stored. key = value, a: b, x=1.\n\n"
    )
    text = paragraph * (7_000_000 // len(paragraph))
    result = mask_text(text)
    assert result.masked_count == 0
    assert result.text == text
