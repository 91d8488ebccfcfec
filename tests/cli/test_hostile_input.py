"""Hostile input through the real CLI: file names and arguments that are not UTF-8, JSON
nested deeper than a parser recurses. Each gets a typed envelope (or is skipped with a
reason) and nothing half-written; none is an unexpected error (exit 1 with no envelope).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.cli._many import run_many
from tests.snapshot._kit import RagitRepo, indexed_repo, make_repo, private_cache

__all__ = ["private_cache"]

BAD_NAME = b"docs/bad-\xff\xfe.md"
SHOWN_BAD_NAME = "docs/bad-\\xff\\xfe.md"


def _run(repo: RagitRepo, *args: str | bytes, stdin: bytes | None = None) -> tuple[int, Any]:
    """The real CLI with raw ``args`` (bytes allowed); exit code and parsed JSON envelope."""
    proc = subprocess.run(
        [sys.executable, "-m", "ragit", *args, "--format", "json"],
        cwd=repo.root,
        input=stdin,
        capture_output=True,
        check=False,
        timeout=120,
    )
    lines = proc.stdout.decode("utf-8").splitlines()
    assert lines, f"no envelope from {args!r}: exit {proc.returncode}, {proc.stderr!r}"
    return proc.returncode, json.loads(lines[-1])


def _write_bytes_name(root: Path, name: bytes, content: bytes) -> None:
    target = os.path.join(os.fsencode(root), name)
    with open(target, "wb") as handle:
        handle.write(content)


def test_committed_file_name_that_is_not_utf8_is_skipped_with_a_reason(tmp_path: Path) -> None:
    """Implementation choice (docs/contract.md "File names"): such a file is skipped and
    reported with its bytes escaped; the rest of the commit is indexed and every command
    that lists files still prints an envelope."""
    repo = make_repo(tmp_path, "docs-basic", commit_init=True)
    _write_bytes_name(repo.root, BAD_NAME, b"# Bad\n\nA document whose name is not UTF-8.\n")
    subprocess.run(["git", "add", "-A"], cwd=repo.root, check=True)
    subprocess.run(["git", "commit", "-qm", "bad name"], cwd=repo.root, check=True)

    code, env = _run(repo, "ingest", "--all")
    assert code == 0 and env["ok"], env
    reasons = {item["path"]: item["reason"] for item in env["data"]["skippedFiles"]}
    assert "not valid UTF-8" in reasons[SHOWN_BAD_NAME]
    assert env["data"]["documents"] > 0
    manifest = repo.manifest(repo.head())
    assert all("bad-" not in doc["path"] for doc in manifest["docs"])

    code, env = _run(repo, "doctor")
    assert code == 0 and env["ok"], [c for c in env["data"]["checks"] if not c["ok"]]

    # An untracked one in the worktree: listed nowhere as a candidate, never a crash (the
    # commands that list files, in one interpreter: what they print is the point here).
    _write_bytes_name(repo.root, b"docs/new-\xfa.md", b"# New\n")
    listings = [("status",), ("ingest", "--all", "--dry-run"), ("doc", "validate"),
                ("init", "--dry-run"), ("drift",)]  # fmt: skip
    for args, ran in zip(listings, run_many(repo.root, listings).values(), strict=True):
        command = " ".join(a for a in args if a[0] != "-")
        assert ran.code in (0, 1) and ran.envelope["command"] == command, ran.output


@pytest.mark.parametrize(("command", "field"), [("query", "question"),
                                                 ("context pack", "goal"),
                                                 ("memory recall", "goal")])  # fmt: skip
def test_question_that_is_not_utf8_is_input_invalid(
    tmp_path: Path, command: str, field: str
) -> None:
    """Contract §4: an argument holding bytes that are not UTF-8 is INPUT_INVALID (exit 2)."""
    repo = make_repo(tmp_path, "docs-basic")
    code, env = _run(repo, *command.split(), b"storage \xff engine")
    assert code == 2
    assert env["error"]["code"] == "INPUT_INVALID"
    assert env["error"]["details"]["field"] == field


@pytest.mark.parametrize("depth", [100, 5000])
@pytest.mark.parametrize(("command", "key"), [("query", "question"),
                                              ("context pack", "goal"),
                                              ("ingest", "paths")])  # fmt: skip
def test_input_nested_too_deep_is_input_invalid(
    tmp_path: Path, command: str, key: str, depth: int
) -> None:
    """Contract §4: a payload nested past the request bound (64) or past what a parser
    recurses (5,000 levels) is INPUT_INVALID (exit 2), never an unexpected error."""
    repo = make_repo(tmp_path, "docs-basic")
    payload = '{"' + key + '": ' + "[" * depth + "]" * depth + "}"
    code, env = _run(repo, *command.split(), "--input", "-", stdin=payload.encode())
    assert code == 2
    assert env["error"]["code"] == "INPUT_INVALID"
    assert env["error"]["details"]["field"] == "input"
    assert "nested" in env["error"]["details"]["reason"]


def test_manifest_nested_too_deep_is_manifest_invalid_for_every_reader(tmp_path: Path) -> None:
    """Contract §5: a manifest 100,000 levels deep is SNAPSHOT_MANIFEST_INVALID (exit 4) for
    query and context pack; commands that report on snapshots say so in their envelope."""
    repo = indexed_repo(tmp_path, "docs-basic")
    path = repo.ws.manifest_path(repo.head())
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    readers = [["query", "storage engine"], ["context", "pack", "storage engine"]]
    reporters = [
        ["memory", "recall", "storage"],
        ["log"],
        ["drift"],
        ["repair"],
        ["security", "audit"],
        ["narrative", "--dry-run"],
    ]
    ran = run_many(repo.root, [*readers, ["status"], ["doctor"], *reporters])
    for args in readers:
        code, env = ran[" ".join(args)].code, ran[" ".join(args)].envelope
        assert code == 4, env
        assert env["error"]["code"] == "SNAPSHOT_MANIFEST_INVALID"
    code, env = ran["status"].code, ran["status"].envelope
    assert code == 0 and env["data"]["snapshot"]["errorCode"] == "SNAPSHOT_MANIFEST_INVALID"
    code, env = ran["doctor"].code, ran["doctor"].envelope
    assert code == 1 and env["error"]["code"] == "DOCTOR_CHECKS_FAILED"
    for args in reporters:
        code, env = ran[" ".join(args)].code, ran[" ".join(args)].envelope
        assert code == 0 and env["ok"], (args, env)
