"""Measurements of the shared store (a manual script, not a test; pytest does not collect it).

    python tests/store_postgres/measure_postgres.py [--n 5000] [--snapshot 4000] [--dim 384]

Starts PostgreSQL + pgvector from the pgserver wheel on a temporary directory, writes ``n``
synthetic chunks (``_rows.make_rows``: word-salad text with Korean runs, random vectors) to
it and, for comparison, to a local zvec store; publishes a snapshot of the first
``snapshot`` chunks on both and times the retrieval engine over it. Wall time on the machine
that runs it; medians and 95th percentiles over the questions. Writes also report CPU
seconds: this process's and the server's (the postmaster's processes, ended and running),
steadier than wall time on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _rows import make_rows

WORDS = ["snapshot commit", "kubernetes feature gate", "pods scheduler", "커밋을 스냅샷", "query"]


def _server_cpu(pgdata: Path) -> float:
    """CPU seconds of the server: the postmaster, its ended backends and its running ones."""
    import psutil

    pid = int((pgdata / "postmaster.pid").read_text().split()[0])
    main = psutil.Process(pid)
    t = main.cpu_times()
    total = t.user + t.system + t.children_user + t.children_system
    for child in main.children():
        try:
            c = child.cpu_times()
        except psutil.Error:
            continue
        total += c.user + c.system
    return total


def _backend(reader: Any) -> Any:
    """The server process of the reader's connection."""
    import psutil

    return psutil.Process(reader.connection.info.backend_pid)


def _cpu(process: Any) -> float:
    t = process.cpu_times()
    return float(t.user + t.system)


def _forget(view: Any) -> None:
    """Forget the postings the snapshot's keyword index has read (not its chunk table)."""
    terms = view.terms()
    if hasattr(terms, "_postings"):
        terms._postings.clear()
        terms._held = 0


def _prefetch(view: Any, question: str) -> None:
    """Read the postings of the question's terms (both fields) in one round trip, as the
    engine will ask for them."""
    from ragit.text.question import analyze

    analysed = analyze(question)
    wanted: dict[str, list[str]] = {}
    if analysed.latin_share > 0:
        wanted["en"] = [t for t, _n in analysed.en_terms]
    if analysed.cjk_share > 0:
        wanted["cjk"] = [t for t, _n in analysed.cjk_terms]
    view.terms().prefetch(wanted)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--snapshot", type=int, default=4000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument(
        "--graph-min-rows",
        type=int,
        default=None,
        help="override write.GRAPH_MIN_ROWS (0: build the HNSW graph whatever the size)",
    )
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

    from test_engine_parity import _manifest

    from ragit.retrieve.engine import retrieve_durable
    from ragit.store.lock import WriterLock
    from ragit.store.postgres.migrate import migrate
    from ragit.store.postgres.read import PgReader
    from ragit.store.postgres.write import PgWriter
    from ragit.store.publishing import publish
    from ragit.store.reader import StoreReader
    from ragit.store.writer import StoreWriter
    from ragit.text.question import analyze
    from ragit.workspace import Workspace

    if args.graph_min_rows is not None:
        import ragit.store.postgres.write as write_module

        write_module.GRAPH_MIN_ROWS = args.graph_min_rows  # type: ignore[attr-defined]
    base = Path(tempfile.mkdtemp(prefix="ragit-pgm-"))
    server = pgserver.get_server(base / "pg", cleanup_mode="delete")
    try:
        os.environ["RAGIT_DATABASE_URL"] = server.get_uri()
        migrate()
        rows = make_rows(args.n, seed=1, dim=args.dim)
        ids = [r.chunk_id for r in rows]
        manifest = _manifest(ids[: args.snapshot])
        sha = manifest.commit_sha
        profile = {
            "namespaceId": "bench",
            "provider": "local-placeholder",
            "model": "bench",
            "dimensions": args.dim,
            "version": 1,
        }
        pgdata = base / "pg"
        t = time.perf_counter()
        cpu, server_cpu = time.process_time(), _server_cpu(pgdata)
        with PgWriter.open("repo", "bench", args.dim) as writer:
            for i in range(0, len(rows), args.batch):
                writer.write(rows[i : i + args.batch])
            t_write = time.perf_counter() - t
            t_pub = time.perf_counter()
            writer.publish(sha, manifest.to_json_bytes(), sorted(manifest.all_chunk_ids()))
            t_publish = time.perf_counter() - t_pub
        t_total = time.perf_counter() - t
        time.sleep(0.3)  # the writer's backend ends and is reaped
        cpu, server_cpu = time.process_time() - cpu, _server_cpu(pgdata) - server_cpu
        with PgWriter.open("repo", "bench", args.dim) as writer:
            t = time.perf_counter()
            again = writer.write(rows)
            t_again = time.perf_counter() - t
        assert again.written == 0
        ws = Workspace(base / "repo")
        (ws.root / ".ragit").mkdir(parents=True)
        t = time.perf_counter()
        zcpu = time.process_time()
        with WriterLock.acquire(ws, command="bench", head_sha=None) as lock:
            with StoreWriter.open(ws, lock, embedding=profile, dimensions=args.dim) as zw:
                for i in range(0, len(rows), args.batch):
                    zw.insert(rows[i : i + args.batch])
            publish(ws, lock)
        t_zvec = time.perf_counter() - t
        zcpu = time.process_time() - zcpu
        print(f"chunks {args.n} dim {args.dim} batch {args.batch}")
        print(f"postgres write  {t_write:.2f} s  ({args.n / t_write:.0f} chunks/s)")
        print(
            f"postgres publish of {args.snapshot} chunk ids (with any index build)  "
            f"{t_publish * 1000:.0f} ms"
        )
        print(
            f"postgres write+publish  {t_total:.2f} s  ({args.n / t_total:.0f} chunks/s); "
            f"CPU client {cpu:.2f} s + server {server_cpu:.2f} s "
            f"({args.n / (cpu + server_cpu):.0f} chunks per CPU-second)"
        )
        print(f"postgres re-write (all present)  {t_again:.2f} s")
        print(
            f"zvec write+publish  {t_zvec:.2f} s  ({args.n / t_zvec:.0f} chunks/s); "
            f"CPU {zcpu:.2f} s ({args.n / zcpu:.0f} chunks per CPU-second)"
        )
        rng = np.random.default_rng(3)
        questions = [
            (f"{WORDS[i % len(WORDS)]} {i}", rng.normal(size=args.dim).tolist())
            for i in range(args.questions)
        ]
        local = StoreReader.open_latest(ws)
        shared = PgReader.open()
        t = time.perf_counter()
        snap = shared.snapshot("repo", sha)
        assert snap is not None
        view = shared.view(snap)
        t_open = time.perf_counter() - t
        # postgres modes: "fresh" forgets the postings read before each question (every
        # question's terms come from the server, one round trip per term, as the engine
        # asks for them); "cached" keeps them (a warm server: repeated terms are answered
        # from memory); "prefetch" forgets them and reads the question's terms in one
        # round trip before the engine runs (what an engine that announces its terms gets).
        modes = [("zvec", local, ""), ("postgres", view, "fresh"), ("postgres", view, "cached")]
        if hasattr(view.terms(), "prefetch"):
            modes.append(("postgres", view, "prefetch"))
        for reader in (local, view):  # one pass first: plans, prepared statements, caches
            for q, v in questions:
                retrieve_durable(manifest, sha, reader, analyze(q), v, top_k=10, alpha=0.5)
        # Modes interleaved question by question (the machine's load hits them alike).
        # CPU per question: this process's plus the reader's server backend's (the latter
        # counted in clock ticks: a mean over the questions, not percentiles).
        backend = _backend(shared)
        wall: dict[tuple[str, str, float], list[float]] = {}
        cpu_ms: dict[tuple[str, str, float], list[float]] = {}
        for alpha in (0.0, 0.5):
            for q, v in questions:
                for name, reader, mode in modes:
                    key = (name, mode, alpha)
                    s0, c0, t0 = _cpu(backend), time.process_time(), time.perf_counter()
                    if mode in ("fresh", "prefetch"):
                        _forget(view)
                    if mode == "prefetch":
                        _prefetch(view, q)
                    retrieve_durable(manifest, sha, reader, analyze(q), v, top_k=10, alpha=alpha)
                    t1, c1, s1 = time.perf_counter(), time.process_time(), _cpu(backend)
                    wall.setdefault(key, []).append((t1 - t0) * 1000)
                    cpu_ms.setdefault(key, []).append((c1 - c0 + s1 - s0) * 1000)
        for (name, mode, alpha), times in wall.items():
            cpus = cpu_ms[(name, mode, alpha)]
            print(
                f"{name:8s} {mode:8s} alpha {alpha}: warm retrieve "
                f"p50 {statistics.median(times):.1f} ms  p95 {_pct(times, 0.95):.1f} ms;"
                f"  CPU mean {statistics.fmean(cpus):.1f} ms"
            )
        print(f"postgres snapshot open (manifest + {args.snapshot} ids)  {t_open * 1000:.0f} ms")
        times = []
        for _q, v in questions:
            t = time.perf_counter()
            shared.vector_search(snap, v, 40)
            times.append((time.perf_counter() - t) * 1000)
        print(f"postgres vector top-40 in snapshot: p50 {statistics.median(times):.1f} ms")
        local.close()
        shared.close()
    finally:
        server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
