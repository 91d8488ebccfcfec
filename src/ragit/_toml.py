"""TOML documents: the one parser for every TOML file RAGit reads."""

from __future__ import annotations

import sys
from typing import Any


def loads(text: str) -> dict[str, Any]:
    """The TOML document ``text`` as plain dicts and lists.

    Raises:
        ValueError: not valid TOML (``tomllib.TOMLDecodeError`` or tomlkit's parse error).
    """
    if sys.version_info >= (3, 11):
        import tomllib

        parsed: dict[str, Any] = tomllib.loads(text)
    else:  # Python 3.10 has no tomllib
        import tomlkit

        parsed = tomlkit.loads(text).unwrap()
    return parsed
