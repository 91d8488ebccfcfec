"""Process-wide policy, chosen by an entry point and never by a library function.

The library only announces the moments a policy may act on; the entry point (the ``ragit``
CLI, the ``ragit-mcp`` server, or a program embedding ragit) decides what happens there.
With nothing registered, nothing happens.
"""

from __future__ import annotations

TYPE_CHECKING = False  # imported on every CLI start: typing stays out of the way
if TYPE_CHECKING:
    from collections.abc import Callable

# Moment name → the entry point's hook for it.
_hooks: dict[str, Callable[[], None]] = {}


def on_manifest_loaded(hook: Callable[[], None] | None) -> None:
    """Run ``hook`` after each manifest the process parses from disk (``None``: nothing).

    The short-lived ``ragit`` CLI registers :func:`gc.freeze` here: a parsed manifest's objects
    (one per chunk id and document) live until the process ends, and every later full
    collection would traverse them again. A long-lived process keeps the default.
    """
    if hook is None:
        _hooks.pop("manifest_loaded", None)
    else:
        _hooks["manifest_loaded"] = hook


def manifest_loaded() -> None:
    """Announce that a manifest was just parsed from disk."""
    hook = _hooks.get("manifest_loaded")
    if hook is not None:
        hook()
