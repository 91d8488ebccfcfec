"""Markdown → sections → chunks (docs/reference/documents.md, with the original's pitfalls fixed).

Normalization (:func:`normalize_text`): every U+FEFF (BOM) is dropped, CRLF and CR
become LF, trailing whitespace is trimmed from every line, and the text is put in
Unicode NFC (so a Hangul document saved decomposed indexes like a composed one).
:func:`normalized_body` then strips the frontmatter block. Chunk offsets
(``char_start``) index into that body, and every chunk text is a verbatim slice of
it: ``body[c.char_start : c.char_start + len(c.text)] == c.text``.

Sections:

* ATX headings ``#``..``######`` (up to 3 leading spaces, a space or the line end
  after the hashes, an optional closing ``#`` run) start sections. An empty heading
  (``#`` alone) is not a section: a section needs a title;
* setext headings are supported (``Title`` over ``===`` is level 1, over ``---``
  level 2) when the title is a one-line paragraph: the line above it is blank, a
  heading, a fence or the start of the document, and it is not a list item, quote
  or table row. A ``---`` under a longer paragraph is left as text (CommonMark
  would make the whole paragraph a heading; a one-line title is the common case
  and the conservative reading);
* nothing inside a fenced code block is a heading. A fence opens with 3+ backticks
  or tildes (any indentation, so list-nested fences count; a backtick fence's info
  string has no backtick) and closes only with the same character, at least as
  many of them, and nothing else on the line. An unclosed fence runs to the end;
* text before the first heading is the section ``Introduction`` (level 0) — even
  when an H1 follows: the preamble (badges, a notice) is not the title's content;
* a document without headings is one section titled ``body_title`` (default
  ``"Body"``; ingest passes nothing, so titles stay stable when a file is renamed);
* every section includes its own heading line(s), so the H1 title is searchable
  in the H1's section, and a heading with no body still yields a chunk holding the
  heading line — unless subsections follow it directly: then every child chunk
  carries the heading in its breadcrumb and a chunk of the bare heading would only
  crowd results and budgets;
* ``heading_path`` is the chain of enclosing headings, e.g.
  ``("ADR: Use zvec", "Decision", "Consequences")``; a synthetic section has the
  path ``("Introduction",)`` or ``(body_title,)`` and level 0.

Windows: a section whose stripped text has at most ``max_chars`` characters is one
chunk. A longer one is cut into windows of at most ``max_chars``: the cut is the
last blank line in the window's second half, else its last sentence start there (a
block start — a line opening a list item, a quote or a table row — or the first
character after ``.``, ``!`` or ``?`` and optional closing quotes and brackets,
then whitespace, that is not a lower-case letter, so ``e.g. foo`` is no end; or
after ``。！？``), else its last line break, else its last space or tab, else a hard
cut at ``max_chars`` moved back so it never splits a combining mark, a variation
selector or a ZWJ sequence. The next window starts at the first sentence start (a
paragraph start included) in the ``overlap`` characters before the cut, else at the
cut: a window begins where a sentence or a block does whenever its cut allows. A
link reference definition (``[label]: https://…`` opening a line, indented or not
as in a list item; a footnote ``[^note]: …`` or ``[label]: …`` mid-line is text) is
a link target, not text: a window never starts on one — the start moves past such
lines, and a window that would hold nothing else is left out (the labels stay in
the text that uses them). Whitespace is stripped from both ends of every window; no
chunk is empty. Time is linear in the document size.

Displayed vs indexed text: ``Chunk.text`` is what results display (excerpts,
``full`` view). :func:`indexed_text` — what is embedded and full-text indexed —
prefixes it with the heading breadcrumb ``" > ".join(heading_path)`` and a blank
line, leaving out the last element when the text already begins with that heading
line (no title twice) and leaving out synthetic titles (``Introduction`` is not in
the document). So a continuation window of "Consequences" is still found by
"Decision" or "ADR: Use zvec".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from ragit.ingest.frontmatter import parse_frontmatter
from ragit.text.tokens import word_count

INTRODUCTION = "Introduction"
DEFAULT_BODY_TITLE = "Body"

__all__ = [
    "DEFAULT_BODY_TITLE",
    "INTRODUCTION",
    "Chunk",
    "Heading",
    "chunk_markdown",
    "first_heading",
    "indexed_text",
    "iter_headings",
    "normalize_for_id",
    "normalize_text",
    "normalized_body",
]


@dataclass(frozen=True)
class Chunk:
    """One retrievable piece of a markdown document.

    ``index`` is 0-based in the document, ``section_index`` 0-based among its
    sections; ``level`` is 1–6 for a heading section, 0 for a synthetic one;
    ``token_count`` is :func:`ragit.text.tokens.word_count` of ``text``; ``char_start``
    is the offset of ``text`` in :func:`normalized_body`.
    """

    index: int
    section_title: str
    heading_path: tuple[str, ...]
    level: int
    text: str
    token_count: int
    char_start: int
    section_index: int = 0

    @property
    def indexed_text(self) -> str:
        """The text to embed and index: :func:`indexed_text` of this chunk."""
        return indexed_text(self.text, self.heading_path, self.level)


@dataclass(frozen=True)
class Heading:
    """A heading found by :func:`iter_headings`.

    ``start`` is the offset of its first line, ``end`` the offset just after its
    last line (the underline for a setext heading).
    """

    level: int
    title: str
    start: int
    end: int


# ---------------------------------------------------------------- normalization

_TRAILING_WS = re.compile(r"[^\S\n]+$", re.MULTILINE)


def normalize_text(text: str) -> str:
    """BOM-free, LF-only, right-trimmed lines, NFC (see the module docstring)."""
    if "\ufeff" in text:
        text = text.replace("\ufeff", "")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _TRAILING_WS.sub("", text)
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


def normalized_body(text: str) -> str:
    """:func:`normalize_text`, then the frontmatter block removed."""
    return parse_frontmatter(normalize_text(text))[1]


def normalize_for_id(text: str) -> str:
    """The normalization a content-addressed chunk id hashes over.

    :func:`normalize_text` plus stripping surrounding whitespace. Every
    ``Chunk.text`` is already in this form (``normalize_for_id(c.text) == c.text``),
    and texts differing only in line endings, a BOM, trailing spaces or Unicode
    composition get the same id.
    """
    return normalize_text(text).strip()


# ---------------------------------------------------------------- scanning

_ATX_OPEN = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)$")
_SETEXT_UNDERLINE = re.compile(r" {0,3}(=+|-+)$")
_THEMATIC_BREAK = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|(?:-[ \t]*){3,})$")
_NOT_A_TITLE = re.compile(r"(?:[-*+][ \t]|\d{1,9}[.)](?:[ \t]|$)|>|\||<| {4})")


def _atx(line: str) -> tuple[int, str] | None:
    match = _ATX_OPEN.match(line)
    if match is None:
        return None
    title = _ATX_CLOSE.sub("", line[match.end() :]).strip()
    if not title:
        return None
    return len(match.group(1)), title


def iter_headings(body: str) -> Iterator[Heading]:
    """The headings of a normalized body, in order, outside fenced code.

    ``body`` should be LF-normalized (:func:`normalized_body`).
    """
    lines = body.split("\n")
    fence: tuple[str, int] | None = None
    offset = 0
    # Whether the previous line ends a block, so this line can start a paragraph.
    boundary = True
    pending: tuple[int, str] | None = None  # one-line paragraph that may be a setext title
    for line in lines:
        start = offset
        offset += len(line) + 1
        first = line.lstrip(" \t")[:1]
        if fence is not None:
            closing = _FENCE_OPEN.match(line) if first == fence[0] else None
            if (
                closing is not None
                and closing.group(1)[0] == fence[0]
                and len(closing.group(1)) >= fence[1]
                and not closing.group(2).strip()
            ):
                fence = None
                boundary = True
            continue
        if first in ("`", "~"):
            opening = _FENCE_OPEN.match(line)
            if opening is not None and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
                fence = (opening.group(1)[0], len(opening.group(1)))
                pending = None
                boundary = True
                continue
        if pending is not None:
            underline = _SETEXT_UNDERLINE.match(line)
            if underline is not None:
                level = 1 if underline.group(1)[0] == "=" else 2
                yield Heading(level, pending[1], pending[0], min(offset - 1, len(body)))
                pending = None
                boundary = True
                continue
            pending = None
        if not line:
            boundary = True
            continue
        if first == "#":
            atx = _atx(line)
            if atx is not None:
                yield Heading(atx[0], atx[1], start, min(offset - 1, len(body)))
                boundary = True
                continue
        if _SETEXT_UNDERLINE.match(line) is not None or _THEMATIC_BREAK.match(line) is not None:
            boundary = True  # a thematic break ends the block like a blank line
            continue
        if boundary and _NOT_A_TITLE.match(line) is None:
            pending = (start, line.strip())
        boundary = False


def first_heading(body: str) -> str | None:
    """The title of the first heading of a normalized body, if any."""
    for heading in iter_headings(body):
        return heading.title
    return None


# ---------------------------------------------------------------- windows

_NON_SPACE = re.compile(r"\S")


def _is_extender(char: str) -> bool:
    code = ord(char)
    return (
        unicodedata.category(char) in ("Mn", "Mc", "Me")
        or code == 0x200D
        or 0xFE00 <= code <= 0xFE0F
        or 0x1F3FB <= code <= 0x1F3FF
        or 0xE0020 <= code <= 0xE007F
        or 0xE0100 <= code <= 0xE01EF
    )


def _safe_cut(text: str, cut: int, floor: int) -> int:
    """Move a hard cut back so it does not split a grapheme cluster."""
    limit = max(floor + 1, cut - 32)
    index = cut
    while index > limit and (_is_extender(text[index]) or text[index - 1] == "\u200d"):
        index -= 1
    return index if index > floor else cut


# Where a sentence or a block starts: after a blank line; at a line that opens a list
# item, a quote or a table row; after a sentence end (. ! ? and
# closing quotes or brackets, then whitespace) when the next character is not a
# lower-case letter; right after 。！？. Group 1 is the start.
_SENTENCE_START = re.compile(
    r"\n[ \t]*\n\s*(\S)"
    r"|\n[ \t]*((?:[-*+]|\d{1,9}[.)])(?=[ \t])|[>|])"
    r"|[.!?][)\]\"'’”*_`]*\s+(?![a-z])(\S)"
    r"|[。！？][)\]\"'’”」』]*\s*(\S)"
)
# A link reference definition line (CommonMark), not a footnote ([^label]: ...).
_LINK_DEFINITION = re.compile(
    r"[ ]{0,3}\[(?!\^)[^\]\n]+\]:[ \t]*(?:<[^>\n]*>|\S+)"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*(?:\n|$)"
)


def _starts(body: str, low: int, high: int) -> Iterator[int]:
    """Sentence and block starts in ``[low, high)``, in order."""
    for match in _SENTENCE_START.finditer(body, max(0, low - 8), high):
        at = next(match.start(g) for g in range(1, 5) if match.start(g) != -1)
        if low <= at < high:
            yield at


def _past_definitions(body: str, start: int, end: int) -> int:
    """``start`` moved past link reference definition lines (and the blank lines
    between them); ``end`` when nothing else is left. A definition opens its line,
    indented or not (as in a list item); mid-line, ``[label]: …`` is text."""
    while start < end:
        if body[body.rfind("\n", 0, start) + 1 : start].strip(" \t"):
            return start
        match = _LINK_DEFINITION.match(body, start)
        if match is None or match.end() > end + 1:
            return start
        following = _NON_SPACE.search(body, match.end(), end)
        if following is None:
            return end
        start = following.start()
    return start


def _windows(
    body: str, start: int, end: int, max_chars: int, overlap: int
) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each window of ``body[start:end]`` (both ends non-space)."""
    start = _past_definitions(body, start, end)
    while start < end:
        if end - start <= max_chars:
            yield start, end
            return
        limit = start + max_chars
        half = start + max_chars // 2
        cut = body.rfind("\n\n", half, limit)
        if cut == -1:
            cut = max(_starts(body, half + 1, limit + 1), default=-1)
        if cut == -1:
            cut = body.rfind("\n", half, limit)
        if cut == -1:
            cut = max(body.rfind(" ", half, limit), body.rfind("\t", half, limit))
        if cut == -1:
            cut = _safe_cut(body, limit, start)
        stop = cut
        while stop > start and body[stop - 1].isspace():
            stop -= 1
        yield start, stop
        resume = cut
        if overlap:
            resume = next(_starts(body, max(cut - overlap, start + 1), cut), cut)
        following = _NON_SPACE.search(body, max(resume, start + 1), end)
        if following is None:
            return
        start = _past_definitions(body, following.start(), end)


# ---------------------------------------------------------------- chunks


def indexed_text(text: str, heading_path: tuple[str, ...], level: int) -> str:
    """The text to embed and index for a chunk (see the module docstring).

    A pure function of the chunk's ``text``, ``heading_path`` and ``level``.
    """
    if level <= 0 or not heading_path:
        return text
    breadcrumb = heading_path
    first_line, _, rest = text.partition("\n")
    title = heading_path[-1]
    atx = _atx(first_line)
    setext = _SETEXT_UNDERLINE.match(rest.partition("\n")[0]) is not None
    if (atx is not None and atx[1] == title) or (setext and first_line.strip() == title):
        breadcrumb = heading_path[:-1]
    if not breadcrumb:
        return text
    return " > ".join(breadcrumb) + "\n\n" + text


def chunk_markdown(
    text: str,
    *,
    max_chars: int = 1000,
    overlap: int = 120,
    body_title: str = DEFAULT_BODY_TITLE,
) -> list[Chunk]:
    """Split a markdown document into chunks (rules in the module docstring).

    ``text`` is the raw document (frontmatter, BOM and CRLF allowed). Empty or
    whitespace-only input gives ``[]``.

    Raises:
        ValueError: ``max_chars < 32`` or ``overlap`` outside ``0..max_chars // 4``
            (a programming error: smaller windows would not make progress).
    """
    if max_chars < 32:
        raise ValueError("max_chars must be at least 32")
    if not 0 <= overlap <= max_chars // 4:
        raise ValueError("overlap must be between 0 and max_chars // 4")
    body = normalized_body(text)
    sections: list[tuple[str, tuple[str, ...], int, int, int]] = []
    stack: list[tuple[int, str]] = []
    headings = list(iter_headings(body))
    preamble_end = headings[0].start if headings else len(body)
    if body[:preamble_end].strip():
        title = INTRODUCTION if headings else body_title
        sections.append((title, (title,), 0, 0, preamble_end))
    for position, heading in enumerate(headings):
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.title))
        following = headings[position + 1] if position + 1 < len(headings) else None
        section_end = following.start if following is not None else len(body)
        if (
            following is not None
            and following.level > heading.level
            and not body[heading.end : section_end].strip()
        ):
            # A heading whose only content is its subsections: every child chunk
            # carries it in its breadcrumb, so a chunk of the bare heading adds nothing.
            continue
        path = tuple(title for _, title in stack)
        sections.append((heading.title, path, heading.level, heading.start, section_end))
    chunks: list[Chunk] = []
    for section_index, (title, path, level, start, end) in enumerate(sections):
        first = _NON_SPACE.search(body, start, end)
        if first is None:
            continue
        stripped_end = end
        while body[stripped_end - 1].isspace():
            stripped_end -= 1
        for window_start, window_end in _windows(
            body, first.start(), stripped_end, max_chars, overlap
        ):
            piece = body[window_start:window_end]
            chunks.append(
                Chunk(
                    index=len(chunks),
                    section_title=title,
                    heading_path=path,
                    level=level,
                    text=piece,
                    token_count=word_count(piece),
                    char_start=window_start,
                    section_index=section_index,
                )
            )
    return chunks
