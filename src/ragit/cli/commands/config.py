"""`ragit config set|get|list` — typed configuration edits and reads."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome
from ragit.cli.render import value
from ragit.contract.models import WireModel
from ragit.ops.config_set import ConfigSetData, set_value


class ConfigEntry(WireModel):
    """One key: its effective value, its default and whether the file sets it."""

    key: str
    value: Any
    default: Any
    set: bool


class ConfigListData(WireModel):
    """Every key RAGit honours (`config list`)."""

    path: str
    entries: list[ConfigEntry]


def _render(data: ConfigSetData) -> str:
    if not data.changed:
        return f"{data.key} is already {value(data.value)}"
    verb = "would change" if data.dry_run else "changed"
    return f"{data.key} {verb}: {value(data.previous)} → {value(data.value)} ({data.path})"


def run_set(inv: Invocation) -> Outcome:
    """Handler for `ragit config set <key> <value>`."""
    data = set_value(
        inv.workspace(), str(inv.params["key"]), str(inv.params["value"]), dry_run=inv.dry_run
    )
    return Outcome(data=data.dump(), text=lambda: _render(data))


def run_get(inv: Invocation) -> Outcome:
    """Handler for `ragit config get <key>`: the value alone on a line in text."""
    from ragit.config import config_entry

    entry = config_entry(inv.workspace(), str(inv.params.get("key") or ""))
    return Outcome(data=entry, text=lambda: value(entry["value"]))


def _render_list(entries: list[dict[str, Any]]) -> str:
    width = max(len(e["key"]) for e in entries)
    lines = []
    for e in entries:
        note = "" if e["set"] else "  (default)"
        lines.append(f"{e['key']:<{width}}  {value(e['value'])}{note}")
    return "\n".join(lines)


def run_list(inv: Invocation) -> Outcome:
    """Handler for `ragit config list`."""
    from ragit.config import config_entries

    ws = inv.workspace()
    entries = config_entries(ws)
    data = {"path": ws.relative(ws.config_path), "entries": entries}
    return Outcome(data=data, text=lambda: _render_list(entries))
