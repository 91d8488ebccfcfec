"""The masking rules :func:`ragit.security.masking.mask_text` applies, in order.

PEM private-key blocks, token formats, headers, then key-value forms; each rule
appends the label of every replacement it makes. The rules are documented in the
:mod:`ragit.security.masking` docstring; the value heuristics they share are in
:mod:`ragit.security.secret_values`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragit.security.secret_values import (
    MASK,
    is_placeholder,
    looks_like_secret_value,
    visible_prefix,
)


def apply_rules(text: str, labels: list[str]) -> str:
    """``text`` with every rule applied; the label of each replacement appended to ``labels``."""
    masked = _mask_pem(text, labels)
    for rule in _TOKEN_RULES:
        masked = _apply_token_rule(rule, masked, labels)
    masked = _mask_headers(masked, labels)
    return _mask_kv(masked, labels)


# ---------------------------------------------------------------- PEM blocks

_PEM_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----")
_PEM_BODY_LINE = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+:[^\n]*)?[ \t]*\r?\n")
_PEM_LAST_LINE = re.compile(r"[ \t]*[A-Za-z0-9+/=]+[ \t]*\Z")
_BASE64_CHARS = re.compile(r"[A-Za-z0-9+/=]")
_PEM_ESCAPED_BODY = re.compile(r"(?:\\[nr])+(?:[A-Za-z0-9+/=]|\\[nr])*")


def _mask_pem(text: str, labels: list[str]) -> str:
    if "PRIVATE KEY" not in text:
        return text
    out: list[str] = []
    pos = 0
    for begin in _PEM_BEGIN.finditer(text):
        if begin.start() < pos:
            continue
        kind = f"{begin.group(1)}PRIVATE KEY{begin.group(2) or ''}"
        end_marker = f"-----END {kind}-----"
        cursor = begin.end()
        escaped = _PEM_ESCAPED_BODY.match(text, cursor)
        if escaped is not None:
            # A key inside a JSON string ("-----BEGIN …-----\\nMIIE…\\n-----END …").
            body = escaped.group(0)
            base64_count = len(body) - 2 * (body.count("\\n") + body.count("\\r"))
            block_end = escaped.end()
            if text.startswith(end_marker, block_end):
                block_end += len(end_marker)
            if base64_count >= 40:
                out.append(text[pos : begin.start()])
                out.append(f"-----BEGIN {kind}-----{MASK}")
                labels.append("private_key")
                pos = block_end
            continue
        # The BEGIN line's own line break, then the body lines.
        if text.startswith("\r\n", cursor):
            cursor += 2
        elif text.startswith("\n", cursor):
            cursor += 1
        base64_count = 0
        block_end = cursor
        while cursor < len(text):
            if text.startswith(end_marker, cursor):
                block_end = cursor + len(end_marker)
                break
            line = _PEM_BODY_LINE.match(text, cursor)
            if line is None:
                # The last line of a truncated block has no line break.
                tail = _PEM_LAST_LINE.match(text, cursor)
                if tail is not None:
                    base64_count += len(_BASE64_CHARS.findall(tail.group(0)))
                    block_end = tail.end()
                break
            content = line.group(0).rstrip("\r\n")
            if ":" not in content:
                base64_count += len(_BASE64_CHARS.findall(content))
            if content.strip():
                block_end = cursor + len(content)
            cursor = line.end()
        if base64_count < 40:
            continue
        out.append(text[pos : begin.start()])
        out.append(f"-----BEGIN {kind}-----{MASK}")
        labels.append("private_key")
        pos = block_end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# ---------------------------------------------------------------- token formats

_NOT_WORD_BEFORE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


@dataclass(frozen=True)
class _TokenRule:
    label: str
    trigger: str  # literal that must occur in the text for the rule to run
    pattern: re.Pattern[str]
    needs_digit: bool = True
    keep: int = 6
    check: Callable[[str], bool] | None = None
    render: Callable[[str], str] | None = None


def _mixed_case(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


_TOKEN_RULES: tuple[_TokenRule, ...] = (
    _TokenRule("stripe_key", "_live_", re.compile(r"(?:sk|rk|pk)_live_[A-Za-z0-9]{16,}")),
    _TokenRule("stripe_key", "_test_", re.compile(r"(?:sk|rk)_test_[A-Za-z0-9]{16,}")),
    _TokenRule("openai_key", "sk-", re.compile(r"sk-[A-Za-z0-9_-]{20,}")),
    _TokenRule("github_pat", "github_pat_", re.compile(r"github_pat_[A-Za-z0-9_]{20,}")),
    _TokenRule("github_pat", "ghp_", re.compile(r"ghp_[A-Za-z0-9]{20,}")),
    _TokenRule("github_token", "gh", re.compile(r"gh[ousr]_[A-Za-z0-9]{20,}")),
    _TokenRule("gitlab_pat", "glpat-", re.compile(r"glpat-[A-Za-z0-9_-]{20,}")),
    _TokenRule("slack_token", "xox", re.compile(r"xox[bpars]-[A-Za-z0-9-]{10,}")),
    _TokenRule(
        "slack_webhook",
        "hooks.slack.com",
        re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{8,}"),
        needs_digit=False,
        keep=len("https://hooks.slack.com/services/"),
    ),
    _TokenRule(
        "aws_access_key",
        "A",
        re.compile(r"A(?:KIA|SIA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
        needs_digit=False,
    ),
    _TokenRule(
        "google_api_key",
        "AIza",
        re.compile(r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        needs_digit=False,
    ),
    _TokenRule("npm_token", "npm_", re.compile(r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])")),
    _TokenRule(
        "pypi_token", "pypi-AgE", re.compile(r"pypi-AgE[A-Za-z0-9_-]{50,}"), needs_digit=False
    ),
    _TokenRule(
        "huggingface",
        "hf_",
        re.compile(r"hf_[A-Za-z0-9]{30,}"),
        needs_digit=False,
        check=_mixed_case,
    ),
    _TokenRule(
        "url_credentials",
        "://",
        re.compile(r"(?<=://)[A-Za-z0-9._~%+-]{1,128}:[^\s:/@]{1,256}(?=@)"),
        needs_digit=False,
        check=lambda token: not is_placeholder(token.partition(":")[2]),
        render=lambda token: token.partition(":")[0] + ":" + MASK,
    ),
    _TokenRule(
        "jwt",
        "eyJ",
        re.compile(r"eyJ[A-Za-z0-9_-]{7,}\.eyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]*"),
        needs_digit=False,
    ),
)


def _apply_token_rule(rule: _TokenRule, text: str, labels: list[str]) -> str:
    if rule.trigger not in text:
        return text
    found: list[tuple[int, str]] = []

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        start = match.start()
        if start > 0 and text[start - 1] in _NOT_WORD_BEFORE:
            return token
        if rule.needs_digit and not (
            any(c.isdigit() for c in token[3:]) and any(c.isalpha() for c in token[3:])
        ):
            return token
        if rule.check is not None and not rule.check(token):
            return token
        found.append((start, rule.label))
        if rule.render is not None:
            return rule.render(token)
        return token[: rule.keep] + MASK

    result = rule.pattern.sub(replace, text)
    labels.extend(label for _, label in found)
    return result


# ---------------------------------------------------------------- key-value forms
#
# Scanning every position with a regex of trigger alternatives costs ~0.5 s per
# 7 MB, so the scan is anchored on the separators instead: for each ":" or "=",
# look back for an identifier that ends with a trigger, then match the value.


def _word(parts: Sequence[str], sep: str = "[_ -]?") -> str:
    """Regex for a multi-part key word in lower, Capitalized and UPPER case."""
    alts = [f"(?:{p}|{p.capitalize()}|{p.upper()})" for p in parts]
    return sep.join(alts)


_GENERIC_TRIGGERS = [
    _word(["api", "key"]),
    _word(["client", "secret"]),
    _word(["private", "key"]),
    _word(["access", "key"]),
    _word(["secret", "key"]),
    _word(["signing", "key"]),
    _word(["encryption", "key"]),
    _word(["master", "key"]),
    _word(["auth", "key"]),
    _word(["auth", "token"]),
    _word(["token"]),
    _word(["secret"]),
    _word(["credentials"]),
    _word(["credential"]),
]
_AWS_TRIGGER = _word(["secret", "access", "key"])
_PASSWORD_TRIGGERS = [
    _word(["passphrase"]),
    _word(["password"]),
    _word(["passwd"]),
    _word(["pwd"]),
    "비밀번호",
]
# Searched inside the identifier only, anchored at its end (``\Z`` honours endpos).
_TRIGGER_AT_END = re.compile(
    "(?:(?P<aws>"
    + _AWS_TRIGGER
    + ")|(?P<pw>"
    + "|".join(_PASSWORD_TRIGGERS)
    + ")|(?P<gen>"
    + "|".join(_GENERIC_TRIGGERS)
    + r"))\Z"
)
_SEP_AND_VALUE = re.compile(
    r"(?P<sep>(?::=|=>|[:=])[ \t]*)"
    r"(?:(?P<q>[\"'])(?P<qv>[^\"'\n]{1,512})(?P=q)|(?P<v>[^\s\"'`,;<>()\[\]{}]{1,512}))"
)
_SEPARATOR = re.compile(r"[:=]")
_IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
# Every trigger ends with one of these (key, secret, token, passwd, passphrase,
# credential(s), 비밀번호).
_TRIGGER_LAST = frozenset("yYtTnNdDeElLsS호")
_KEY_LOOKBACK = 40


def _trigger_starts_subword(text: str, start: int) -> bool:
    """A trigger at ``start`` begins an identifier, follows ``_ - .``, or a camel hump."""
    if start == 0:
        return True
    before = text[start - 1]
    if before not in _IDENT or before in "_.-":
        return True
    return (before.islower() or before.isdigit()) and text[start].isupper()


def _key_before(text: str, sep_pos: int) -> tuple[int, int] | None:
    """``(start, end)`` of the key-ish words right before a separator, if any."""
    end = sep_pos
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    if end > 0 and text[end - 1] in "\"'":
        end -= 1
    if end == 0 or text[end - 1] not in _TRIGGER_LAST:
        return None
    if text.startswith("비밀번호", end - 4):
        return end - 4, end
    start = end
    limit = max(0, end - _KEY_LOOKBACK)
    # Identifier characters, and single spaces between words ("API key").
    while start > limit and (
        text[start - 1] in _IDENT
        or (text[start - 1] == " " and start - 2 >= limit and text[start - 2] in _IDENT)
    ):
        start -= 1
    return (start, end) if start < end else None


def _kv_replacement(text: str, sep_pos: int) -> tuple[int, int, str, str] | None:
    """``(start, end, replacement, label)`` for a secret assigned at ``sep_pos``."""
    region = _key_before(text, sep_pos)
    if region is None:
        return None
    start, end = region
    # The leftmost trigger may fail the sub-word rule where a shorter one passes
    # ("OAuth token": not "Auth token", but "token").
    trigger = _TRIGGER_AT_END.search(text, start, end)
    while trigger is not None and not _trigger_starts_subword(text, trigger.start()):
        trigger = _TRIGGER_AT_END.search(text, trigger.start() + 1, end)
    if trigger is None:
        return None
    group = "aws" if trigger.group("aws") else "pw" if trigger.group("pw") else "gen"
    match = _SEP_AND_VALUE.match(text, sep_pos)
    if match is None:
        return None
    quoted = bool(match.group("q"))
    value = match.group("qv") if quoted else match.group("v")
    value_start = match.start("qv") if quoted else match.start("v")
    password = group == "pw"
    # Sentence punctuation after an unquoted value is prose, not secret; a
    # password keeps it (leaking a password's last character is worse).
    trailing = "" if quoted or password else value[len(value.rstrip(".:")) :]
    value = value[: len(value) - len(trailing)]
    if not looks_like_secret_value(value, password=password):
        return None
    label = "password" if password else "aws_secret_key" if group == "aws" else "kv_secret"
    shown = "" if password else visible_prefix(value)
    return value_start, value_start + len(value), shown + MASK, label


def _mask_kv(text: str, labels: list[str]) -> str:
    out: list[str] = []
    pos = 0
    for sep in _SEPARATOR.finditer(text):
        if sep.start() < pos:
            continue
        found = _kv_replacement(text, sep.start())
        if found is None:
            continue
        start, end, replacement, label = found
        out.append(text[pos:start])
        out.append(replacement)
        labels.append(label)
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


# ---------------------------------------------------------------- headers
#
# Anchored on literal hits (str.find is memchr-fast) for the same reason.

_AUTH_AT = re.compile(
    r"(?i:authorization)[ \t]*:[ \t]*(?i:bearer|basic|token|bot)[ \t]+"
    r"(?P<v>[A-Za-z0-9._~+/=-]{8,4096})"
)
_BEARER_AT = re.compile(r"(?i:bearer)[ \t]+(?P<v>[A-Za-z0-9._~+/=-]{8,4096})")
_COOKIE_LINE = re.compile(r"[ \t>*+-]*(?i:set-)?(?i:cookie)[ \t]*:[ \t]*(?P<v>[^\n]+)")
_COOKIE_PAIR = re.compile(r"[A-Za-z0-9_.-]+=([^;\s]+)")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _literal_hits(text: str, word: str) -> list[int]:
    """Start offsets of ``word`` in lower, Capitalized and UPPER case, sorted."""
    hits: list[int] = []
    for variant in {word, word.capitalize(), word.upper()}:
        index = text.find(variant)
        while index != -1:
            hits.append(index)
            index = text.find(variant, index + 1)
    hits.sort()
    return hits


def _header_replacements(text: str) -> list[tuple[int, int, str, str]]:
    found: list[tuple[int, int, str, str]] = []
    for hit in _literal_hits(text, "authorization"):
        match = _AUTH_AT.match(text, hit)
        if match is not None and looks_like_secret_value(match.group("v")):
            value = match.group("v")
            found.append(
                (match.start("v"), match.end("v"), visible_prefix(value) + MASK, "bearer_token")
            )
    for hit in _literal_hits(text, "bearer"):
        if hit > 0 and text[hit - 1] in _WORD_CHARS:
            continue
        match = _BEARER_AT.match(text, hit)
        # A bare "Bearer x" needs a credential that cannot be a word of prose.
        if match is not None and looks_like_secret_value(match.group("v")):
            value = match.group("v")
            found.append(
                (match.start("v"), match.end("v"), visible_prefix(value) + MASK, "bearer_token")
            )
    for hit in _literal_hits(text, "cookie"):
        line_start = text.rfind("\n", 0, hit) + 1
        match = _COOKIE_LINE.match(text, line_start)
        if match is None or match.start("v") < hit:
            continue
        value = match.group("v")
        if MASK in value or not any(
            looks_like_secret_value(pair.group(1)) for pair in _COOKIE_PAIR.finditer(value)
        ):
            continue
        found.append((match.start("v"), match.end("v"), visible_prefix(value) + MASK, "cookie"))
    return found


def _apply_replacements(
    text: str, replacements: list[tuple[int, int, str, str]], labels: list[str]
) -> str:
    """Apply non-overlapping ``(start, end, replacement, label)`` edits, leftmost first."""
    if not replacements:
        return text
    out: list[str] = []
    pos = 0
    for start, end, replacement, label in sorted(replacements):
        if start < pos:
            continue  # the same value reached through two headers ("Authorization: Bearer")
        out.append(text[pos:start])
        out.append(replacement)
        labels.append(label)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _mask_headers(text: str, labels: list[str]) -> str:
    return _apply_replacements(text, _header_replacements(text), labels)
