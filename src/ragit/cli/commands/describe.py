"""`ragit describe [<command...>]` — the machine-readable contract of each leaf command."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from ragit import _json
from ragit.cli.invocation import Invocation, Outcome
from ragit.contract.errors import InputInvalid


@cache
def load_describe_data() -> dict[str, Any]:
    """The build-time generated contract data (``ragit/contract/describe.json``)."""
    raw = resources.files("ragit.contract").joinpath("describe.json").read_text(encoding="utf-8")
    data: dict[str, Any] = _json.loads(raw)
    return data


def _render_list(data: dict[str, Any]) -> str:
    width = max(len(c["path"]) for c in data["commands"])
    lines = ["RAGit commands (run `ragit describe <command>` for one contract):", ""]
    for entry in data["commands"]:
        flag = "mutating" if entry["mutating"] else "read-only"
        lines.append(f"  {entry['path']:<{width}}  [{flag}] {entry['summary']}")
    return "\n".join(lines)


def _render_spec(spec: dict[str, Any]) -> str:
    lines = [f"ragit {spec['path']} — {spec['summary']}", ""]
    if spec["description"]:
        lines += [spec["description"], ""]
    lines.append(
        f"stability: {spec['stability']}  dry-run: {spec['supportsDryRun']}  "
        f"--input: {spec['supportsRawJsonInput']}  "
        f"default format: text at a terminal, {spec['defaultFormat']} otherwise"
    )
    if spec["arguments"]:
        lines += ["", "arguments:"]
        for arg in spec["arguments"]:
            req = "required" if arg["required"] else "optional"
            lines.append(f"  {arg['name']} ({arg['type']}, {req}): {arg['description']}")
    lines += ["", "options:"]
    for opt in spec["options"]:
        extra = f" one of {'|'.join(opt['enum'])}" if opt.get("enum") else ""
        default = f" default {opt['defaultValue']}" if opt.get("defaultValue") is not None else ""
        lines.append(f"  {opt['name']} ({opt['type']}{extra}{default}): {opt['description']}")
    if spec["examples"]:
        lines += ["", "examples:"] + [f"  {e}" for e in spec["examples"]]
    return "\n".join(lines)


def run(inv: Invocation) -> Outcome:
    """Describe one command, or list them all.

    Raises:
        InputInvalid: a family name or an unknown command (details list availableCommands).
    """
    data = load_describe_data()
    available = [c["path"] for c in data["commands"]]
    words = [w for w in inv.params.get("command", ()) if w]
    if not words:
        listing = {"command": None, "availableCommands": available, "commands": data["commands"]}
        return Outcome(data=listing, text=lambda: _render_list(data))
    path = " ".join(words)
    spec = data["specs"].get(path)
    if spec is None:
        reason = (
            "a command family, not a leaf command"
            if any(p.startswith(path + " ") for p in available)
            else "unknown command"
        )
        raise InputInvalid("command", reason, requested=path, availableCommands=available)
    result = {"command": path, "availableCommands": available, "spec": spec}
    return Outcome(data=result, text=lambda: _render_spec(spec))
