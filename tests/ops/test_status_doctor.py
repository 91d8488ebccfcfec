"""`ragit status` and `ragit doctor` (contract §12) on healthy and broken repositories.

status never writes (not under the repository, not in the user cache); doctor fails with
DOCTOR_CHECKS_FAILED on every broken state, and each failing check's recovery, run as
printed, makes that check pass.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.snapshot._kit import (
    RagitRepo,
    indexed_repo,
    make_repo,
    private_cache,  # noqa: F401 - autouse fixture
    ragit_state,
    self_contained,
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


def _chunk_nowhere(repo: RagitRepo) -> None:
    """HEAD's manifest names a chunk no document gives and no write ever stored."""
    path = repo.ws.manifest_path(repo.head())
    manifest = self_contained(repo.root, repo.head())
    manifest["docs"][0]["chunkIds"].append("0123456789abcdef")
    path.write_text(json.dumps(manifest), encoding="utf-8")


def _keyword_index_halved(repo: RagitRepo) -> None:
    """The canonical keyword index cut in half, then a new commit to ingest."""
    index = repo.ws.store_dir / "chunks" / "ragit-terms.sqlite"
    index.write_bytes(index.read_bytes()[: index.stat().st_size // 2])
    _unindexed_head(repo)


def _zvec_manifest_emptied(repo: RagitRepo) -> None:
    """What a full disk inside zvec's own write leaves: an interrupted ingest's journal and
    zvec's manifest at 0 bytes (zvec crashes with SIGSEGV opening such a collection)."""
    _crashed_writer(repo)
    [manifest] = sorted((repo.ws.store_dir / "chunks").glob("manifest.*"))
    manifest.write_bytes(b"")


def _zvec_manifest_emptied_no_copy(repo: RagitRepo) -> None:
    """The same, with the user cache cleared: no published copy to restore from."""
    _zvec_manifest_emptied(repo)
    shutil.rmtree(user_cache_dir() / "stores")


def _store_found_unopenable(repo: RagitRepo) -> None:
    """The state an ingest leaves after it found the collection unopenable with no copy."""
    _zvec_manifest_emptied_no_copy(repo)
    run = repo.ragit("ingest", "--format", "json")
    assert run.code == 3, run.output
    assert run.error["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    assert repo.ws.store_unopenable_path.is_file()


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
    "chunk-nowhere": ("docs-basic", True, _chunk_nowhere),
    "keyword-index-halved": ("docs-basic", True, _keyword_index_halved),
    "zvec-manifest-emptied": ("docs-basic", True, _zvec_manifest_emptied),
    "zvec-manifest-emptied-no-copy": ("docs-basic", True, _zvec_manifest_emptied_no_copy),
    "store-found-unopenable": ("docs-basic", True, _store_found_unopenable),
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
        ("chunk-nowhere", "ragit.manifest-consistency"),
        ("keyword-index-halved", "store.canonical-files"),
        ("zvec-manifest-emptied", "snapshot.head"),
        ("zvec-manifest-emptied-no-copy", "store.reader"),
        ("store-found-unopenable", "store.openable"),
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


# States where something is broken, and how many recoveries doctor may name before it passes.
CONVERGING = {
    "not-indexed": 1,
    "head-moved": 1,
    "truncated-manifest": 2,
    "store-deleted": 2,
    "crashed-writer": 1,
    "bad-config": 1,
    "chunk-nowhere": 1,
    "keyword-index-halved": 2,
    "zvec-manifest-emptied": 1,
    "zvec-manifest-emptied-no-copy": 2,
    "store-found-unopenable": 2,
}


def _shell(repo: RagitRepo, command: str) -> subprocess.CompletedProcess[str]:
    """``command`` run by a POSIX shell exactly as printed, `ragit` being this package's."""
    bin_dir = str(Path(sys.executable).parent)
    return subprocess.run(
        ["sh", "-c", command],
        cwd=repo.root,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")},
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("name", list(CONVERGING))
def test_doctors_recovery_run_as_printed_until_it_passes_converges(
    tmp_path: Path, name: str
) -> None:
    """Contract §12, §3: doctor's recovery (its error's ``recovery.command``), run as printed
    again and again, succeeds each time and ends with a passing doctor and HEAD answering."""
    repo = _state(tmp_path, name)
    ran: list[str] = []
    for _ in range(CONVERGING[name] + 1):
        _report, error = repo.doctor()
        if error is None:
            break
        assert error.recovery, (ran, error.details)
        assert len(ran) < CONVERGING[name], f"still failing {error.details} after {ran}"
        fix = _shell(repo, error.recovery)
        assert fix.returncode == 0, (error.recovery, fix.stdout, fix.stderr)
        ran.append(error.recovery)
    assert repo.doctor()[1] is None, ran
    assert repo.query("idempotency keys")["snapshotSha"] == repo.head()


@pytest.mark.parametrize(
    "name",
    [
        "crashed-writer",
        "store-deleted",
        "keyword-index-halved",
        "zvec-manifest-emptied",
        "zvec-manifest-emptied-no-copy",
        "store-found-unopenable",
    ],
)
def test_one_repair_apply_repairs_a_broken_store_and_indexes_head(
    tmp_path: Path, name: str
) -> None:
    """Implementation choice (docs/store.md): plain `repair --apply` plans what the store needs
    first (the rebuild doctor names) and succeeds; doctor passes afterwards."""
    repo = _state(tmp_path, name)

    repair = repo.ragit("repair", "--apply", "--format", "json")

    assert repair.code == 0, repair.output
    assert repo.doctor()[1] is None, repo.doctor()[0]
