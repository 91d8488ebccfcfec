"""A deliberately minimal RAGit, for trying the conformance suite: a few rules, nothing else.

It does not import ``ragit``; it is a second implementation in miniature. It knows

- ``--version`` and ``--help`` (EXE-001, EXE-002);
- ``init [--yes] [--format text|json]``: ``.ragit/config.toml`` and the ``.gitignore`` entries
  of policy safe plus ``.ragit/runtime/`` (CMD-001), in a git repository only
  (NOT_A_GIT_REPOSITORY otherwise);
- ``status [--format text|json|both]``: HEAD's snapshot, always ``missing`` (it cannot ingest);

with text at a terminal and the json envelope otherwise when no ``--format`` is given (FMT-007),
and it breaks one of their rules on purpose: ``--format both`` prints the envelope alone, with
no text and no ``---`` line (FMT-004). Every other command is unknown to it: one line on
stderr, ``error: unknown command '<name>'``, and exit 2.

So against the suite every case whose setup needs another command is an ERROR (it cannot
reach its rule), every case whose step is another command FAILs under that command's rule,
and the FMT-004 cases of ``status`` fail; nothing else may fail.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

VERSION = "0.0.1"
COMMANDS = ("init", "status")
BROKEN = ("FMT-004",)
IGNORED = (
    ".ragit/store/",
    ".ragit/store.next/",
    ".ragit/store.prev/",
    ".ragit/cache/",
    ".ragit/log/",
    ".ragit/reports/",
    ".ragit/security/",
    ".ragit/memory/sessions/",
    ".ragit/memory/working/",
    ".ragit/artifacts/session/",
    ".ragit/manifest/",
    ".ragit/artifacts/harness/",
    ".ragit/runtime/",
)


def git(*args: str) -> str | None:
    done = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def emit(command: str, fmt: str, data: Any, text: str) -> None:
    root = git("rev-parse", "--show-toplevel") or str(Path.cwd())
    envelope = {"command": command, "ok": True, "version": VERSION, "cwd": root}
    envelope.update(data=data, warnings=[])
    if fmt == "text":
        print(text)
    else:  # json, and both: the broken rule, the envelope alone
        print(json.dumps(envelope))


def usage(message: str) -> int:
    sys.stderr.write(f"error: {message}\n")
    return 2


def init(fmt: str) -> int:
    root = git("rev-parse", "--show-toplevel")
    if root is None:
        if fmt == "json":
            print(json.dumps(not_a_repository("init")))
        else:
            sys.stderr.write("[ragit] NOT_A_GIT_REPOSITORY: not inside a git repository\n")
        return 3
    config = Path(root, ".ragit", "config.toml")
    if not config.exists():
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text('[embedding]\nprovider = "local-placeholder"\n', encoding="utf-8")
    ignore = Path(root, ".gitignore")
    present = ignore.read_text(encoding="utf-8").splitlines() if ignore.exists() else []
    missing = [entry for entry in IGNORED if entry not in present]
    if missing:
        lead = "" if not present or ignore.read_bytes().endswith(b"\n") else "\n"
        with ignore.open("a", encoding="utf-8") as handle:
            handle.write(lead + "".join(f"{entry}\n" for entry in missing))
    emit("init", fmt, {"created": [".ragit/config.toml"]}, "initialized")
    return 0


def not_a_repository(command: str) -> dict[str, Any]:
    return {
        "command": command,
        "ok": False,
        "version": VERSION,
        "cwd": str(Path.cwd()),
        "data": None,
        "warnings": [],
        "error": {
            "code": "NOT_A_GIT_REPOSITORY",
            "category": "not_ready",
            "message": "not inside a git repository",
            "retryable": False,
            "details": {"cwd": str(Path.cwd())},
            "recovery": {"command": "git init"},
        },
    }


def status(fmt: str) -> int:
    if git("rev-parse", "--show-toplevel") is None:
        print(json.dumps(not_a_repository("status")))
        return 3
    head = git("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    branch = git("symbolic-ref", "--short", "--quiet", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=all"))
    snapshot = {
        "requestedRef": "HEAD",
        "resolvedSha": head,
        "selection": "head-exact",
        "status": "missing",
        "branch": branch,
        "detached": branch is None,
        "worktreeDirty": dirty,
    }
    emit("status", fmt, {"snapshot": snapshot}, f"snapshot: missing ({head or 'no commit'})")
    return 0


def main(argv: list[str]) -> int:
    """Run one command line; return its exit status."""
    if argv in (["--version"], ["-V"]):
        print(f"ragit {VERSION}")
        return 0
    if not argv or argv == ["--help"]:
        print("usage: ragit [--version] [--help] <init|status> [--format text|json|both]")
        return 0
    command, options = argv[0], argv[1:]
    if command not in COMMANDS:
        return usage(f"unknown command '{command}'")
    # One format rule (FMT-007): text at a terminal, the json envelope otherwise.
    fmt = "text" if sys.stdout.isatty() else "json"
    while options:
        option = options.pop(0)
        if option == "--format" and options and options[0] in ("text", "json", "both"):
            fmt = options.pop(0)
        elif not (command == "init" and option in ("--yes", "--non-interactive")):
            return usage(f"unknown option '{option}'")
    return init(fmt) if command == "init" else status(fmt)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
