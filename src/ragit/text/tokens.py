"""Token counts: the estimate that bounds MCP results, and the word count of contract §8.

:func:`token_estimate` is the unit of the MCP result limit (contract §11: a result
never exceeds 20,000 tokens, as the model reading it counts them). It is built to
count at least as many tokens as the tokenizers that read RAGit's output: byte-level BPE (GPT-4's
``cl100k_base``) and WordPiece (all-MiniLM-L6-v2's), on English prose, on
code-heavy Markdown and on Korean. It splits the text into pieces, each worth
one token, and adds the pieces real tokenizers split further:

* ASCII letters: four lower-case letters, or one or two capitals and up to two
  lower-case letters, per token (``tokenization`` 3, ``getElementById`` 6);
* digits: three per token; a space before a digit is a token of its own;
* an opaque run — six or more letters and digits mixing both, such as a hex SHA
  or base64 — three tokens per four characters;
* Hangul, kana and Han: two tokens per character (GPT-4's BPE spends 1.24 per
  Hangul syllable on Korean prose, up to 1.8 in a sentence of rare syllables);
* other letters: two per token below U+0800 (accented Latin, Greek, Cyrillic),
  one each above;
* punctuation and symbols: one each (WordPiece splits every one), plus one per
  UTF-8 byte beyond two (an emoji is three);
* whitespace: free between words; a run holding a line break is one token,
  indentation and padding one per 31 characters beyond the first;

and never less than a quarter of the UTF-8 bytes, nor than the whitespace-
separated words. On the knowledge corpora it was measured on (Rust RFCs,
Kubernetes KEPs, the Korean React documentation) it counts 1.5× GPT-4's tokens
on English and code, 1.7× on Korean, and more than GPT-4's BPE on every
passage; against the WordPiece of an English-only model it bounds the totals
(1.3× on English, 1.2× on Korean), though a passage dense in digits or Hangul
(which that vocabulary spells out jamo by jamo) can go up to 12% over it.

:func:`word_count` is contract §8's token unit: the whitespace-separated words of a
hit's text, which the context-pack budget and its ``usedTokens`` count (documented as an
estimate) and a chunk's stored ``token_count`` holds.
"""

from __future__ import annotations

from ragit.text.patterns import lazy
from ragit.text.scripts import (
    CJK_COMPAT_IDEOGRAPHS,
    CJK_EXT_A,
    CJK_UNIFIED,
    HANGUL_COMPAT_JAMO,
    HANGUL_JAMO,
    HANGUL_SYLLABLES,
    KANA,
)

# The characters of scripts.CJK_RUN.
_CJK = (
    f"{HANGUL_JAMO}{KANA}{HANGUL_COMPAT_JAMO}{CJK_EXT_A}{CJK_UNIFIED}{HANGUL_SYLLABLES}"
    f"{CJK_COMPAT_IDEOGRAPHS}"
)
_OPAQUE = (
    r"(?<![A-Za-z0-9])(?=[A-Za-z0-9]{6})(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])"
    r"[A-Za-z0-9]+(?![A-Za-z0-9])"
)
# Every match is one token (an opaque run is one match here and gets the rest below).
_PIECE = lazy(
    "|".join(
        [
            _OPAQUE,
            r"[A-Z]{1,2}[a-z]{0,2}",
            r"[a-z]{1,4}",
            r"[0-9]{1,3}",
            rf"[^\W\d_A-Za-z{_CJK}\u0800-\U0010ffff]{{1,2}}",
            rf"[^\W\d_A-Za-z{_CJK}\u0080-\u07ff]",
            rf"[{_CJK}]",
            r"[^\w\s]|_",
            r"\s*\n",
            r"[^\S\n]{1,31}(?=[^\S\n])",
            r"\s(?=\d)",
        ]
    )
)
_OPAQUE_RUN = lazy(_OPAQUE)
_CJK_CHAR = lazy(f"[{_CJK}]")
# A symbol of three or four UTF-8 bytes costs one more; of four bytes, one more again.
_WIDE_SYMBOL = lazy(r"[^\w\s\x00-\u07ff]")
_ASTRAL = lazy(r"[\U00010000-\U0010ffff]")


def token_estimate(text: str) -> int:
    """Tokens of ``text``, never fewer than common BPE and WordPiece tokenizers count."""
    if not text:
        return 0
    count = (
        len(_PIECE.findall(text))
        + len(_CJK_CHAR.findall(text))
        + len(_WIDE_SYMBOL.findall(text))
        + len(_ASTRAL.findall(text))
    )
    count += sum((3 * len(run) + 3) // 4 - 1 for run in _OPAQUE_RUN.findall(text))
    quarter_bytes = (len(text.encode("utf-8", "surrogatepass")) + 3) // 4
    return max(count, quarter_bytes, word_count(text))


def word_count(text: str) -> int:
    """Whitespace-separated words of ``text`` (a chunk's stored ``token_count``)."""
    return len(text.split())
