#!/usr/bin/env python3
"""Run RAGit end to end on a throwaway example repository.

Builds the `docs-basic` fixture (a small fictional ledger service with ADRs, a
PRD, an SRS, a spec, a plan and a glossary) in a temporary directory, then runs
the commands a new user would: init, commit, ingest, status, query, context
pack. Each command is printed before it runs. Pass ``--keep`` to keep the
repository and print its path.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixtures.build import build_fixture  # noqa: E402


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    shown = " ".join(a if " " not in a else repr(a) for a in argv)
    print(f"\n$ {shown}", flush=True)
    proc = subprocess.run(argv, cwd=cwd, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"command failed with exit {proc.returncode}: {shown}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keep", action="store_true", help="keep the example repository")
    args = parser.parse_args()
    ragit = shutil.which("ragit", path=str(Path(sys.executable).parent)) or "ragit"
    work = Path(tempfile.mkdtemp(prefix="ragit-quickstart-"))
    repo = work / "ledger"
    env = dict(os.environ)
    env.setdefault("GIT_AUTHOR_NAME", "RAGit Quickstart")
    env.setdefault("GIT_AUTHOR_EMAIL", "quickstart@ragit.invalid")
    env.setdefault("GIT_COMMITTER_NAME", "RAGit Quickstart")
    env.setdefault("GIT_COMMITTER_EMAIL", "quickstart@ragit.invalid")
    try:
        head = build_fixture("docs-basic", repo)
        print(f"example repository: {repo} (HEAD {head})")
        run([ragit, "--version"], repo, env)
        run([ragit, "init", "--yes", "--format", "text"], repo, env)
        run(["git", "add", ".ragit/config.toml", ".gitignore"], repo, env)
        run(["git", "commit", "-q", "-m", "Initialize RAGit"], repo, env)
        run([ragit, "ingest", "--all", "--dry-run", "--format", "text"], repo, env)
        run([ragit, "ingest", "--all", "--format", "text"], repo, env)
        run([ragit, "status", "--format", "text"], repo, env)
        run(
            [
                ragit,
                "query",
                "why do writes need idempotency keys?",
                "--top-k",
                "3",
                "--format",
                "text",
            ],
            repo,
            env,
        )
        run(
            [
                ragit,
                "context",
                "pack",
                "plan the ledger MVP",
                "--budget",
                "300",
                "--view",
                "minimal",
                "--format",
                "text",
            ],
            repo,
            env,
        )
        print("\nDone. In a pipe or an agent's shell the same commands print the JSON envelope.")
        if args.keep:
            print(f"repository kept at {repo}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
