"""A large ingest embeds in a helper process while it writes the keyword index.

Real repositories with 2,400 new chunks (above ``ragit.embed.parallel.MIN_TEXTS``), real
``ragit`` processes, the real helper process, real zvec stores.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

DOCS = 40
SECTIONS = 60  # 2,400 chunks
HELPER_MODULE = "ragit.embed.parallel"


def _run(
    repo: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragit", *args],
        cwd=repo,
        env={**os.environ, "RAGIT_COMPACT_BACKGROUND": "0", **(env or {})},
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def _large_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", "config", "user.email", "t@example.com"], cwd=root, check=True)
    subprocess.run(["git", "config", "user.name", "T"], cwd=root, check=True)
    docs = root / "docs"
    docs.mkdir()
    for d in range(DOCS):
        parts = [f"# Design note {d}\n"]
        for s in range(SECTIONS):
            parts.append(
                f"\n## Topic {d}-{s}\n\nThe subsystem {d} handles case {s} with policy "
                f"p{d * SECTIONS + s}: retries back off, writers hold the lock, readers copy "
                f"generation {s % 7}. 저장소 {s % 5} 커밋을 확인합니다.\n"
            )
        (docs / f"note-{d:02d}.md").write_text("".join(parts), encoding="utf-8")
    assert _run(root, "init", "--yes").returncode == 0
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "notes"], cwd=root, check=True)
    return root


def _helpers(repo: Path) -> list[int]:
    """Pids of live embedding helpers started for ``repo``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if HELPER_MODULE.encode() in argv and str(repo).encode() in argv and state != "Z":
            found.append(int(entry.name))
    return found


def _store(repo: Path, cache: Path) -> tuple[Any, ...]:
    """Everything an ingest stored: rows and vectors (through the reader copy) and the
    keyword index's tables."""
    code = (
        "import json, os, sys\n"
        "from pathlib import Path\n"
        "from ragit.workspace import Workspace\n"
        "from ragit.store.reader import StoreReader\n"
        "from ragit.snapshot.manifest import list_manifest_shas, load_manifest\n"
        "ws = Workspace(Path(sys.argv[1]))\n"
        "ids = sorted(set().union(*(load_manifest(ws, s).all_chunk_ids()"
        " for s in list_manifest_shas(ws))))\n"
        "r = StoreReader.open_latest(ws)\n"
        "rows = r.fetch(ids); vecs = r.fetch_vectors(ids)\n"
        "print(json.dumps([[i, rows[i].text, rows[i].heading_path, list(vecs[i])] for i in ids]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(repo)],
        env={**os.environ, "XDG_CACHE_HOME": str(cache)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    con = sqlite3.connect(repo / ".ragit" / "store" / "chunks" / "ragit-terms.sqlite")
    try:
        chunk = con.execute("SELECT * FROM chunk ORDER BY ord").fetchall()
        block = con.execute("SELECT * FROM block ORDER BY field, term, seq").fetchall()
    finally:
        con.close()
    return json.loads(out), chunk, block


def test_a_large_ingest_embeds_beside_its_keyword_index_and_stores_the_same(
    tmp_path: Path,
) -> None:
    """Implementation choice: with a helper process the store holds the same rows, the same
    vector bits and the same keyword index as with one process (RAGIT_EMBED_HELPER=0)."""
    one = _large_repo(tmp_path / "one")
    two = tmp_path / "two"
    subprocess.run(["git", "clone", "-q", str(one), str(two)], check=True)
    subprocess.run(["cp", "-r", str(one / ".ragit"), str(two)], check=True)
    env_one = {"XDG_CACHE_HOME": str(tmp_path / "cache-one"), "RAGIT_EMBED_HELPER": "0"}
    env_two = {"XDG_CACHE_HOME": str(tmp_path / "cache-two")}
    first = _run(one, "ingest", "--all", "--verbose", "--format", "json", env=env_one)
    second = _run(two, "ingest", "--all", "--verbose", "--format", "json", env=env_two)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert "while they are embedded" not in first.stderr
    assert "while they are embedded" in second.stderr
    assert json.loads(second.stdout)["data"]["embedded"] >= DOCS * SECTIONS
    assert _store(one, tmp_path / "cache-one") == _store(two, tmp_path / "cache-two")
    assert not _helpers(two)


def test_a_large_ingest_killed_while_its_helper_embeds_leaves_no_helper_and_recovers(
    tmp_path: Path,
) -> None:
    """Implementation choice: SIGKILL of the ingest while the helper works ends the helper too (its
    pipes close), and the next ingest recovers the journal (postings written ahead of the rows are
    rolled back) and indexes the commit."""
    repo = _large_repo(tmp_path / "repo")
    env = {**os.environ, "RAGIT_COMPACT_BACKGROUND": "0", "XDG_CACHE_HOME": str(tmp_path / "c")}
    writer = subprocess.Popen(
        [sys.executable, "-m", "ragit", "ingest", "--all", "--format", "json"],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while not _helpers(repo):
        assert writer.poll() is None, "the ingest ended before its helper was seen"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=60)
    deadline = time.monotonic() + 30
    while _helpers(repo):
        assert time.monotonic() < deadline, "the helper outlived the killed ingest"
        time.sleep(0.05)
    again = _run(
        repo, "ingest", "--all", "--format", "json", env={"XDG_CACHE_HOME": str(tmp_path / "c")}
    )
    assert again.returncode == 0, again.stderr + again.stdout
    assert any("reclaimed" in w for w in json.loads(again.stdout)["warnings"])
    doctor = _run(repo, "doctor", "--format", "json", env={"XDG_CACHE_HOME": str(tmp_path / "c")})
    assert doctor.returncode == 0, doctor.stdout
    hits = json.loads(
        _run(
            repo,
            "query",
            "policy p1234",
            "--format",
            "json",
            env={"XDG_CACHE_HOME": str(tmp_path / "c")},
        ).stdout
    )["data"]["hits"]
    assert hits[0]["sectionTitle"] == "Topic 20-34"  # p1234 = note 20, section 34


def test_a_large_ingest_killed_after_its_postings_before_its_rows_recovers(tmp_path: Path) -> None:
    """Implementation choice: the postings go in before the vectors exist (StoreWriter.index_terms);
    a kill at the first row batch leaves them to the journal's rollback, and the next ingest stores
    the chunks and their postings once."""
    repo = _large_repo(tmp_path / "repo")
    cache = {"XDG_CACHE_HOME": str(tmp_path / "c")}
    killed = _run(
        repo,
        "ingest",
        "--all",
        "--format",
        "json",
        env={**cache, "RAGIT_FAULT_AT": "store-insert-batch"},
    )
    assert killed.returncode == 137, killed.stderr
    assert not _helpers(repo)
    again = _run(repo, "ingest", "--all", "--format", "json", env=cache)
    assert again.returncode == 0, again.stderr + again.stdout
    con = sqlite3.connect(repo / ".ragit" / "store" / "chunks" / "ragit-terms.sqlite")
    try:
        (live,) = con.execute("SELECT count(*) FROM chunk WHERE live=1").fetchone()
        (total,) = con.execute("SELECT count(*) FROM chunk").fetchone()
    finally:
        con.close()
    status = json.loads(_run(repo, "status", "--format", "json", env=cache).stdout)["data"]
    assert live == total == status["store"]["chunkCount"]
    doctor = _run(repo, "doctor", "--format", "json", env=cache)
    assert doctor.returncode == 0, doctor.stdout
