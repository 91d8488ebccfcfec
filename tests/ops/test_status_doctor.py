"""`ragit status` and `ragit doctor` (contract §12) on healthy and broken repositories.

status never writes (not under the repository, not in the user cache); doctor fails with
DOCTOR_CHECKS_FAILED on every broken state, and each failing check's recovery, run as
printed, makes that check pass.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.snapshot._kit import (
    RagitRepo,
    indexed_repo,
    make_repo,
    private_cache,  # noqa: F401 - autouse fixture
    ragit_state,
    tree_state,
)

from ragit.workspace import user_cache_dir


def _truncate_head_manifest(repo: RagitRepo) -> None:
    path = repo.ws.manifest_path(repo.head())
    path.write_bytes(path.read_bytes()[:64])


def _strip_gitignore(repo: RagitRepo) -> None:
    lines = (repo.root / ".gitignore").read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if line not in (".ragit/runtime/", ".ragit/manifest/")]
    (repo.root / ".gitignore").write_text("\n".join(kept) + "\n", encoding="utf-8")


def _bad_config_value(repo: RagitRepo) -> None:
    config = repo.ws.config_path
    text = config.read_text(encoding="utf-8")
    assert "top_k = 5" in text
    config.write_text(text.replace("top_k = 5", "top_k = 0", 1), encoding="utf-8")


def _crashed_writer(repo: RagitRepo) -> None:
    adr = "docs/adr/0002-idempotency-keys.md"
    repo.commit(
        {adr: (repo.root / adr).read_text(encoding="utf-8") + "\n## More\n\nMore.\n"}, "more"
    )
    assert repo.ragit("ingest", env={"RAGIT_FAULT_AT": "store-written"}).code == 137


def _unindexed_head(repo: RagitRepo) -> None:
    repo.commit({"docs/notes/new.md": "# New\n\nA new note.\n"}, "new note")


STATES: dict[str, tuple[str, bool, Callable[[RagitRepo], None] | None]] = {
    # name: (fixture, indexed at HEAD, damage)
    "not-initialized": ("docs-basic", False, None),
    "unborn": ("empty", False, None),
    "not-indexed": ("docs-basic", False, None),
    "indexed": ("docs-basic", True, None),
    "dirty": ("dirty", False, None),
    "secrets-indexed": ("secrets", True, None),
    "head-moved": ("docs-basic", True, _unindexed_head),
    "truncated-manifest": ("docs-basic", True, _truncate_head_manifest),
    "store-deleted": ("docs-basic", True, lambda r: shutil.rmtree(r.ws.store_dir)),
    "reader-copy-deleted": (
        "docs-basic",
        True,
        lambda r: shutil.rmtree(user_cache_dir() / "stores"),
    ),
    "crashed-writer": ("docs-basic", True, _crashed_writer),
    "bad-config": ("docs-basic", True, _bad_config_value),
}


def _state(tmp_path: Path, name: str) -> RagitRepo:
    fixture, indexed, damage = STATES[name]
    if indexed:
        repo = indexed_repo(tmp_path, fixture)
    else:
        repo = make_repo(tmp_path, fixture, init=name != "not-initialized")
    if damage is not None:
        damage(repo)
    return repo


@pytest.mark.parametrize("name", list(STATES))
def test_status_and_doctor_never_write(tmp_path: Path, name: str) -> None:
    """Contract §12: status writes nothing (repo, .git, user cache); doctor nothing in the repo."""
    repo = _state(tmp_path, name)
    everything = lambda: {**tree_state(repo.root), **ragit_state(repo)}  # noqa: E731
    before = everything()

    status = repo.ragit("status")

    assert status.code == 0, status.output
    assert status.envelope["ok"] is True
    assert everything() == before
    assert "Traceback" not in status.output
    repo_before = tree_state(repo.root)
    repo.doctor()  # in-process: the same core the CLI calls
    assert tree_state(repo.root) == repo_before


@pytest.mark.parametrize(
    ("name", "snapshot_status"),
    [
        ("not-initialized", "missing"),
        ("unborn", "missing"),
        ("not-indexed", "missing"),
        ("indexed", "indexed"),
        ("head-moved", "missing"),
        ("truncated-manifest", "invalid"),
        ("store-deleted", "store-unavailable"),
        ("reader-copy-deleted", "indexed"),
    ],
)
def test_status_reports_the_snapshot_state(tmp_path: Path, name: str, snapshot_status: str) -> None:
    """Contract §12: status never fails on a missing snapshot and says why it is not searchable."""
    repo = _state(tmp_path, name)

    data = repo.status()

    snapshot = data["snapshot"]
    assert snapshot["status"] == snapshot_status
    assert data["searchReady"] is (snapshot_status == "indexed")
    assert data["initialized"] is (name != "not-initialized")
    if name == "unborn":
        assert snapshot["resolvedSha"] is None and data["head"] is None
    if name == "head-moved":
        assert snapshot["nearestIndexedAncestor"] == repo.spec["head"]
        assert snapshot["recovery"] == f"ragit ingest --since {repo.spec['head']}"
    if name == "not-indexed":
        assert snapshot["recovery"] == "ragit ingest --all"


def _failing(repo: RagitRepo) -> dict[str, str]:
    report, error = repo.doctor()
    failed = {c["name"]: c["recovery"] for c in report["checks"] if not c["ok"]}
    assert (error is not None) == bool(failed)
    return failed


@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("not-initialized", "ragit.initialized"),
        ("gitignore-missing", "ragit.gitignore"),
        ("bad-config", "ragit.config"),
        ("truncated-manifest", "snapshot.manifests"),
        ("truncated-manifest", "snapshot.head"),
        ("not-indexed", "snapshot.head"),
        ("head-moved", "snapshot.head"),
        ("store-deleted", "store.meta"),
    ],
)
def test_each_failing_doctor_check_is_fixed_by_its_recovery_command(
    tmp_path: Path, name: str, check: str
) -> None:
    """Contract §12: doctor exits 1 (DOCTOR_CHECKS_FAILED); the printed recovery fixes the check."""
    if name == "gitignore-missing":
        repo = indexed_repo(tmp_path, "docs-basic")
        _strip_gitignore(repo)
    else:
        repo = _state(tmp_path, name)

    doctor = repo.ragit("doctor", "--format", "json")

    assert doctor.code == 1
    assert doctor.envelope["ok"] is False
    assert doctor.envelope["error"]["code"] == "DOCTOR_CHECKS_FAILED"
    failed = {c["name"]: c["recovery"] for c in doctor.envelope["data"]["checks"] if not c["ok"]}
    assert check in doctor.envelope["error"]["details"]["failed"]
    argv = shlex.split(failed[check])
    assert argv[0] == "ragit", failed[check]

    fix = repo.ragit(*argv[1:])

    assert fix.code == 0, fix.output
    assert check not in _failing(repo)


def test_an_invalid_config_is_the_first_recovery_even_with_a_broken_store(tmp_path: Path) -> None:
    """With an invalid config every command refuses to run and the other checks read the
    defaults (the zvec store, also when `store.backend` is postgres): doctor's error names
    the config's fix first, not a store repair that would itself refuse the config."""
    repo = _state(tmp_path, "store-deleted")
    _bad_config_value(repo)

    doctor = repo.ragit("doctor", "--format", "json")

    failed = {c["name"]: c["recovery"] for c in doctor.envelope["data"]["checks"] if not c["ok"]}
    assert {"ragit.config", "store.meta"} <= set(failed)
    assert doctor.envelope["error"]["recovery"]["command"] == failed["ragit.config"]
    assert repo.ragit(*shlex.split(failed["store.meta"])[1:]).code != 0  # refused: config
