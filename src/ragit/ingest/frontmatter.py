"""YAML-style frontmatter at the top of a Markdown document: the ``key: value`` block between
``---`` fences that doc-type detection and chunking both read (a small subset of YAML: scalar
values, comments and list lines allowed and ignored)."""

from __future__ import annotations

import re

_FRONTMATTER_OPEN = re.compile(r"---[ \t]*\r?\n")
_FRONTMATTER_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*(?:\r?\n|\r|\Z)")
_KEY_LINE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*$")
_ALLOWED_LINE = re.compile(r"(?:[ \t]+\S.*|-(?:[ \t].*)?|#.*|[ \t]*)$")


def _scalar(raw: str | None) -> str:
    value = (raw or "").strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    # An unquoted YAML scalar ends before " #comment".
    return re.split(r"[ \t]#", value, maxsplit=1)[0].strip()


def parse_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """Split a ``---`` frontmatter block of ``key: value`` lines off ``text``.

    The block must open on the first line (after an optional BOM) and close with
    a ``---`` or ``...`` line; every line in it must be a ``key: value`` line, an
    indented continuation, a ``- item``, a ``#`` comment or blank, and at least one
    must be a key line. Otherwise there is no frontmatter (a leading ``---``
    thematic break is not metadata). Values are scalars with surrounding quotes
    and trailing ``#`` comments removed; keys keep their case; the last duplicate
    wins; nested values are not parsed (a key with only indented lines below it
    maps to ``""``). CRLF, CR and LF line ends are accepted.

    Returns ``(fields, body)``: ``body`` is the text after the closing line, or the
    whole text (minus a BOM) when there is no frontmatter.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    opening = _FRONTMATTER_OPEN.match(text)
    if opening is None:
        return {}, text
    fields: dict[str, str] = {}
    position = opening.end()
    while position < len(text):
        closing = _FRONTMATTER_CLOSE.match(text, position)
        if closing is not None:
            return (fields, text[closing.end() :]) if fields else ({}, text)
        newline = text.find("\n", position)
        line_end = len(text) if newline == -1 else newline
        line = text[position:line_end].rstrip("\r")
        key_line = _KEY_LINE.match(line)
        if key_line is not None:
            fields[key_line.group(1)] = _scalar(key_line.group(2))
        elif _ALLOWED_LINE.match(line) is None:
            return {}, text
        position = line_end + 1
    return {}, text  # never closed: not frontmatter
