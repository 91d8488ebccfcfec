"""Snapshot selection for reads (contract §5): exact HEAD or an exact explicit commit, no guess."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from tests.snapshot._kit import (
    RAGIT,
    TIMEOUT,
    RagitRepo,
    indexed_repo,
    make_repo,
    private_cache,  # noqa: F401 - autouse fixture
    wait_for_line,
)

from ragit.contract.errors import RagitError

AMBIGUOUS = "0b89"


def _select(repo: RagitRepo, at: str | None):
    from ragit.snapshot._git import GitRepo
    from ragit.snapshot.selection import select_snapshot

    return select_snapshot(repo.ws, GitRepo(repo.root), at)


def _select_error(repo: RagitRepo, at: str | None) -> RagitError:
    with pytest.raises(RagitError) as info:
        _select(repo, at)
    return info.value


@pytest.fixture
def ambiguous(tmp_path: Path) -> RagitRepo:
    """ambiguous-prefix with all three commits indexed."""
    repo = make_repo(tmp_path, "ambiguous-prefix")
    for sha in repo.spec["commits"]:
        repo.ingest(all=True, at=sha)
    return repo


def test_explicit_refs_resolve_to_the_exact_indexed_commit(ambiguous: RagitRepo) -> None:
    """Contract §5: --at accepts HEAD, a full SHA or a unique 4+ hex prefix (explicit-exact)."""
    first, second, head = ambiguous.spec["commits"]

    assert _select(ambiguous, None).selection == "head-exact"
    for ref, sha in [
        ("HEAD", head),
        (second, second),
        (first[:5], first),
        (second[:5], second),
        (head[:4], head),
        (head[:4].upper(), head),
    ]:
        selected = _select(ambiguous, ref)
        assert (selected.resolved_sha, selected.selection) == (sha, "explicit-exact"), ref
        assert selected.block()["requestedRef"] == ref


def test_an_ambiguous_prefix_names_every_candidate(ambiguous: RagitRepo) -> None:
    """Contract §3/§5: a prefix matching several commits → SNAPSHOT_REF_AMBIGUOUS, exit 2."""
    run = ambiguous.ragit("query", "retention", "--at", AMBIGUOUS, "--format", "json")

    assert run.code == 2
    assert run.error["code"] == "SNAPSHOT_REF_AMBIGUOUS"
    assert run.error["details"] == {
        "requestedRef": AMBIGUOUS,
        "candidates": sorted(ambiguous.spec["commits"][:2]),
    }


@pytest.mark.parametrize("ref", ["main", "v1", "HEAD~1", "abc", "0b89z", "-x", "main^{commit}"])
def test_branch_names_tags_rev_expressions_and_short_refs_are_invalid(
    ambiguous: RagitRepo, ref: str
) -> None:
    """Contract §5: reads accept no branch, tag or rev expression → SNAPSHOT_REF_INVALID."""
    ambiguous.git("tag", "v1", ambiguous.spec["commits"][0])

    error = _select_error(ambiguous, ref)

    assert error.code == "SNAPSHOT_REF_INVALID"
    assert error.details["requestedRef"] == ref
    # docs/contract.md: a ref git resolves also names its commit (the recovery stays null)
    assert set(error.details) <= {"requestedRef", "resolvedSha"}


def test_an_unknown_sha_is_an_invalid_ref_with_exit_2(tmp_path: Path) -> None:
    """Contract §3/§5: a well-formed SHA that names no commit → SNAPSHOT_REF_INVALID, exit 2."""
    repo = indexed_repo(tmp_path, "docs-basic")

    full = repo.ragit("query", "ledger", "--at", "f" * 40, "--format", "json")
    branch = repo.ragit("query", "ledger", "--at", "main", "--format", "json")

    assert full.code == 2 and full.error["code"] == "SNAPSHOT_REF_INVALID"
    assert branch.code == 2 and branch.error["code"] == "SNAPSHOT_REF_INVALID"
    assert full.error["recovery"]["command"] is None


def test_an_indexed_commit_on_another_branch_can_be_selected(tmp_path: Path) -> None:
    """Contract §5: any commit of the repository may be selected, on any branch."""
    repo = make_repo(tmp_path, "branches")
    feature = repo.spec["branches"]["feature"]
    repo.ingest(all=True, at=feature)

    run = repo.ragit("query", "instant payout API", "--at", feature[:7], "--format", "json")

    assert run.code == 0, run.output
    assert run.data["snapshotSha"] == feature
    assert run.data["snapshot"]["selection"] == "explicit-exact"
    assert run.data["snapshot"]["branch"] == "main"
    assert "docs/spec/instant-payout-api.md" in {h["path"] for h in run.data["hits"]}


def test_an_unindexed_head_names_the_nearest_indexed_ancestor_and_the_since_recovery(
    tmp_path: Path,
) -> None:
    """Contract §3/§5: SNAPSHOT_NOT_INDEXED names nearestIndexedAncestor, never uses it."""
    repo = make_repo(tmp_path, "docs-basic")
    first = repo.spec["commits"][1]
    repo.ingest(all=True, at=first)

    run = repo.ragit("query", "ledger", "--format", "json")

    assert run.code == 3
    assert run.error["code"] == "SNAPSHOT_NOT_INDEXED"
    assert run.error["details"] == {
        "resolvedSha": repo.spec["head"],
        "nearestIndexedAncestor": first,
    }
    assert run.error["recovery"]["command"] == f"ragit ingest --since {first}"


def test_an_unindexed_head_without_indexed_ancestors_recovers_with_ingest_all(
    tmp_path: Path,
) -> None:
    """Contract §3: no indexed ancestor → recovery `ragit ingest --all`, no ancestor named."""
    repo = make_repo(tmp_path, "docs-basic")

    error = _select_error(repo, None)

    assert error.code == "SNAPSHOT_NOT_INDEXED"
    assert error.details == {"resolvedSha": repo.spec["head"]}
    assert error.recovery == "ragit ingest --all"


def test_an_unindexed_explicit_commit_recovers_with_ingest_all_at_that_commit(
    tmp_path: Path,
) -> None:
    """Contract §3: for an explicit commit the recovery is `ragit ingest --all --at <sha>`."""
    repo = indexed_repo(tmp_path, "docs-basic")
    older = repo.spec["commits"][1]

    run = repo.ragit("query", "ledger", "--at", older[:8], "--format", "json")

    assert run.code == 3 and run.error["code"] == "SNAPSHOT_NOT_INDEXED"
    assert run.error["details"]["resolvedSha"] == older
    assert run.error["recovery"]["command"] == f"ragit ingest --all --at {older}"


def test_an_unborn_head_is_not_indexed_with_a_null_sha_and_git_status_recovery(
    tmp_path: Path,
) -> None:
    """Contract §3: unborn HEAD → SNAPSHOT_NOT_INDEXED, resolvedSha null, recovery `git status`."""
    repo = make_repo(tmp_path, "empty")

    run = repo.ragit("query", "anything", "--format", "json")

    assert run.code == 3
    assert run.error["code"] == "SNAPSHOT_NOT_INDEXED"
    assert run.error["details"] == {"resolvedSha": None}
    assert run.error["recovery"]["command"] == "git status"


def test_a_dirty_worktree_is_read_from_the_commit_with_a_warning(tmp_path: Path) -> None:
    """Contract §5: reads use the committed snapshot; worktreeDirty true and a warning."""
    repo = indexed_repo(tmp_path, "docs-basic", commit_init=True)
    clean = repo.query("idempotency")
    (repo.root / "docs/adr/0002-idempotency-keys.md").write_text("# Gone\n", encoding="utf-8")

    dirty = repo.ragit("query", "idempotency", "--format", "json")

    assert clean["snapshot"]["worktreeDirty"] is False and clean["warnings"] == []
    assert dirty.code == 0
    assert dirty.data["snapshot"]["worktreeDirty"] is True
    assert any("uncommitted" in w for w in dirty.envelope["warnings"])
    assert [h["citation"] for h in dirty.data["hits"]] == [h["citation"] for h in clean["hits"]]


# ---------------------------------------------------------------- HEAD moving during selection


def _three_indexed_commits(tmp_path: Path) -> tuple[RagitRepo, list[str]]:
    repo = make_repo(tmp_path, "ambiguous-prefix")
    commits = list(repo.spec["commits"])
    for sha in commits:
        repo.ingest(all=True, at=sha)
    return repo, commits


def _move_head(repo: RagitRepo, sha: str) -> None:
    repo.git("update-ref", "refs/heads/main", sha)


def test_a_head_that_moves_once_during_selection_is_reselected(tmp_path: Path) -> None:
    """Contract §5: HEAD read before and after loading; one move → retried on the new HEAD."""
    repo, (_c1, c2, _c3) = _three_indexed_commits(tmp_path)
    release = tmp_path / "release"
    proc = repo.popen(
        "query",
        "retention",
        "--format",
        "json",
        env={"RAGIT_FAULT_PAUSE_AT": "selection-loaded", "RAGIT_FAULT_RELEASE": str(release)},
    )
    try:
        wait_for_line(proc.stderr, "ragit-fault: paused at selection-loaded")
        _move_head(repo, c2)
    finally:
        release.touch()
        out, _err = proc.communicate(timeout=TIMEOUT)

    import json

    envelope = json.loads(out.strip().splitlines()[-1])
    assert proc.returncode == 0, envelope
    assert envelope["data"]["snapshotSha"] == c2
    assert envelope["data"]["snapshot"]["selection"] == "head-exact"


def _bytes_in_pipe(fd: int) -> int:
    buf = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return int.from_bytes(buf, sys.byteorder)


def _until(predicate, what: str) -> None:
    """Bounded poll on a background process's state (no timing assertion)."""
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.005)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses Linux pipe and /proc APIs")
def test_a_head_that_moves_twice_during_selection_fails_with_repository_state_changed(
    tmp_path: Path,
) -> None:
    """Contract §3/§5: a second move while selecting → REPOSITORY_STATE_CHANGED (exit 3, retryable).

    The reader is held twice between loading a manifest and re-reading HEAD: first by the
    fault pause, then by a full stderr pipe that blocks its second pause message.
    """
    repo, (c1, c2, c3) = _three_indexed_commits(tmp_path)
    release = tmp_path / "release"
    message = b"ragit-fault: paused at selection-loaded\n"
    read_end, write_end = os.pipe()
    capacity = fcntl.fcntl(write_end, 1031, 4096)  # F_SETPIPE_SZ: the smallest pipe
    os.write(write_end, b"#" * (capacity - len(message)))  # room for one message only
    env = {
        **os.environ,
        "RAGIT_FAULT_PAUSE_AT": "selection-loaded",
        "RAGIT_FAULT_RELEASE": str(release),
    }
    proc = subprocess.Popen(
        [*RAGIT, "query", "retention", "--format", "json"],
        cwd=repo.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=write_end,
        env=env,
    )
    os.close(write_end)
    try:
        # 1st stop: the pause message filled the pipe; the reader waits for the release file.
        _until(lambda: _bytes_in_pipe(read_end) == capacity, "the first pause")
        _move_head(repo, c2)
        release.touch()
        # 2nd stop: the next pause message cannot be written into the full pipe.
        syscall = Path(f"/proc/{proc.pid}/syscall")
        _until(
            lambda: syscall.read_text(encoding="utf-8").startswith("1 0x2 "),
            "the second pause message to block",
        )
        _move_head(repo, c1)
    finally:
        release.touch()
        stderr = b""
        while chunk := os.read(read_end, 65536):
            stderr += chunk
        os.close(read_end)
        out, _ = proc.communicate(timeout=TIMEOUT)

    import json

    envelope = json.loads(out.decode("utf-8").strip().splitlines()[-1])
    assert proc.returncode == 3, envelope
    error = envelope["error"]
    assert error["code"] == "REPOSITORY_STATE_CHANGED"
    assert error["retryable"] is True
    assert error["details"] == {"selectedHead": c3, "finalHead": c1, "attempts": 2}
    assert error["recovery"]["command"] == "git status"
    assert stderr.count(message) == 2
