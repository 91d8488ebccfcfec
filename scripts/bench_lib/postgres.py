"""The ``postgres`` scenario: the shared store (PostgreSQL + pgvector) against zvec.

Every figure is a real process against a real server: a PostgreSQL from the ``pgserver``
wheel on a temporary data directory (unix socket only), or the server ``RAGIT_DATABASE_URL``
names when it is set in the benchmark's own environment (the scenario creates and drops
databases named ``ragit_bench_*`` there). Each measurement gets a database of its own,
migrated with ``ragit migrate store``.

- ``ingest --all`` of the same corpus into zvec and into the server, interleaved run by run
  (a fresh copy and an empty user cache each, a fresh database for the server): wall, the
  client's CPU, the server's CPU (the postmaster's and its backends' clock ticks, read from
  ``/proc``; only for a server this scenario started), chunks/s and the pairwise ratio.
- warm ``ragit_query`` through 8 ``ragit-mcp`` processes at once (one session each, real
  stdio), each making ``--mcp-calls`` calls over the generator queries: p50 / p95; the same
  with zvec, interleaved, for comparison.
- 4 concurrent writers: 4 clones at 4 commits (each commit amends 1% of the documents)
  ingest at once into one database; one clone ingests the same 4 commits one after the
  other into another. Every generator query at every commit must give the same hits (ids,
  scores, texts, citations) from both.
- cold CLI ``query`` on the server and on zvec, interleaved query by query.

psycopg and pgserver are imported here only (lazily): run the benchmark with the Python of
an environment that has ``ragit-cli[postgres]`` and ``pgserver`` (the project's venv).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from bench_lib.context import Context, resolve_mcp_impl
from bench_lib.corpus import copy_repo, dir_bytes
from bench_lib.mcp_client import StdioClient
from bench_lib.proc import BenchError, Env, Sample
from bench_lib.results import Row, timed_row

MIB = 1024 * 1024
CLIENTS = 8
WRITERS = 4
REPOSITORY = "bench/corpus"
SC = "postgres"


class PgServer:
    """The server of the scenario: started from the pgserver wheel, or named by the
    environment's ``RAGIT_DATABASE_URL``. Databases are created per measurement."""

    def __init__(self) -> None:
        self.handle: Any = None
        self.base: Path | None = None
        self.admin_url = ""
        self.created: list[str] = []
        self.external = False

    def __enter__(self) -> PgServer:
        given = os.environ.get("RAGIT_DATABASE_URL")
        if given:
            self.admin_url = given
            self.external = True
            return self
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import pgserver
        except ImportError as exc:
            raise BenchError(
                "postgres: neither RAGIT_DATABASE_URL nor the pgserver wheel "
                f"(pip install pgserver) is available: {exc}"
            ) from None
        # A short path: a unix socket's path is limited to ~107 bytes.
        self.base = Path(tempfile.mkdtemp(prefix="ragit-bpg-"))
        self.handle = pgserver.get_server(self.base, cleanup_mode="delete")
        self.admin_url = self.handle.get_uri()
        return self

    def __exit__(self, *exc: object) -> None:
        for name in self.created:
            with contextlib.suppress(Exception):
                self.drop(name)
        if self.handle is not None:
            with contextlib.suppress(Exception):
                self.handle.cleanup()
        if self.base is not None:
            shutil.rmtree(self.base, ignore_errors=True)

    def _admin(self) -> Any:
        import psycopg

        return psycopg.connect(self.admin_url, autocommit=True)

    def url(self, name: str) -> str:
        from psycopg.conninfo import make_conninfo

        return make_conninfo(self.admin_url, dbname=name)

    def create(self, name: str) -> str:
        with self._admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}"')
        self.created.append(name)
        return self.url(name)

    def drop(self, name: str) -> None:
        with self._admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if name in self.created:
            self.created.remove(name)

    def query(self, name: str, statement: str) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.url(name), autocommit=True) as conn:
            return list(conn.execute(statement).fetchall())

    def version(self) -> str:
        with self._admin() as admin:
            row = admin.execute(
                "SELECT current_setting('server_version'), "
                "(SELECT default_version FROM pg_available_extensions WHERE name = 'vector')"
            ).fetchone()
        return f"PostgreSQL {row[0]}, pgvector {row[1]}" if row else "?"

    def cpu_seconds(self) -> float | None:
        """CPU seconds of the postmaster and every process under it, reaped or live (a
        backend's time moves into the postmaster's ``cutime``/``cstime`` when it exits)."""
        if self.base is None:
            return None
        pid_file = self.base / "postmaster.pid"
        try:
            root = int(pid_file.read_text(encoding="utf-8").split()[0])
        except (OSError, ValueError, IndexError):
            return None
        return _tree_cpu(root)


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def _tree_cpu(root: int) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    total = 0
    stack = [root]
    while stack:
        pid = stack.pop()
        fields = _stat(pid)
        if fields is None:
            continue
        # utime, stime, cutime, cstime: fields 14-17 of stat, 12-15 after "pid (comm) ".
        total += sum(int(v) for v in fields[11:15])
        stack.extend(children.get(pid, []))
    return total / ticks


def _data(sample: Sample) -> dict[str, Any]:
    try:
        envelope: dict[str, Any] = json.loads(sample.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError) as exc:
        raise BenchError(f"not a JSON envelope: {sample.stdout[:300]!r}") from exc
    if envelope.get("ok") is not True:
        raise BenchError(f"{' '.join(sample.argv)}: {json.dumps(envelope)[:800]}")
    data: dict[str, Any] = envelope.get("data") or {}
    return data


def _pg_pristine(ctx: Context, n: int) -> Path:
    """The pristine corpus with ``store.backend = "postgres"`` committed in its config."""
    repo = ctx.workdir / f"corpus-{n}" / "pristine-pg"
    if not repo.is_dir():
        copy_repo(ctx.pristine(n), repo, ctx.git)
        ctx.run_ragit(repo, "config", "set", "store.backend", "postgres")
        ctx.run_ragit(repo, "config", "set", "store.repository", REPOSITORY)
        ctx.git(repo, "add", "-A")
        ctx.git.commit(repo, "Use the shared store")
    return repo


def _migrate(ctx: Context, env: Env, where: Path) -> None:
    ctx.run_ragit(where, "migrate", "store", "--format", "json", env=env)


def _p(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def _wait_builders(server: PgServer, db: str, timeout: float = 3600.0) -> float:
    """Wait until no session but ours is connected to ``db`` (a detached graph builder has
    finished); returns the seconds waited."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        busy = server.query(
            db,
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        if not busy or not busy[0][0]:
            break
        time.sleep(0.2)
    return time.monotonic() - start


def _valid_graph(server: PgServer, db: str) -> bool:
    rows = server.query(
        db,
        "SELECT count(*) FILTER (WHERE i.indisvalid) FROM pg_index i "
        "JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname LIKE 'ragit_chunks_hnsw_%'",
    )
    return bool(rows and rows[0][0])


# ------------------------------------------------------------------ (a) ingest


def _ingest(
    ctx: Context, server: PgServer, n: int
) -> tuple[list[Row], Path, str, Path, dict[str, Any]]:
    """Interleaved ``ingest --all``: zvec, postgres (alternating which goes first)."""
    pristine = ctx.pristine(n)
    pg_pristine = _pg_pristine(ctx, n)
    zvec_s: list[Sample] = []
    pg_s: list[Sample] = []
    server_cpu: list[float] = []
    build_cpu: list[float] = []
    build_wall: list[float] = []
    z_chunks: list[float] = []
    p_chunks: list[float] = []
    info: dict[str, Any] = {}
    total = ctx.opts.warmup + ctx.opts.runs
    keep_zvec: Path | None = None
    keep_pg: Path | None = None
    keep_db = ""
    for i in range(total):
        last = i == total - 1
        counted = i >= ctx.opts.warmup
        run_dir = ctx.scratch("pg-ingest")
        db = f"ragit_bench_ingest_{i}"

        def zvec_run(i: int, run_dir: Path, db: str, counted: bool, last: bool) -> None:
            nonlocal keep_zvec
            repo = copy_repo(pristine, run_dir / "zvec", ctx.git)
            (run_dir / "zvec-cache").mkdir()
            env = ctx.fresh_cache_env(run_dir / "zvec-cache")
            ctx.progress(f"postgres: ingest --all into zvec ({i + 1}/{total})")
            sample = ctx.run_ragit(repo, "ingest", "--all", "--format", "json", env=env)
            data = _data(sample)
            if counted:
                zvec_s.append(sample)
                z_chunks.append(float(data.get("embedded") or 0))
            if last:
                keep_zvec = repo
                info["zvecStoreMiB"] = dir_bytes(repo / ".ragit" / "store") / MIB
                info["zvecChunks"] = data.get("embedded")

        def pg_run(i: int, run_dir: Path, db: str, counted: bool, last: bool) -> None:
            nonlocal keep_pg, keep_db
            repo = copy_repo(pg_pristine, run_dir / "pg", ctx.git)
            url = server.create(db)
            (run_dir / "pg-cache").mkdir()
            env = ctx.fresh_cache_env(run_dir / "pg-cache").with_(RAGIT_DATABASE_URL=url)
            _migrate(ctx, env, repo)
            ctx.progress(f"postgres: ingest --all into the server ({i + 1}/{total})")
            before = server.cpu_seconds()
            sample = ctx.run_ragit(repo, "ingest", "--all", "--format", "json", env=env)
            after = server.cpu_seconds()
            _data(sample)
            # The ingest leaves the HNSW build to a detached builder: wait for it (so it
            # does not run under the next measurement) and count its server CPU apart.
            waited = _wait_builders(server, db)
            built = server.cpu_seconds()
            chunks = int(server.query(db, "SELECT count(*) FROM ragit_chunks")[0][0])
            if counted:
                pg_s.append(sample)
                p_chunks.append(float(chunks))
                if before is not None and after is not None:
                    server_cpu.append(after - before)
                if before is not None and built is not None:
                    build_cpu.append(built - before)
                    build_wall.append(waited)
            if last:
                keep_pg, keep_db = repo, db
                size = int(server.query(db, "SELECT pg_database_size(current_database())")[0][0])
                tables = server.query(
                    db,
                    "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
                    "JOIN pg_namespace s ON s.oid = c.relnamespace "
                    "WHERE c.relkind = 'r' AND c.relname LIKE 'ragit_%' ORDER BY 2 DESC",
                )
                info.update(
                    pgChunks=chunks,
                    pgDatabaseMiB=size / MIB,
                    pgTablesMiB={name: round(b / MIB, 2) for name, b in tables},
                    graphBuilt=_valid_graph(server, db),
                )
            else:
                server.drop(db)

        order = (zvec_run, pg_run) if i % 2 == 0 else (pg_run, zvec_run)
        for step in order:
            step(i, run_dir, db, counted, last)
        if not last:
            ctx.discard(run_dir)
    assert keep_zvec is not None and keep_pg is not None
    z_rate = [c / s.wall for c, s in zip(z_chunks, zvec_s, strict=True)]
    p_rate = [c / s.wall for c, s in zip(p_chunks, pg_s, strict=True)]
    pg_total_cpu = [
        s.cpu + (server_cpu[k] if k < len(server_cpu) else 0.0) for k, s in enumerate(pg_s)
    ]
    rows = [
        Row(
            SC,
            "ingest --all, zvec: wall",
            "s",
            [s.wall for s in zvec_s],
            n,
            None,
            cpu=[s.cpu for s in zvec_s],
            rss=[s.max_rss_mib for s in zvec_s],
            extra={"chunks": info.get("zvecChunks")},
        ),
        Row(
            SC,
            "ingest --all, postgres: wall (CPU: client)",
            "s",
            [s.wall for s in pg_s],
            n,
            None,
            cpu=[s.cpu for s in pg_s],
            rss=[s.max_rss_mib for s in pg_s],
            extra={"chunks": info.get("pgChunks"), "graphBuilt": info.get("graphBuilt")},
        ),
    ]
    if server_cpu:
        rows.append(Row(SC, "ingest --all, postgres: server CPU", "s", server_cpu, n, None))
        rows.append(Row(SC, "ingest --all, postgres: client + server CPU", "s", pg_total_cpu, n))
    if build_cpu:
        rows.append(
            Row(SC, "postgres: server CPU with the detached graph build", "s", build_cpu, n, None)
        )
        rows.append(
            Row(SC, "postgres: graph build after the ingest returned: wall", "s", build_wall, n)
        )
    rows += [
        Row(SC, "ingest --all, zvec: chunks/s", "chunks/s", z_rate, n, None),
        Row(SC, "ingest --all, postgres: chunks/s", "chunks/s", p_rate, n, None),
        Row(
            SC,
            "ingest throughput postgres/zvec, pairwise",
            "x",
            [p / z for p, z in zip(p_rate, z_rate, strict=True)],
            n,
            None,
        ),
        Row(
            SC,
            "ingest time postgres/zvec, pairwise (throughput >= 0.5)",
            "x",
            [p.wall / z.wall for p, z in zip(pg_s, zvec_s, strict=True)],
            n,
            "pg.ingest-time-ratio",
        ),
        Row(
            SC,
            "store size, zvec (.ragit/store)",
            "MiB",
            [info["zvecStoreMiB"]],
            n,
            None,
        ),
        Row(
            SC,
            "store size, postgres (database)",
            "MiB",
            [info["pgDatabaseMiB"]],
            n,
            None,
            extra={"tables": info.get("pgTablesMiB")},
        ),
        Row(
            SC,
            "store size per 1,000 chunks, postgres",
            "MiB",
            [info["pgDatabaseMiB"] * 1000 / max(1, info["pgChunks"])],
            n,
            None,
        ),
    ]
    return rows, keep_zvec, keep_db, keep_pg, info


# ------------------------------------------------------------------ (b) MCP, 8 clients


def _own_cpu(pid: int) -> float:
    fields = _stat(pid)
    return sum(int(v) for v in fields[11:13]) / os.sysconf("SC_CLK_TCK") if fields else 0.0


def _clients(
    ctx: Context,
    argv: list[str],
    repo: Path,
    env: Env,
    queries: list[str],
    server: PgServer | None = None,
) -> tuple[list[float], list[float], float, float]:
    """``CLIENTS`` ragit-mcp sessions at once: warm call times (ms), peak RSS (MiB), and
    the CPU milliseconds per warm call of the MCP processes and of the server."""
    calls = ctx.opts.mcp_calls
    marks: dict[str, float] = {}

    def started() -> None:
        value = server.cpu_seconds() if server is not None else None
        marks["server"] = value if value is not None else 0.0

    ready = threading.Barrier(CLIENTS, action=started)
    client_cpu = [0.0] * CLIENTS
    times: list[list[float]] = [[] for _ in range(CLIENTS)]
    rss: list[float] = []
    errors: list[BaseException] = []

    def session(k: int) -> None:
        try:
            with StdioClient([*argv, "--cwd", str(repo)], cwd=repo, env=env) as client:
                client.initialize()
                client.call("ragit_query", {"question": queries[k % len(queries)]})
                ready.wait(timeout=600)
                cpu0 = _own_cpu(client.proc.pid)
                for j in range(calls):
                    t0 = time.perf_counter()
                    client.call("ragit_query", {"question": queries[(k + j) % len(queries)]})
                    times[k].append((time.perf_counter() - t0) * 1000)
                client_cpu[k] = _own_cpu(client.proc.pid) - cpu0
            if client.max_rss_mib is not None:
                rss.append(client.max_rss_mib)
        except BaseException as exc:  # reported after every thread ends
            errors.append(exc)
            ready.abort()

    threads = [threading.Thread(target=session, args=(k,)) for k in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    end = server.cpu_seconds() if server is not None else None
    if errors:
        raise BenchError(f"an MCP client failed: {errors[0]}")
    total = CLIENTS * calls
    server_ms = (end - marks["server"]) * 1000 / total if end is not None else 0.0
    return [x for per in times for x in per], rss, sum(client_cpu) * 1000 / total, server_ms


def _mcp(
    ctx: Context, zvec_repo: Path, pg_repo: Path, pg_env: Env, n: int, server: PgServer
) -> list[Row]:
    argv = ctx.opts.mcp_impl or resolve_mcp_impl(None, ctx.opts.impl)
    if not argv:
        return [Row(SC, "skipped: ragit-mcp not found", "ms", [], n)]
    queries = [q["query"] for q in ctx.queries(n)]
    zvec: list[float] = []
    pg: list[float] = []
    z_rss: list[float] = []
    p_rss: list[float] = []
    z_cpu: list[float] = []
    p_cpu: list[float] = []
    s_cpu: list[float] = []
    for r in range(ctx.opts.runs):
        ctx.progress(f"postgres: {CLIENTS} MCP clients, round {r + 1}/{ctx.opts.runs}")
        first, second = ("zvec", "pg") if r % 2 == 0 else ("pg", "zvec")
        for which in (first, second):
            if which == "zvec":
                t, m, c, _ = _clients(ctx, argv, zvec_repo, ctx.env, queries)
                zvec += t
                z_rss += m
                z_cpu.append(c)
            else:
                t, m, c, sv = _clients(ctx, argv, pg_repo, pg_env, queries, server)
                pg += t
                p_rss += m
                p_cpu.append(c)
                s_cpu.append(sv)
    label = f"{CLIENTS} clients"
    return [
        Row(SC, f"warm ragit_query, zvec, {label}", "ms", zvec, n, None),
        Row(SC, f"warm ragit_query, zvec, {label}: p95", "ms", [_p(zvec, 95)], n, None),
        Row(SC, f"warm ragit_query, postgres, {label}", "ms", pg, n, "pg.mcp-p50"),
        Row(SC, f"warm ragit_query, postgres, {label}: p95", "ms", [_p(pg, 95)], n, "pg.mcp-p95"),
        Row(SC, "CPU per warm call, zvec: ragit-mcp", "ms", z_cpu, n, None),
        Row(SC, "CPU per warm call, postgres: ragit-mcp", "ms", p_cpu, n, None),
        Row(SC, "CPU per warm call, postgres: server", "ms", s_cpu, n, None),
        Row(SC, "ragit-mcp peak RSS, zvec", "MiB", z_rss, n, None),
        Row(SC, "ragit-mcp peak RSS, postgres", "MiB", p_rss, n, None),
    ]


# ------------------------------------------------------------------ (c) 4 writers


def _writers(ctx: Context, server: PgServer, n: int) -> list[Row]:
    run_dir = ctx.scratch("pg-writers")
    base = copy_repo(_pg_pristine(ctx, n), run_dir / "base", ctx.git)
    shas = [ctx.git(base, "rev-parse", "HEAD").strip()]
    per_commit = max(1, n // 100)
    for k in range(WRITERS - 1):
        ctx.gen.amend_many(base, seed=2000 + k, count=per_commit)
        ctx.git(base, "add", "docs")
        shas.append(ctx.git.commit(base, f"docs: amend {per_commit} documents ({k + 1})"))
    clones = []
    for k, sha in enumerate(shas):
        clone = copy_repo(base, run_dir / f"writer-{k}", ctx.git)
        ctx.git(clone, "reset", "-q", "--hard", sha)
        clones.append(clone)
    cache = run_dir / "cache"
    cache.mkdir()
    together_url = server.create("ragit_bench_writers")
    single_url = server.create("ragit_bench_single")
    together = ctx.env.with_(RAGIT_DATABASE_URL=together_url, XDG_CACHE_HOME=str(cache))
    single = ctx.env.with_(RAGIT_DATABASE_URL=single_url, XDG_CACHE_HOME=str(cache))
    _migrate(ctx, together, base)
    _migrate(ctx, single, base)

    ctx.progress(f"postgres: {WRITERS} writers at once")
    samples: list[Sample | None] = [None] * WRITERS
    failures: list[str] = []

    def writer(k: int) -> None:
        s = ctx.run_ragit(
            clones[k], "ingest", "--all", "--format", "json", env=together, check=False
        )
        samples[k] = s
        if s.returncode != 0:
            failures.append(s.describe_failure())

    t0 = time.perf_counter()
    threads = [threading.Thread(target=writer, args=(k,)) for k in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    together_wall = time.perf_counter() - t0
    if failures:
        raise BenchError("a concurrent writer failed:\n" + failures[0])

    ctx.progress("postgres: the same commits, one writer")
    lone = copy_repo(base, run_dir / "single", ctx.git)
    t0 = time.perf_counter()
    single_samples = []
    for sha in shas:
        ctx.git(lone, "reset", "-q", "--hard", sha)
        single_samples.append(
            ctx.run_ragit(lone, "ingest", "--all", "--format", "json", env=single)
        )
    single_wall = time.perf_counter() - t0

    ctx.progress("postgres: comparing every commit's answers")
    queries = [q["query"] for q in ctx.queries(n)]
    same = 0
    compared = 0
    differing: list[str] = []
    for sha in shas:
        for q in queries:
            argv = ("query", q, "--at", sha, "--top-k", "10", "--format", "json")
            a = _data(ctx.run_ragit(clones[0], *argv, env=together))
            b = _data(ctx.run_ragit(clones[0], *argv, env=single))
            compared += 1
            keep = ("snapshotSha", "hits")
            if {k: a.get(k) for k in keep} == {k: b.get(k) for k in keep} and a.get("hits"):
                same += 1
            else:
                differing.append(f"{sha[:12]} {q!r}")
    counts = {
        name: server.query(
            db,
            "SELECT (SELECT count(*) FROM ragit_chunks), (SELECT count(*) FROM ragit_snapshots), "
            "(SELECT count(*) FROM ragit_snapshot_chunks)",
        )[0]
        for name, db in (("together", "ragit_bench_writers"), ("single", "ragit_bench_single"))
    }
    server.drop("ragit_bench_writers")
    server.drop("ragit_bench_single")
    ctx.discard(run_dir)
    exact = same == compared and counts["together"] == counts["single"]
    return [
        Row(
            SC,
            f"{WRITERS} writers at once: wall until all published",
            "s",
            [together_wall],
            n,
            None,
            cpu=[sum(s.cpu for s in samples if s is not None)],
        ),
        Row(
            SC,
            f"the same {WRITERS} commits, one writer after another: wall",
            "s",
            [single_wall],
            n,
            None,
            cpu=[sum(s.cpu for s in single_samples)],
        ),
        Row(
            SC,
            f"{WRITERS} writers: every commit answers as one writer's ({compared} queries)",
            "bool",
            [1.0 if exact else 0.0],
            n,
            "pg.writers-exact",
            extra={
                "same": same,
                "compared": compared,
                "differing": differing[:20],
                "chunksSnapshotsIds": {k: list(v) for k, v in counts.items()},
            },
        ),
    ]


# ------------------------------------------------------------------ (d) cold query


def _cold(ctx: Context, zvec_repo: Path, pg_repo: Path, pg_env: Env, n: int) -> list[Row]:
    queries = ctx.queries(n)
    argv = ("query", "--top-k", "5", "--format", "json")
    for _ in range(ctx.opts.warmup):
        ctx.run_ragit(zvec_repo, "query", queries[0]["query"], *argv[1:])
        ctx.run_ragit(pg_repo, "query", queries[0]["query"], *argv[1:], env=pg_env)
    z: list[Sample] = []
    p: list[Sample] = []
    top5 = 0
    for r in range(ctx.opts.runs):
        ctx.progress(f"postgres: cold query run {r + 1}/{ctx.opts.runs}")
        for k, q in enumerate(queries):
            pair = [
                lambda q=q: z.append(ctx.run_ragit(zvec_repo, "query", q["query"], *argv[1:])),
                lambda q=q: p.append(
                    ctx.run_ragit(pg_repo, "query", q["query"], *argv[1:], env=pg_env)
                ),
            ]
            for f in pair if (r + k) % 2 == 0 else reversed(pair):
                f()
            if r == 0:
                hits = _data(p[-1]).get("hits") or []
                paths: list[str] = []
                for h in hits:
                    if h.get("path") not in paths:
                        paths.append(str(h.get("path")))
                top5 += q["target"] in paths[:5]

    def row(metric: str, key: str | None, samples: list[Sample]) -> Row:
        return timed_row(SC, metric, key, n, samples)

    return [
        row("query, zvec (cold process): wall", None, z),
        row("query, postgres (cold process): wall", "pg.query.wall", p),
        Row(SC, "postgres: source doc in top 5", "/10", [float(top5)], n, None),
    ]


# ------------------------------------------------------------------ the scenario


def postgres(ctx: Context) -> list[Row]:
    n = ctx.opts.n
    parts = set(ctx.opts.postgres_parts or ("ingest", "cold", "mcp", "writers"))
    if parts & {"cold", "mcp"}:
        parts.add("ingest")
    rows: list[Row] = []
    with PgServer() as server:
        ctx.progress(
            f"postgres: server {server.version()}"
            + (" (RAGIT_DATABASE_URL)" if server.external else " (pgserver)")
        )
        if "ingest" in parts:
            rows, zvec_repo, db, pg_repo, _info = _ingest(ctx, server, n)
            pg_env = ctx.env.with_(RAGIT_DATABASE_URL=server.url(db))
            if "cold" in parts:
                rows += _cold(ctx, zvec_repo, pg_repo, pg_env, n)
            if "mcp" in parts:
                rows += _mcp(ctx, zvec_repo, pg_repo, pg_env, n, server)
            ctx.discard(zvec_repo.parent)
        if "writers" in parts:
            rows += _writers(ctx, server, n)
    for row in rows:
        row.extra.setdefault("server", "external" if server.external else "pgserver")
    return rows
