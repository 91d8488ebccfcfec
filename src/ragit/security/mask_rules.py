"""The masking rules :func:`ragit.security.masking.mask_text` applies, in order.

PEM private-key blocks, token formats (:mod:`ragit.security.token_formats`),
headers, then the values of secret-naming keys in every spelling
(:mod:`ragit.security.key_rules`, :mod:`ragit.security.phrase_rules`); each rule
appends the label of every replacement it makes. The rules are listed in
docs/masking.md; the value heuristics they share are in
:mod:`ragit.security.secret_values`.
"""

from __future__ import annotations

from ragit.security.key_rules import define_replacements, kv_replacements, xml_replacements
from ragit.security.phrase_rules import (
    cli_replacements,
    korean_replacements,
    literal_hits,
    spaced_replacements,
)
from ragit.security.secret_values import MASK, looks_like_secret_value, visible_prefix
from ragit.security.token_formats import apply_token_rules
from ragit.text.patterns import lazy


def apply_rules(text: str, labels: list[str]) -> str:
    """``text`` with every rule applied; the label of each replacement appended to ``labels``."""
    masked = _mask_pem(text, labels)
    masked = apply_token_rules(masked, labels)
    masked = _mask_headers(masked, labels)
    return _apply_replacements(masked, _key_replacements(masked), labels)


def _key_replacements(text: str) -> list[tuple[int, int, str, str]]:
    """Every value of a secret-naming key, in any spelling (overlaps resolved later)."""
    return [
        *kv_replacements(text),
        *xml_replacements(text),
        *define_replacements(text),
        *spaced_replacements(text),
        *cli_replacements(text),
        *korean_replacements(text),
    ]


# ---------------------------------------------------------------- PEM blocks

_PEM_BEGIN = lazy(r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----")
_PEM_BODY_LINE = lazy(r"[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+:[^\n]*)?[ \t]*\r?\n")
_PEM_LAST_LINE = lazy(r"[ \t]*[A-Za-z0-9+/=]+[ \t]*\Z")
_BASE64_CHARS = lazy(r"[A-Za-z0-9+/=]")
_PEM_ESCAPED_BODY = lazy(r"(?:\\[nr])+(?:[A-Za-z0-9+/=]|\\[nr])*")


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


# ---------------------------------------------------------------- headers
#
# Anchored on literal hits (str.find is memchr-fast), as the key rules are.

_AUTH_AT = lazy(
    r"(?i:authorization)[ \t]*:[ \t]*(?i:bearer|basic|token|bot)[ \t]+"
    r"(?P<v>[A-Za-z0-9._~+/=-]{8,4096})"
)
_BEARER_AT = lazy(r"(?i:bearer)[ \t]+(?P<v>[A-Za-z0-9._~+/=-]{8,4096})")
_COOKIE_LINE = lazy(r"[ \t>*+-]*(?i:set-)?(?i:cookie)[ \t]*:[ \t]*(?P<v>[^\n]+)")
_COOKIE_PAIR = lazy(r"[A-Za-z0-9_.-]+=([^;\s]+)")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _header_replacements(text: str) -> list[tuple[int, int, str, str]]:
    found: list[tuple[int, int, str, str]] = []
    for hit in literal_hits(text, "authorization"):
        match = _AUTH_AT.match(text, hit)
        if match is not None and looks_like_secret_value(match.group("v")):
            value = match.group("v")
            found.append(
                (match.start("v"), match.end("v"), visible_prefix(value) + MASK, "bearer_token")
            )
    for hit in literal_hits(text, "bearer"):
        if hit > 0 and text[hit - 1] in _WORD_CHARS:
            continue
        match = _BEARER_AT.match(text, hit)
        # A bare "Bearer x" needs a credential that cannot be a word of prose.
        if match is not None and looks_like_secret_value(match.group("v")):
            value = match.group("v")
            found.append(
                (match.start("v"), match.end("v"), visible_prefix(value) + MASK, "bearer_token")
            )
    for hit in literal_hits(text, "cookie"):
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
