"""Key-value masking: a value assigned to a secret-naming key.

Three spellings of one assignment: ``key: value`` / ``key=value`` (anchored on
the separators: for each ``:`` or ``=``, look back for a key, then read the
value), an XML element ``<password>value</password>``, and PHP's
``define('DB_PASSWORD', 'value')``. Scanning every position with a regex of
trigger alternatives costs ~0.5 s per 7 MB, so every rule starts from a literal
hit instead. The rules are listed in docs/masking.md.
"""

from __future__ import annotations

from ragit.security.key_names import (
    IDENT,
    TRIGGER_LAST,
    key_group,
    label_of,
    value_span,
)
from ragit.security.secret_values import MASK, looks_like_secret_value, visible_prefix
from ragit.text.patterns import lazy

Replacement = tuple[int, int, str, str]

_SEPARATOR = lazy(r"[:=]")
_SEPARATOR_AT = lazy(r"(?::=|=>|[:=])[ \t]*")
_EMPHASIS = lazy(r"(?:\*\*|__|\*)[ \t]+")
_QUERY_VALUE = lazy(r"[A-Za-z0-9%+/=_.~-]{16,1024}")
_KEY_LOOKBACK = 40


def replacement(value: str, start: int, group: str, label: str | None = None) -> Replacement:
    """The edit that masks ``value`` found at ``start`` (a password shows nothing)."""
    shown = "" if group == "pw" else visible_prefix(value)
    return start, start + len(value), shown + MASK, label or label_of(group)


def _key_before(text: str, sep_pos: int) -> tuple[int, int] | None:
    """``(start, end)`` of the key-ish words right before a separator, if any.

    Skipped between the key and the separator: spaces, a closing quote or
    backtick, and a subscript's ``]`` (``os.environ["API_KEY"] = …``).
    """
    end = sep_pos
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    if end > 0 and text[end - 1] == "]":
        end -= 1
    if end > 0 and text[end - 1] in "\"'`":
        end -= 1
    if end == 0 or (text[end - 1] not in TRIGGER_LAST and text[end - 3 : end] != "sig"):
        return None
    start = end
    limit = max(0, end - _KEY_LOOKBACK)
    # Identifier characters, and single spaces between words ("API key").
    while start > limit and (
        text[start - 1] in IDENT
        or (text[start - 1] == " " and start - 2 >= limit and text[start - 2] in IDENT)
    ):
        start -= 1
    return (start, end) if start < end else None


def _url_signature(text: str, start: int, end: int) -> bool:
    """A query parameter ``?sig=`` / ``&X-Amz-Signature=`` (signed URLs)."""
    if start == 0 or text[start - 1] not in "?&":
        return False
    name = text[start:end].lower()
    return name == "sig" or name.endswith("signature")


def _kv_replacement(text: str, sep_pos: int) -> Replacement | None:
    region = _key_before(text, sep_pos)
    if region is None:
        return None
    start, end = region
    sep = _SEPARATOR_AT.match(text, sep_pos)
    if sep is None:
        return None
    if text[sep.start()] == "=" and _url_signature(text, start, end):
        match = _QUERY_VALUE.match(text, sep.end())
        if match is None or not looks_like_secret_value(match.group(0)):
            return None
        return replacement(match.group(0), match.start(), "gen", "url_signature")
    group = key_group(text, start, end)
    if group is None:
        return None
    emphasis = _EMPHASIS.match(text, sep.end())  # "**Password:** value"
    span = value_span(text, emphasis.end() if emphasis else sep.end(), password=group == "pw")
    if span is None:
        return None
    value = text[span[0] : span[1]]
    if not looks_like_secret_value(value, password=group == "pw"):
        return None
    return replacement(value, span[0], group)


def kv_replacements(text: str) -> list[Replacement]:
    """Every ``key: value`` / ``key=value`` secret."""
    found: list[Replacement] = []
    pos = 0
    for sep in _SEPARATOR.finditer(text):
        if sep.start() < pos:
            continue
        edit = _kv_replacement(text, sep.start())
        if edit is not None:
            found.append(edit)
            pos = edit[1]
    return found


# ---------------------------------------------------------------- XML elements

_CLOSING_TAG = lazy(r"</([A-Za-z_][A-Za-z0-9_.:-]{0,60})>")


def xml_replacements(text: str) -> list[Replacement]:
    """``<password>value</password>``, ``<ns:ApiKey>value</ns:ApiKey>`` on one line."""
    found: list[Replacement] = []
    index = text.find("</")
    while index != -1:
        closing = _CLOSING_TAG.match(text, index)
        index = text.find("</", index + 2)
        if closing is None:
            continue
        name = closing.group(1)
        local_start = closing.start(1) + name.rfind(":") + 1
        group = key_group(text, local_start, closing.end(1))
        if group is None:
            continue
        open_end = text.rfind(">", 0, closing.start())
        open_start = text.rfind("<", 0, open_end)
        if open_end == -1 or open_start == -1:
            continue
        head = text[open_start + 1 : open_end]
        if head != name and not head.startswith((name + " ", name + "\t")):
            continue
        raw = text[open_end + 1 : closing.start()]
        value = raw.strip()
        if not value or "\n" in value or "<" in value:
            continue
        if looks_like_secret_value(value, password=group == "pw"):
            found.append(replacement(value, open_end + 1 + raw.index(value), group))
    return found


# ---------------------------------------------------------------- define()

_DEFINE = lazy(
    r"define\(\s*(?P<kq>['\"])(?P<k>[A-Za-z0-9_.-]{1,60})(?P=kq)\s*,\s*"
    r"(?P<q>['\"])(?P<v>(?:\\.|(?!(?P=q))[^\\\n]){1,512})(?P=q)"
)


def define_replacements(text: str) -> list[Replacement]:
    """PHP constants: ``define('DB_PASSWORD', 'value')``."""
    found: list[Replacement] = []
    index = text.find("define(")
    while index != -1:
        match = _DEFINE.match(text, index)
        index = text.find("define(", index + 7)
        if match is None:
            continue
        group = key_group(text, match.start("k"), match.end("k"))
        value = match.group("v")
        if group is not None and looks_like_secret_value(value, password=group == "pw"):
            found.append(replacement(value, match.start("v"), group))
    return found
