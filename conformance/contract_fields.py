"""Which envelope fields a golden pins, and whether the contract names them.

``contract-fields.json`` lists, per command (or MCP tool), the ``data`` fields the
contract names and, per error code, the ``error.details`` fields. A ``contract``
case may pin only those: a field that is this implementation's choice belongs in
an ``extension`` case. A pinned field is every object key a golden spells out
(``"..."`` and the list forms are not fields); its path is dotted, with ``[]`` for
a list item (``hits[].citation.id``). An allow-list path ending in ``.*`` allows
every key below it (a map keyed by data, such as ``summary.byType``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.matchers import ELLIPSIS_KEY


def pinned_paths(golden: Any, prefix: str = "") -> set[str]:
    """Every field path a golden spells out (``[]`` marks a list item)."""
    out: set[str] = set()
    if isinstance(golden, dict):
        if golden and all(key.startswith("$") for key in golden):
            if "$each" in golden:
                out |= pinned_paths(golden["$each"], prefix + "[]")
            for item in golden.get("$contains", []) or []:
                out |= pinned_paths(item, prefix + "[]")
            return out
        for key, value in golden.items():
            if key == ELLIPSIS_KEY:
                continue
            path = f"{prefix}.{key}" if prefix else key
            out.add(path)
            out |= pinned_paths(value, path)
    elif isinstance(golden, list):
        for item in golden:
            out |= pinned_paths(item, prefix + "[]")
    return out


@dataclass(frozen=True)
class ContractFields:
    """The allow-list: ``data`` fields per command and ``details`` fields per error code."""

    data: dict[str, frozenset[str]] = field(default_factory=dict)
    details: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def from_json(cls, raw: Any) -> tuple[ContractFields, list[str]]:
        """Build the allow-list from the parsed file; also return its own problems."""
        problems: list[str] = []
        tables: list[dict[str, frozenset[str]]] = []
        for section in ("data", "errorDetails"):
            table: dict[str, frozenset[str]] = {}
            entries = raw.get(section) if isinstance(raw, dict) else None
            if not isinstance(entries, dict):
                problems.append(f"{section}: expected an object")
                entries = {}
            for name, entry in entries.items():
                fields = entry.get("fields") if isinstance(entry, dict) else None
                cite = entry.get("cite") if isinstance(entry, dict) else None
                if not isinstance(cite, str) or not cite.strip():
                    problems.append(
                        f"{section}.{name}: cite must say where the contract names them"
                    )
                if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
                    problems.append(f"{section}.{name}: fields must be a list of strings")
                    continue
                table[name] = frozenset(fields)
            tables.append(table)
        return cls(data=tables[0], details=tables[1]), problems

    @staticmethod
    def _allowed(path: str, allowed: frozenset[str]) -> bool:
        if path in allowed:
            return True
        return any(
            (entry.endswith(".*") and path.startswith(entry[:-1])) or path + ".*" == entry
            for entry in allowed
        )

    def unnamed(self, envelope: Any) -> list[str]:
        """The fields an envelope golden pins that the contract does not name."""
        if not isinstance(envelope, dict):
            return []
        problems: list[str] = []
        command = envelope.get("command", envelope.get("tool"))
        data = pinned_paths(envelope.get("data"))
        if data and isinstance(command, str):
            allowed = self.data.get(command)
            if allowed is None:
                problems.append(
                    f"pins data fields of {command!r}, a command the contract-fields list lacks"
                )
            else:
                problems += [
                    f"pins data.{path}, which the contract does not name for {command!r}"
                    for path in sorted(data)
                    if not self._allowed(path, allowed)
                ]
        error = envelope.get("error")
        if isinstance(error, dict) and isinstance(error.get("code"), str):
            code = error["code"]
            details = pinned_paths(error.get("details"))
            allowed = self.details.get(code, frozenset())
            problems += [
                f"pins error.details.{path}, which the contract does not name for {code}"
                for path in sorted(details)
                if not self._allowed(path, allowed)
            ]
        return problems
