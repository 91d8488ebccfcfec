"""Token formats: secrets recognizable by their own shape, wherever they appear.

Each :class:`TokenRule` is a literal trigger (the rule runs only when the text holds
it), a pattern, and the checks a match must pass. The table of formats is in
docs/masking.md; :func:`apply_token_rules` runs them in order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ragit.security.secret_values import MASK, is_placeholder
from ragit.text.patterns import lazy

_NOT_WORD_BEFORE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


@dataclass(frozen=True)
class TokenRule:
    label: str
    trigger: str  # literal that must occur in the text for the rule to run
    pattern: re.Pattern[str]
    needs_digit: bool = True
    keep: int = 6
    check: Callable[[str], bool] | None = None
    render: Callable[[str], str] | None = None
    # When set, the pattern is tried only at each trigger hit plus this offset (for a
    # pattern that does not start with its trigger: a scan of every position is slow).
    offset: int | None = None


def _mixed_case(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


def _url_password(token: str) -> str:
    return token.partition(":")[2]


def _rule(label: str, trigger: str, pattern: str, **options: object) -> TokenRule:
    return TokenRule(label, trigger, lazy(pattern), **options)  # type: ignore[arg-type]


TOKEN_RULES: tuple[TokenRule, ...] = (
    _rule("stripe_key", "_live_", r"(?:sk|rk|pk)_live_[A-Za-z0-9]{16,}"),
    _rule("stripe_key", "_test_", r"(?:sk|rk)_test_[A-Za-z0-9]{16,}"),
    _rule("stripe_key", "whsec_", r"whsec_[A-Za-z0-9]{24,}"),
    _rule("openai_key", "sk-", r"sk-[A-Za-z0-9_-]{20,}"),
    _rule("github_pat", "github_pat_", r"github_pat_[A-Za-z0-9_]{20,}"),
    _rule("github_pat", "ghp_", r"ghp_[A-Za-z0-9]{20,}"),
    _rule("github_token", "gh", r"gh[ousr]_[A-Za-z0-9]{20,}"),
    _rule("gitlab_pat", "glpat-", r"glpat-[A-Za-z0-9_-]{20,}"),
    _rule("slack_token", "xox", r"xox[bpars]-[A-Za-z0-9-]{10,}"),
    _rule(
        "slack_webhook",
        "hooks.slack.com",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{8,}",
        needs_digit=False,
        keep=len("https://hooks.slack.com/services/"),
    ),
    _rule(
        "discord_webhook",
        "/api/webhooks/",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{8,}/[A-Za-z0-9_-]{20,}",
        needs_digit=False,
        keep=len("https://discord.com/api/webhooks/"),
    ),
    _rule("aws_access_key", "A", r"A(?:KIA|SIA)[0-9A-Z]{16}(?![0-9A-Za-z])", needs_digit=False),
    _rule("google_api_key", "AIza", r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", needs_digit=False),
    _rule("google_oauth", "GOCSPX-", r"GOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])"),
    _rule("google_oauth", "ya29.", r"ya29\.[A-Za-z0-9_-]{30,}"),
    _rule("npm_token", "npm_", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    _rule("pypi_token", "pypi-AgE", r"pypi-AgE[A-Za-z0-9_-]{50,}", needs_digit=False),
    _rule("huggingface", "hf_", r"hf_[A-Za-z0-9]{30,}", needs_digit=False, check=_mixed_case),
    _rule(
        "sendgrid_key",
        "SG.",
        r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}(?![A-Za-z0-9_-])",
        keep=3,
    ),
    _rule("twilio_key", "SK", r"SK[0-9a-fA-F]{32}(?![0-9A-Za-z])", keep=4),
    _rule("mailchimp_key", "-us", r"[0-9a-f]{32}-us[0-9]{1,2}(?![0-9A-Za-z])", keep=4, offset=-32),
    _rule(
        "telegram_token",
        ":AA",
        r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])",
        keep=4,
    ),
    _rule("shopify_token", "shp", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])"),
    _rule("square_token", "sq0", r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}"),
    _rule("digitalocean_token", "_v1_", r"do[opr]_v1_[a-f0-9]{64}(?![a-f0-9])"),
    _rule("databricks_token", "dapi", r"dapi[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9])", keep=4),
    _rule("vault_token", "hvs.", r"hvs\.[A-Za-z0-9_-]{24,}"),
    _rule("vault_token", "hvb.", r"hvb\.[A-Za-z0-9_-]{24,}"),
    _rule("postman_key", "PMAK-", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?![a-f0-9])"),
    _rule("linear_key", "lin_api_", r"lin_api_[A-Za-z0-9]{40}(?![A-Za-z0-9])"),
    _rule("grafana_token", "glsa_", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}(?![A-Za-z0-9])"),
    _rule(
        "age_key",
        "AGE-SECRET-KEY-1",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        needs_digit=False,
        keep=len("AGE-SECRET-KEY-1"),
    ),
    _rule(
        "azure_client_secret",
        "Q~",
        r"[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
        keep=4,
    ),
    # ``scheme://user:password@host``: the password runs to the authority's last ``@``
    # (a raw ``@`` or ``:`` inside a password is common, if not allowed by RFC 3986).
    _rule(
        "url_credentials",
        "://",
        r"[A-Za-z0-9._~%+-]{0,128}:[^\s/]{1,256}(?=@)",
        needs_digit=False,
        check=lambda token: not is_placeholder(_url_password(token)),
        render=lambda token: token.partition(":")[0] + ":" + MASK,
        offset=len("://"),
    ),
    _rule(
        "jwt",
        "eyJ",
        r"eyJ[A-Za-z0-9_-]{7,}\.eyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]*",
        needs_digit=False,
    ),
)


def apply_token_rules(text: str, labels: list[str]) -> str:
    """``text`` with every token format masked, in table order."""
    for rule in TOKEN_RULES:
        text = _apply_token_rule(rule, text, labels)
    return text


def _matches(rule: TokenRule, text: str) -> Iterator[re.Match[str]]:
    if rule.offset is None:
        yield from rule.pattern.finditer(text)
        return
    end = -1
    hit = text.find(rule.trigger)
    while hit != -1:
        start = hit + rule.offset
        if start >= max(end, 0):
            match = rule.pattern.match(text, start)
            if match is not None:
                end = match.end()
                yield match
        hit = text.find(rule.trigger, hit + 1)


def _apply_token_rule(rule: TokenRule, text: str, labels: list[str]) -> str:
    if rule.trigger not in text:
        return text
    out: list[str] = []
    pos = 0
    for match in _matches(rule, text):
        token = match.group(0)
        start = match.start()
        if start > 0 and text[start - 1] in _NOT_WORD_BEFORE:
            continue
        if rule.needs_digit and not (
            any(c.isdigit() for c in token[3:]) and any(c.isalpha() for c in token[3:])
        ):
            continue
        if rule.check is not None and not rule.check(token):
            continue
        labels.append(rule.label)
        out.append(text[pos:start])
        out.append(rule.render(token) if rule.render is not None else token[: rule.keep] + MASK)
        pos = match.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)
