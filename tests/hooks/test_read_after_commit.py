"""A read right after a commit answers: with hooks installed, `query`, `context pack`,
`memory recall` and `ragit-mcp` wait (bounded, reading only) for the hook's ingest of the
new HEAD instead of failing; past the bound the answer stays SNAPSHOT_INGEST_RUNNING.

Real `git commit`s fire the installed hooks; the tests wait for every hook job at teardown.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from tests.snapshot._kit import (
    TIMEOUT,
    RagitRepo,
    indexed_repo,
    private_cache,  # noqa: F401 - autouse fixture
)

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


@pytest.fixture(autouse=True)
def _no_hook_job_outlives_its_test(tmp_path: Path) -> Iterator[None]:
    yield
    deadline = time.monotonic() + TIMEOUT
    while True:
        running = []
        for proc in psutil.process_iter(["cmdline", "cwd"]):
            try:
                cmd, cwd = proc.info["cmdline"] or [], proc.info["cwd"] or ""
            except psutil.Error:
                continue
            if "ragit.hooks.run" in cmd and cwd.startswith(str(tmp_path)):
                running.append(proc)
        if not running:
            return
        if time.monotonic() > deadline:
            for proc in running:
                proc.kill()
            raise AssertionError("a hook-started ingest was still running at teardown")
        time.sleep(0.05)  # background job: a bounded poll is the only way to wait for it


def _hooked(tmp_path: Path) -> RagitRepo:
    """An indexed repository with hooks installed. The wait is the configured one, made long
    (`retrieval.wait_for_ingest`) so that a loaded machine cannot outlast it: the subject is
    that reads wait, not how long a hook's ingest takes."""
    repo = indexed_repo(tmp_path, "docs-basic", commit_init=True)
    assert repo.ragit("hooks", "install", "--format", "json").code == 0
    assert repo.ragit("config", "set", "retrieval.wait_for_ingest", "90").code == 0
    repo.git("commit", "-q", "--no-verify", "-am", "Wait longer for hook ingests")
    return repo


def _commit(repo: RagitRepo, name: str) -> str:
    """A real `git commit` (hooks fire) of one new document; the new HEAD."""
    repo.write(f"docs/{name}.md", f"# {name}\n\nRetries of {name} use a bounded backoff.\n")
    repo.git("add", f"docs/{name}.md")
    repo.git("commit", "-q", "-m", f"Add {name}")
    return repo.head()


@pytest.mark.parametrize(
    "argv",
    [
        ("query", "bounded", "backoff"),
        ("context", "pack", "bounded", "backoff"),
        ("memory", "recall", "bounded", "backoff"),
    ],
)
def test_a_read_right_after_a_commit_with_hooks_answers_from_the_new_commit(
    tmp_path: Path, argv: tuple[str, ...]
) -> None:
    """Contract-mandated (contract §6, docs/contract.md): the read waits for the hook's
    ingest of the new HEAD and answers from it."""
    repo = _hooked(tmp_path)
    head = _commit(repo, "late-decision")
    run = repo.ragit(*argv, "--format", "json")
    assert run.code == 0, run.output
    data = run.data
    assert data["snapshotSha"] == head
    assert data["snapshot"]["status"] == "indexed"
    hits = data.get("hits", data.get("retrievedHits"))
    assert any(h["path"] == "docs/late-decision.md" for h in hits)


def test_ragit_mcp_answers_right_after_a_commit_with_hooks(tmp_path: Path) -> None:
    """Contract-mandated (contract §11, docs/mcp.md): the MCP server waits as the CLI does
    (waiting only reads) and answers from the new commit."""
    import anyio
    from mcp.client.stdio import stdio_client

    from mcp import ClientSession, StdioServerParameters

    repo = _hooked(tmp_path)
    mcp = str(Path(sys.executable).parent / "ragit-mcp")
    params = StdioServerParameters(command=mcp, args=["--cwd", str(repo.root)])

    async def scenario() -> dict:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("ragit_status", {})  # warm: the server is up
            _commit(repo, "late-decision")
            result = await session.call_tool("ragit_query", {"question": "bounded backoff"})
            envelope: dict = json.loads(result.content[0].text)
            return envelope

    envelope = anyio.run(scenario)
    assert envelope["ok"], envelope.get("error")
    assert envelope["data"]["snapshotSha"] == repo.head()


def _hold(repo: RagitRepo, sha: str, seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(repo.root), sha, str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_past_the_bound_a_read_stays_snapshot_ingest_running(tmp_path: Path) -> None:
    """Contract-mandated (docs/contract.md, SNAPSHOT_INGEST_RUNNING): `--wait SECONDS` bounds
    the wait, `--no-wait` and `retrieval.wait_for_ingest = 0` fail at once."""
    repo = indexed_repo(tmp_path, "docs-basic", commit_init=True)
    head = repo.commit({"docs/late.md": "# Late\n\nA late decision.\n"}, "late")
    holder = _hold(repo, head, 60)
    try:
        started = time.monotonic()
        run = repo.ragit("query", "late", "decision", "--wait", "2", "--format", "json")
        assert time.monotonic() - started >= 2
        assert run.code == 3 and run.error["code"] == "SNAPSHOT_INGEST_RUNNING"
        assert run.error["retryable"] is True
        for extra in (["--no-wait"], ["--wait", "0"]):
            run = repo.ragit("context", "pack", "late", *extra, "--format", "json")
            assert run.error["code"] == "SNAPSHOT_INGEST_RUNNING"
        repo.ragit("config", "set", "retrieval.wait_for_ingest", "0")
        recall = repo.ragit("memory", "recall", "late", "--format", "json").data
        assert recall["snapshot"]["status"] == "unavailable"
        assert any("SNAPSHOT_INGEST_RUNNING" in w for w in recall["warnings"])
        bad = repo.ragit("query", "late", "--wait", "soon", "--format", "json")
        assert bad.code == 2 and bad.error["details"]["field"] == "wait"
        both = repo.ragit("query", "late", "--wait", "3", "--no-wait", "--format", "json")
        assert both.code == 2 and both.error["details"]["field"] == "wait"
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
