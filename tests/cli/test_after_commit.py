"""The minutes after a commit, hooks that fail, provider changes, recoveries that run:
real git repositories, a real writer lock held by another process, real hooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.cli._pty import indexed_docs_basic

from fixtures.build import build_fixture

RAGIT = [sys.executable, "-m", "ragit"]

# A process that holds the store's writer lock as an ingest of one commit would.
HOLDER = """
import sys, time
from pathlib import Path
from ragit.store.lock import WriterLock
from ragit.workspace import Workspace
ws = Workspace(Path(sys.argv[1]))
with WriterLock.acquire(ws, command="ingest", head_sha=sys.argv[2]):
    print("held", flush=True)
    time.sleep(float(sys.argv[3]))
"""


# A process that holds the hook runner's lock, as the background hook ingest does while it
# plans (before it takes the writer lock).
RUNNER = """
import os, sys, time
from pathlib import Path
from ragit._lock import flocked
from ragit.workspace import Workspace
ws = Workspace(Path(sys.argv[1]))
owner = {"token": "t", "pid": os.getpid(), "command": "hook-ingest"}
with flocked(ws.hook_run_path, wait_s=0, owner=owner):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*RAGIT, *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def _json(args: list[str], cwd: Path, **env: str) -> dict:
    out = _run([*args, "--format", "json"], cwd, **env)
    return json.loads(out.stdout)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def _commit_doc(root: Path, name: str, text: str) -> str:
    (root / "docs" / name).write_text(text, encoding="utf-8")
    _git(root, "add", f"docs/{name}")
    _git(root, "commit", "-qm", f"Add {name}")
    return _git(root, "rev-parse", "HEAD")


def _hold_lock(root: Path, sha: str, seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root), sha, str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "held"
    return holder


def _stop(holder: subprocess.Popen[str]) -> None:
    holder.kill()
    holder.wait()
    if holder.stdout is not None:
        holder.stdout.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """docs-basic, initialized, committed and ingested by real processes once per worker."""
    return indexed_docs_basic(tmp_path / "repo")


# ---------------------------------------------------------------- item 5


def test_init_next_names_the_config_commit_and_hooks_install(tmp_path: Path) -> None:
    root = tmp_path / "r"
    build_fixture("docs-basic", root)
    data = _json(["init", "--yes"], root)["data"]
    nxt = data["nextActions"]
    commit = next(a for a in nxt if a.startswith("git add"))
    assert ".ragit/config.toml" in commit and ".gitignore" in commit
    assert "ragit hooks install" in nxt
    subprocess.run(commit, shell=True, cwd=root, check=True, capture_output=True)
    assert _git(root, "status", "--porcelain", "--", ".ragit/config.toml", ".gitignore") == ""


def test_query_while_an_ingest_of_head_runs_is_retryable(repo: Path) -> None:
    head = _commit_doc(repo, "late.md", "# Late\n\nA decision made late.\n")
    holder = _hold_lock(repo, head, 30)
    try:
        for argv in (
            ["query", "decision", "--wait", "1"],
            ["context", "pack", "decision", "--wait", "1"],
        ):
            env = _json(argv, repo)
            error = env["error"]
            assert error["code"] == "SNAPSHOT_INGEST_RUNNING", error
            assert error["category"] == "not_ready" and error["retryable"] is True
            assert error["details"]["resolvedSha"] == head
            assert error["details"]["owner"]["pid"] == holder.pid
            assert error["details"]["owner"]["headSha"] == head
            assert error["details"]["retryAfterMs"] > 0
            assert error["recovery"]["command"] == "ragit ingest --wait"
        assert _run(["query", "decision", "--no-wait", "--format", "json"], repo).returncode == 3
        status = _json(["status"], repo)["data"]["snapshot"]
        assert status["recovery"] == "ragit ingest --wait"
    finally:
        _stop(holder)


def test_query_while_the_hook_runner_plans_head_is_retryable(repo: Path) -> None:
    indexed = _git(repo, "rev-parse", "HEAD")
    head = _commit_doc(repo, "late.md", "# Late\n\nA decision made late.\n")
    runner = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(repo), "30"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert runner.stdout is not None and runner.stdout.readline().strip() == "held"
        error = _json(["query", "decision", "--wait", "1"], repo)["error"]
        assert error["code"] == "SNAPSHOT_INGEST_RUNNING", error
        assert error["details"]["owner"]["pid"] == runner.pid
        assert error["details"]["owner"]["command"] == "hook-ingest"
        assert error["details"]["resolvedSha"] == head
        # an older commit is not what the runner ingests: it stays an ordinary read
        assert _json(["query", "decision", "--at", indexed], repo)["ok"] is True
    finally:
        _stop(runner)
    assert _json(["query", "decision"], repo)["error"]["code"] == "SNAPSHOT_NOT_INDEXED"


def test_a_writer_of_another_commit_leaves_snapshot_not_indexed(repo: Path) -> None:
    indexed = _git(repo, "rev-parse", "HEAD")
    _commit_doc(repo, "late.md", "# Late\n\nA decision made late.\n")
    holder = _hold_lock(repo, indexed, 30)
    try:
        error = _json(["query", "decision"], repo)["error"]
        assert error["code"] == "SNAPSHOT_NOT_INDEXED"
        assert error["retryable"] is False
    finally:
        _stop(holder)


def test_ingest_wait_waits_for_the_running_writer(repo: Path) -> None:
    head = _commit_doc(repo, "late.md", "# Late\n\nA decision made late.\n")
    holder = _hold_lock(repo, head, 30)
    try:
        busy = _json(["ingest"], repo)["error"]
        assert busy["code"] == "STORE_WRITE_BUSY"
    finally:
        _stop(holder)
    holder = _hold_lock(repo, head, 6)
    started = time.monotonic()
    out = _run(["ingest", "--wait", "-v", "--format", "json"], repo)
    waited = time.monotonic() - started
    _stop(holder)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["data"]["commitSha"] == head
    assert waited >= 1.5
    assert "for the writer" in out.stderr and f"pid {holder.pid}" in out.stderr
    assert _json(["query", "decision"], repo)["ok"] is True


def test_ingest_wait_gives_up_after_the_timeout(repo: Path) -> None:
    head = _commit_doc(repo, "late.md", "# Late\n\nA decision made late.\n")
    holder = _hold_lock(repo, head, 60)
    try:
        started = time.monotonic()
        env = _json(["ingest", "--wait", "--wait-timeout", "1"], repo)
        assert time.monotonic() - started < 20
        assert env["error"]["code"] == "STORE_WRITE_BUSY"
        bad = _run(["ingest", "--wait", "--wait-timeout", "abc", "--format", "text"], repo)
        assert bad.returncode == 2
        assert "'--wait-timeout'" in bad.stderr
    finally:
        _stop(holder)


def test_snapshot_not_indexed_offers_the_indexed_ancestor_to_query(repo: Path) -> None:
    ancestor = _git(repo, "rev-parse", "HEAD")
    _commit_doc(repo, "late.md", "# Late\n\nA decision made late.\n")
    env = _json(["query", "decision"], repo)
    assert env["error"]["details"] == {
        "resolvedSha": _git(repo, "rev-parse", "HEAD"),
        "nearestIndexedAncestor": ancestor,
    }  # the machine contract is unchanged
    text = _run(["query", "decision", "--format", "text"], repo)
    offered = f"ragit query --at {ancestor}"
    assert offered in text.stderr
    answer = _json(["query", "decision", "--at", ancestor], repo)
    assert answer["ok"] is True and answer["data"]["snapshotSha"] == ancestor


# ---------------------------------------------------------------- item 6


def _wait_for_hook_record(root: Path, sha: str) -> dict:
    log = root / ".ragit" / "runtime" / "hooks.log"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if log.exists():
            for line in log.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if record.get("commitSha") == sha or (
                    record.get("ok") is False and "code" in record
                ):
                    return record
        time.sleep(0.2)
    raise AssertionError(f"no hook record for {sha}: {log.read_text() if log.exists() else ''}")


def test_a_hook_ingest_of_a_partial_commit_proceeds_and_status_shows_it(repo: Path) -> None:
    assert _run(["hooks", "install"], repo).returncode == 0
    # another document edited but not staged: a partial commit
    edited = next((repo / "docs").rglob("*.md"))
    edited.write_text(edited.read_text(encoding="utf-8") + "\nUnstaged.\n", encoding="utf-8")
    head = _commit_doc(repo, "late.md", "# Late\n\nA decision made late.\n")
    record = _wait_for_hook_record(repo, head)
    assert record["ok"] is True, record
    assert any(edited.name in w for w in record["warnings"])
    status = _json(["status"], repo)["data"]
    assert status["snapshot"]["status"] == "indexed"
    last = status["hooks"]["lastRun"]
    assert last["outcome"] == "ok" and last["commitSha"] == head and last["hook"] == "post-commit"
    assert last["recordedAt"] and last["warnings"]
    hooks = _json(["hooks", "status"], repo)["data"]
    assert hooks["lastRun"]["commitSha"] == head
    text = _run(["status", "--format", "text"], repo).stdout
    assert "last hook:" in text and "post-commit" in text


def test_a_failed_hook_run_is_shown_with_its_code(repo: Path) -> None:
    log = repo / ".ragit" / "runtime" / "hooks.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "recordedAt": "2026-12-01T10:00:00+00:00",
        "hook": "post-commit",
        "ok": False,
        "code": "EMBEDDING_PROVIDER_FAILED",
        "message": "the provider timed out",
        "recovery": "ragit ingest --all",
    }
    log.write_text("Traceback noise\n" + json.dumps(record) + "\n", encoding="utf-8")
    last = _json(["status"], repo)["data"]["hooks"]["lastRun"]
    assert last["outcome"] == "failed" and last["code"] == "EMBEDDING_PROVIDER_FAILED"
    for argv in (["status"], ["hooks", "status"]):
        text = _run([*argv, "--format", "text"], repo).stdout
        assert "failed (EMBEDDING_PROVIDER_FAILED)" in text and "2026-12-01T10:00:00" in text


def test_doctor_reports_a_hook_whose_interpreter_moved_and_install_repairs_it(
    repo: Path,
) -> None:
    assert _run(["hooks", "install"], repo).returncode == 0
    hooks_dir = repo / ".git" / "hooks"
    for hook in ("post-commit", "post-merge", "post-rewrite", "post-checkout"):
        path = hooks_dir / hook
        text = path.read_text(encoding="utf-8")
        path.write_text(
            "\n".join(
                "RAGIT_PYTHON=/moved/venv/bin/python" if line.startswith("RAGIT_PYTHON=") else line
                for line in text.splitlines()
            )
            + "\n",
            encoding="utf-8",
        )
    _commit_doc(repo, "late.md", "# Late\n\nA decision made late.\n")  # the hook runs, and cannot
    last = _json(["status"], repo)["data"]["hooks"]["lastRun"]
    assert last["outcome"] == "failed" and last["code"] == "HOOK_INTERPRETER_MISSING"
    assert last["recovery"] == "ragit hooks install"
    env = _json(["doctor"], repo)
    check = next(c for c in env["data"]["checks"] if c["name"] == "hooks.interpreter")
    assert check["ok"] is False and check["recovery"] == "ragit hooks install"
    assert "/moved/venv/bin/python" in check["detail"]
    assert env["error"]["code"] == "DOCTOR_CHECKS_FAILED"
    assert _run(check["recovery"].split()[1:], repo).returncode == 0
    env = _json(["doctor"], repo)
    check = next(c for c in env["data"]["checks"] if c["name"] == "hooks.interpreter")
    assert check["ok"] is True, check
    assert sys.executable in (hooks_dir / "post-commit").read_text(encoding="utf-8")


# ---------------------------------------------------------------- item 7


def test_a_provider_change_points_at_migrate_and_query_warns(repo: Path) -> None:
    env = _json(["config", "set", "embedding.provider", "ollama"], repo)
    assert env["ok"] is True
    assert any("ragit migrate embeddings" in w for w in env["warnings"])
    _run(["config", "set", "embedding.provider", "local-placeholder"], repo)
    text = _run(["config", "set", "embedding.provider", "ollama", "--format", "text"], repo)
    assert text.stdout.rstrip().splitlines()[-1] == "next: ragit migrate embeddings"
    status = _run(["status", "--format", "text"], repo).stdout
    assert "embedding:    ollama" in status and "migration:    needed" in status
    query = _json(["query", "double entry"], repo)
    assert query["ok"] is True
    assert any("ragit migrate embeddings" in w for w in query["warnings"])
    assert not any("migrate" in w for w in query["data"]["warnings"])  # data stays the MCP's
    pack = _json(["context", "pack", "double entry"], repo)
    assert any("ragit migrate embeddings" in w for w in pack["warnings"])
    _run(["config", "set", "embedding.provider", "local-placeholder"], repo)
    assert "migration:    not needed" in _run(["status", "--format", "text"], repo).stdout
    assert not any("migrate" in w for w in _json(["query", "double entry"], repo)["warnings"])


# ---------------------------------------------------------------- item 4


def test_an_empty_repository_gets_recoveries_that_run(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    snap = _json(["status"], root)["data"]["snapshot"]
    assert snap["recovery"] == "ragit init --yes"
    assert _run(snap["recovery"].split()[1:], root).returncode == 0
    doctor = _json(["doctor"], root)
    recovery = doctor["error"]["recovery"]["command"]
    assert recovery != "git status"
    assert _json(["status"], root)["data"]["snapshot"]["recovery"] == recovery
    text = _run(["query", "anything", "--format", "text"], root).stderr
    assert f"next: {recovery}" in text
    subprocess.run(recovery, shell=True, cwd=root, check=True, capture_output=True)
    assert _git(root, "rev-parse", "HEAD")  # HEAD is born
    snap = _json(["status"], root)["data"]["snapshot"]
    assert snap["resolvedSha"] is not None and snap["recovery"] == "ragit ingest --all"
    assert _run(["ingest", "--all"], root).returncode == 0
    assert _json(["doctor"], root)["ok"] is True
