"""The token estimate of context-pack budgets and the MCP result cap, and the word count.

:func:`token_estimate` is RAGit's one token unit (docs/contract.md, "The token estimate"): it
counts a context pack's budget, its ``usedTokens``, each pack hit's ``tokens`` and the MCP
result limit (contract §8, §11). It is defined on code points alone — no Unicode database,
no tokenizer vocabulary — so that another implementation computes exactly the same numbers,
and it is built to count at least as many tokens as the tokenizers that read RAGit's output
(GPT-4's byte-level BPE ``cl100k_base``, all-MiniLM-L6-v2's WordPiece) on English prose, on
code-heavy Markdown and on Korean. Each part of the text is worth:

* a run of ASCII letters and digits: when it is six or more characters long and mixes letters
  and digits (a hex SHA, base64), ``ceil(3n/4)``; otherwise one token per piece, read greedily
  from the left: one or two capitals and up to two lower-case letters, or up to four
  lower-case letters, or up to three digits (``tokenization`` 3, ``getElementById`` 6);
* a non-ASCII character: its UTF-8 length minus one (é 1; a Hangul syllable, kana, Han and
  — 2; an emoji 3);
* an ASCII character that is not a letter, digit or whitespace: 1;
* a run of ASCII whitespace: 1 for the part up to its last line feed (if any), then
  ``ceil((k − 1) / 31)`` for the ``k`` characters after it, plus 1 when ``k ≥ 1`` and an
  ASCII digit follows the run;

and the estimate is never less than a quarter of the UTF-8 bytes (rounded up). On the corpora it
was measured on (Rust RFCs, Kubernetes KEPs, the Korean React documentation) it counts about
1.5× GPT-4's tokens on English and code and 1.7× on Korean, and more than GPT-4's BPE on every
passage of 20 tokens or more; against the WordPiece of an English-only model it bounds the totals
(1.3× on English, 1.2× on Korean), though a passage dense in digits or Hangul (which that
vocabulary spells out jamo by jamo) can go up to 12% over it.

:func:`word_count` is the whitespace-separated words of a text: what a chunk's stored
``token_count`` holds (a store field kept for compatibility; no output reads it).
"""

from __future__ import annotations

from ragit.text.patterns import lazy

# A run of six or more ASCII letters and digits holding both: ceil(3n/4) tokens.
_OPAQUE = (
    r"(?<![A-Za-z0-9])(?=[A-Za-z0-9]{6})(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])"
    r"[A-Za-z0-9]+(?![A-Za-z0-9])"
)
_OPAQUE_RUN = lazy(_OPAQUE)
# Every match is one token; the alternatives, tried in this order at each position, are the
# ASCII rules of docs/contract.md (an opaque run is one match here and gets the rest below).
_PIECE = lazy(
    "|".join(
        [
            _OPAQUE,
            r"[A-Z]{1,2}[a-z]{0,2}",
            r"[a-z]{1,4}",
            r"[0-9]{1,3}",
            r"[\x00-\x08\x0e-\x1f!-/:-@\[-`{-\x7f]",
            # whitespace: through the run's last line feed; then one per 31 characters after
            # the first; then one for the last one when a digit follows
            r"[\t-\r ]*\n",
            r"[\t\v\f\r ]{1,31}(?=[\t\v\f\r ])",
            r"[\t\v\f\r ](?=[0-9])",
        ]
    )
)


def token_estimate(text: str) -> int:
    """Tokens of ``text`` (docs/contract.md, "The token estimate")."""
    if not text:
        return 0
    utf8 = len(text.encode("utf-8", "surrogatepass"))
    count = len(_PIECE.findall(text))
    count += sum((3 * len(run) + 3) // 4 - 1 for run in _OPAQUE_RUN.findall(text))
    # Each non-ASCII code point costs its UTF-8 length minus one; an ASCII one costs nothing
    # here, so the sum is the bytes beyond one per code point.
    count += utf8 - len(text)
    return max(count, (utf8 + 3) // 4)


def word_count(text: str) -> int:
    """Whitespace-separated words of ``text`` (a chunk's stored ``token_count``)."""
    return len(text.split())
