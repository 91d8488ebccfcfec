"""The benchmark scenarios. Each returns result rows; none asserts anything.

Every timed command is a fresh process. A scenario runs ``--warmup`` uncounted
repetitions first, then ``--runs`` counted ones; commands that take a query run
once per generator query in each counted repetition.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_lib.context import Context, resolve_mcp_impl
from bench_lib.corpus import RFC_QUERIES, copy_repo, diff_digests, dir_bytes, tree_digest
from bench_lib.embed_server import LoopbackOllama
from bench_lib.mcp_client import StdioClient
from bench_lib.proc import BenchError, Env, Sample, run
from bench_lib.results import Row, timed_row

MIB = 1024 * 1024
N10K = 10_000
SNAPSHOTS = 50
HISTORY_COMMITS = 100


@dataclass(frozen=True)
class Scenario:
    name: str
    fn: Callable[[Context], list[Row]]
    default: bool
    summary: str


def _rss_row(scenario: str, metric: str, key: str | None, n: int, samples: list[Sample]) -> Row:
    return Row(scenario, metric, "MiB", [s.max_rss_mib for s in samples], n, key)


def _envelope(sample: Sample) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(sample.stdout)
    except json.JSONDecodeError as exc:
        raise BenchError(
            f"not a JSON envelope from {' '.join(sample.argv)}: {sample.stdout[:300]!r}"
        ) from exc
    return data


def _hit_paths(sample: Sample) -> list[str]:
    hits = (_envelope(sample).get("data") or {}).get("hits") or []
    return [str(hit.get("path")) for hit in hits]


def _rank_of(target: str, paths: list[str]) -> int | None:
    seen: list[str] = []
    for path in paths:
        if path not in seen:
            seen.append(path)
    return seen.index(target) + 1 if target in seen else None


def _store_mib(repo: Path, *, allocated: bool = False) -> float:
    return dir_bytes(repo / ".ragit" / "store", allocated=allocated) / MIB


def _distinct_mib(*roots: Path) -> float:
    """Apparent size of the regular files under ``roots``, each inode once (hard links
    between the store and its reader copies share one file)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for root in roots:
        for path in root.rglob("*") if root.is_dir() else ():
            try:
                st = path.lstat()
            except OSError:
                continue
            if path.is_file() and not path.is_symlink() and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total / MIB


def _segment_count(repo: Path) -> int:
    """zvec segment directories of this project's store layout (0 for another layout)."""
    chunks = repo / ".ragit" / "store" / "chunks"
    if not chunks.is_dir():
        return 0
    return sum(1 for p in chunks.iterdir() if p.is_dir() and p.name.isdigit())


def _manifest_sizes(repo: Path) -> list[float]:
    mdir = repo / ".ragit" / "manifest"
    if not mdir.is_dir():
        return []
    return [p.stat().st_size / MIB for p in sorted(mdir.glob("*.json"))]


# ------------------------------------------------------------------ shared pieces


def measure_ingest_all(
    ctx: Context,
    scenario: str,
    pristine: Path,
    n: int,
    key_prefix: str | None = "ingest-all",
    corpus: int | str | None = None,
) -> list[Row]:
    """`ingest --all` on a fresh copy of ``pristine`` with an empty user cache, per run.

    The last run happens in place of the shared indexed repository of ``corpus`` (when
    none exists yet), so later scenarios need no extra full ingest; its user cache is
    the shared one, which holds no copy for that new path, so it starts empty too.
    """
    corpus = n if corpus is None else corpus
    samples: list[Sample] = []
    counts: dict[str, Any] = {}
    total = ctx.opts.warmup + ctx.opts.runs
    for i in range(total):
        adopt = i == total - 1 and not ctx.has_indexed(corpus)
        if adopt:
            run_dir = None
            repo = copy_repo(pristine, ctx.indexed_path(corpus), ctx.git)
            env = ctx.env
        else:
            run_dir = ctx.scratch(f"{scenario}-ingest")
            repo = copy_repo(pristine, run_dir / "repo", ctx.git)
            env = ctx.fresh_cache_env(run_dir)
        counted = i >= ctx.opts.warmup
        label = (
            f"run {i - ctx.opts.warmup + 1}/{ctx.opts.runs}"
            if counted
            else f"warm-up {i + 1}/{ctx.opts.warmup}"
        )
        ctx.progress(f"{scenario}: ingest --all {label}")
        sample = ctx.run_ragit(repo, "ingest", "--all", "--format", "json", env=env)
        if counted:
            samples.append(sample)
        if not counts:
            data = _envelope(sample).get("data") or {}
            counts = {k: data.get(k) for k in ("documents", "processed", "embedded")}
            counts["storeMiB"] = round(_store_mib(repo), 2)
        if adopt:
            ctx.adopt_indexed(corpus, repo)
        elif run_dir is not None:
            ctx.discard(run_dir)
    wall_key = f"{key_prefix}.wall" if key_prefix else None
    rss_key = f"{key_prefix}.rss" if key_prefix else None
    return [
        timed_row(scenario, "ingest --all: wall", wall_key, n, samples, **counts),
        _rss_row(scenario, "ingest --all: peak RSS", rss_key, n, samples),
    ]


def measure_cold(
    ctx: Context,
    scenario: str,
    metric: str,
    key: str | None,
    n: int,
    repo: Path,
    argv_for: Callable[[str], list[str]],
    queries: list[dict[str, str]],
    quality: bool = False,
    env: Env | None = None,
) -> list[Row]:
    """A read command as a cold process, once per query per counted run."""
    for _ in range(ctx.opts.warmup):
        ctx.run_ragit(repo, *argv_for(queries[0]["query"]), env=env)
    samples: list[Sample] = []
    ranks: list[int | None] = []
    for r in range(ctx.opts.runs):
        ctx.progress(f"{scenario}: {metric} run {r + 1}/{ctx.opts.runs}")
        for q in queries:
            sample = ctx.run_ragit(repo, *argv_for(q["query"]), env=env)
            samples.append(sample)
            if quality and r == 0:
                ranks.append(_rank_of(q["target"], _hit_paths(sample)))
    rows = [timed_row(scenario, f"{metric}: wall", key, n, samples)]
    if quality:
        in_top5 = sum(1 for rank in ranks if rank is not None and rank <= 5)
        top5_key = "query.top5" if key == "query.wall" else None
        rows.append(
            Row(
                scenario,
                "source doc in top 5",
                "/10",
                [float(in_top5)],
                n,
                top5_key,
                extra={"ranks": ranks, "queries": [q["query"] for q in queries]},
            )
        )
    return rows


def query_argv(question: str) -> list[str]:
    return ["query", question, "--top-k", "5", "--format", "json"]


def pack_argv(goal: str) -> list[str]:
    return ["context", "pack", goal, "--format", "json"]


def status_argv(_unused: str) -> list[str]:
    return ["status", "--format", "json"]


# ------------------------------------------------------------------ scenarios


def help_scenario(ctx: Context) -> list[Row]:
    repo = ctx.workdir / "help-repo"
    if not repo.exists():
        repo.mkdir()
        ctx.git(repo, "init", "-q", "-b", "main")
    rows = []
    for args, key in (
        (["--help"], "help"),
        (["--version"], "version"),
        (["describe"], "describe"),
        (["describe", "query"], "describe"),
    ):
        for _ in range(ctx.opts.warmup):
            ctx.run_ragit(repo, *args)
        samples = [ctx.run_ragit(repo, *args) for _ in range(ctx.opts.runs)]
        rows.append(timed_row("help", f"ragit {' '.join(args)}", key, ctx.opts.n, samples))
    return rows


def ingest_all(ctx: Context) -> list[Row]:
    return measure_ingest_all(ctx, "ingest-all", ctx.pristine(ctx.opts.n), ctx.opts.n)


def ingest_again(ctx: Context) -> list[Row]:
    n = ctx.opts.n
    run_dir = ctx.scratch("ingest-again")
    repo = copy_repo(ctx.indexed(n), run_dir / "repo", ctx.git)
    env = ctx.fresh_cache_env(run_dir)
    # The first ingest in this copy's place publishes its reader copy; from then on
    # nothing may change.
    ctx.run_ragit(repo, "ingest", "--all", "--format", "json", env=env)
    samples: list[Sample] = []
    writes: list[float] = []
    changes: list[str] = []
    for i in range(ctx.opts.warmup + ctx.opts.runs):
        before = tree_digest(repo / ".ragit")
        sample = ctx.run_ragit(repo, "ingest", "--all", "--format", "json", env=env)
        diff = diff_digests(before, tree_digest(repo / ".ragit"))
        if i >= ctx.opts.warmup:
            samples.append(sample)
            writes.append(0.0 if diff else 1.0)
            changes.extend(d for d in diff if d not in changes)
    ctx.discard(run_dir)
    return [
        timed_row("ingest-again", "ingest --all, same HEAD: wall", "ingest-again.wall", n, samples),
        Row(
            "ingest-again",
            "writesNothing (.ragit unchanged)",
            "bool",
            writes,
            n,
            "ingest-again.writes",
            extra={"changed": changes[:40]},
        ),
    ]


def ingest_since(ctx: Context) -> list[Row]:
    n = ctx.opts.n
    indexed = ctx.indexed(n)
    samples: list[Sample] = []
    mutated: list[str] = []
    for i in range(ctx.opts.warmup + ctx.opts.runs):
        run_dir = ctx.scratch("ingest-since")
        repo = copy_repo(indexed, run_dir / "repo", ctx.git)
        env = ctx.fresh_cache_env(run_dir)
        mutated.append(ctx.gen.mutate(repo, seed=7))
        sample = ctx.run_ragit(repo, "ingest", "--since", "HEAD~1", "--format", "json", env=env)
        if i >= ctx.opts.warmup:
            samples.append(sample)
        ctx.discard(run_dir)
    return [
        timed_row(
            "ingest-since",
            "ingest --since HEAD~1, 1 doc changed: wall",
            "ingest-since.wall",
            n,
            samples,
            mutated=sorted(set(mutated)),
        )
    ]


def query(ctx: Context) -> list[Row]:
    n = ctx.opts.n
    rows = measure_cold(
        ctx,
        "query",
        "query (cold process)",
        "query.wall",
        n,
        ctx.indexed(n),
        query_argv,
        ctx.queries(n),
        quality=True,
    )
    rows.insert(1, Row("query", "query: peak RSS", "MiB", list(rows[0].rss or []), n))
    return rows


def context_pack(ctx: Context) -> list[Row]:
    n = ctx.opts.n
    return measure_cold(
        ctx,
        "context-pack",
        "context pack (cold process)",
        "context-pack.wall",
        n,
        ctx.indexed(n),
        pack_argv,
        ctx.queries(n),
    )


def status(ctx: Context) -> list[Row]:
    n = ctx.opts.n
    return measure_cold(
        ctx,
        "status",
        "status (cold process)",
        "status.wall",
        n,
        ctx.indexed(n),
        status_argv,
        ctx.queries(n),
    )


def _compactor_running(repo: Path) -> bool:
    """Whether a detached ``ragit.store.compact`` process for ``repo`` is alive (Linux
    ``/proc``; elsewhere assumed not)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return False
    needle = str(repo.resolve()).encode()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"ragit.store.compact" in argv and any(needle == arg for arg in argv):
            return True
    return False


def _settle(repo: Path, limit: float = 120.0) -> float:
    """Wait until no detached compactor works on ``repo`` and the writer lock is free (at
    most ``limit`` seconds): the store as any later command finds it. Returns the wait."""
    lock = repo / ".ragit" / "runtime" / "store-write.lock"
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if not _compactor_running(repo) and not lock.exists():
            break
        time.sleep(0.2)
    return time.monotonic() - started


# Words no generator document holds: the appended paragraph is the only chunk with them.
QUERYABLE_WORDS = "quorlith vexaphane drundle"
QUERYABLE_LIMIT_S = 60.0


def _hook_runner_busy(repo: Path) -> bool:
    """Whether a hook runner of ``repo`` is alive (its run lock file names a live pid)."""
    run_file = repo / ".ragit" / "runtime" / "hook-ingest.run"
    try:
        owner = json.loads(run_file.read_text(encoding="utf-8").strip("\0 \n") or "{}")
    except (OSError, ValueError):
        return False
    pid = owner.get("pid") if isinstance(owner, dict) else None
    return isinstance(pid, int) and Path(f"/proc/{pid}").is_dir()


def commit_to_queryable(ctx: Context) -> list[Row]:
    """From ``git commit`` (hooks installed, one changed document) until ``ragit query`` at
    HEAD ranks the new text first: the post-commit hook's background ingest (its end seen
    as HEAD's manifest appearing), then a cold query (again until one answers at the new
    HEAD with the changed document first). The figure includes that query."""
    n = ctx.opts.n
    indexed = ctx.indexed(n)
    totals: list[float] = []
    commits: list[float] = []
    manifests: list[float] = []
    tries: list[float] = []
    ranked: list[str] = []
    for i in range(ctx.opts.warmup + ctx.opts.runs):
        run_dir = ctx.scratch("commit-to-queryable")
        repo = copy_repo(indexed, run_dir / "repo", ctx.git)
        env = ctx.fresh_cache_env(run_dir)
        ctx.run_ragit(repo, "hooks", "install", "--format", "json", env=env)
        # The user has queried before: the published generation has its reader copy.
        ctx.run_ragit(repo, "query", "release checklist", "--format", "json", env=env)
        docs = sorted(p for p in (repo / "docs").rglob("*.md") if p.is_file())
        target = docs[(7919 * (i + 1)) % len(docs)]
        rel = target.relative_to(repo).as_posix()
        with target.open("a", encoding="utf-8") as handle:
            handle.write(f"\n\n## Addendum\n\nThe {QUERYABLE_WORDS} rule applies from now on.\n")
        ctx.git(repo, "add", rel)
        start = time.perf_counter()
        head = ctx.git.commit(repo, f"docs: addendum to {target.name}")
        committed = time.perf_counter() - start
        # Poll for HEAD's manifest (a stat every 10 ms), then query; a query that does not
        # yet answer at HEAD with the document first is retried.
        manifest = repo / ".ragit" / "manifest" / f"{head}.json"
        while not manifest.exists() and time.perf_counter() - start < QUERYABLE_LIMIT_S:
            time.sleep(0.01)
        indexed_at = time.perf_counter() - start
        attempts = 0
        while True:
            attempts += 1
            sample = ctx.run_ragit(
                repo, "query", QUERYABLE_WORDS, "--format", "json", env=env, check=False
            )
            if sample.returncode == 0:
                data = _envelope(sample).get("data") or {}
                if data.get("snapshotSha") == head and _hit_paths(sample)[:1] == [rel]:
                    break
            if time.perf_counter() - start > QUERYABLE_LIMIT_S:
                raise BenchError(
                    f"commit-to-queryable: {rel} not first at HEAD after "
                    f"{QUERYABLE_LIMIT_S:.0f} s\n{sample.describe_failure()}"
                )
        total = time.perf_counter() - start
        deadline = time.monotonic() + 120
        while _hook_runner_busy(repo) and time.monotonic() < deadline:
            time.sleep(0.1)
        _settle(repo)  # a background merge must not run into the next run
        if i >= ctx.opts.warmup:
            totals.append(total)
            commits.append(committed)
            manifests.append(indexed_at)
            tries.append(float(attempts))
            ranked.append(rel)
        ctx.discard(run_dir)
    sc = "commit-to-queryable"
    return [
        Row(
            sc,
            "git commit until query at HEAD ranks the new text first",
            "s",
            totals,
            n,
            "commit-to-queryable.wall",
            extra={"documents": ranked},
        ),
        Row(sc, "git commit (hooks start the ingest)", "s", commits, n, None),
        Row(sc, "git commit until HEAD's manifest is written", "s", manifests, n, None),
        Row(sc, "queries run", "n", tries, n, None),
    ]


def sizes(ctx: Context) -> list[Row]:
    n = ctx.opts.n
    run_dir = ctx.scratch("sizes")
    _settle(ctx.indexed(n))  # the first ingest's merge may still run in the background
    repo = copy_repo(ctx.indexed(n), run_dir / "repo", ctx.git)
    env = ctx.fresh_cache_env(run_dir)
    store1 = _store_mib(repo)
    # Allocated blocks of the uncopied store: a copy fills the holes of sparse files.
    store1_alloc = _store_mib(ctx.indexed(n), allocated=True)
    manifest1 = _manifest_sizes(repo)
    ctx.git.commit(repo, "empty commit for a second full ingest", "--allow-empty")
    ctx.run_ragit(repo, "ingest", "--all", "--format", "json", env=env)
    for seed in (7, 8, 9):
        ctx.gen.mutate(repo, seed=seed)
        # A writer waits for the detached compactor the previous ingest started (EXT-054);
        # settling first keeps these sizes, not timings, independent of that wait.
        _settle(repo)
        ctx.run_ragit(repo, "ingest", "--since", "HEAD~1", "--format", "json", env=env)
    right_after = _store_mib(repo)
    settle = _settle(repo)
    store_after = _store_mib(repo)
    store_after_alloc = _store_mib(repo, allocated=True)
    segments = _segment_count(repo)
    manifests = _manifest_sizes(repo)
    reader = dir_bytes(run_dir / "cache") / MIB
    together = _distinct_mib(repo / ".ragit" / "store", run_dir / "cache")
    ctx.discard(run_dir)
    sc = "sizes"
    return [
        Row(
            sc,
            "store after one --all",
            "MiB",
            [store1],
            n,
            "sizes.store1",
            extra={"allocatedMiB": round(store1_alloc, 2)},
        ),
        Row(
            sc,
            "manifest after one --all",
            "MiB",
            [manifest1[0] if manifest1 else 0.0],
            n,
            "sizes.manifest1",
        ),
        Row(
            sc,
            "store after 2nd --all + 3 incremental",
            "MiB",
            [store_after],
            n,
            "sizes.store-after",
            extra={
                "allocatedMiB": round(store_after_alloc, 2),
                "segments": segments,
                "rightAfterLastIngestMiB": round(right_after, 2),
                "waitedForCompactorSeconds": round(settle, 1),
            },
        ),
        Row(
            sc,
            "store ratio to one snapshot",
            "x",
            [store_after / store1 if store1 else 0.0],
            n,
            "sizes.store-ratio",
        ),
        Row(
            sc,
            "store ratio, allocated blocks (du -s)",
            "x",
            [store_after_alloc / store1_alloc if store1_alloc else 0.0],
            n,
            None,
        ),
        Row(
            sc,
            f"manifests total ({len(manifests)} snapshots)",
            "MiB",
            [sum(manifests)],
            n,
            "sizes.manifests-after",
        ),
        Row(
            sc,
            "largest manifest",
            "MiB",
            [max(manifests, default=0.0)],
            n,
            "sizes.manifest-max",
            extra={"manifestsMiB": manifests},
        ),
        Row(sc, "reader copies in the user cache", "MiB", [reader], n, None),
        Row(
            sc,
            "store + reader copies, hard links counted once",
            "MiB",
            [together],
            n,
            None,
            extra={"ratioToStore": round(together / store_after, 2) if store_after else None},
        ),
        Row(
            sc,
            "store + reader copies / store",
            "x",
            [together / store_after if store_after else 0.0],
            n,
            "sizes.with-copies-ratio",
        ),
    ]


def history(ctx: Context) -> list[Row]:
    n = ctx.opts.n
    run_dir = ctx.scratch("history")
    repo = copy_repo(ctx.indexed(n), run_dir / "repo", ctx.git)
    env = ctx.fresh_cache_env(run_dir)
    store1 = _store_mib(repo)
    per_commit = max(1, n // 100)
    queries = ctx.queries(n)
    before = _cold_samples(ctx, repo, env, queries)
    samples: list[Sample] = []
    for i in range(HISTORY_COMMITS):
        ctx.gen.amend_many(repo, seed=1000 + i, count=per_commit)
        ctx.git(repo, "add", "docs")
        ctx.git.commit(repo, f"docs: amend {per_commit} documents ({i + 1})")
        samples.append(ctx.run_ragit(repo, "ingest", "--format", "json", env=env))
        if (i + 1) % 10 == 0:
            ctx.progress(
                f"history: {i + 1}/{HISTORY_COMMITS} commits indexed, "
                f"store {_store_mib(repo):.1f} MiB"
            )
    after = _cold_samples(ctx, repo, env, queries)
    store_after = _store_mib(repo)
    store_after_alloc = _store_mib(repo, allocated=True)
    segments = _segment_count(repo)
    manifests = _manifest_sizes(repo)
    ctx.discard(run_dir)
    sc = "history"
    return [
        timed_row(sc, f"ingest after each commit ({per_commit} docs changed)", None, n, samples),
        Row(sc, "store after one snapshot", "MiB", [store1], n, None),
        Row(
            sc,
            f"store after {HISTORY_COMMITS} more commits",
            "MiB",
            [store_after],
            n,
            None,
            extra={
                "allocatedMiB": round(store_after_alloc, 2),
                "segments": segments,
            },
        ),
        Row(
            sc,
            "store ratio to one snapshot",
            "x",
            [store_after / store1 if store1 else 0.0],
            n,
            "history.store-ratio",
        ),
        Row(sc, f"manifests total ({len(manifests)} snapshots)", "MiB", [sum(manifests)], n, None),
        Row(
            sc, "largest manifest", "MiB", [max(manifests, default=0.0)], n, "history.manifest-max"
        ),
        timed_row(sc, "query, 1 snapshot: wall", None, n, before),
        timed_row(sc, f"query, {HISTORY_COMMITS + 1} snapshots: wall", None, n, after),
        _rss_row(sc, "query, 1 snapshot: peak RSS", None, n, before),
        _rss_row(sc, f"query, {HISTORY_COMMITS + 1} snapshots: peak RSS", None, n, after),
    ]


def _history_repo(ctx: Context, run_dir: Path, env: Env) -> Path:
    """A copy of the indexed corpus with ``HISTORY_COMMITS`` more commits, each indexed.

    Each commit amends 1% of the documents (the ``history`` scenario's edit), so every
    snapshot has a delta against the previous one.
    """
    n = ctx.opts.n
    indexed = ctx.indexed(n)
    _settle(indexed)
    repo = copy_repo(indexed, run_dir / "repo", ctx.git)
    per_commit = max(1, n // 100)
    for i in range(HISTORY_COMMITS):
        ctx.gen.amend_many(repo, seed=1000 + i, count=per_commit)
        ctx.git(repo, "add", "docs")
        ctx.git.commit(repo, f"docs: amend {per_commit} documents ({i + 1})")
        _settle(repo)  # a detached compactor holds the writer lock for a while
        ctx.run_ragit(repo, "ingest", "--format", "json", env=env)
        if (i + 1) % 20 == 0:
            ctx.progress(f"log: {i + 1}/{HISTORY_COMMITS} commits indexed")
    _settle(repo)
    return repo


def _repeated(ctx: Context, repo: Path, env: Env, *args: str) -> list[Sample]:
    for _ in range(ctx.opts.warmup):
        ctx.run_ragit(repo, *args, env=env)
    return [ctx.run_ragit(repo, *args, env=env) for _ in range(ctx.opts.runs)]


def log_scenario(ctx: Context) -> list[Row]:
    """`log -n 100`, `drift` and `narrative` over 101 indexed snapshots (cold processes)."""
    n = ctx.opts.n
    run_dir = ctx.scratch("log")
    env = ctx.fresh_cache_env(run_dir)
    repo = _history_repo(ctx, run_dir, env)
    count = str(HISTORY_COMMITS)
    log_json = _repeated(ctx, repo, env, "log", "-n", count, "--format", "json")
    entries = len((_envelope(log_json[0]).get("data") or {}).get("entries") or [])
    log_text = _repeated(ctx, repo, env, "log", "-n", count)
    log_min = _repeated(ctx, repo, env, "log", "-n", count, "--view", "minimal")
    drift = _repeated(ctx, repo, env, "drift", "--format", "json")
    items = len((_envelope(drift[0]).get("data") or {}).get("items") or [])
    report = run_dir / "narrative.html"
    narrative = _repeated(ctx, repo, env, "narrative", "--output", str(report), "--format", "json")
    ctx.discard(run_dir)
    sc = "log"
    return [
        timed_row(sc, f"log -n {count} (text, default view)", "log.wall", n, log_text),
        timed_row(sc, f"log -n {count} --format json", None, n, log_json, entries=entries),
        timed_row(sc, f"log -n {count} --view minimal", None, n, log_min),
        timed_row(sc, "drift --format json", None, n, drift, items=items),
        timed_row(sc, "narrative (10 commits, writes the report)", None, n, narrative),
    ]


def _cold_samples(
    ctx: Context, repo: Path, env: Env, queries: list[dict[str, str]]
) -> list[Sample]:
    for _ in range(ctx.opts.warmup):
        ctx.run_ragit(repo, *query_argv(queries[0]["query"]), env=env)
    return [
        ctx.run_ragit(repo, *query_argv(q["query"]), env=env)
        for _ in range(ctx.opts.runs)
        for q in queries
    ]


def snapshots_scaling(ctx: Context) -> list[Row]:
    n = ctx.opts.n
    indexed = ctx.indexed(n)
    one = copy_repo(indexed, ctx.scratch("scaling-1") / "repo", ctx.git)
    many = copy_repo(indexed, ctx.scratch("scaling-50") / "repo", ctx.git)
    env = ctx.fresh_cache_env(one.parent)
    ingests: list[Sample] = []
    for i in range(SNAPSHOTS - 1):
        ctx.git.commit(many, f"empty commit {i + 1}", "--allow-empty")
        ingests.append(ctx.run_ragit(many, "ingest", "--format", "json", env=env))
    ctx.progress(f"snapshots-scaling: {len(_manifest_sizes(many))} snapshots indexed")
    queries = ctx.queries(n)
    for _ in range(ctx.opts.warmup):
        ctx.run_ragit(one, *query_argv(queries[0]["query"]), env=env)
        ctx.run_ragit(many, *query_argv(queries[0]["query"]), env=env)
    a: list[Sample] = []
    b: list[Sample] = []
    for _ in range(ctx.opts.runs):
        # Alternate the two repositories so machine drift hits both alike.
        for q in queries:
            a.append(ctx.run_ragit(one, *query_argv(q["query"]), env=env))
            b.append(ctx.run_ragit(many, *query_argv(q["query"]), env=env))
    ratios = [y.wall / x.wall for x, y in zip(a, b, strict=True)]
    ctx.discard(one.parent)
    ctx.discard(many.parent)
    sc = "snapshots-scaling"
    return [
        timed_row(sc, "ingest of an empty commit (reuse parent)", None, n, ingests),
        timed_row(sc, "query, 1 snapshot: wall", None, n, a),
        timed_row(sc, f"query, {SNAPSHOTS} snapshots: wall", None, n, b),
        Row(sc, f"query {SNAPSHOTS}/1 snapshots, pairwise", "x", ratios, n, "scaling.ratio"),
    ]


def n10k(ctx: Context) -> list[Row]:
    rows = measure_ingest_all(ctx, "n10k", ctx.pristine(N10K), N10K)
    rows += measure_cold(
        ctx,
        "n10k",
        "query (cold process)",
        "query.wall",
        N10K,
        ctx.indexed(N10K),
        query_argv,
        ctx.queries(N10K),
        quality=True,
    )
    for row in rows:
        if row.key == "query.top5":
            row.key = None  # the original was not measured at N=10,000
    return rows


def rfcs(ctx: Context) -> list[Row]:
    if not ctx.opts.rfcs.is_dir():
        return [Row("rfcs", f"skipped: {ctx.opts.rfcs} not found", "s", [], 0)]
    pristine = ctx.rfcs_pristine()
    rows = measure_ingest_all(ctx, "rfcs", pristine, 0, key_prefix=None, corpus="rfcs")
    repo = ctx.rfcs_indexed()
    rows += measure_cold(
        ctx, "rfcs", "query (cold process)", None, 0, repo, query_argv, RFC_QUERIES, quality=True
    )
    rows += measure_cold(
        ctx, "rfcs", "context pack (cold process)", None, 0, repo, pack_argv, RFC_QUERIES
    )
    status_data = _envelope(ctx.run_ragit(repo, "status", "--format", "json")).get("data") or {}
    snap = status_data.get("snapshot") or {}
    manifests = _manifest_sizes(repo)
    rows += [
        Row(
            "rfcs",
            "store after one --all",
            "MiB",
            [_store_mib(repo)],
            0,
            None,
            extra={"documents": snap.get("documents"), "chunks": snap.get("chunks")},
        ),
        Row(
            "rfcs",
            "manifest after one --all",
            "MiB",
            [manifests[0] if manifests else 0.0],
            0,
            "sizes.manifest-max",
        ),
    ]
    return rows


def _warm_queries(client: StdioClient, queries: list[str], count: int) -> list[float]:
    """``count`` timed ``ragit_query`` calls (seconds each), cycling through ``queries``."""
    times: list[float] = []
    for k in range(count):
        t0 = time.perf_counter()
        client.call("ragit_query", {"question": queries[k % len(queries)]})
        times.append(time.perf_counter() - t0)
    return times


def mcp(ctx: Context) -> list[Row]:
    n = ctx.opts.n
    mcp_argv = ctx.opts.mcp_impl or resolve_mcp_impl(None, ctx.opts.impl)
    if not mcp_argv:
        ctx.progress("mcp: skipped: no ragit-mcp executable found (pass --mcp-impl)")
        return [Row("mcp", "skipped: ragit-mcp not found", "ms", [], n)]
    repo = ctx.indexed(n)
    queries = [q["query"] for q in ctx.queries(n)]
    startup: list[float] = []
    first: list[float] = []
    warm: list[float] = []
    pack: list[float] = []
    rss: list[float] = []
    for i in range(ctx.opts.warmup + ctx.opts.runs):
        counted = i >= ctx.opts.warmup
        with StdioClient([*mcp_argv, "--cwd", str(repo)], cwd=repo, env=ctx.env) as client:
            client.initialize()
            t_init = time.perf_counter() - client.started
            t0 = time.perf_counter()
            client.call("ragit_query", {"question": queries[0]})
            t_first = time.perf_counter() - t0
            calls = _warm_queries(client, queries, ctx.opts.mcp_calls)
            packs: list[float] = []
            for k in range(max(10, ctx.opts.mcp_calls // 5)):
                t0 = time.perf_counter()
                client.call("ragit_context_pack", {"goal": queries[k % len(queries)]})
                packs.append(time.perf_counter() - t0)
        if counted:
            startup.append(t_init)
            first.append(t_first)
            warm.extend(calls)
            pack.extend(packs)
            if client.max_rss_mib is not None:
                rss.append(client.max_rss_mib)
        ctx.progress(
            f"mcp: session {i + 1}: warm query median {statistics.median(calls) * 1000:.1f} ms"
        )
    # First call when the reader copy is missing (user cache cleared): the server makes it.
    cold_first: list[float] = []
    for _ in range(ctx.opts.runs):
        run_dir = ctx.scratch("mcp-cold")
        cold_repo = copy_repo(repo, run_dir / "repo", ctx.git)
        env = ctx.fresh_cache_env(run_dir)
        with StdioClient([*mcp_argv, "--cwd", str(cold_repo)], cwd=cold_repo, env=env) as client:
            client.initialize()
            t0 = time.perf_counter()
            client.call("ragit_query", {"question": queries[0]})
            cold_first.append(time.perf_counter() - t0)
        ctx.discard(run_dir)
    ms = [x * 1000 for x in warm]
    ordered = sorted(ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] if ordered else 0.0
    sc = "mcp"
    return [
        Row(sc, "start-up to initialize answer", "ms", [x * 1000 for x in startup], n, None),
        Row(sc, "first ragit_query (reader copy cached)", "ms", [x * 1000 for x in first], n, None),
        Row(
            sc,
            "first ragit_query (user cache cleared)",
            "ms",
            [x * 1000 for x in cold_first],
            n,
            None,
        ),
        Row(sc, "warm ragit_query", "ms", ms, n, "mcp.warm-query", extra={"p95": p95}),
        Row(sc, "warm ragit_query p95", "ms", [p95], n, None),
        Row(sc, "warm ragit_context_pack", "ms", [x * 1000 for x in pack], n, None),
        Row(sc, "server peak RSS", "MiB", rss, n, None),
    ]


OLLAMA_DIMS = 768  # nomic-embed-text, RAGit's default Ollama model


def _embed_figures(sample: Sample) -> tuple[int, float]:
    """(chunks embedded, embedding phase in ms) from an ingest envelope."""
    data = _envelope(sample).get("data") or {}
    return int(data.get("embedded") or 0), float((data.get("timings") or {}).get("embedMs") or 0)


def embed(ctx: Context) -> list[Row]:
    """Embedding throughput, and what the embedding cache saves (issue: providers and cache).

    Per run, on fresh copies of the pristine corpus: ``ingest --all`` with the default
    placeholder; then with the real Ollama provider pointed at a loopback server that counts
    requests — once with an empty embedding cache, then on a second fresh copy that holds
    only the first copy's ``.ragit/cache/embeddings`` (every chunk a cache hit). The
    embedding phase comes from the envelope's ``timings.embedMs``; ``requests`` on the hit
    run must be 0.
    """
    n = ctx.opts.n
    pristine = ctx.pristine(n)
    placeholder_rate: list[float] = []
    miss_walls: list[Sample] = []
    hit_walls: list[Sample] = []
    miss_rate: list[float] = []
    hit_us: list[float] = []
    miss_requests: list[float] = []
    hit_requests: list[float] = []
    with LoopbackOllama(OLLAMA_DIMS) as server:
        for i in range(ctx.opts.warmup + ctx.opts.runs):
            counted = i >= ctx.opts.warmup
            ctx.progress(f"embed: run {i + 1}/{ctx.opts.warmup + ctx.opts.runs}")
            run_dir = ctx.scratch("embed")
            env = ctx.fresh_cache_env(run_dir)
            plain = copy_repo(pristine, run_dir / "placeholder", ctx.git)
            chunks, ms = _embed_figures(
                ctx.run_ragit(plain, "ingest", "--all", "--format", "json", env=env)
            )
            repos = []
            for name in ("miss", "hit"):
                repo = copy_repo(pristine, run_dir / name, ctx.git)
                ctx.run_ragit(repo, "config", "set", "embedding.provider", "ollama", env=env)
                ctx.run_ragit(repo, "config", "set", "embedding.base_url", server.url, env=env)
                repos.append(repo)
            server.reset()
            miss = ctx.run_ragit(repos[0], "ingest", "--all", "--format", "json", env=env)
            m_requests = server.requests
            m_chunks, m_ms = _embed_figures(miss)
            cache_rel = Path(".ragit", "cache", "embeddings")
            shutil.copytree(repos[0] / cache_rel, repos[1] / cache_rel)
            server.reset()
            hit = ctx.run_ragit(repos[1], "ingest", "--all", "--format", "json", env=env)
            h_chunks, h_ms = _embed_figures(hit)
            if counted:
                placeholder_rate.append(chunks / max(ms, 1e-3) * 1000)
                miss_walls.append(miss)
                hit_walls.append(hit)
                miss_rate.append(m_chunks / max(m_ms, 1e-3) * 1000)
                hit_us.append(h_ms * 1000 / max(h_chunks, 1))
                miss_requests.append(float(m_requests))
                hit_requests.append(float(server.requests))
            ctx.discard(run_dir)
    sc = "embed"
    return [
        Row(
            sc,
            "placeholder: chunks embedded per second",
            "chunks/s",
            placeholder_rate,
            n,
            None,
            extra={"chunks": chunks},
        ),
        timed_row(sc, "ollama (loopback), empty cache: ingest --all", None, n, miss_walls),
        Row(
            sc,
            "ollama (loopback), empty cache: chunks per second",
            "chunks/s",
            miss_rate,
            n,
            None,
            extra={"dimensions": OLLAMA_DIMS},
        ),
        Row(sc, "ollama (loopback), empty cache: requests", "count", miss_requests, n, None),
        timed_row(sc, "ollama (loopback), cache full: ingest --all", None, n, hit_walls),
        Row(sc, "cache hit: embedding phase per chunk", "us", hit_us, n, None),
        Row(sc, "ollama (loopback), cache full: requests", "count", hit_requests, n, None),
    ]


MINILM_MODELS = ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8")


def _mcp_warm_queries(
    ctx: Context, mcp_argv: list[str], repo: Path, queries: list[str], env: Env
) -> tuple[float, list[float]]:
    """One ragit-mcp session: (first ragit_query in seconds, warm ragit_query seconds)."""
    with StdioClient([*mcp_argv, "--cwd", str(repo)], cwd=repo, env=env) as client:
        client.initialize()
        t0 = time.perf_counter()
        client.call("ragit_query", {"question": queries[0]})
        first = time.perf_counter() - t0
        warm = _warm_queries(client, queries, ctx.opts.mcp_calls)
    return first, warm


def minilm(ctx: Context) -> list[Row]:
    """The local-minilm provider, numpy fp32 and onnxruntime int8 (issue: offline semantic).

    Per model: one fresh copy of the pristine corpus, ``config set embedding.provider
    local-minilm`` and ``embedding.model``, ``ingest --all`` (chunks/s from the envelope's
    ``timings.embedMs``; a one-document repository is ingested first with the same user
    cache, so the one-off int8 graph build is not counted), then every generator query
    as a cold ``query`` process, and one ``ragit-mcp`` session of ``--mcp-calls`` warm
    ``ragit_query`` calls (each embeds its question). A model whose backend is not installed
    is reported as skipped.
    """
    n = ctx.opts.n
    pristine = ctx.pristine(n)
    queries = ctx.queries(n)
    mcp_argv = ctx.opts.mcp_impl or resolve_mcp_impl(None, ctx.opts.impl)
    rows: list[Row] = []
    for model in MINILM_MODELS:
        sc = f"minilm {model.removeprefix('all-MiniLM-L6-v2').lstrip('-') or 'fp32'}"
        run_dir = ctx.scratch("minilm")
        repo = copy_repo(pristine, run_dir / "repo", ctx.git)
        env = ctx.fresh_cache_env(run_dir)
        warm = run_dir / "warm-up"
        (warm / "docs").mkdir(parents=True)
        (warm / "docs" / "a.md").write_text("# Warm-up\n\nLoads the model once.\n")
        ctx.git(warm, "init", "-q")
        ctx.git(warm, "add", "-A")
        ctx.git.commit(warm, "Warm-up document")
        ctx.init_and_commit(warm)
        for target in (warm, repo):
            ctx.run_ragit(target, "config", "set", "embedding.provider", "local-minilm", env=env)
            ctx.run_ragit(target, "config", "set", "embedding.model", model, env=env)
        # First use of a model in a user cache (the int8 graph is built there): not counted.
        ctx.run_ragit(warm, "ingest", "--all", "--format", "json", env=env, check=False)
        ctx.progress(f"{sc}: ingest --all of N={n}")
        sample = ctx.run_ragit(repo, "ingest", "--all", "--format", "json", env=env, check=False)
        if sample.returncode != 0:
            error = (_envelope(sample).get("error") or {}).get("code", sample.returncode)
            ctx.progress(f"{sc}: skipped: ingest failed ({error})")
            rows.append(Row(sc, f"skipped: ingest failed ({error})", "s", [], n))
            ctx.discard(run_dir)
            continue
        chunks, ms = _embed_figures(sample)
        rows.append(timed_row(sc, "ingest --all", None, n, [sample], chunks=chunks))
        rows.append(
            Row(sc, "ingest: chunks embedded per second", "chunks/s", [chunks / ms * 1000], n, None)
        )
        rows += measure_cold(
            ctx, sc, "query (cold process)", None, n, repo, query_argv, queries, True, env
        )
        if mcp_argv:
            ctx.progress(f"{sc}: ragit-mcp session, {ctx.opts.mcp_calls} warm queries")
            first, warm = _mcp_warm_queries(ctx, mcp_argv, repo, [q["query"] for q in queries], env)
            ms_warm = sorted(x * 1000 for x in warm)
            p95 = ms_warm[min(len(ms_warm) - 1, round(0.95 * (len(ms_warm) - 1)))]
            rows.append(Row(sc, "mcp: first ragit_query (model load)", "ms", [first * 1000], n))
            rows.append(Row(sc, "mcp: warm ragit_query", "ms", ms_warm, n, extra={"p95": p95}))
            rows.append(Row(sc, "mcp: warm ragit_query p95", "ms", [p95], n))
        ctx.discard(run_dir)
    return rows


# (label, model, environment): numpy alone, the fp32 model with onnxruntime's fp32 kernels
# (the default when onnxruntime is installed) and the int8 model; the last two need
# onnxruntime in the ragit under test.
SEMANTIC_BACKENDS = (
    ("numpy", "all-MiniLM-L6-v2", {"RAGIT_MINILM_ENGINE": "numpy"}),
    ("fp32-ort", "all-MiniLM-L6-v2", {"RAGIT_MINILM_ENGINE": "auto"}),
    ("int8", "all-MiniLM-L6-v2-int8", {}),
)
SEMANTIC_PROBE = Path(__file__).resolve().parent / "semantic_probe.py"


def _impl_python(ctx: Context) -> str:
    """The interpreter of the ragit under test (beside its executable), else this one."""
    impl = ctx.opts.impl
    if len(impl) == 1:
        beside = Path(impl[0]).parent / "python"
        if beside.is_file():
            return str(beside)
    if len(impl) >= 2 and Path(impl[0]).name.startswith("python"):
        return impl[0]
    return sys.executable


def _semantic_warm_up(ctx: Context, run_dir: Path, model: str, env: Env) -> None:
    """A one-document ingest in ``env``'s user cache: loads (and for int8 builds) the model."""
    warm = run_dir / "warm-up"
    (warm / "docs").mkdir(parents=True)
    (warm / "docs" / "a.md").write_text("# Warm-up\n\nLoads the model once.\n")
    ctx.git(warm, "init", "-q")
    ctx.git(warm, "add", "-A")
    ctx.git.commit(warm, "Warm-up document")
    ctx.run_ragit(warm, "init", "--yes", env=env)
    ctx.run_ragit(warm, "config", "set", "embedding.provider", "local-minilm", env=env)
    ctx.run_ragit(warm, "config", "set", "embedding.model", model, env=env)
    ctx.run_ragit(warm, "ingest", "--all", "--format", "json", env=env, check=False)


def semantic_ingest(ctx: Context) -> list[Row]:
    """``ingest --all`` of the Rust RFCs with local-minilm on each installed backend.

    First a probe (``semantic_probe.py``, run with the ragit's own interpreter) records what
    the ingest embeds — chunks, tokens as the model sees them, padding — and times
    onnxruntime's own fp32 throughput for the same graph on a 300-chunk sample (the
    practical ceiling). Then, ``--runs`` times, interleaved across backends, a fresh copy
    of the corpus is configured for the backend and ingested: wall, CPU and peak RSS of the
    process, and chunks/s and tokens/s of its embedding phase (``timings.embedMs``). Each
    backend has its own user cache, warmed by a one-document ingest (the int8 build is not
    counted). ``--semantic-docs K`` takes the first K RFC files instead of all (quick run);
    ``--semantic-backends`` runs only the named backends.
    """
    sc = "semantic-ingest"
    if not ctx.opts.rfcs.is_dir():
        return [Row(sc, f"skipped: {ctx.opts.rfcs} not found", "s", [], 0)]
    docs = ctx.opts.semantic_docs
    pristine = ctx.rfcs_pristine(docs)
    full = not docs
    corpus = "all RFCs" if full else f"first {docs} RFC files"
    probe_dir = ctx.scratch("semantic-probe")
    probe_repo = copy_repo(pristine, probe_dir / "repo", ctx.git)
    ctx.progress(f"{sc}: probe ({corpus}): chunks, tokens, onnxruntime fp32 ceiling")
    # One process: with the embedding helper on, the probe would see only the texts the
    # ingest's own process embeds (the helper takes the rest on the second core).
    probe_sample = run(
        [_impl_python(ctx), str(SEMANTIC_PROBE), str(probe_repo)],
        cwd=probe_repo,
        env=ctx.fresh_cache_env(probe_dir).with_(RAGIT_EMBED_HELPER="0"),
    )
    probe = json.loads(probe_sample.stdout.strip().splitlines()[-1])
    ctx.discard(probe_dir)
    ceiling = probe.get("ceiling")
    rows = [
        Row(
            sc,
            f"corpus ({corpus}): chunks embedded",
            "count",
            [float(probe["chunks"])],
            0,
            extra={
                k: probe[k] for k in ("tokens", "meanTokens", "truncatedChunks", "tokensCutOff")
            },
        ),
        Row(sc, "corpus: tokens the model sees (cut at 256)", "count", [float(probe["tokens"])], 0),
        Row(
            sc,
            "padding waste of the encoders (%)",
            "count",
            [100.0 * probe["padding"]["encoders"]],
            0,
            extra=probe["padding"],
        ),
    ]
    if ceiling:
        rows += [
            Row(
                sc,
                "ceiling: onnxruntime fp32, chunks/s",
                "chunks/s",
                [ceiling["chunksPerS"]],
                0,
                extra=ceiling,
            ),
            Row(sc, "ceiling: onnxruntime fp32, tokens/s", "chunks/s", [ceiling["tokensPerS"]], 0),
        ]
    chosen = [b for b in SEMANTIC_BACKENDS if b[0] in (ctx.opts.semantic_backends or (b[0],))]
    backends = [b for b in chosen if ceiling or b[0] == "numpy"]
    skipped = [b[0] for b in chosen if b not in backends]
    for name in skipped:
        rows.append(Row(f"{sc} {name}", "skipped: onnxruntime not installed", "s", [], 0))
    envs: dict[str, Env] = {}
    for name, model, extra_env in backends:
        run_dir = ctx.scratch(f"semantic-{name}")
        envs[name] = ctx.fresh_cache_env(run_dir).with_(**extra_env)
        ctx.progress(f"{sc} {name}: warm-up (model load{', int8 build' if 'int8' in name else ''})")
        _semantic_warm_up(ctx, run_dir, model, envs[name])
    samples: dict[str, list[Sample]] = {name: [] for name, _, _ in backends}
    rates: dict[str, list[float]] = {name: [] for name, _, _ in backends}
    token_rates: dict[str, list[float]] = {name: [] for name, _, _ in backends}
    for r in range(ctx.opts.runs):
        for name, model, _ in backends:
            env = envs[name]
            run_dir = ctx.scratch(f"semantic-{name}-run")
            repo = copy_repo(pristine, run_dir / "repo", ctx.git)
            ctx.run_ragit(repo, "config", "set", "embedding.provider", "local-minilm", env=env)
            ctx.run_ragit(repo, "config", "set", "embedding.model", model, env=env)
            ctx.progress(f"{sc} {name}: ingest --all run {r + 1}/{ctx.opts.runs} ({corpus})")
            sample = ctx.run_ragit(repo, "ingest", "--all", "--format", "json", env=env)
            chunks, ms = _embed_figures(sample)
            samples[name].append(sample)
            rates[name].append(chunks / ms * 1000 if ms else 0.0)
            token_rates[name].append(probe["tokens"] / ms * 1000 if ms else 0.0)
            ctx.progress(
                f"{sc} {name}: {sample.wall:.1f} s wall, {sample.cpu:.1f} s CPU, "
                f"{chunks} chunks in {ms / 1000:.1f} s"
            )
            ctx.discard(run_dir)
    for name, _, _ in backends:
        key = f"semantic-ingest.{name}.wall" if full else None
        rows += [
            timed_row(f"{sc} {name}", "ingest --all", key, 0, samples[name]),
            Row(f"{sc} {name}", "embedding: chunks/s", "chunks/s", rates[name], 0),
            Row(f"{sc} {name}", "embedding: tokens/s", "chunks/s", token_rates[name], 0),
        ]
    return rows


RECALL_WRAPS = 200


def recall(ctx: Context) -> list[Row]:
    """`memory recall` on a repository holding 200 wraps (issue: agent memory).

    A fresh copy of the indexed corpus gets ``RECALL_WRAPS`` `memory wrap` calls, each a
    session on one of 10 goals (so second wraps of a goal merge into its working state), with
    a decision, an open loop and a next action; then every generator query is asked as a
    cold `memory recall` process. The wraps themselves are timed too.
    """
    n = ctx.opts.n
    run_dir = ctx.scratch("recall")
    repo = copy_repo(ctx.indexed(n), run_dir / "repo", ctx.git)
    env = ctx.fresh_cache_env(run_dir)
    queries = ctx.queries(n)
    goals = [q["query"] for q in queries]
    wraps: list[Sample] = []
    payload = repo / "wrap.json"  # --input must lie inside the repository; not a document
    for i in range(RECALL_WRAPS):
        goal = goals[i % len(goals)]
        payload.write_text(
            json.dumps(
                {
                    "goal": goal,
                    "summary": f"Session {i + 1}: read the documents about {goal}.",
                    "decisions": [f"Decision {i + 1} about {goal}"],
                    "openLoops": [
                        {
                            "id": f"loop-{i % 25}",
                            "title": f"follow-up {i % 25}",
                            "nextAction": "ask",
                        }
                    ],
                    "nextActions": [f"next step {i + 1}"],
                    "createdAt": f"2026-04-{1 + i // 24:02d}T{i % 24:02d}:00:00Z",
                }
            ),
            encoding="utf-8",
        )
        wraps.append(
            ctx.run_ragit(
                repo, "memory", "wrap", "--input", str(payload), "--format", "json", env=env
            )
        )
        if (i + 1) % 50 == 0:
            ctx.progress(f"recall: {i + 1}/{RECALL_WRAPS} wraps")
    for _ in range(ctx.opts.warmup):
        ctx.run_ragit(repo, "memory", "recall", goals[0], "--format", "json", env=env)
    samples: list[Sample] = []
    for r in range(ctx.opts.runs):
        ctx.progress(f"recall: cold memory recall run {r + 1}/{ctx.opts.runs}")
        for goal in goals:
            samples.append(
                ctx.run_ragit(repo, "memory", "recall", goal, "--format", "json", env=env)
            )
    data = _envelope(samples[0]).get("data") or {}
    ctx.discard(run_dir)
    sc = "recall"
    return [
        timed_row(sc, "memory wrap (cold process)", None, n, wraps),
        timed_row(
            sc,
            f"memory recall, {RECALL_WRAPS} wraps (cold process)",
            None,
            n,
            samples,
            relatedDecisions=len(data.get("relatedDecisions") or []),
            retrievedHits=len(data.get("retrievedHits") or []),
        ),
    ]


def _postgres(ctx: Context) -> list[Row]:
    from bench_lib.postgres import postgres

    return postgres(ctx)


SCENARIOS: list[Scenario] = [
    Scenario("help", help_scenario, True, "ragit --help / --version / describe / describe query"),
    Scenario("ingest-all", ingest_all, True, "full ingest on a fresh copy, cache reset"),
    # Before the scenarios that read ctx.indexed(n): with --n 10000 its last full ingest
    # becomes the shared indexed N=10,000 repository instead of an extra one.
    Scenario("n10k", n10k, False, "ingest + query at N=10,000 (opt-in, slow)"),
    Scenario("ingest-again", ingest_again, True, "re-ingest unchanged HEAD; must write nothing"),
    Scenario("ingest-since", ingest_since, True, "ingest --since HEAD~1 after one mutation"),
    Scenario("query", query, True, "cold query over the 10 generator queries + top-5 check"),
    Scenario("context-pack", context_pack, True, "cold context pack over the 10 queries"),
    Scenario("status", status, True, "cold status"),
    Scenario("sizes", sizes, True, "store/manifest sizes after 1 and after 5 snapshots"),
    Scenario(
        "commit-to-queryable",
        commit_to_queryable,
        True,
        "hooks installed: git commit until query at HEAD ranks the new text first",
    ),
    Scenario("snapshots-scaling", snapshots_scaling, True, "query with 1 vs 50 snapshots"),
    Scenario("rfcs", rfcs, True, "ingest + query on the Rust RFCs (648 real docs)"),
    Scenario("mcp", mcp, True, "ragit-mcp over stdio: start-up, first and warm calls"),
    Scenario("embed", embed, False, "embedding throughput and cache hits (loopback Ollama)"),
    Scenario("minilm", minilm, False, "local-minilm fp32/int8: ingest rate, query, MCP"),
    Scenario(
        "semantic-ingest",
        semantic_ingest,
        False,
        "local-minilm ingest of the RFCs per backend, tokens/s, onnxruntime ceiling (opt-in)",
    ),
    Scenario("recall", recall, False, "memory recall after 200 wraps (opt-in)"),
    Scenario("log", log_scenario, False, "log -n 100, drift, narrative at 101 snapshots (opt-in)"),
    Scenario("history", history, False, "100 commits x 1% docs changed (opt-in, slow)"),
    Scenario(
        "postgres",
        _postgres,
        False,
        "shared store vs zvec: ingest, 8 MCP clients, 4 writers, cold query (opt-in)",
    ),
]
BY_NAME = {s.name: s for s in SCENARIOS}
