"""The `ragit` process: start-up imports, the runtime guard, signals and pipes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.snapshot._kit import wait_for_line

from fixtures.build import build_fixture

RAGIT = [sys.executable, "-m", "ragit"]


def _imported(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ragit", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return "\n".join(line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines())


@pytest.mark.parametrize("args", [("--help",), ("describe",), ("describe", "query")])
def test_help_and_describe_import_no_engine(args: tuple[str, ...]) -> None:
    """Implementation choice: agents call these in loops; no zvec, pygit2 or httpx."""
    modules = set(_imported(*args).split())
    assert not {m for m in modules if m.split(".")[0] in ("zvec", "pygit2", "httpx", "numpy")}


def test_python_dash_m_ragit_is_the_same_program() -> None:
    """Contract-mandated (§1): `python -m ragit --version` answers like `ragit --version`."""
    proc = subprocess.run([*RAGIT, "--version"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and proc.stdout.startswith("ragit ")


def test_a_zvec_that_cannot_load_gives_one_line_and_exit_3(tmp_path: Path) -> None:
    """Contract-mandated (§1): one clear line on stderr, exit 3, never a traceback."""
    repo = tmp_path / "repo"
    build_fixture("docs-basic", repo)
    env = {**os.environ, "RAGIT_FORCE_ZVEC_UNAVAILABLE": "1"}
    proc = subprocess.run(
        [*RAGIT, "query", "ledger"], cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 3
    init = subprocess.run([*RAGIT, "init", "--yes"], cwd=repo, capture_output=True, check=False)
    assert init.returncode == 0
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True)
    proc = subprocess.run(
        [*RAGIT, "ingest", "--all"], cwd=repo, env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 3
    assert proc.stderr.count("\n") == 1 and "zvec cannot load" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_broken_pipe_ends_quietly() -> None:
    """Implementation choice (docs/contract.md): exit 141, nothing on stderr."""
    proc = subprocess.Popen(
        [*RAGIT, "describe", "--format", "text"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = proc.wait(timeout=60)
    assert code in (0, 141)  # the whole listing may fit the pipe buffer before the close
    assert "Traceback" not in err and "Error" not in err


def test_sigint_exits_130_and_leaves_the_previous_snapshot(tmp_path: Path) -> None:
    """Contract-mandated (§2): SIGINT → 130, nothing half-written visible."""
    repo = tmp_path / "repo"
    build_fixture("docs-basic", repo)
    subprocess.run([*RAGIT, "init", "--yes"], cwd=repo, check=True, capture_output=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True)
    assert (
        subprocess.run(
            [*RAGIT, "ingest", "--all"], cwd=repo, capture_output=True, check=False
        ).returncode
        == 0
    )
    before = json.loads(
        subprocess.run(
            [*RAGIT, "query", "idempotency", "--format", "json"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )["data"]["hits"]
    (repo / "docs" / "adr" / "0003-new.md").write_text(
        "# ADR 0003: New\n\nNew text.\n", encoding="utf-8"
    )
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "new adr"], cwd=repo, check=True)
    release = tmp_path / "release"
    env = {
        **os.environ,
        "RAGIT_FAULT_PAUSE_AT": "store-written",
        "RAGIT_FAULT_RELEASE": str(release),
    }
    child = subprocess.Popen(
        [*RAGIT, "ingest"], cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    lock = repo / ".ragit" / "runtime" / "store-write.lock"
    journals = repo / ".ragit" / "runtime" / "transactions"
    try:  # the writer says when it reaches its pause point: the rows are in the store
        seen = wait_for_line(child.stderr, b"ragit-fault: paused at store-written")
        assert lock.exists() and any(journals.glob("*.json")), seen
        child.send_signal(signal.SIGINT)
        _out, err = child.communicate(timeout=60)
    finally:
        release.touch()  # never leave a child waiting, whatever failed above
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, err
    head_before = subprocess.run(
        ["git", "rev-parse", "HEAD~1"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    again = json.loads(
        subprocess.run(
            [*RAGIT, "query", "idempotency", "--at", head_before, "--format", "json"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )["data"]["hits"]
    assert [h["citation"]["id"] for h in again] == [h["citation"]["id"] for h in before]
    rerun = subprocess.run(
        [*RAGIT, "ingest", "--format", "json"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
