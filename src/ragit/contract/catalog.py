"""The whole error catalog (contract.md §3): every concrete error class of
:mod:`.errors`, :mod:`.fs_errors` and :mod:`.mcp_errors`, imported here so none is missed."""

from __future__ import annotations

from ragit.contract import fs_errors, mcp_errors
from ragit.contract.errors import RagitError

# The modules that declare errors beside ragit.contract.errors (imported for their classes).
_DECLARING = (fs_errors, mcp_errors)


def _leaves(cls: type[RagitError]) -> list[type[RagitError]]:
    out: list[type[RagitError]] = []
    for sub in cls.__subclasses__():
        if "code" in sub.__dict__:
            out.append(sub)
        out.extend(_leaves(sub))
    return out


def catalog() -> list[type[RagitError]]:
    """Every concrete error class, in code order."""
    return sorted(_leaves(RagitError), key=lambda c: c.code)
