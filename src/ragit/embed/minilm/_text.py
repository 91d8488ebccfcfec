"""Tokenizer set-up and input sanitizing shared by both encoders."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from ragit.embed.minilm._errors import EmbeddingModelInvalid

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from tokenizers import Tokenizer

MAX_TOKENS = 256
VOCAB_SIZE = 30522
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def load_tokenizer(path: Path) -> Tokenizer:
    """The WordPiece tokenizer, set up as sentence-transformers uses it.

    The shipped ``tokenizer.json`` truncates at 128 and pads to a fixed 128;
    sentence-transformers truncates at 256 and pads to the longest text of a
    batch. The encoders run each text on its own, so padding is switched off.

    Raises:
        EmbeddingModelInvalid: the file does not parse or has another vocabulary.
    """
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
        raise EmbeddingModelInvalid(str(path), "tokenizer.json does not load") from exc
    if tokenizer.get_vocab_size(with_added_tokens=True) != VOCAB_SIZE:
        raise EmbeddingModelInvalid(
            str(path),
            f"tokenizer vocabulary has {tokenizer.get_vocab_size()} entries, expected {VOCAB_SIZE}",
        )
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


def sanitize(text: str) -> str:
    """``text`` made encodable as UTF-8.

    Lone surrogates (from ``surrogateescape`` decoding or broken JSON) cannot
    cross into the Rust tokenizer; each becomes U+FFFD, which the BERT
    normalizer then drops like NUL and other control characters. So a text
    embeds as if its invalid code points were not there.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text


def check_texts(texts: Sequence[str]) -> None:
    """Reject a bare string or non-string items, which are caller bugs."""
    if isinstance(texts, (str, bytes)):
        raise TypeError("encode() takes a sequence of strings, not a single string")
    for item in texts:
        if not isinstance(item, str):
            raise TypeError(f"encode() takes strings, got {type(item).__name__}")


def encode_each(
    texts: Sequence[str],
    embed: Callable[[str], NDArray[np.float32]],
    *,
    dimension: int,
    workers: int,
    thread_name: str,
) -> NDArray[np.float32]:
    """One row per text, in input order, each text embedded on its own by ``embed``.

    With more than one worker the texts go to a thread pool longest first, so the workers
    finish together.
    """
    import numpy

    out = numpy.empty((len(texts), dimension), dtype=numpy.float32)
    if len(texts) <= 1 or workers == 1:
        for row, text in enumerate(texts):
            out[row] = embed(text)
        return out
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
    with ThreadPoolExecutor(workers, thread_name_prefix=thread_name) as pool:
        vectors = pool.map(lambda i: embed(texts[i]), order)
        for row, vector in zip(order, vectors, strict=True):
            out[row] = vector
    return out
