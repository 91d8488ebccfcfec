"""The fault scenarios: one protocol for every operation and fault (imported, not collected).

A scenario copies a per-worker template repository (docs-basic with two published
snapshots S1 and S2; for purge also S3, whose store chunks hold a raw secret as if an
unmasked RAGit had written them), records each snapshot's answers, prepares the
operation, runs it as a real ``ragit`` process with a fault, then:

1. checks what readers see right away: every published snapshot answers as before,
   or fails with a typed not-ready error — never with other hits;
2. runs ``ragit doctor`` and, while it fails, the recovery it names (as printed);
3. finishes the interrupted operation the way a user would (reruns it);
4. checks that doctor passes and every snapshot answers as before.

:func:`run_scenario` returns what it saw as an :class:`Observed` row; the tests assert
on it and, under ``FAULT_MATRIX_DIR=<dir>``, also write it there for
``tests/faults/matrix.py``, which renders the table of ``docs/faults.md``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from tests.snapshot._kit import RagitRepo, hits_key, make_repo, wait_for_line

from fixtures.build import load_fixture
from ragit.contract.errors import RagitError
from ragit.workspace import Workspace, user_cache_dir

# One broad question; with top_k 10 its hits span most documents, and S2's added
# section ("zanzibar sweeper") ranks first in S2 only.
QUESTION = "idempotency keys retry zanzibar sweeper expiry"
ADR = "docs/adr/0002-idempotency-keys.md"
EXPIRY = "\n## Expiry\n\nThe zanzibar sweeper purges idempotency keys after thirty days.\n"
SECOND = "docs/adr/0001-double-entry-bookkeeping.md"
ARCHIVE = "\n## Archive\n\nSuperseded decisions move to the archive folder after review.\n"
THIRD = "docs/adr/0003-outbox.md"
LEAK = "Deploy with the key sk-RagitFixtureFAKElegacyKey00000000000000000000001 for now."
SECRET = "sk-RagitFixtureFAKElegacyKey00000000000000000000001"
LEAKY_FILES = (".ragit/memory/working/goal_legacy.json", ".ragit/log/events/2026-01-01.jsonl")
QUARANTINE = ".ragit/security/quarantine/2026-01-01.jsonl"
CACHE_ENTRY = ".ragit/cache/embeddings/v1/ns/entries/ab.json"

STORE_LEVEL = {"STORE_READ_BUSY", "SNAPSHOT_STORE_UNAVAILABLE"}
# Errors a reader may get while a writer's residue waits for recovery: typed, not-ready.
NOT_READY = {
    "STORE_READ_BUSY",
    "SNAPSHOT_STORE_UNAVAILABLE",
    "EMBEDDING_MIGRATION_REQUIRED",
}

INGEST_PHASES = (
    "ingest-planned",
    "prepared",
    "store-insert-batch",
    "store-written",
    # The inline segment merge (a small store): a copy is merged, then swapped in.
    "compact-locked",
    "compact-copied",
    "compact-merged",
    "rebuild-swapped-out",
    "rebuild-swapped-in",
    "store-compacted",
    "store-verified",
    "publish-copied",
    "publish-meta-written",
    "store-published",
    "manifest-committed",
    "published",
    "completed",
)
REBUILD_PHASES = (
    "rebuild-batch",
    "rebuild-built",
    "rebuild-swapped-out",
    "rebuild-swapped-in",
    "publish-copied",
    "publish-meta-written",
)
PURGE_PHASES = (
    "purge-control-plane-rewritten",
    "purge-quarantine-cleared",
    "rebuild-batch",
    "rebuild-built",
    "purge-manifests-deleted",
    "rebuild-swapped-out",
    "rebuild-swapped-in",
    "publish-copied",
    "publish-meta-written",
    "purge-cache-deleted",
)


@dataclass
class Observed:
    """What one scenario saw (a row of the fault matrix)."""

    operation: str
    fault: str
    phase: str
    exit_code: int = 0
    error: str = ""  # the faulted process's envelope error code, when it printed one
    lock: str = ""  # the writer lock's state right after the fault
    stderr: list[str] = field(default_factory=list)  # the faulted process's [ragit] lines
    readers: dict[str, str] = field(default_factory=dict)  # snapshot → "same" | error code
    doctor: list[str] = field(default_factory=list)  # failing checks right after the fault
    recoveries: list[str] = field(default_factory=list)  # doctor-named commands that were run
    finish: list[str] = field(default_factory=list)  # what completed the operation
    notes: list[str] = field(default_factory=list)
    after: dict[str, str] = field(default_factory=dict)  # snapshot → "same" | problem
    doctor_after: list[str] = field(default_factory=list)


@dataclass
class Case:
    """A prepared repository, its published snapshots and their answers before the fault."""

    repo: RagitRepo
    snapshots: dict[str, str]  # label (S1, S2) → sha
    before: dict[str, list[Any]]  # label → answers, one per question
    expected_after: dict[str, list[Any]]  # label → answers after the operation completes
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- templates

_TEMPLATES: dict[str, Path] = {}
_REFERENCE: dict[str, dict[str, list[Any]]] = {}
LABELS = "labels.json"


def _answers(repo: RagitRepo, sha: str) -> list[Any]:
    # JSON-shaped, so answers read back from a template's labels.json compare equal.
    answers = [hits_key(repo.query(QUESTION, at=sha, top_k=10))]
    result: list[Any] = json.loads(json.dumps(answers))
    return result


def _append(repo: RagitRepo, path: str, text: str) -> dict[str, str]:
    return {path: (repo.root / path).read_text(encoding="utf-8") + text}


def _build_template(base: Path, kind: str) -> None:
    """docs-basic with S1 (its HEAD) and S2 (an added section) indexed on main; ``legacy``
    adds S3 on branch ``legacy``, whose store chunks hold a raw secret."""
    repo = make_repo(base, "docs-basic")
    repo.ingest(all=True)
    s1 = repo.head()
    s2 = repo.commit(_append(repo, ADR, EXPIRY), "document key expiry")
    repo.ingest()
    labels: dict[str, Any] = {"snapshots": {"S1": s1, "S2": s2}}
    if kind == "legacy":
        repo.git("checkout", "-q", "-b", "legacy")
        s3 = repo.commit({THIRD: "# Outbox\n\nEvents leave through an outbox table.\n"}, "outbox")
        repo.ingest()
        plant_raw_chunk(repo, s3, THIRD, LEAK)
        repo.git("checkout", "-q", "main")
        labels["stale"] = s3
    labels["before"] = {label: _answers(repo, sha) for label, sha in labels["snapshots"].items()}
    (base / LABELS).write_text(json.dumps(labels), encoding="utf-8")


def template_repo(tmp_path: Path, kind: str = "base") -> tuple[RagitRepo, dict[str, Any]]:
    """A copy of the per-worker template ``kind`` and its labels (snapshots, answers)."""
    template = _TEMPLATES.get(kind)
    if template is None:
        template = tmp_path.parent / f"_faults-{kind}"
        saved = os.environ.get("XDG_CACHE_HOME")
        os.environ["XDG_CACHE_HOME"] = str(template / "cache")
        try:
            _build_template(template, kind)
        finally:
            if saved is None:
                del os.environ["XDG_CACHE_HOME"]
            else:
                os.environ["XDG_CACHE_HOME"] = saved
        _TEMPLATES[kind] = template
    root = tmp_path / "repo"
    shutil.copytree(template / "repo", root, symlinks=True)
    repo = RagitRepo(root.resolve(), "docs-basic", load_fixture("docs-basic"))
    # Only the reader copy of the published generation: older ones serve no reader.
    meta = json.loads((repo.ws.store_dir / "meta.json").read_text(encoding="utf-8"))
    name = f"{meta['storeId']}-{meta['generation']}"
    origin = Workspace((template / "repo").resolve()).repo_id
    source = template / "cache" / "ragit" / "stores" / origin / name
    shutil.copytree(source, user_cache_dir() / "stores" / repo.ws.repo_id / name, symlinks=True)
    labels: dict[str, Any] = json.loads((template / LABELS).read_text(encoding="utf-8"))
    return repo, labels


def plant_raw_chunk(repo: RagitRepo, sha: str, path: str, text: str) -> str:
    """Add to ``path`` in snapshot ``sha`` a chunk holding ``text`` unmasked, as a RAGit that
    did not mask would have stored it. Returns its chunk id."""
    from ragit.config import load_config
    from ragit.embed import build_embedder
    from ragit.ingest.rows import chunk_rows
    from ragit.snapshot.manifest import load_manifest, write_manifest
    from ragit.store.lock import WriterLock
    from ragit.store.publishing import publish
    from ragit.store.writer import StoreWriter

    ws = repo.ws
    cfg = load_config(ws)
    [row] = chunk_rows(f"## Legacy note\n\n{text}\n")
    embedder = build_embedder(ws.root, cfg.embedding, cfg.security, mode="cli")
    try:
        [vector] = embedder.embed([row.search_en])
        profile = embedder.profile.as_dict()
    finally:
        embedder.close()
    row = replace(row, vector=vector)
    with WriterLock.acquire(ws, command="legacy-writer", head_sha=None) as lock:
        with StoreWriter.open(ws, lock, embedding=profile, dimensions=profile["dimensions"]) as w:
            w.insert([row])
            assert w.verify([row.chunk_id]) == []
        publish(ws, lock)
    manifest = load_manifest(ws, sha)
    docs = [
        d.model_copy(update={"chunk_ids": [*d.chunk_ids, row.chunk_id]}) if d.path == path else d
        for d in manifest.docs
    ]
    write_manifest(ws, manifest.model_copy(update={"docs": docs}))
    return row.chunk_id


# ---------------------------------------------------------------- operations


def _set_config(repo: RagitRepo, old: str, new: str) -> None:
    path = repo.ws.config_path
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _migrate_config(repo: RagitRepo) -> None:
    _set_config(repo, "dimensions = 256", "dimensions = 128")


def _plant_control_plane(repo: RagitRepo) -> None:
    working, events = LEAKY_FILES
    repo.write(working, json.dumps({"summary": f"rotate {SECRET} on Friday", "n": 1}) + "\n")
    clean = json.dumps({"type": "memory.wrap", "summary": "clean"})
    leaky = json.dumps({"type": "memory.wrap", "summary": f"pushed with {SECRET}"})
    repo.write(events, f"{clean}\n{leaky}\n")
    repo.write(QUARANTINE, json.dumps({"maskedPreview": "sk-Ragi***"}) + "\n")
    repo.write(CACHE_ENTRY, "{}\n")


def _setup(operation: str, tmp_path: Path) -> Case:
    repo, labels = template_repo(tmp_path, "legacy" if operation == "purge" else "base")
    before = labels["before"]
    case = Case(repo, labels["snapshots"], before, before)
    if operation == "ingest":
        case.extra["head"] = repo.commit(_append(repo, SECOND, ARCHIVE), "archive rule")
    elif operation == "migrate":
        _migrate_config(repo)
    elif operation == "purge":
        _plant_control_plane(repo)
        case.extra["stale"] = labels["stale"]
    return case


def _complete(case: Case, operation: str) -> None:
    """Run ``operation`` to its end in-process, as nothing interrupted it."""
    from ragit.config import load_config
    from ragit.ops.maintenance.rebuild import rebuild_store
    from ragit.ops.security.purge import run_purge

    repo = case.repo
    cfg = load_config(repo.ws)
    quiet = lambda _m: None  # noqa: E731
    if operation == "ingest":
        repo.ingest()
    elif operation in ("rebuild", "migrate"):
        rebuild_store(repo.ws, cfg, command="store-rebuild", progress=quiet)
    elif operation == "purge":
        run_purge(repo.ws, cfg, target="all", dry_run=False, progress=quiet)
        repo.ingest(all=True, at=case.extra["stale"])


def _reference(operation: str, tmp_path: Path) -> dict[str, list[Any]]:
    """Each snapshot's answers once ``operation`` completed without a fault (per worker).

    Keyword scores are BM25 over every row of the store, so an operation that adds or
    removes rows (ingest, purge) may move a snapshot's lower hits; a fault must end in
    exactly the state an uninterrupted run reaches.
    """
    if operation not in _REFERENCE:
        case = _setup(operation, tmp_path / f"_reference-{operation}")
        _complete(case, operation)
        _REFERENCE[operation] = {
            label: _answers(case.repo, sha) for label, sha in case.snapshots.items()
        }
    return _REFERENCE[operation]


def prepare(operation: str, tmp_path: Path) -> Case:
    """Build the repository an operation's scenario starts from, with its reference answers."""
    case = _setup(operation, tmp_path)
    case.expected_after = _reference(operation, tmp_path)
    return case


ARGV: dict[str, tuple[str, ...]] = {
    "ingest": ("ingest",),
    "rebuild": ("repair", "--apply", "--action", "store-rebuild"),
    "migrate": ("migrate", "embeddings"),
    "purge": ("security", "purge"),
}


# ---------------------------------------------------------------- the protocol


def compare_answers(
    case: Case, accepted: list[dict[str, list[Any]]], *, allow: set[str]
) -> dict[str, str]:
    """Each snapshot's verdict: ``same`` (its answers equal one of ``accepted``), a not-ready
    error code listed in ``allow``, or a problem."""
    seen: dict[str, str] = {}
    store_error = _store_not_ready(case.repo)
    if store_error is not None and store_error not in allow:
        store_error = f"unexpected {store_error}"
    for label, sha in case.snapshots.items():
        if store_error is not None:
            # The store is shared: one busy wait (2 s) says it for every snapshot.
            seen[label] = store_error
            continue
        try:
            answers = _answers(case.repo, sha)
        except RagitError as exc:
            seen[label] = exc.code if exc.code in allow else f"unexpected {exc.code}"
            if exc.code in STORE_LEVEL:
                store_error = seen[label]
            continue
        if any(answers == expected[label] for expected in accepted):
            seen[label] = "same"
        else:
            seen[label] = "DIFFERENT HITS"
    return seen


def _store_not_ready(repo: RagitRepo) -> str | None:
    """STORE_READ_BUSY at once when a query would wait 2 s for it (a writer's lock, no
    published copy); the store is shared, so every snapshot's query would get it."""
    from ragit.store.lock import inspect_lock
    from ragit.store.meta import read_meta
    from ragit.store.reader import StoreReader

    if inspect_lock(repo.ws).state == "missing":
        return None  # no writer to wait for: queries answer or fail at once
    try:
        if read_meta(repo.ws) is None:
            return None
        StoreReader.open_latest(repo.ws, wait_ms=0).close()
    except RagitError as exc:
        return exc.code if exc.code == "STORE_READ_BUSY" else None
    return None


def _doctor_failures(repo: RagitRepo) -> tuple[list[str], str | None]:
    report, error = repo.doctor()
    failed = [c["name"] for c in report["checks"] if not c["ok"]]
    return failed, (error.recovery if error is not None else None)


def _recover(obs: Observed, repo: RagitRepo, first: tuple[list[str], str | None]) -> None:
    """Run doctor's named recovery until doctor passes (at most three rounds); ``first`` is
    the doctor result already in hand."""
    failed, recovery = first
    for _ in range(3):
        if not failed:
            return
        assert recovery and recovery.startswith("ragit "), (failed, recovery)
        run = repo.ragit(*shlex.split(recovery)[1:])
        obs.recoveries.append(f"`{recovery}` → exit {run.code}")
        failed, recovery = _doctor_failures(repo)


def _run(obs: Observed, repo: RagitRepo, *argv: str) -> Any:
    run = repo.ragit(*argv)
    obs.finish.append(f"`ragit {' '.join(argv)}` → exit {run.code}")
    return run


def _finish(obs: Observed, case: Case, operation: str) -> None:
    """Complete the interrupted operation as a user would: run it again (once more after
    doctor's recoveries if that fails). What it found is recorded in ``obs.after``."""
    repo = case.repo
    if operation == "ingest":
        try:
            repo.ingest()
            obs.finish.append("`ragit ingest` (rerun)")
        except RagitError as exc:
            obs.finish.append(f"`ragit ingest` (rerun) → {exc.code}")
            _recover(obs, repo, _doctor_failures(repo))
            _run(obs, repo, "ingest")
        try:
            head = repo.query(QUESTION, top_k=10)["snapshotSha"]
        except RagitError as exc:
            head = exc.code
        obs.after["head"] = "indexed" if head == case.extra["head"] else f"not indexed ({head})"
    elif operation == "migrate":
        meta = json.loads((repo.ws.store_dir / "meta.json").read_text(encoding="utf-8"))
        if meta["embedding"]["dimensions"] != 128:
            from ragit.config import load_config
            from ragit.ops.maintenance.rebuild import rebuild_store

            cfg = load_config(repo.ws)
            rebuild_store(repo.ws, cfg, command="migrate-embeddings", progress=lambda _m: None)
            obs.finish.append("`ragit migrate embeddings` (rerun)")
    elif operation == "purge":
        _finish_purge(obs, case)


def _finish_purge(obs: Observed, case: Case) -> None:
    from ragit.config import load_config
    from ragit.ops.security.audit import run_audit
    from ragit.ops.security.purge import run_purge

    repo = case.repo
    cfg = load_config(repo.ws)
    data = run_purge(repo.ws, cfg, target="all", dry_run=False, progress=lambda _m: None)
    obs.finish.append("`ragit security purge` (rerun)")
    stale = case.extra["stale"]
    reported = [s["commitSha"] for s in data["staleSnapshots"]]
    obs.after["S3 reported stale"] = "yes" if reported == [stale] else f"no: {reported}"
    try:
        repo.ingest(all=True, at=stale)
        obs.finish.append("`ragit ingest --all --at <S3>` (the reported recovery)")
        obs.after["S3 re-indexed"] = "yes"
    except RagitError as exc:
        obs.after["S3 re-indexed"] = f"no: {exc.code}"
    audit = run_audit(repo.ws, cfg)
    left = [f["path"] for f in audit["findings"] if f["surface"] in ("control-plane", "store")]
    obs.after["audit"] = "clean" if not left else f"findings: {left}"
    gone = not (repo.root / QUARANTINE).exists() and not (repo.root / CACHE_ENTRY).exists()
    obs.after["quarantine+cache"] = "deleted" if gone else "still there"
    leaked = SECRET in repo.all_output() + json.dumps(data)
    obs.after["secret kept out of output"] = "no" if leaked else "yes"


def _env(fault: str, phase: str, release: Path | None) -> dict[str, str]:
    if fault == "kill":
        return {"RAGIT_FAULT_AT": phase}
    if fault == "enospc":
        return {"RAGIT_FAULT_ENOSPC": phase}
    assert release is not None
    return {"RAGIT_FAULT_PAUSE_AT": phase, "RAGIT_FAULT_RELEASE": str(release)}


def envelope_error(stdout: str) -> str:
    """The error code of the JSON envelope ending ``stdout`` ("" when there is none)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    try:
        envelope = json.loads(lines[-1]) if lines else {}
    except ValueError:
        return ""
    error = envelope.get("error") if isinstance(envelope, dict) else None
    return str(error.get("code", "")) if isinstance(error, dict) else ""


def run_fault(case: Case, operation: str, fault: str, phase: str) -> tuple[int, str, str]:
    """Run the operation with the fault; returns its exit status, stderr and stdout."""
    repo = case.repo
    if fault == "sigint":
        release = repo.root.parent / "release"
        child = repo.popen(*ARGV[operation], env=_env(fault, phase, release))
        try:
            seen = wait_for_line(child.stderr, f"ragit-fault: paused at {phase}")
            child.send_signal(signal.SIGINT)
            out, err = child.communicate(timeout=120)
        finally:
            release.touch()  # never leave a child waiting, whatever failed above
            if child.poll() is None:
                child.kill()
                child.wait()
        return child.returncode, "".join(seen) + err, out
    run = repo.ragit(*ARGV[operation], env=_env(fault, phase, None))
    return run.code, run.stderr, run.stdout


def run_scenario(
    tmp_path: Path,
    operation: str,
    fault: str,
    phase: str,
    damage: Callable[[Case], None] | None = None,
) -> Observed:
    """The whole protocol (module docstring) for one operation, fault and phase."""
    case = prepare(operation, tmp_path)
    obs = Observed(operation, fault, phase)
    if damage is not None:
        damage(case)
    else:
        obs.exit_code, stderr, stdout = run_fault(case, operation, fault, phase)
        obs.error = envelope_error(stdout)
        obs.stderr = [line for line in stderr.splitlines() if line.startswith("[ragit]")]
        assert "Traceback" not in stderr, stderr
    from ragit.store.lock import inspect_lock

    obs.lock = inspect_lock(case.repo.ws).state
    # Right after a fault readers may still be on the old generation or on the new one.
    obs.readers = compare_answers(case, [case.before, case.expected_after], allow=NOT_READY)
    first = _doctor_failures(case.repo)
    obs.doctor = first[0]
    _recover(obs, case.repo, first)
    _finish(obs, case, operation)
    obs.after.update(compare_answers(case, [case.expected_after], allow=set()))
    obs.doctor_after, _recovery = _doctor_failures(case.repo)
    _name_shas(obs, case)
    record(obs)
    return obs


def _name_shas(obs: Observed, case: Case) -> None:
    """Commands in the record name snapshots by label (S1, S2, S3), not by SHA."""
    names = {sha: label for label, sha in case.snapshots.items()}
    if "stale" in case.extra:
        names[case.extra["stale"]] = "S3"
    if "head" in case.extra:
        names[case.extra["head"]] = "S3"

    def named(text: str) -> str:
        for sha, label in names.items():
            text = text.replace(sha, f"<{label}>")
        return text

    obs.recoveries = [named(r) for r in obs.recoveries]
    obs.finish = [named(f) for f in obs.finish]


GOOD_AFTER = {"same", "indexed", "yes", "clean", "deleted"}


def assert_safe_and_recovered(obs: Observed) -> None:
    """The promise every fault must keep (contract §2, §6; docs/faults.md)."""
    shown = json.dumps(asdict(obs), indent=1)
    wrong = {k: v for k, v in obs.readers.items() if v != "same" and v not in NOT_READY}
    assert not wrong, f"a reader saw other hits or an untyped failure: {shown}"
    if any(v != "same" for v in obs.readers.values()):
        assert obs.doctor, f"readers are affected but doctor passes: {shown}"
    assert all(r.endswith("exit 0") for r in obs.recoveries), shown
    assert obs.doctor_after == [], shown
    assert all(v in GOOD_AFTER for v in obs.after.values()), shown


def record(obs: Observed) -> None:
    """Write the row for the matrix when ``FAULT_MATRIX_DIR`` names a directory."""
    target = os.environ.get("FAULT_MATRIX_DIR")
    if not target:
        return
    name = f"{obs.operation}-{obs.fault}-{obs.phase}.json".replace("/", "_")
    Path(target).mkdir(parents=True, exist_ok=True)
    (Path(target) / name).write_text(json.dumps(asdict(obs), indent=1), encoding="utf-8")


# ---------------------------------------------------------------- damaged store files

# Files of the canonical zvec collection (globs under .ragit/store/chunks) and what they hold.
# (A damaged deletion map behaves like the manifest, a damaged vector index like the
# chunk columns; the four below cover the four outcomes seen.)
CORRUPTIBLE = {
    "collection manifest": "manifest.*",
    "id map": "idmap.*/*.sst",
    "keyword index": "ragit-terms.sqlite",
    "chunk columns": "*/scalar.*.ipc",
}
REBUILD = "ragit repair --apply --action store-rebuild"


def flip_bytes(ws: Workspace, pattern: str) -> Path:
    """Invert 64 bytes in the middle of the first canonical store file matching ``pattern``."""
    path = sorted((ws.store_dir / "chunks").glob(pattern))[0]
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    for i in range(middle, min(len(data), middle + 64)):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    return path


def run_corruption(tmp_path: Path, target: str) -> Observed:
    """A byte-flipped canonical store file: what readers, doctor and the next writer see,
    then the store rebuild that repairs it (fresh reader copies prove the canonical files)."""
    case = prepare("ingest", tmp_path)
    repo = case.repo
    obs = Observed("store files", "corrupt", target)
    flipped = flip_bytes(repo.ws, CORRUPTIBLE[target])
    obs.notes.append(f"flipped {flipped.relative_to(repo.ws.store_dir).as_posix()}")
    obs.readers = compare_answers(case, [case.before], allow=NOT_READY)
    obs.doctor = [c for c in _doctor_failures(repo)[0] if c != "snapshot.head"]
    writer = repo.ragit("ingest")
    code = writer.error["code"] if writer.code else "ok"
    obs.finish.append(f"next writer `ragit ingest` → exit {writer.code} ({code})")
    answers = compare_answers(case, [case.before, case.expected_after], allow=NOT_READY)
    shown = ", ".join(sorted(set(answers.values())))
    obs.notes.append(f"readers after that writer: {shown}")
    seen = [c for c in _doctor_failures(repo)[0] if c != "snapshot.head"]
    obs.notes.append(f"doctor after that writer: {', '.join(seen) or 'passes'}")
    fix = repo.ragit(*shlex.split(REBUILD)[1:])
    obs.recoveries.append(f"`{REBUILD}` → exit {fix.code}")
    if writer.code:
        again = repo.ragit("ingest")
        obs.finish.append(f"`ragit ingest` → exit {again.code}")
    shutil.rmtree(user_cache_dir() / "stores")  # readers re-copy the canonical files
    obs.after.update(compare_answers(case, [case.expected_after], allow=set()))
    head = repo.query(QUESTION, top_k=10)["snapshotSha"]
    obs.after["head"] = "indexed" if head == case.extra["head"] else f"not indexed ({head})"
    obs.doctor_after = _doctor_failures(repo)[0]
    _name_shas(obs, case)
    record(obs)
    return obs
