"""Output a terminal cannot be steered by: control characters made visible.

Commit subjects, headings, paths and document text reach the text renderers verbatim, and
a terminal acts on the control characters they may hold: ``ESC ] 0 ; … BEL`` retitles the
window, ``ESC [ 2 J`` clears the screen, ``ESC ] 52`` writes the clipboard, a carriage
return overprints a line, bidirectional overrides reorder what is read. Every text RAGit
prints therefore goes through :func:`printable`, and every JSON document through
:func:`json_safe` (docs/contract.md, "Text output").

* C0 controls other than line feed and tab, DEL, and the C1 controls U+0080–U+009F are
  shown as ``\\xNN``; the bidirectional embeddings, overrides and isolates
  (U+202A–U+202E, U+2066–U+2069) as ``\\uNNNN``.
* With ``keep_colour`` (a terminal that takes colour), the colour sequences RAGit's own
  renderers write (SGR with colour, bold, dim, italic, underline and reset parameters
  only) are kept; every other escape sequence is shown, never executed.
* JSON escapes C0 itself; :func:`json_safe` adds ``\\u`` escapes for DEL, C1 and the
  bidirectional controls, so the parsed value is unchanged.
"""

from __future__ import annotations

import os
import re
import sys
from typing import IO

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[{_CONTROLS}]")
# SGR parameters RAGit's renderers use: reset, bold, dim, italic, underline, their resets,
# the 8 colours, default colour, bright colours.
_SGR_PARAM = r"(?:0|1|2|3|4|22|23|24|3[0-7]|39|9[0-7])"
_COLOUR = re.compile(rf"\x1b\[{_SGR_PARAM}(?:;{_SGR_PARAM})*m")
_JSON_EXTRA = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def colour_enabled(stream: IO[str] | None = None) -> bool:
    """Colour only on a terminal, and never with ``NO_COLOR`` set to anything non-empty."""
    if os.environ.get("NO_COLOR"):
        return False
    target = stream if stream is not None else sys.stdout
    try:
        return bool(target.isatty())
    except (AttributeError, ValueError):
        return False


def _shown(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _escape(text: str) -> str:
    return _CONTROL.sub(lambda m: _shown(m.group(0)), text)


def printable(text: str, *, keep_colour: bool = False) -> str:
    """``text`` with every control character a terminal would act on made visible.

    Line feeds and tabs are kept; with ``keep_colour`` so are plain colour sequences.
    """
    if _CONTROL.search(text) is None:
        return text
    if not keep_colour:
        return _escape(text)
    out: list[str] = []
    last = 0
    for match in _COLOUR.finditer(text):
        out.append(_escape(text[last : match.start()]))
        out.append(match.group(0))
        last = match.end()
    out.append(_escape(text[last:]))
    return "".join(out)


def json_safe(document: str) -> str:
    """A JSON text with DEL, C1 and bidirectional controls written as ``\\u`` escapes.

    These characters can only occur inside JSON strings, so the value is unchanged.
    """
    if _JSON_EXTRA.search(document) is None:
        return document
    return _JSON_EXTRA.sub(lambda m: f"\\u{ord(m.group(0)):04x}", document)
