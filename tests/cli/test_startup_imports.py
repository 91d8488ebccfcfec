"""What a cold `ragit` process imports: the read path loads only what reading needs.

Every agent call is a fresh process, so each module a command imports is paid on every call
(docs/benchmarks.md, "Where the time goes"). These tests run real processes on a real indexed
repository and read their ``sys.modules`` at exit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# Printed by an exit hook of the child process: every module it imported, and how many
# click commands it built.
_PROBE = """
import atexit, runpy, sys
built = []
def _count():
    import click
    real = click.Command.__init__
    def init(self, *a, **k):
        built.append(type(self).__name__)
        real(self, *a, **k)
    click.Command.__init__ = init
def _report():
    names = sorted(sys.modules)
    import json
    sys.__stderr__.write("\\nMODULES " + json.dumps(names) + "\\n")
    sys.__stderr__.write("BUILT " + json.dumps(built) + "\\n")
atexit.register(_report)
if sys.argv[1] != "--version":
    _count()
sys.argv = ["ragit", *sys.argv[1:]]
runpy.run_module("ragit", run_name="__main__")
"""

# Heavy modules no read command needs: pydantic (the contract's and config's models are
# for input validation and describe), importlib.metadata (distribution scans), the status
# report, every writer, HTTP clients and the terminal UI.
_NEVER_ON_THE_READ_PATH = (
    "pydantic",
    "pydantic_core",
    "importlib.metadata",
    "ragit.contract.models",
    "ragit.ops.status",
    "ragit.ingest",
    "ragit.store.writer",
    "ragit.store.publishing",
    "httpx",
    "rich",
    "tomlkit",
    "subprocess",
)


def _run(cwd: Path, *args: str) -> tuple[set[str], list[str], subprocess.CompletedProcess[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    modules: list[str] = []
    built: list[str] = []
    for line in proc.stderr.splitlines():
        if line.startswith("MODULES "):
            modules = json.loads(line[len("MODULES ") :])
        elif line.startswith("BUILT "):
            built = json.loads(line[len("BUILT ") :])
    assert modules, proc.stderr
    return set(modules), built, proc


def _offenders(modules: set[str], banned: tuple[str, ...]) -> set[str]:
    return {m for m in modules if any(m == b or m.startswith(b + ".") for b in banned)}


def test_version_answers_before_click_or_the_command_registry_is_imported(
    tmp_path: Path,
) -> None:
    """Implementation choice: `ragit --version` imports no third-party package and only the
    entry point of ragit itself."""
    modules, _, proc = _run(tmp_path, "--version")
    assert proc.returncode == 0 and proc.stdout.startswith("ragit ")
    ours = {m for m in modules if m.split(".")[0] == "ragit"}
    assert ours == {"ragit", "ragit.cli", "ragit.cli.main", "ragit._guard"}
    assert not _offenders(modules, ("click", "pydantic", "numpy", "json", "subprocess"))
