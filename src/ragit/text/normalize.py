"""Case and compatibility folding."""

from __future__ import annotations

import unicodedata


def fold(text: str) -> str:
    """NFKC-normalized and lower-cased ``text`` (what the placeholder embedding splits)."""
    return unicodedata.normalize("NFKC", text).lower()
