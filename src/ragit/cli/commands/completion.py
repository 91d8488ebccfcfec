"""`ragit completion bash|zsh|fish` — click's shell completion script for `ragit`."""

from __future__ import annotations

from ragit.cli.invocation import Invocation, Outcome
from ragit.contract.models import WireModel

SHELLS = ("bash", "zsh", "fish")


class CompletionData(WireModel):
    """The script and the shell it is for."""

    shell: str
    script: str


def run(inv: Invocation) -> Outcome:
    """Handler for `ragit completion <shell>`.

    Raises:
        InputInvalid: a shell other than bash, zsh or fish.
    """
    from click.shell_completion import get_completion_class

    from ragit.cli.main import build_cli
    from ragit.contract.errors import InputInvalid

    shell = str(inv.params.get("shell") or "")
    cls = get_completion_class(shell) if shell in SHELLS else None
    if cls is None:
        raise InputInvalid("shell", f"must be one of {', '.join(SHELLS)}")
    script = cls(build_cli(), {}, "ragit", "_RAGIT_COMPLETE").source()
    data = {"shell": shell, "script": script}
    return Outcome(data=data, text=script.rstrip("\n"))
