"""Every refusal of the operating system at `.ragit` is the typed FILESYSTEM_UNUSABLE.

`.ragit` a regular file, a permission denied, a read-only mount: each command prints its
envelope (exit 3, not_ready, not retryable, details `{path, reason, errno}`), never exit 1
without one, never a corrupt manifest (exit 4) or a retryable error (docs/contract.md,
"Error codes added to the catalog"). Permissions are real: the commands run in a child
that lacks root's override of file permissions (or as the user the tests run as); the
read-only file system is a real read-only bind mount. Both skip with a reason that starts
`LOUD SKIP` where the machine does not allow them.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.cli._many import Ran, run_many
from tests.snapshot._kit import (
    RagitRepo,
    indexed_repo,
    private_cache,  # noqa: F401 - autouse fixture
    tree_state,
)

READS = [
    ("status",),
    ("query", "idempotency keys"),
    ("context", "pack", "idempotency keys"),
    ("log",),
    ("memory", "recall", "keys"),
]
WRITES = [
    ("ingest",),
    ("ingest", "--all"),
    ("repair", "--apply"),
    ("config", "set", "retrieval.top_k", "6"),
    ("narrative",),
]

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE = 1
_CAP_DAC_READ_SEARCH = 2


def _drop_file_override() -> None:
    """In the child, before exec: give up root's override of file permissions."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


@pytest.fixture
def obeying_permissions(tmp_path: Path) -> Callable[[], None] | None:
    """A preexec function under which a child obeys file permissions (None: the tests do
    already, not being root); skips where neither is possible."""
    if os.geteuid() != 0:
        return None
    probe = tmp_path / "probe"
    probe.write_text("x", encoding="utf-8")
    probe.chmod(0)
    try:
        seen = subprocess.run(
            ["cat", str(probe)], preexec_fn=_drop_file_override, capture_output=True, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"LOUD SKIP: cannot drop root's file-permission override here ({exc!r})")
    if seen.returncode == 0:
        pytest.skip("LOUD SKIP: root still reads a file with mode 000 after dropping caps")
    return _drop_file_override


def _state(repo: RagitRepo) -> dict[str, tuple[str, int]]:
    """Every file under .ragit (reader copies in the user cache are zvec's to touch)."""
    return tree_state(repo.ws.ragit_dir)


def _assert_typed(ran: dict[str, Ran], reason: str, *, path: str | None = None) -> None:
    for command, run in ran.items():
        assert run.code == 3, (command, run.output)
        error = run.error
        assert error["code"] == "FILESYSTEM_UNUSABLE", (command, error)
        assert error["category"] == "not_ready" and error["retryable"] is False, error
        assert error["details"]["reason"] == reason, (command, error)
        if path is not None:
            assert error["details"]["path"] == path, (command, error)


def test_ragit_being_a_regular_file_is_filesystem_unusable_for_every_command(
    tmp_path: Path,
) -> None:
    """Docs/contract.md (FILESYSTEM_UNUSABLE, not-a-directory): typed for reads and writes,
    with the recovery that moves the file aside; nothing is changed."""
    repo = indexed_repo(tmp_path, "docs-basic")
    (repo.root / ".ragit").rename(tmp_path / "ragit-aside")
    (repo.root / ".ragit").write_text("not a directory\n", encoding="utf-8")

    ran = run_many(repo.root, [*READS, *WRITES, ("init", "--yes")])

    _assert_typed(ran, "not-a-directory", path=".ragit")
    assert {r.error["recovery"]["command"] for r in ran.values()} == {
        "mv .ragit .ragit.bak && ragit init --yes"
    }
    assert (repo.root / ".ragit").read_text(encoding="utf-8") == "not a directory\n"


def test_doctor_names_a_ragit_file_first_and_its_recovery_makes_doctor_pass_that_check(
    tmp_path: Path,
) -> None:
    """Contract §12: doctor reports the condition as a failing check (it does not fail
    itself), and the printed recovery, run as printed, fixes it."""
    repo = indexed_repo(tmp_path, "docs-basic")
    (repo.root / ".ragit").rename(tmp_path / "ragit-aside")
    (repo.root / ".ragit").write_text("not a directory\n", encoding="utf-8")

    doctor = run_many(repo.root, [("doctor",)])["doctor"]

    assert doctor.code == 1, doctor.output
    failed = {c["name"]: c for c in doctor.envelope["data"]["checks"] if not c["ok"]}
    recovery = "mv .ragit .ragit.bak && ragit init --yes"
    assert failed["ragit.filesystem"]["recovery"] == recovery
    assert doctor.envelope["error"]["recovery"]["command"] == recovery
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    fix = subprocess.run(["sh", "-c", recovery], cwd=repo.root, env=env, check=False)
    assert fix.returncode == 0
    after = run_many(repo.root, [("doctor",)])["doctor"]
    checks = {c["name"]: c["ok"] for c in after.envelope["data"]["checks"]}
    assert checks["ragit.filesystem"] is True


def test_an_unreadable_ragit_is_permission_denied_never_a_corrupt_manifest(
    tmp_path: Path, obeying_permissions: Callable[[], None] | None
) -> None:
    """Docs/contract.md: permission denied is not_ready (exit 3), not SNAPSHOT_MANIFEST_INVALID
    (exit 4, "corrupt"); nothing under .ragit changes."""
    repo = indexed_repo(tmp_path, "docs-basic")
    before = _state(repo)
    (repo.root / ".ragit").chmod(0)
    try:
        ran = run_many(repo.root, [*READS, *WRITES], preexec=obeying_permissions)
    finally:
        (repo.root / ".ragit").chmod(0o755)

    _assert_typed(ran, "permission-denied")
    assert _state(repo) == before


def test_an_unreadable_committed_config_is_permission_denied_never_retryable(
    tmp_path: Path, obeying_permissions: Callable[[], None] | None
) -> None:
    """Docs/contract.md: an unreadable .ragit/config.toml is FILESYSTEM_UNUSABLE naming it,
    not REPOSITORY_STATE_CHANGED (retryable) and not CONFIG_INVALID."""
    repo = indexed_repo(tmp_path, "docs-basic", commit_init=True)
    repo.ws.config_path.chmod(0)
    try:
        ran = run_many(
            repo.root,
            [("status",), ("context", "pack", "keys"), *WRITES[:2]],
            preexec=obeying_permissions,
        )
    finally:
        repo.ws.config_path.chmod(0o644)

    _assert_typed(ran, "permission-denied", path=".ragit/config.toml")


@pytest.fixture
def read_only_ragit(tmp_path: Path) -> Iterator[RagitRepo]:
    """An indexed repository (HEAD moved past its snapshot) whose .ragit is a read-only bind
    mount of itself."""
    repo = indexed_repo(tmp_path, "docs-basic")
    repo.commit({"docs/notes/new.md": "# New\n\nA new note.\n"}, "new note")
    target = str(repo.root / ".ragit")
    bind = subprocess.run(["mount", "--bind", target, target], capture_output=True, check=False)
    if bind.returncode != 0:
        pytest.skip(f"LOUD SKIP: mounting is not permitted here ({bind.stderr.strip()!r})")
    try:
        remount = subprocess.run(
            ["mount", "-o", "remount,bind,ro", target], capture_output=True, check=False
        )
        if remount.returncode != 0:
            pytest.skip(f"LOUD SKIP: a read-only remount failed ({remount.stderr.strip()!r})")
        yield repo
    finally:
        subprocess.run(["umount", target], capture_output=True, check=False)


def test_a_read_only_file_system_is_filesystem_unusable_for_writers(
    read_only_ragit: RagitRepo,
) -> None:
    """Docs/contract.md (read-only-filesystem): ingest and `repair --apply` are typed; a read
    (doctor included) still answers from the published copy."""
    repo = read_only_ragit
    before = _state(repo)

    indexed = repo.spec["head"]
    reads = [("query", "keys", "--at", indexed), ("doctor",)]

    ran = run_many(repo.root, [("ingest",), ("repair", "--apply"), *reads])

    _assert_typed({k: ran[k] for k in ("ingest", "repair --apply")}, "read-only-filesystem")
    query = ran[f"query keys --at {indexed}"]
    assert query.code == 0, query.output
    checks = {c["name"]: c for c in ran["doctor"].envelope["data"]["checks"]}
    assert checks["ragit.filesystem"]["ok"] is False
    assert checks["ragit.filesystem"]["reason"] == "read-only-filesystem"
    assert _state(repo) == before
