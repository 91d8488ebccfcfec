"""Store measurements behind docs/store.md (a manual script, not a test; pytest skips it).

    python tests/store/measure_store.py api   [--corpus /tmp/corpus-1000] [--n 17800]
    python tests/store/measure_store.py index [--corpus ...]   # FLAT vs HNSW, raw zvec
    python tests/store/measure_store.py crash [--kills 20]     # SIGKILL at random points

The corpus is the generator's (``python3 ../shared/bench/gen_corpus.py generate --out
/tmp/corpus-1000 -n 1000 --seed 42``), cut into sections and ~1,000-character windows; vectors
are 256-dim hashed bags of words (placeholder-like: realistic neighbourhoods, deterministic).
Every figure is wall time on the machine that runs it; medians where a loop is involved.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DIMS = 256


def corpus_chunks(corpus: Path, n: int) -> list[str]:
    out: list[str] = []
    for path in sorted(corpus.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        for section in re.split(r"\n(?=#{1,6} )", text):
            for start in range(0, max(len(section), 1), 900):
                window = section[start : start + 1000]
                if window.strip():
                    out.append(window)
    return out[:n]


def hashed_vector(text: str) -> list[float]:
    vec = [0.0] * DIMS
    for word in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        vec[h % DIMS] += 1.0 if (h >> 20) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec)) or 1.0
    return [x / norm for x in vec]


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def median_ms(fn: Any, repeat: int) -> float:
    times = []
    for i in range(repeat):
        t = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - t)
    return ms(statistics.median(times))


def measure_api(args: argparse.Namespace) -> dict[str, Any]:
    from ragit.store.copies import copies_root
    from ragit.store.journal import Journal
    from ragit.store.lock import WriterLock
    from ragit.store.publishing import publish
    from ragit.store.reader import StoreReader
    from ragit.store.rows import ChunkRow
    from ragit.store.writer import StoreWriter
    from ragit.workspace import Workspace

    texts = corpus_chunks(Path(args.corpus), args.n)
    rows = [
        ChunkRow(
            hashlib.sha1(f"{i}:{t}".encode()).hexdigest(),
            t,
            t,
            "",
            "Section",
            "Doc > S",
            len(t.split()),
            hashed_vector(t),
        )
        for i, t in enumerate(texts)
    ]
    work = Path(tempfile.mkdtemp(prefix="ragit-measure-"))
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    (work / "repo" / ".ragit").mkdir(parents=True)
    ws = Workspace(work / "repo")
    profile = {
        "namespaceId": "measure",
        "provider": "p",
        "model": "m",
        "dimensions": DIMS,
        "version": 1,
    }
    out: dict[str, Any] = {"chunks": len(rows), "dims": DIMS}
    ids = [r.chunk_id for r in rows]
    with WriterLock.acquire(ws, command="measure", head_sha=None) as lock:
        t = time.perf_counter()
        writer = StoreWriter.open(ws, lock, embedding=profile, dimensions=DIMS)
        out["create_ms"] = ms(time.perf_counter() - t)
        tx = Journal.begin(
            ws,
            lock,
            kind="ingest",
            target_sha="a" * 40,
            base_sha=None,
            manifest_path=".ragit/manifest/" + "a" * 40 + ".json",
            chunk_ids=ids,
        )
        t = time.perf_counter()
        writer.insert(rows)
        out["insert_ms"] = ms(time.perf_counter() - t)
        out["journal_bytes"] = tx.path.stat().st_size
        t = time.perf_counter()
        assert writer.verify(ids) == []
        out["verify_all_ms"] = ms(time.perf_counter() - t)
        t = time.perf_counter()
        writer.close()
        out["close_flush_ms"] = ms(time.perf_counter() - t)
        out["canonical_mb"] = round(du(ws.store_dir) / 1e6, 1)
        t = time.perf_counter()
        meta = publish(ws, lock)
        out["publish_ms"] = ms(time.perf_counter() - t)
        tx.complete()
    out["reader_copy_mb"] = round(du(copies_root(ws)) / 1e6, 1)
    # incremental: 1% new rows
    extra = [
        ChunkRow(f"new-{i}", r.text, r.search_en, "", "S", "D", 1, r.vector)
        for i, r in enumerate(rows[:178])
    ]
    with WriterLock.acquire(ws, command="measure", head_sha=None) as lock:
        t0 = time.perf_counter()
        writer = StoreWriter.open(ws, lock, embedding=profile, dimensions=DIMS)
        out["incr_open_ms"] = ms(time.perf_counter() - t0)
        t = time.perf_counter()
        present = writer.existing(ids + [r.chunk_id for r in extra])
        out["incr_existing_17978_ids_ms"] = ms(time.perf_counter() - t)
        assert len(present) == len(ids)
        t = time.perf_counter()
        writer.insert(extra)
        writer.close()
        out["incr_insert178_close_ms"] = ms(time.perf_counter() - t)
        t = time.perf_counter()
        meta = publish(ws, lock)
        out["incr_publish_ms"] = ms(time.perf_counter() - t)
        out["incr_total_store_ms"] = ms(time.perf_counter() - t0)
    # cold open in fresh processes (python start + imports excluded / included)
    code = (
        "import time,sys; t0=time.perf_counter(); from ragit.store.reader import StoreReader;"
        "from ragit.workspace import Workspace; from ragit.store import _zvec; _zvec._zv();"
        "t1=time.perf_counter(); r=StoreReader.open_latest(Workspace(__import__('pathlib')"
        f".Path({str(ws.root)!r}))); t2=time.perf_counter(); r.close();"
        "print((t1-t0)*1000, (t2-t1)*1000)"
    )
    cold = []
    for _ in range(5):
        res = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
        )
        cold.append([float(x) for x in res.stdout.split()])
    out["cold_import_zvec_ms"] = round(statistics.median(c[0] for c in cold), 1)
    out["cold_open_copy_ms"] = round(statistics.median(c[1] for c in cold), 1)
    shutil.rmtree(copies_root(ws))
    t = time.perf_counter()
    StoreReader.open_latest(ws).close()
    out["recreate_copy_ms"] = ms(time.perf_counter() - t)
    rnd = random.Random(7)
    with StoreReader.open_latest(ws) as reader:
        queries = [rows[rnd.randrange(len(rows))].vector for _ in range(30)]
        out["vector_top50_median_ms"] = median_ms(
            lambda i: reader.vector_search(queries[i], 50), 30
        )
        words = [
            "latency budget",
            "migration plan rollout",
            "authentication token refresh",
            "database index",
            "error handling retries timeouts",
            "why did we choose Avro",
        ]
        from ragit.retrieve.keyword import best, bm25, snapshot_terms
        from ragit.text.terms import en_terms, query_terms

        terms = reader.terms()
        snapshot = snapshot_terms(terms, frozenset(ids), object(), "sha")
        out["keyword_top50_median_ms"] = median_ms(
            lambda i: best(
                snapshot,
                bm25(terms, snapshot, "en", query_terms(en_terms(words[i % len(words)]))).chunk,
                50,
            ),
            30,
        )
        samples = [rnd.sample(ids, 50) for _ in range(30)]
        out["fetch50_median_ms"] = median_ms(lambda i: reader.fetch(samples[i]), 30)
        out["fetch_vectors50_median_ms"] = median_ms(lambda i: reader.fetch_vectors(samples[i]), 30)
        out["chunk_count"] = meta.chunk_count
    shutil.rmtree(work)
    return out


def measure_index(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np
    import zvec  # noqa: TID251 - raw zvec on purpose: the comparison the schema rests on

    texts = corpus_chunks(Path(args.corpus), args.n)
    vecs = [hashed_vector(t) for t in texts]
    matrix = np.array(vecs, dtype=np.float32)
    rnd = random.Random(3)
    queries = [vecs[rnd.randrange(len(vecs))] for _ in range(50)]
    exact = [
        set(np.argsort(-(matrix @ np.array(q, dtype=np.float32)))[:10].tolist()) for q in queries
    ]
    results: dict[str, Any] = {"chunks": len(texts)}
    kinds = {
        "flat": zvec.FlatIndexParam(metric_type=zvec.MetricType.COSINE),
        "hnsw_default_m50_ef500": zvec.HnswIndexParam(metric_type=zvec.MetricType.COSINE),
        "hnsw_m16_ef100": zvec.HnswIndexParam(
            metric_type=zvec.MetricType.COSINE, m=16, ef_construction=100
        ),
    }
    for name, param in kinds.items():
        path = Path(tempfile.mkdtemp()) / "c"
        schema = zvec.CollectionSchema(
            "c",
            fields=[zvec.FieldSchema("n", zvec.DataType.INT32)],
            vectors=[
                zvec.VectorSchema(
                    "emb", zvec.DataType.VECTOR_FP32, dimension=DIMS, index_param=param
                )
            ],
        )
        col = zvec.create_and_open(str(path), schema, zvec.CollectionOption())
        docs = [
            zvec.Doc(id=str(i), vectors={"emb": v}, fields={"n": i}) for i, v in enumerate(vecs)
        ]
        t = time.perf_counter()
        for b in range(0, len(docs), 1024):
            col.insert(docs[b : b + 1024])
        col.flush()
        built = time.perf_counter() - t
        completeness_flush = col.stats.index_completeness.get("emb")
        t = time.perf_counter()
        if name != "flat":
            col.optimize(zvec.OptimizeOption())
        optimize = time.perf_counter() - t
        col.close()
        col = zvec.open(str(path), zvec.CollectionOption(read_only=True))

        def search(i: int, col: Any = col) -> Any:
            return col.query(
                zvec.Query(field_name="emb", vector=queries[i]), topk=10, output_fields=[]
            )

        recall = statistics.mean(
            len({int(d.id) for d in search(i)} & exact[i]) / 10 for i in range(len(queries))
        )
        results[name] = {
            "insert_flush_ms": ms(built),
            "optimize_ms": ms(optimize),
            "index_completeness_after_flush": completeness_flush,
            "query_top10_median_ms": median_ms(search, len(queries)),
            "recall_at_10": round(recall, 4),
            "size_mb": round(du(path) / 1e6, 1),
        }
        col.close()
        shutil.rmtree(path.parent)
    return results


_KILL_WRITER = r"""
import sys, random, zvec
from zvec import CollectionOption, Doc
path, start = sys.argv[1], int(sys.argv[2])
col = zvec.open(path, CollectionOption())
print("go", flush=True)
b = start
while True:
    rnd = random.Random(b)
    col.insert([Doc(id=f"id{i}", vectors={"emb": [rnd.random() for _ in range(16)]},
                    fields={"t": f"word{i} common"}) for i in range(b, b + 500)])
    b += 500
    if (b // 500) % 3 == 0:
        col.flush()
"""


def measure_crash(args: argparse.Namespace) -> dict[str, Any]:
    import zvec  # noqa: TID251 - the crash facts are facts about zvec itself

    zvec.init(log_level=zvec.LogLevel.FATAL)
    path = Path(tempfile.mkdtemp()) / "c"
    schema = zvec.CollectionSchema(
        "c",
        fields=[
            zvec.FieldSchema(
                "t", zvec.DataType.STRING, index_param=zvec.FtsIndexParam(tokenizer_name="standard")
            )
        ],
        vectors=[
            zvec.VectorSchema(
                "emb",
                zvec.DataType.VECTOR_FP32,
                dimension=16,
                index_param=zvec.FlatIndexParam(metric_type=zvec.MetricType.COSINE),
            )
        ],
    )
    col = zvec.create_and_open(str(path), schema, zvec.CollectionOption())
    col.insert(
        [
            zvec.Doc(id=f"id{i}", vectors={"emb": [1.0] * 16}, fields={"t": "base common"})
            for i in range(1000)
        ]
    )
    col.flush()
    col.close()
    rnd = random.Random(args.seed)
    runs = []
    next_id = 1000
    for _ in range(args.kills):
        proc = subprocess.Popen(
            [sys.executable, "-c", _KILL_WRITER, str(path), str(next_id)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdout is not None
        proc.stdout.readline()
        time.sleep(rnd.uniform(0.01, 1.5))  # a random kill point is the point of this script
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        col = zvec.open(str(path), zvec.CollectionOption())
        count = col.stats.doc_count
        base = len(
            col.fetch([f"id{i}" for i in range(1000)], output_fields=[], include_vector=False)
        )
        with col.iter_docs(output_fields=[], include_vector=False) as docs:
            scanned = [int(d.id[2:]) for d in docs]
        fts = len(
            col.query(
                zvec.Query(field_name="t", fts=zvec.Fts(match_string="common")),
                topk=100000,
                output_fields=[],
            )
        )
        col.close()
        new = count - (runs[-1]["doc_count"] if runs else 1000)
        runs.append(
            {
                "doc_count": count,
                "base_rows_intact": base == 1000,
                "scan_equals_count": len(scanned) == count,
                "fts_equals_count": fts == min(count, 100000),
                "partial_batch": new % 500 != 0,
                "new": new,
            }
        )
        next_id = max(scanned) + 1 + 100_000
    return {
        "kills": len(runs),
        "reopened": len(runs),
        "all_base_rows_intact": all(r["base_rows_intact"] for r in runs),
        "all_consistent": all(r["scan_equals_count"] and r["fts_equals_count"] for r in runs),
        "kills_leaving_a_partial_batch": sum(r["partial_batch"] for r in runs),
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=["api", "index", "crash"])
    parser.add_argument("--corpus", default="/tmp/corpus-1000")
    parser.add_argument("--n", type=int, default=17800)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    fn = {"api": measure_api, "index": measure_index, "crash": measure_crash}[args.what]
    print(json.dumps(fn(args), indent=2))


if __name__ == "__main__":
    main()
