"""Segment merging: inline for small stores, a background compactor for large ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from fixtures.build import build_fixture

ADR = "docs/adr/0002-idempotency-keys.md"
EXPIRY = "\n## Expiry\n\nThe zanzibar sweeper purges idempotency keys after thirty days.\n"


def ragit(repo: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "ragit", *args, "--format", "json"],
        cwd=repo,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return json.loads(proc.stdout)["data"]


def _segments(repo: Path) -> int:
    chunks = repo / ".ragit" / "store" / "chunks"
    return sum(
        1
        for p in chunks.iterdir()
        if p.is_dir() and p.name.isdigit() and any(p.glob("scalar.*.ipc"))
    )


def _indexed(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    build_fixture("docs-basic", repo)
    subprocess.run(
        [sys.executable, "-m", "ragit", "init", "--yes"], cwd=repo, check=True, capture_output=True
    )
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True)
    ragit(repo, "ingest", "--all")
    (repo / ADR).write_text((repo / ADR).read_text(encoding="utf-8") + EXPIRY, encoding="utf-8")
    subprocess.run(["git", "commit", "-qam", "document key expiry"], cwd=repo, check=True)
    return repo


def test_new_chunks_rank_by_their_words_before_any_merge(tmp_path: Path) -> None:
    """Implementation choice (docs/store.md, "The keyword index"): keyword statistics are the
    snapshot's own, so a new chunk in its own segment ranks as it always will — the writer leaves
    merging to the background."""
    repo = _indexed(tmp_path)
    ragit(repo, "ingest", env={"RAGIT_COMPACT_BACKGROUND": "0"})
    assert _segments(repo) == 2
    hits = ragit(repo, "query", "zanzibar sweeper purges idempotency keys")["hits"]
    assert hits[0]["sectionTitle"] == "Expiry"


def test_an_inline_merge_leaves_one_segment(tmp_path: Path) -> None:
    """The inline path (taken when merges are overdue) merges before the publish."""
    repo = _indexed(tmp_path)
    ragit(repo, "ingest", env={"RAGIT_COMPACT_INLINE_ROWS": "1000000"})
    assert _segments(repo) == 1
    hits = ragit(repo, "query", "zanzibar sweeper purges idempotency keys")["hits"]
    assert hits[0]["sectionTitle"] == "Expiry"


def test_large_store_is_merged_by_the_background_compactor(tmp_path: Path) -> None:
    """Implementation choice: a large store is merged off the lock, after the ingest returns."""
    repo = _indexed(tmp_path)
    before = ragit(repo, "status")["store"]["generation"]
    ragit(
        repo, "ingest", env={"RAGIT_COMPACT_INLINE_ROWS": "0", "RAGIT_COMPACT_BACKGROUND_ROWS": "0"}
    )
    log = repo / ".ragit" / "runtime" / "compact.log"
    deadline = time.monotonic() + 120  # a background job: a bounded wait is the point
    while time.monotonic() < deadline:
        if log.exists() and '"outcome": "merged"' in log.read_text(encoding="utf-8"):
            break
        time.sleep(0.1)
    assert '"outcome": "merged"' in log.read_text(encoding="utf-8")
    assert _segments(repo) == 1
    assert ragit(repo, "status")["store"]["generation"] >= before + 2
    hits = ragit(repo, "query", "zanzibar sweeper purges idempotency keys")["hits"]
    assert hits[0]["sectionTitle"] == "Expiry"
    doctor = subprocess.run(
        [sys.executable, "-m", "ragit", "doctor"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert doctor.returncode == 0, doctor.stdout


def _wait_for(path: Path, text: str, proc: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + 120  # a background job: a bounded wait is the point
    while text not in (path.read_text(encoding="utf-8") if path.exists() else ""):
        assert time.monotonic() < deadline, f"{text!r} never appeared in {path}"
        assert proc is None or proc.poll() is None, "the process ended before the pause"
        time.sleep(0.05)


def test_the_compactor_waits_for_a_busy_writer_and_merges(tmp_path: Path) -> None:
    """Implementation choice: a merge makes progress under writes; it no longer gives up on
    STORE_WRITE_BUSY when a writer holds the lock as it starts."""
    repo = _indexed(tmp_path)
    quiet = {"RAGIT_COMPACT_INLINE_ROWS": "0", "RAGIT_COMPACT_BACKGROUND": "0"}
    ragit(repo, "ingest", env=quiet)  # leaves an unmerged segment behind
    assert _segments(repo) > 1
    (repo / ADR).write_text(
        (repo / ADR).read_text(encoding="utf-8") + "\n## Audit\n\nKeys are audited weekly.\n",
        encoding="utf-8",
    )
    subprocess.run(["git", "commit", "-qam", "audit"], cwd=repo, check=True)
    release = tmp_path / "release"
    err = tmp_path / "writer.err"
    with err.open("w", encoding="utf-8") as stderr:
        writer = subprocess.Popen(
            [sys.executable, "-m", "ragit", "ingest", "--format", "json"],
            cwd=repo,
            env={
                **os.environ,
                **quiet,
                "RAGIT_FAULT_PAUSE_AT": "prepared",
                "RAGIT_FAULT_RELEASE": str(release),
            },
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
        )
    try:
        _wait_for(err, "ragit-fault: paused at prepared", writer)
        compactor = subprocess.Popen(
            [sys.executable, "-m", "ragit.store.compact", str(repo)],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        time.sleep(1.0)  # the compactor meets the held lock
        assert compactor.poll() is None, compactor.communicate()[0]
    finally:
        release.touch()
    assert writer.wait(timeout=120) == 0
    out, _ = compactor.communicate(timeout=180)
    record = json.loads(out.strip().splitlines()[-1])
    assert record["ok"] is True, record
    assert record["outcome"].startswith("merged"), record
    assert _segments(repo) == 1
    hits = ragit(repo, "query", "keys are audited weekly")["hits"]
    assert hits[0]["sectionTitle"] == "Audit"


def test_only_one_compactor_runs_at_a_time(tmp_path: Path) -> None:
    """Implementation choice: compactors started by a burst of writers coalesce into the running
    one."""
    from ragit._lock import flocked

    repo = _indexed(tmp_path)
    with flocked(repo / ".ragit" / "runtime" / "compact.run"):
        proc = subprocess.run(
            [sys.executable, "-m", "ragit.store.compact", str(repo)],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    assert record == {**record, "ok": True, "outcome": "another compaction is running"}


def test_a_writer_merges_inline_when_the_background_merge_is_overdue(tmp_path: Path) -> None:
    """Implementation choice: segments never pile up past the overdue mark, compactor or not."""
    repo = _indexed(tmp_path)
    env = {
        "RAGIT_COMPACT_INLINE_ROWS": "0",
        "RAGIT_COMPACT_BACKGROUND": "0",
        "RAGIT_COMPACT_OVERDUE_SEGMENTS": "2",
    }
    ragit(repo, "ingest", env=env)
    assert _segments(repo) == 1
    hits = ragit(repo, "query", "zanzibar sweeper purges idempotency keys")["hits"]
    assert hits[0]["sectionTitle"] == "Expiry"


def _paused_compactor(repo: Path, tmp_path: Path) -> tuple[subprocess.Popen[str], Path, Path]:
    """A real compactor process holding the writer lock, paused right after taking it."""
    release = tmp_path / "compactor.release"
    out = tmp_path / "compactor.out"
    with out.open("w", encoding="utf-8") as sink:
        compactor = subprocess.Popen(
            [sys.executable, "-m", "ragit.store.compact", str(repo)],
            cwd=repo,
            env={
                **os.environ,
                "RAGIT_FAULT_PAUSE_AT": "compact-locked",
                "RAGIT_FAULT_RELEASE": str(release),
            },
            stdout=sink,
            stderr=subprocess.STDOUT,
            text=True,
        )
    _wait_for(out, "ragit-fault: paused at compact-locked", compactor)
    return compactor, release, out


def test_an_ingest_waits_for_the_background_compactor_instead_of_failing_busy(
    tmp_path: Path,
) -> None:
    """Implementation choice: the compactor the previous ingest started may hold the writer lock (to
    copy or swap the store) when the next ingest starts; that ingest waits for it and succeeds
    (it failed with STORE_WRITE_BUSY)."""
    repo = _indexed(tmp_path)
    compactor, release, out = _paused_compactor(repo, tmp_path)
    try:
        writer = subprocess.Popen(
            [sys.executable, "-m", "ragit", "ingest", "--verbose", "--format", "json"],
            cwd=repo,
            env={**os.environ, "RAGIT_COMPACT_BACKGROUND": "0"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.5)  # long enough to have met the held lock
        assert writer.poll() is None, writer.communicate()
    finally:
        release.touch()
    stdout, stderr = writer.communicate(timeout=120)
    assert writer.returncode == 0, stderr + stdout
    assert "waiting for the background segment merge" in stderr
    assert compactor.wait(timeout=120) == 0
    record = json.loads(out.read_text(encoding="utf-8").strip().splitlines()[-1])
    assert record["ok"] is True, record
    hits = ragit(repo, "query", "zanzibar sweeper purges idempotency keys")["hits"]
    assert hits[0]["sectionTitle"] == "Expiry"


def test_the_wait_for_the_compactor_is_bounded(tmp_path: Path) -> None:
    """Implementation choice: a compactor that keeps the lock past the bound still gives
    STORE_WRITE_BUSY."""
    repo = _indexed(tmp_path)
    compactor, release, _out = _paused_compactor(repo, tmp_path)
    try:
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "ragit", "ingest", "--format", "json"],
            cwd=repo,
            env={**os.environ, "RAGIT_COMPACT_WAIT_SECONDS": "1"},
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        waited = time.monotonic() - started
    finally:
        release.touch()
    assert compactor.wait(timeout=120) == 0
    assert proc.returncode == 3, proc.stderr + proc.stdout
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "STORE_WRITE_BUSY"
    assert error["details"]["owner"]["command"] == "store-compact"
    assert "background segment merge" in error["message"]
    assert waited >= 1.0
