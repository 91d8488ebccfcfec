"""`ragit config list`: each key's value in force, and where it comes from.

Several keys are unset by default because their value depends on something else: the
embedding provider decides ``retrieval.alpha`` and the base URL (or its environment
variable does), the built-in contracts decide ``docs_authority.sections_<type>``, the
terminal rule (or ``RAGIT_FORMAT``) decides ``output.format``. :func:`entries_in_force`
adds to each entry of :func:`ragit.config.config_entries` the value RAGit actually uses
(``inForce``) and its ``source``: ``file``, ``default``, ``provider`` (the provider's own
default), ``environment`` (a variable named in ``sourceDetail``), ``contract`` (the type's
built-in sections) or ``terminal`` (text at a terminal, json otherwise).
"""

from __future__ import annotations

import os
from typing import Any

from ragit.config import config_entries, load_config
from ragit.contract.errors import RagitError
from ragit.workspace import Workspace


def _resolved(ws: Workspace) -> dict[str, tuple[Any, str, str | None]]:
    """``key → (value in force, source, detail)`` for the keys whose default is derived."""
    from ragit.embed.profile import provider_spec, resolve_settings
    from ragit.ingest.doctype import DOC_TYPES
    from ragit.ops.authority.contracts import contract_for

    cfg = load_config(ws)
    out: dict[str, tuple[Any, str, str | None]] = {}
    provider = cfg.embedding.provider
    try:
        settings = resolve_settings(cfg.embedding, os.environ)
    except RagitError:
        settings = None
    if settings is not None:
        profile = settings.profile
        spec = provider_spec(profile.provider)
        out["embedding.model"] = (profile.model, "provider", provider)
        out["embedding.dimensions"] = (profile.dimensions, "provider", provider)
        variable = spec.base_url_env
        if variable and os.environ.get(variable):
            out["embedding.base_url"] = (profile.base_url, "environment", variable)
        else:
            out["embedding.base_url"] = (profile.base_url, "provider", provider)
        out["retrieval.alpha"] = (spec.default_alpha, "provider", provider)
    for doc_type in DOC_TYPES:
        sections = list(contract_for(doc_type).sections)
        out[f"docs_authority.sections_{doc_type}"] = (sections, "contract", doc_type)
    from ragit.contract.envelope import FORMAT_ALIASES, FORMATS

    raw = os.environ.get("RAGIT_FORMAT", "").strip().lower()
    env_format = FORMAT_ALIASES.get(raw, raw)
    if env_format in FORMATS:
        out["output.format"] = (env_format, "environment", "RAGIT_FORMAT")
    else:
        out["output.format"] = (None, "terminal", None)
    return out


def entries_in_force(ws: Workspace) -> list[dict[str, Any]]:
    """:func:`ragit.config.config_entries` with ``inForce``, ``source`` and ``sourceDetail``.

    A key the file sets is in force as set, except where something above the file decides:
    ``RAGIT_FORMAT`` over ``output.format`` (docs/contract.md), and the provider's own model
    and size over ``embedding.model = "placeholder-v1"`` and a ``dimensions`` it ignores.

    Raises:
        ConfigInvalid: the file is unreadable, not TOML, or holds a wrong value.
    """
    entries = config_entries(ws)
    derived = _resolved(ws)
    for entry in entries:
        key, value = entry["key"], entry["value"]
        found = derived.get(key)
        overrides = found is not None and (
            (key == "output.format" and found[1] == "environment")
            or (key in ("embedding.model", "embedding.dimensions") and found[0] != value)
        )
        if found is not None and (overrides or (value is None and not entry["set"])):
            entry.update(inForce=found[0], source=found[1], sourceDetail=found[2])
        else:
            source = "file" if entry["set"] else "default"
            entry.update(inForce=value, source=source, sourceDetail=None)
    return entries
