"""Which fields a golden pins, and whether the contract names them.

``contract-fields.json`` lists, per command (or MCP tool), the ``data`` fields the
contract names and, per error code of the catalog (contract §3), the
``error.details`` fields; per repository file, the fields of its JSON the contract
names (``files``); per JSON-RPC method, the result fields (``mcpResults``); and the
requirements whose rule promises a warning (``warnings``). A ``contract`` case may
pin only those — the envelope's own keys (contract §2), a catalog code, the listed
fields, a warning its cited rule promises: anything else is this implementation's
choice and belongs in an ``extension`` case. A pinned field is every object key a
golden spells out (``"..."`` and the list forms are not fields); its path is dotted,
with ``[]`` for a list item (``hits[].citation.id``). An allow-list path ending in
``.*`` allows every key below it (a map keyed by data, such as ``summary.byType``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from conformance.fsdiff import glob_regex
from conformance.matchers import ELLIPSIS_KEY

# The envelope's own keys (contract §2), of the error object and of its recovery.
ENVELOPE_KEYS = frozenset({"command", "tool", "ok", "version", "cwd", "data", "warnings", "error"})
ERROR_KEYS = frozenset({"code", "category", "message", "retryable", "details", "recovery"})
RECOVERY_KEYS = frozenset({"command", "hint"})
_CASE_VARIABLE = re.compile(r"\$\{[^}]*\}")


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
    files: dict[str, frozenset[str]] = field(default_factory=dict)
    mcp_results: dict[str, frozenset[str]] = field(default_factory=dict)
    warnings: frozenset[str] = frozenset()

    @classmethod
    def from_json(cls, raw: Any) -> tuple[ContractFields, list[str]]:
        """Build the allow-list from the parsed file; also return its own problems.

        ``data`` and ``errorDetails`` are required; ``files``, ``mcpResults`` and
        ``warnings`` may be absent (nothing of their kind is then allowed).
        """
        problems: list[str] = []
        tables: list[dict[str, frozenset[str]]] = []
        for section in ("data", "errorDetails", "files", "mcpResults"):
            table: dict[str, frozenset[str]] = {}
            entries = raw.get(section) if isinstance(raw, dict) else None
            if entries is None and section in ("files", "mcpResults"):
                entries = {}
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
        promised = raw.get("warnings", {}) if isinstance(raw, dict) else {}
        if not isinstance(promised, dict) or not all(
            isinstance(cite, str) and cite.strip() for cite in promised.values()
        ):
            problems.append(
                "warnings: expected an object of requirement id to where the rule says so"
            )
            promised = {}
        fields = cls(
            data=tables[0],
            details=tables[1],
            files=tables[2],
            mcp_results=tables[3],
            warnings=frozenset(promised),
        )
        return fields, problems

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
        problems = _unknown_keys("", envelope, ENVELOPE_KEYS)
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
        if isinstance(error, dict):
            problems += _unknown_keys("error.", error, ERROR_KEYS)
            if isinstance(error.get("recovery"), dict):
                problems += _unknown_keys("error.recovery.", error["recovery"], RECOVERY_KEYS)
        if isinstance(error, dict) and isinstance(error.get("code"), str):
            code = error["code"]
            if code not in self.details and not code.startswith("<"):
                problems.append(f"pins error.code {code}, which is not in the contract's catalog")
            details = pinned_paths(error.get("details"))
            allowed = self.details.get(code, frozenset())
            problems += [
                f"pins error.details.{path}, which the contract does not name for {code}"
                for path in sorted(details)
                if not self._allowed(path, allowed)
            ]
        return problems

    def unnamed_in_file(self, path: str, golden: Any) -> list[str]:
        """The fields a ``files[].json`` golden pins that the contract does not name."""
        pinned = pinned_paths(golden)
        if not pinned:
            return []
        general = _CASE_VARIABLE.sub("x", path)
        allowed = next(
            (fields for glob, fields in self.files.items() if glob_regex(glob).match(general)),
            None,
        )
        if allowed is None:
            return [f"pins fields of {path}, a file the contract-fields list lacks"]
        return [
            f"pins {path} field {name}, which the contract does not name"
            for name in sorted(pinned)
            if not self._allowed(name, allowed)
        ]

    def unnamed_in_result(self, method: str, golden: Any) -> list[str]:
        """The fields an ``mcp.result`` golden pins that the contract does not name."""
        pinned = pinned_paths(golden)
        allowed = self.mcp_results.get(method)
        if not pinned:
            return []
        if allowed is None:
            return [f"pins result fields of {method}, a method the contract-fields list lacks"]
        return [
            f"pins {method} result field {name}, which the contract does not name"
            for name in sorted(pinned)
            if not self._allowed(name, allowed)
        ]


def _unknown_keys(prefix: str, golden: dict[str, Any], known: frozenset[str]) -> list[str]:
    return [
        f"pins {prefix}{key}, which is not a key of the envelope (contract §2)"
        for key in sorted(golden)
        if key != ELLIPSIS_KEY and key not in known
    ]


def requires_warning(envelope: Any) -> bool:
    """Whether an envelope golden requires at least one warning (top-level or in data)."""
    if not isinstance(envelope, dict):
        return False
    data = envelope.get("data")
    candidates = [
        envelope.get("warnings"),
        data.get("warnings") if isinstance(data, dict) else None,
    ]
    for golden in candidates:
        if isinstance(golden, list) and golden:
            return True
        if isinstance(golden, dict) and (
            golden.get("$minLen", 0) >= 1 or golden.get("$len", 0) >= 1 or golden.get("$contains")
        ):
            return True
    return False
