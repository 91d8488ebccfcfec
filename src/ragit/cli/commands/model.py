"""`ragit model install` — the offline semantic model in one step."""

from __future__ import annotations

import sys
from typing import Any

from ragit.cli.invocation import Invocation, Outcome


def render(data: dict[str, Any]) -> str:
    """What ran (or would run), then where the model is and the next step."""
    dry = data["mode"] == "dry-run"
    if not data["steps"]:
        head = f"model install: {data['model']} and its libraries are already installed"
    elif dry:
        head = "model install (dry-run): would run"
    else:
        head = "model install: installed"
    lines = [head]
    for step in data["steps"]:
        lines.append(f"- {step['name']}: {' '.join(step['argv'])}")
    if data.get("modelPath"):
        lines.append(f"- model files: {data['modelPath']} (sha256 verified)")
    if data.get("int8Model"):
        lines.append(f"- int8 encoder: {data['int8Model']} (ready)")
    if not dry:
        lines.append(f"next: {data['nextStep']}")
    return "\n".join(lines)


def run_install(inv: Invocation) -> Outcome:
    """Handler for `ragit model install`."""
    from ragit.cli.progress import choose_mode
    from ragit.ops.maintenance.model_install import install_model

    mode = choose_mode(verbose=bool(inv.params.get("verbose")), quiet=bool(inv.params.get("quiet")))
    # At a terminal pip draws its own bars (rate, time left) on stderr; otherwise its lines
    # go through the progress display (shown with -v).
    passthrough = sys.stderr if mode == "live" else None
    result = install_model(dry_run=inv.dry_run, progress=inv.progress, passthrough=passthrough)
    data = result.dump()
    return Outcome(data=data, text=lambda: render(data))
