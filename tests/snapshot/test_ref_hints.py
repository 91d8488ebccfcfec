"""`--at` with a ref git can resolve: still SNAPSHOT_REF_INVALID, but naming the commit."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from tests.snapshot._kit import (
    indexed_repo,
    private_cache,  # noqa: F401 - autouse fixture
)


@pytest.mark.parametrize("ref", ["HEAD~1", "main", "v1.0"])
def test_a_resolvable_ref_is_refused_naming_its_sha_and_the_command_to_run(
    tmp_path: Path, ref: str
) -> None:
    """Contract-mandated (contract §5: refs stay SNAPSHOT_REF_INVALID, recovery null);
    implementation choice (docs/contract.md): details name `resolvedSha` and the text's
    `next:` is the same command with `--at <sha>`, which runs."""
    repo = indexed_repo(tmp_path, "docs-basic", commit_init=True)
    repo.git("tag", "v1.0", "HEAD~1")
    expected = repo.git("rev-parse", f"{ref}^{{commit}}")
    run = repo.ragit(
        "query", "idempotency", "keys", "--at", ref, "--top-k", "3", "--format", "json"
    )
    assert run.code == 2
    error = run.error
    assert error["code"] == "SNAPSHOT_REF_INVALID"
    assert error["details"] == {"requestedRef": ref, "resolvedSha": expected}
    assert error["recovery"]["command"] is None
    assert expected in error["message"]
    text = repo.ragit(
        "query", "idempotency", "keys", "--at", ref, "--top-k", "3", "--format", "text"
    )
    (line,) = [ln for ln in text.stderr.splitlines() if "next:" in ln]
    command = line.split("next:", 1)[1].strip()
    assert command == f"ragit query --at {expected} 'idempotency keys' --top-k 3 --format text"
    argv = shlex.split(command)[1:]
    if expected == repo.head():
        rerun = repo.ragit(*argv[:-2], "--format", "json")
        assert rerun.code == 0, rerun.stderr
        assert rerun.data["snapshotSha"] == expected
    else:  # that commit is not indexed: the next step is the usual one
        rerun = repo.ragit(*argv[:-2], "--format", "json")
        assert rerun.error["code"] == "SNAPSHOT_NOT_INDEXED"
        assert rerun.error["details"]["resolvedSha"] == expected


def test_a_ref_git_cannot_resolve_names_no_commit(tmp_path: Path) -> None:
    """Contract-mandated (contract §3, §5): nothing is invented for an unknown ref."""
    repo = indexed_repo(tmp_path, "docs-basic", commit_init=True)
    run = repo.ragit("context", "pack", "keys", "--at", "no-such-branch", "--format", "json")
    assert run.error["code"] == "SNAPSHOT_REF_INVALID"
    assert run.error["details"] == {"requestedRef": "no-such-branch"}
