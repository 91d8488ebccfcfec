"""Git hooks (contract §12; docs/contract.md, hooks): real `git` commands fire the installed
scripts.

The hook starts the ingest in the background and returns; the tests wait for that job
with a bounded poll of ``.ragit/runtime/hooks.log`` (the one place a poll is acceptable)
and, at teardown, for every hook job still running in their repositories.
"""

from __future__ import annotations

import hashlib
import json
import os
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
    tree_state,
)

HOOKS = ("post-commit", "post-merge", "post-rewrite", "post-checkout")
ADR = "docs/adr/0002-idempotency-keys.md"


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


def _log(root: Path) -> list[dict]:
    path = root / ".ragit" / "runtime" / "hooks.log"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def _wait_for_ingest(
    root: Path, sha: str, hook: str | None = None, *, tolerate_failures: bool = False
) -> dict:
    """The hooks.log record of a successful ingest of ``sha`` (by ``hook``), bounded poll.

    Any failed hook run fails the test at once, unless ``tolerate_failures`` (a rebase fires
    hooks on intermediate states whose worktree is legitimately dirty).
    """
    deadline = time.monotonic() + TIMEOUT
    while True:
        for record in _log(root):
            served = (record["hook"], *record.get("requests", ()))
            if record.get("commitSha") == sha and (hook is None or hook in served):
                assert record["ok"] is True, record
                return record
        failures = [r for r in _log(root) if r.get("ok") is False]
        assert tolerate_failures or not failures, failures
        if time.monotonic() > deadline:
            raise AssertionError(f"no hook ingest of {sha} in {root}/.ragit/runtime/hooks.log")
        time.sleep(0.05)  # background job: a bounded poll is the only way to wait for it


def _hooked(tmp_path: Path) -> RagitRepo:
    """docs-basic with RAGit config committed, HEAD indexed and the hooks installed."""
    repo = indexed_repo(tmp_path, "docs-basic", commit_init=True)
    run = repo.ragit("hooks", "install", "--format", "json")
    assert run.code == 0, run.output
    return repo


def _hooks_dir(repo: RagitRepo) -> Path:
    return repo.root / ".git" / "hooks"


def _edit_adr(repo: RagitRepo, words: str) -> dict[str, str]:
    return {ADR: (repo.root / ADR).read_text(encoding="utf-8") + f"\n## {words}\n\n{words}.\n"}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_post_commit_indexes_the_new_head_in_the_background(tmp_path: Path) -> None:
    """Contract §12: a real `git commit` of a doc brings the new HEAD's snapshot up to date."""
    repo = _hooked(tmp_path)
    base = repo.head()

    head = repo.commit(_edit_adr(repo, "Key rotation"), "rotate keys")
    record = _wait_for_ingest(repo.root, head)

    assert record["hook"] == "post-commit"
    assert record["baseMode"] == "since" and record["processed"] == 1
    assert repo.ws.manifest_path(head).is_file()
    assert repo.manifest(head)["parentSha"] == base
    assert repo.status()["snapshot"]["status"] == "indexed"


def test_git_commit_returns_while_the_hook_ingest_is_still_running(tmp_path: Path) -> None:
    """Contract §12: git is never blocked: the commit is done while the ingest is held paused."""
    repo = _hooked(tmp_path)
    release = tmp_path / "release"
    log = repo.root / ".ragit" / "runtime" / "hooks.log"
    for path, content in _edit_adr(repo, "Held").items():
        repo.write(path, content)
    repo.git("add", "--", ADR)

    env = {**os.environ, "RAGIT_FAULT_PAUSE_AT": "prepared", "RAGIT_FAULT_RELEASE": str(release)}
    done = subprocess.run(
        ["git", "commit", "-q", "-m", "held"],
        cwd=repo.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    head = repo.head()
    try:
        deadline = time.monotonic() + TIMEOUT
        while "ragit-fault: paused at prepared" not in (
            log.read_text(encoding="utf-8") if log.exists() else ""
        ):
            assert time.monotonic() < deadline, "the hook job never reached the pause"
            time.sleep(0.05)  # background job: bounded poll

        # git has returned and the background ingest is parked mid-write.
        assert done.returncode == 0
        assert not repo.ws.manifest_path(head).exists()
        assert repo.status()["writerLock"]["state"] == "active"
    finally:
        release.touch()
    _wait_for_ingest(repo.root, head)
    assert repo.ws.manifest_path(head).is_file()


def test_post_merge_indexes_the_merge_commit(tmp_path: Path) -> None:
    """Contract §12: `git merge` fires post-merge, which indexes the merge commit."""
    repo = _hooked(tmp_path)
    repo.git("checkout", "-q", "-b", "topic")
    topic = repo.commit({"docs/adr/0003-topic.md": "# ADR 3: Topic\n\nMerged later.\n"}, "topic")
    _wait_for_ingest(repo.root, topic)
    repo.git("checkout", "-q", "main")

    repo.git("merge", "-q", "--no-ff", "-m", "merge topic", "topic")
    merged = repo.head()
    _wait_for_ingest(repo.root, merged, "post-merge")

    assert "docs/adr/0003-topic.md" in {d["path"] for d in repo.manifest(merged)["docs"]}


def test_post_rewrite_indexes_an_amended_commit_and_a_rebased_branch(tmp_path: Path) -> None:
    """Contract §12: `commit --amend` and `rebase` fire post-rewrite; the result is indexed."""
    repo = _hooked(tmp_path)
    first = repo.commit(_edit_adr(repo, "Draft"), "draft")
    _wait_for_ingest(repo.root, first)

    repo.git("commit", "-q", "--amend", "-m", "draft, reworded")
    amended = repo.head()
    _wait_for_ingest(repo.root, amended)
    assert amended != first and repo.ws.manifest_path(amended).is_file()

    repo.git("checkout", "-q", "-b", "topic", "HEAD~1")
    topic = repo.commit({"docs/notes/topic.md": "# Topic\n\nRebased note.\n"}, "topic note")
    _wait_for_ingest(repo.root, topic)
    repo.git("rebase", "-q", "main")
    rebased = repo.head()

    _wait_for_ingest(repo.root, rebased, "post-rewrite", tolerate_failures=False)
    assert rebased != topic
    assert {"docs/notes/topic.md", ADR} <= {d["path"] for d in repo.manifest(rebased)["docs"]}


def test_post_checkout_indexes_a_checked_out_branch_but_not_a_file_checkout(
    tmp_path: Path,
) -> None:
    """Contract §12: branch checkouts fire an ingest of the branch HEAD; file checkouts do not."""
    repo = _hooked(tmp_path)
    runtime = repo.ws.runtime_dir
    (repo.root / ADR).write_text("# scratch\n", encoding="utf-8")
    for child in sorted(runtime.rglob("*"), reverse=True):
        child.rmdir() if child.is_dir() else child.unlink()
    runtime.rmdir()

    repo.git("checkout", "--", ADR)

    # The hook creates .ragit/runtime synchronously before it starts a job: nothing here.
    assert not runtime.exists()
    assert repo.git("status", "--porcelain") == ""

    # A branch whose tip no hook has seen (committed with hooks switched off).
    repo.git("checkout", "-q", "-b", "other")
    repo.write("docs/notes/other.md", "# Other\n\nOnly on the other branch.\n")
    repo.git("add", "--", "docs/notes/other.md")
    repo.git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "other")
    other = repo.head()
    repo.git("-c", "core.hooksPath=/dev/null", "checkout", "-q", "main")
    assert not repo.ws.manifest_path(other).exists()

    repo.git("checkout", "-q", "other")

    _wait_for_ingest(repo.root, other, "post-checkout")
    assert "docs/notes/other.md" in {d["path"] for d in repo.manifest(other)["docs"]}


def test_a_foreign_hook_is_chained_keeps_its_exit_status_and_is_restored_by_uninstall(
    tmp_path: Path,
) -> None:
    """Contract §12 / style §10: a foreign hook moves to .legacy, still runs, and comes back."""
    repo = indexed_repo(tmp_path, "docs-basic", commit_init=True)
    hooks = _hooks_dir(repo)
    foreign = {
        "post-commit": "#!/bin/sh\n"
        'echo foreign post-commit >> "$(git rev-parse --show-toplevel)/foreign.log"\n',
        "post-checkout": '#!/bin/sh\necho foreign post-checkout "$3"\nexit 5\n',
    }
    for name, text in foreign.items():
        (hooks / name).write_text(text, encoding="utf-8")
        (hooks / name).chmod(0o755)
    originals = {name: _digest(hooks / name) for name in foreign}

    installed = repo.ragit("hooks", "install", "--format", "json")

    assert installed.code == 0, installed.output
    chained = {h["name"]: h["chained"] for h in installed.data["hooks"]}
    assert chained == {
        "post-commit": True,
        "post-merge": False,
        "post-rewrite": False,
        "post-checkout": True,
    }
    for name in foreign:
        assert _digest(hooks / f"{name}.legacy") == originals[name]
    head = repo.commit(_edit_adr(repo, "Chained"), "chained")
    _wait_for_ingest(repo.root, head)
    assert (repo.root / "foreign.log").read_text(encoding="utf-8") == "foreign post-commit\n"
    (repo.root / ADR).write_text("# scratch\n", encoding="utf-8")
    # post-checkout's exit status becomes git checkout's: the chained status must survive.
    proc = subprocess.run(
        ["git", "checkout", "--", ADR],
        cwd=repo.root,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert proc.returncode == 5 and "foreign post-checkout 0" in proc.stdout + proc.stderr

    removed = repo.ragit("hooks", "uninstall", "--format", "json")

    assert removed.code == 0, removed.output
    for name in foreign:
        assert _digest(hooks / name) == originals[name]
        assert not (hooks / f"{name}.legacy").exists()
    for name in set(HOOKS) - set(foreign):
        assert not (hooks / name).exists()


def test_installing_twice_is_idempotent_and_dry_run_writes_nothing(tmp_path: Path) -> None:
    """Contract §12 / style §10: a second install changes no byte; --dry-run writes nothing."""
    repo = indexed_repo(tmp_path, "docs-basic", commit_init=True)
    hooks = _hooks_dir(repo)
    pristine = tree_state(hooks)

    dry = repo.ragit("hooks", "install", "--dry-run", "--format", "json")

    assert dry.code == 0 and dry.data["dryRun"] is True
    assert {h["state"] for h in dry.data["hooks"]} == {"planned"}
    assert tree_state(hooks) == pristine

    repo.ragit("hooks", "install")
    first = tree_state(hooks)
    again = repo.ragit("hooks", "install", "--format", "json")

    assert again.code == 0
    assert {h["state"] for h in again.data["hooks"]} == {"installed"}
    assert tree_state(hooks) == first
    status = repo.ragit("hooks", "status", "--format", "json")
    states = {h["name"]: h["state"] for h in status.data["hooks"]}
    assert states == dict.fromkeys(HOOKS, "installed")
    before_uninstall = tree_state(hooks)
    dry_uninstall = repo.ragit("hooks", "uninstall", "--dry-run", "--format", "json")
    assert {h["state"] for h in dry_uninstall.data["hooks"]} == {"planned"}
    assert tree_state(hooks) == before_uninstall


def test_the_hook_records_the_absolute_interpreter_that_installed_it(tmp_path: Path) -> None:
    """Contract §12: the script names the absolute interpreter, not whatever `python` is on PATH."""
    repo = _hooked(tmp_path)

    for name in HOOKS:
        text = (_hooks_dir(repo) / name).read_text(encoding="utf-8")
        line = next(line for line in text.splitlines() if line.startswith("RAGIT_PYTHON="))
        recorded = line.split("=", 1)[1].strip("'\"")
        assert Path(recorded).is_absolute()
        assert Path(recorded) == Path(sys.executable)


def test_core_hooks_path_is_honoured(tmp_path: Path) -> None:
    """Contract §12: with core.hooksPath set, hooks are installed there and fire from there."""
    repo = indexed_repo(tmp_path, "docs-basic", commit_init=True)
    repo.git("config", "core.hooksPath", ".githooks")

    run = repo.ragit("hooks", "install", "--format", "json")

    assert run.code == 0, run.output
    assert Path(run.data["hooksDir"]) == repo.root / ".githooks"
    assert sorted(p.name for p in (repo.root / ".githooks").iterdir()) == sorted(HOOKS)
    assert not (_hooks_dir(repo) / "post-commit").exists()
    head = repo.commit(_edit_adr(repo, "Hooks path"), "via core.hooksPath")
    assert _wait_for_ingest(repo.root, head)["hook"] == "post-commit"


def test_a_commit_in_a_linked_worktree_ingests_that_worktree(tmp_path: Path) -> None:
    """Contract §12: hooks are shared through the common git dir; each run ingests its worktree."""
    repo = _hooked(tmp_path)
    tree = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "wt", str(tree))
    _wait_for_ingest(tree, repo.head())  # post-checkout of the new worktree

    status = repo.ragit("hooks", "status", "--format", "json", cwd=tree)
    assert status.code == 0, status.output
    assert Path(status.data["hooksDir"]) == _hooks_dir(repo)
    assert {h["state"] for h in status.data["hooks"]} == {"installed"}

    note = tree / "docs/notes/worktree.md"
    note.write_text("# Worktree note\n\nOnly here.\n", encoding="utf-8")
    repo.git("add", "--", "docs/notes/worktree.md", cwd=tree)
    repo.git("commit", "-q", "-m", "note in the worktree", cwd=tree)
    head = repo.git("rev-parse", "HEAD", cwd=tree)

    record = _wait_for_ingest(tree, head)
    assert record["hook"] == "post-commit"
    assert (tree / ".ragit" / "manifest" / f"{head}.json").is_file()
    assert not repo.ws.manifest_path(head).exists()


def _hook_jobs(root: Path) -> list[psutil.Process]:
    jobs = []
    for proc in psutil.process_iter(["cmdline", "cwd"]):
        try:
            cmd, cwd = proc.info["cmdline"] or [], proc.info["cwd"] or ""
        except psutil.Error:
            continue
        if "ragit.hooks.run" in cmd and cwd.startswith(str(root)):
            jobs.append(proc)
    return jobs


def test_hook_ingests_coalesce_into_one_runner_that_ingests_the_newest_head(
    tmp_path: Path,
) -> None:
    """Implementation choice: a burst of commits while a hook ingest runs leaves one request, not a
    queue of waiting jobs, and the running job ingests the newest HEAD when it is done."""
    repo = _hooked(tmp_path)
    release = tmp_path / "release"
    log = repo.root / ".ragit" / "runtime" / "hooks.log"
    for path, content in _edit_adr(repo, "Held").items():
        repo.write(path, content)
    repo.git("add", "--", ADR)
    env = {**os.environ, "RAGIT_FAULT_PAUSE_AT": "prepared", "RAGIT_FAULT_RELEASE": str(release)}
    subprocess.run(
        ["git", "commit", "-q", "-m", "held"],
        cwd=repo.root,
        env=env,
        capture_output=True,
        timeout=TIMEOUT,
        check=True,
    )
    first = repo.head()
    try:
        deadline = time.monotonic() + TIMEOUT
        while "ragit-fault: paused at prepared" not in (
            log.read_text(encoding="utf-8") if log.exists() else ""
        ):
            assert time.monotonic() < deadline, "the hook job never reached the pause"
            time.sleep(0.05)  # background job: bounded poll
        for i in range(4):
            repo.commit({f"docs/burst-{i}.md": f"# Burst {i}\n\nburstword{i} lives here.\n"}, "b")
        newest = repo.head()
        deadline = time.monotonic() + TIMEOUT
        while len([r for r in _log(repo.root) if "coalesced" in r]) < 4:
            assert time.monotonic() < deadline, _log(repo.root)
            time.sleep(0.05)  # background job: bounded poll
        while len(_hook_jobs(repo.root)) > 1:
            assert time.monotonic() < deadline, "a coalesced hook job kept waiting"
            time.sleep(0.05)  # background job: bounded poll
    finally:
        release.touch()
    record = _wait_for_ingest(repo.root, newest)
    assert record["hook"] == "post-commit"
    records = _log(repo.root)
    assert not [r for r in records if r.get("ok") is False], records
    ingested = [r["commitSha"] for r in records if r.get("commitSha")]
    assert ingested[0] == first and ingested[-1] == newest
    assert len(ingested) <= 3, records  # the held one, the newest (and at most one re-check)
    hits = repo.query("burstword3", at=newest)["hits"]
    assert hits and "docs/burst-3.md" in json.dumps(hits[0])
