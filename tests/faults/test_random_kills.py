"""kill -9 at random instants of real writers, not only at named phases (docs/faults.md).

Each kill point runs one writer as a real process — ``ragit ingest`` (an incremental ingest
whose small store is merged inline), the store rebuild (``ragit repair --apply --action
store-rebuild``), ``ragit migrate embeddings`` (to 128 dimensions) or the background compactor
(``python -m ragit.store.compact <root>`` on a store left with two segments) — and sends it
SIGKILL at an offset from its start drawn from a fixed seed, spread over the whole length of an
uninterrupted run of the same writer (measured once per worker), so kills land inside zvec's
insert, flush, merge and open calls too. Then:

1. **readers right after**: every published snapshot gives the hits it gave before (or the
   hits of the completed operation) or a typed not-ready error — never other hits, never an
   empty ``ok`` answer;
2. **the next writer**, a rerun of ``ragit ingest``, recovers (exit 0) or refuses with a typed
   error (never ``UNEXPECTED``, never a traceback);
3. doctor runs; while it fails, the recovery it names is run as printed;
4. **end state**: doctor passes and every snapshot answers as after the completed operation.

``RAGIT_FAULT_KILLS`` sets the number of kill points (30 in CI, which take about two minutes
with ``-n 2``; ``RAGIT_FAULT_KILLS=500`` is the long profile), ``RAGIT_FAULT_SEED`` the seed,
and ``RAGIT_FAULT_KILL_LOG=<file>`` collects each point's writer, offset and exit status.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.faults._faultkit import (
    ARGV,
    NOT_READY,
    Case,
    Observed,
    _answers,
    _doctor_failures,
    _recover,
    _setup,
    compare_answers,
    template_repo,
)
from tests.snapshot._kit import RAGIT, RagitRepo

from fixtures.build import load_fixture
from ragit.workspace import Workspace, user_cache_dir

KILLS = int(os.environ.get("RAGIT_FAULT_KILLS", "30"))
SEED = int(os.environ.get("RAGIT_FAULT_SEED", "13"))
# Read at import: tests/conftest.py removes RAGIT_* variables before each test runs.
KILL_LOG = os.environ.get("RAGIT_FAULT_KILL_LOG")
# Half the kill points on ingest (the most frequent writer), the rest split.
ROTATION = ("ingest", "rebuild", "ingest", "compact", "ingest", "migrate")
# Kill offsets span this multiple of the measured uninterrupted run: a slower run under load
# still gets kills near its end, and a few land after a run that finished (a no-op kill).
SPAN = 1.1
# Store settings that make an ingest leave a second segment for the background compactor.
DEFER = {"RAGIT_COMPACT_INLINE_ROWS": "0", "RAGIT_COMPACT_BACKGROUND": "0"}
COMPACT_ARGV = ("-m", "ragit.store.compact")


def _schedule() -> list[tuple[str, float]]:
    rng = random.Random(SEED)
    return [(ROTATION[i % len(ROTATION)], rng.random() * SPAN) for i in range(KILLS)]


POINTS = _schedule()


@dataclass
class Reference:
    """An uninterrupted run of one writer: how long it took and what snapshots answer after."""

    seconds: float
    answers: dict[str, list[Any]]


_REFERENCES: dict[str, Reference] = {}
_COMPACT_TEMPLATE: dict[str, Path] = {}


# ---------------------------------------------------------------- the starting states


def _compact_template(tmp_path: Path) -> Path:
    """docs-basic with S1, S2 and S3 indexed, S3's rows in a second, unmerged segment (per
    worker): the state a large store is in while its background merge is pending."""
    built = _COMPACT_TEMPLATE.get("base")
    if built is not None:
        return built
    base = tmp_path.parent / "_random-compact"
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(base / "cache")
    try:
        case = _setup("ingest", base / "t")
        run = case.repo.ragit("ingest", env=DEFER)
        assert run.code == 0, run.output
        snapshots = {**case.snapshots, "S3": case.extra["head"]}
        before = {label: _answers(case.repo, sha) for label, sha in snapshots.items()}
        labels = {"snapshots": snapshots, "before": before}
        (base / "labels.json").write_text(json.dumps(labels), encoding="utf-8")
    finally:
        if saved is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = saved
    _COMPACT_TEMPLATE["base"] = base
    return base


def _compact_case(tmp_path: Path) -> Case:
    base = _compact_template(tmp_path)
    source = base / "t" / "repo"
    root = tmp_path / "repo"
    shutil.copytree(source, root, symlinks=True)
    repo = RagitRepo(root.resolve(), "docs-basic", load_fixture("docs-basic"))
    meta = json.loads((repo.ws.store_dir / "meta.json").read_text(encoding="utf-8"))
    name = f"{meta['storeId']}-{meta['generation']}"
    origin = Workspace(source.resolve()).repo_id
    copy = base / "cache" / "ragit" / "stores" / origin / name
    shutil.copytree(copy, user_cache_dir() / "stores" / repo.ws.repo_id / name, symlinks=True)
    labels = json.loads((base / "labels.json").read_text(encoding="utf-8"))
    return Case(repo, labels["snapshots"], labels["before"], labels["before"])


def _case(operation: str, tmp_path: Path) -> Case:
    if operation == "compact":
        return _compact_case(tmp_path)
    if operation == "migrate":
        case = _setup("migrate", tmp_path)  # the configuration asks for 128 dimensions
        return Case(case.repo, case.snapshots, case.before, case.before)
    if operation == "rebuild":
        repo, labels = template_repo(tmp_path)
        return Case(repo, labels["snapshots"], labels["before"], labels["before"])
    return _setup("ingest", tmp_path)


def _argv(operation: str, repo: RagitRepo) -> list[str]:
    if operation == "compact":
        return [sys.executable, *COMPACT_ARGV, str(repo.root)]
    return [*RAGIT, *ARGV[operation]]


def _start(operation: str, repo: RagitRepo) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _argv(operation, repo),
        cwd=repo.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=dict(os.environ),
    )


def _reference(operation: str, tmp_path: Path) -> Reference:
    """Run ``operation`` once without a kill (per worker): its length and the answers after."""
    if operation not in _REFERENCES:
        case = _case(operation, tmp_path / f"_random-reference-{operation}")
        started = time.monotonic()
        child = _start(operation, case.repo)
        out, err = child.communicate(timeout=300)
        seconds = time.monotonic() - started
        assert child.returncode == 0, out + err
        answers = {label: _answers(case.repo, sha) for label, sha in case.snapshots.items()}
        _REFERENCES[operation] = Reference(seconds, answers)
    return _REFERENCES[operation]


# ---------------------------------------------------------------- the protocol


def _kill_at(child: subprocess.Popen[str], started: float, offset_s: float) -> tuple[int, str]:
    """SIGKILL ``child`` ``offset_s`` after ``started`` (unless it ended first)."""
    try:
        _out, err = child.communicate(timeout=max(0.0, started + offset_s - time.monotonic()))
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGKILL)
        _out, err = child.communicate(timeout=60)
    return child.returncode, err


def _log(**fields: Any) -> None:
    """Append one kill point to ``RAGIT_FAULT_KILL_LOG`` (a JSON-lines file) when it is set."""
    if KILL_LOG:
        with open(KILL_LOG, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(fields) + "\n")


def _typed(run: Any) -> str:
    """``ok`` or the typed error code of a ragit run; fails on an untyped outcome."""
    assert "Traceback" not in run.stderr, run.stderr
    if run.code == 0:
        return "ok"
    code = str(run.error["code"])
    assert code != "UNEXPECTED", run.output
    return code


@pytest.mark.parametrize(
    ("index", "operation", "fraction"),
    [(i, op, fraction) for i, (op, fraction) in enumerate(POINTS)],
    ids=[f"{i}-{op}-{fraction:.2f}" for i, (op, fraction) in enumerate(POINTS)],
)
def test_a_writer_killed_at_a_random_instant_never_changes_an_answer(
    tmp_path: Path, index: int, operation: str, fraction: float
) -> None:
    """Contract-mandated (§2, §6; docs/faults.md): a kill -9 at any instant of any writer leaves
    every published snapshot answering as before (or a typed not-ready error); the next writer
    recovers or refuses with a typed error; doctor's recoveries restore every answer."""
    reference = _reference(operation, tmp_path)
    case = _case(operation, tmp_path)
    repo = case.repo
    offset = fraction * reference.seconds
    started = time.monotonic()
    child = _start(operation, repo)
    code, stderr = _kill_at(child, started, offset)
    shown = f"{operation} killed {offset:.2f}s after its start (exit {code})"
    _log(
        operation=operation, offset=round(offset, 3), seconds=round(reference.seconds, 3), exit=code
    )
    assert "Traceback" not in stderr, f"{shown}: {stderr}"
    assert code in (0, -signal.SIGKILL), f"{shown}: {stderr}"

    readers = compare_answers(case, [case.before, reference.answers], allow=NOT_READY)
    wrong = {k: v for k, v in readers.items() if v != "same" and v not in NOT_READY}
    assert not wrong, f"{shown}: a reader saw other hits or an untyped failure: {readers}"

    next_writer = _typed(repo.ragit("ingest"))
    obs = Observed(operation, "random kill", f"{offset:.2f}s")
    first = _doctor_failures(repo)
    _recover(obs, repo, first)
    assert all(r.endswith("exit 0") for r in obs.recoveries), (shown, next_writer, obs.recoveries)
    # The interrupted operation, finished as a user (or the next hook) would: the ingest
    # again (a no-op once it is done), the compactor again. A rebuild is not rerun: the
    # store it replaces answers the same; an unfinished migration is what doctor names.
    if operation == "ingest":
        assert _typed(repo.ragit("ingest")) == "ok", shown
    elif operation == "compact":
        finish = _start(operation, repo)
        out, err = finish.communicate(timeout=300)
        assert finish.returncode == 0 and '"ok": true' in out, (shown, out, err)

    assert _doctor_failures(repo)[0] == [], (shown, next_writer, obs.recoveries)
    after = compare_answers(case, [reference.answers], allow=set())
    assert set(after.values()) == {"same"}, (shown, next_writer, obs.recoveries, after)
