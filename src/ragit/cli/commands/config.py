"""`ragit config set|get|list` — typed configuration edits and reads."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome
from ragit.cli.render import paint, value
from ragit.ops.config.edit import ConfigSetResult, set_value


def _render(data: ConfigSetResult) -> str:
    if not data.changed:
        return f"{data.key} is already {value(data.value)}"
    verb = "would change" if data.dry_run else "changed"
    return f"{data.key} {verb}: {value(data.previous)} → {value(data.value)} ({data.path})"


def _migration_after(inv: Invocation, data: ConfigSetResult) -> list[str]:
    """A changed embedding key whose new profile no longer matches the store's chunks."""
    from ragit.config import load_config
    from ragit.contract.errors import RagitError
    from ragit.retrieve.profile_warning import embedding_migration_warning

    if not data.changed or data.dry_run or not data.key.startswith("embedding."):
        return []
    ws = inv.workspace()
    try:
        warning = embedding_migration_warning(ws, load_config(ws))
    except RagitError:
        return []
    return [warning] if warning else []


def run_set(inv: Invocation) -> Outcome:
    """Handler for `ragit config set <key> <value>`."""
    from ragit.retrieve.profile_warning import MIGRATE_EMBEDDINGS

    data = set_value(
        inv.workspace(), str(inv.params["key"]), str(inv.params["value"]), dry_run=inv.dry_run
    )
    migration = _migration_after(inv, data)
    warnings = [*migration, *_committed_drift(inv)]

    def text() -> str:
        lines = [_render(data)]
        lines += [f"{paint('warning:', 'yellow')} {w}" for w in warnings]
        if migration:
            lines.append(f"next: {MIGRATE_EMBEDDINGS}")
        return "\n".join(lines)

    return Outcome(data=data.dump(), text=text, warnings=warnings)


def run_unset(inv: Invocation) -> Outcome:
    """Handler for `ragit config unset <key>`."""
    from ragit.ops.config.edit import unset_value

    data = unset_value(inv.workspace(), str(inv.params["key"]), dry_run=inv.dry_run)
    warnings = _committed_drift(inv)

    def text() -> str:
        if not data.removed:
            line = f"{data.key} is not in {data.path}; nothing to remove"
        else:
            verb = "would remove" if data.dry_run else "removed"
            line = f"{verb} {data.key} (was {value(data.previous)}) from {data.path}"
        return "\n".join([line, *(f"{paint('warning:', 'yellow')} {w}" for w in warnings)])

    return Outcome(data=data.dump(), text=text, warnings=warnings)


def _committed_drift(inv: Invocation) -> list[str]:
    """The warning that the working-tree config now differs from the committed one in keys
    that decide a snapshot (they take effect only once committed)."""
    from ragit.config import load_config
    from ragit.contract.errors import RagitError
    from ragit.snapshot.config_at import drift_warning

    try:
        ws = inv.workspace()
        warning = drift_warning(ws, load_config(ws))
    except RagitError:
        return []
    return [warning] if warning else []


def run_get(inv: Invocation) -> Outcome:
    """Handler for `ragit config get <key>`: the value in force alone on a line in text."""
    from ragit.config import config_entry
    from ragit.ops.config.view import entries_in_force

    ws = inv.workspace()
    key = str(inv.params.get("key") or "")
    config_entry(ws, key)  # an unknown key is INPUT_INVALID, with its nearest keys
    entry = next(e for e in entries_in_force(ws) if e["key"] == key)
    return Outcome(data=entry, text=lambda: value(entry["inForce"]))


_SOURCE_NOTE = {
    "default": "default",
    "provider": "{detail}'s default",
    "environment": "from {detail}",
    "contract": "built-in {detail} contract",
    "terminal": "text at a terminal, json otherwise",
}


def _render_list(entries: list[dict[str, Any]]) -> str:
    """Each key with the value in force; where it does not come from the file, whence."""
    width = max(len(e["key"]) for e in entries)
    lines = []
    for e in entries:
        source = e["source"]
        note = ""
        if source == "provider" and e["inForce"] is None:
            note = f"  (not used by {e['sourceDetail']})"
        elif source != "file":
            note = "  (" + _SOURCE_NOTE[source].format(detail=e["sourceDetail"]) + ")"
        shown = "-" if e["inForce"] is None and source == "terminal" else value(e["inForce"])
        lines.append(f"{e['key']:<{width}}  {shown}{note}")
    return "\n".join(lines)


def run_list(inv: Invocation) -> Outcome:
    """Handler for `ragit config list`."""
    from ragit.ops.config.view import entries_in_force

    ws = inv.workspace()
    entries = entries_in_force(ws)
    data = {"path": ws.relative(ws.config_path), "entries": entries}
    return Outcome(data=data, text=lambda: _render_list(entries))
