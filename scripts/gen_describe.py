#!/usr/bin/env python3
"""Generate ``src/ragit/contract/describe.json`` from the command registry and its models.

``ragit describe`` reads this file instead of importing pydantic, so it stays
fast. Run with ``--check`` (CI does) to fail when the committed file is stale.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ragit.contract.command_spec import CommandSpec  # noqa: E402
from ragit.contract.registry import COMMANDS  # noqa: E402

TARGET = ROOT / "src" / "ragit" / "contract" / "describe.json"


def _load(dotted: str) -> Any:
    module, name = dotted.split(":")
    return getattr(importlib.import_module(module), name)


def _type_name(schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " | ".join(_type_name(s, defs) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"{_type_name(schema.get('items', {}), defs)}[]"
    if "enum" in schema:
        return "|".join(str(v) for v in schema["enum"])
    return str(kind)


def _summary(schema: dict[str, Any]) -> list[str]:
    defs = schema.get("$defs", {})
    return [
        f"{name}: {_type_name(prop, defs)}" for name, prop in schema.get("properties", {}).items()
    ]


def _common_options(spec: CommandSpec) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {
            "name": "--format",
            "type": "enum",
            "required": False,
            "description": "Output format; json writes the envelope to stdout.",
            "enum": ["text", "json", "both"],
            "defaultValue": spec.pipe_format,
            **({"aliases": list(spec.extra_format_aliases)} if spec.extra_format_aliases else {}),
        }
    ]
    if spec.views:
        out.append(
            {
                "name": "--view",
                "type": "enum",
                "required": False,
                "description": spec.view_description,
                "enum": ["minimal", "default", "full"],
                "defaultValue": "default",
            }
        )
    if spec.input_model:
        out.append(
            {
                "name": "--input",
                "type": "path",
                "required": spec.input_required,
                "description": "JSON request from a repository file or - for stdin; "
                "cannot be combined "
                "with positional or domain options.",
            }
        )
    if spec.supports_dry_run:
        out.append(
            {
                "name": "--dry-run",
                "type": "boolean",
                "required": False,
                "description": "Validate and plan; write nothing.",
                "defaultValue": False,
            }
        )
    if spec.mutating:
        out.append(
            {
                "name": "--verbose",
                "type": "boolean",
                "required": False,
                "description": "Progress lines on stderr even when it is not a terminal (-v).",
                "defaultValue": False,
            }
        )
        out.append(
            {
                "name": "--quiet",
                "type": "boolean",
                "required": False,
                "description": "No progress at all (-q).",
                "defaultValue": False,
            }
        )
    if spec.takes_cwd:
        out.append(
            {
                "name": "--cwd",
                "type": "path",
                "required": False,
                "description": "Any directory inside the repository; normalized to the git root.",
            }
        )
    return out


def describe_spec(spec: CommandSpec) -> dict[str, Any]:
    options: list[dict[str, Any]] = []
    for opt in spec.options:
        entry: dict[str, Any] = {
            "name": opt.name,
            "type": opt.type,
            "required": opt.required,
            "description": opt.description,
        }
        if opt.enum:
            entry["enum"] = list(opt.enum)
        if opt.default is not None:
            entry["defaultValue"] = opt.default
        if opt.maximum is not None:
            entry["minimum"] = 1
            entry["maximum"] = opt.maximum
        if opt.aliases:
            entry["aliases"] = list(opt.aliases)
        if opt.multiple:
            entry["repeatable"] = True
        if opt.domain:
            entry["conflictsWithInput"] = True
        options.append(entry)
    options += _common_options(spec)
    input_schema = None
    if spec.input_model:
        input_schema = _load(spec.input_model).model_json_schema(by_alias=True, mode="validation")
    output_schema = None
    if spec.output_model:
        output_schema = _load(spec.output_model).model_json_schema(
            by_alias=True, mode="serialization"
        )
    return {
        "path": spec.path,
        "summary": spec.summary,
        "description": spec.description,
        "group": spec.group,
        "docSlug": "commands/" + spec.path.replace(" ", "-"),
        "relatedCommands": list(spec.related),
        "stability": "mutating" if spec.mutating else "read-only",
        "mutating": spec.mutating,
        "supportsDryRun": spec.supports_dry_run,
        "supportsRawJsonInput": spec.input_model is not None,
        "inputRequired": spec.input_required,
        "defaultFormat": spec.pipe_format,
        "arguments": [
            {
                "name": a.name,
                "type": a.type,
                "required": a.required,
                "description": a.description,
                **({"variadic": True} if a.variadic else {}),
                **({"inputKey": a.input_key} if a.input_key else {}),
            }
            for a in spec.arguments
        ],
        "options": options,
        "inputSchema": input_schema,
        "outputSchemaSummary": _summary(output_schema) if output_schema else [],
        "outputSchema": output_schema,
        "examples": list(spec.examples),
    }


def generate() -> str:
    specs = {spec.path: describe_spec(spec) for spec in sorted(COMMANDS, key=lambda s: s.path)}
    commands = [
        {
            "path": s["path"],
            "summary": s["summary"],
            "group": s["group"],
            "mutating": s["mutating"],
            "supportsDryRun": s["supportsDryRun"],
        }
        for s in specs.values()
    ]
    doc = {"schemaVersion": 1, "commands": commands, "specs": specs}
    return json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the file is stale")
    args = parser.parse_args()
    text = generate()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(
                f"{TARGET.relative_to(ROOT)} is stale; run scripts/gen_describe.py", file=sys.stderr
            )
            return 1
        print("describe.json is up to date")
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)} ({len(COMMANDS)} commands)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
