"""Regular expressions compiled on first use.

A cold process pays for every pattern it compiles, and the Unicode classes of the script
and token rules cost milliseconds each to compile: a command that never tokenizes a
Korean word should not compile the Hangul classes. :func:`lazy` stands in for
``re.compile`` at module level; the first attribute asked of it (``search``, ``findall``,
``sub`` …) compiles the pattern, and each method is then kept on the object, so later
calls cost what a compiled pattern's do.
"""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    """A ``re.Pattern`` compiled when first used (same methods and attributes)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now if it was not yet)."""
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        # Only for names the instance lacks: the first use of each method. Keeping the bound
        # method on the instance makes every later call a plain attribute lookup.
        value = getattr(self.compiled(), name)
        if callable(value):
            self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r})"


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, compiled on first use."""
    return LazyPattern(pattern, flags)  # type: ignore[return-value]
