"""The token estimate of contract §8 and §11: whitespace-separated words.

A chunk's ``token_count``, an overlay hit's, the context-pack budget and the MCP
result limit all count this way; no tokenizer is involved.
"""

from __future__ import annotations


def token_estimate(text: str) -> int:
    """Whitespace-separated words of ``text``."""
    return len(text.split())
