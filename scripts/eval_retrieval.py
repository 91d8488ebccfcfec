#!/usr/bin/env python3
"""Retrieval evaluation through the real CLI on a benchmark in the upstream format.

For each repository of the dataset: write its documents into a fresh git
repository, commit, ``ragit init --yes``, commit the config, ``ragit ingest
--all``, then run every query variant as its own ``ragit query`` process against
that exact HEAD and rank documents by their best chunk (repeats removed).

Metrics are computed with ``ir-measures`` (a maintained IR-metrics library):
Recall@5 and MRR@10 over judged paths of any gain, nDCG@10 with exponential
gains (2^g − 1, as the benchmark's SOURCE.md requires: ``gains={3: 7, 1: 1}``),
overall, per variant (language) and per repository, plus the relative noise drop
and nearest-rank p50/p95 query latency.

    python scripts/eval_retrieval.py                       # upstream-retrieval-v1
    python scripts/eval_retrieval.py --dataset other.json --json report.json
    python scripts/eval_retrieval.py --min-ndcg 0.95       # CI gate
    python scripts/eval_retrieval.py --dataset ../shared/benchmarks/ko-react-dev-v1

A dataset in the single-corpus format (a directory, or its ``cases.json``, holding
``{datasetId, corpus, cases: [{id, query, judgments}]}`` with the documents under
``corpus/``, placed under ``docs/`` so that the default surface indexes them) is read
as one repository whose queries are one variant (``ko`` for a
Korean set: every query is scored in that slice); the noise drop needs all three
variants and is reported only then.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = ROOT.parent / "shared" / "benchmarks" / "upstream-retrieval-v1" / "dataset.json"
VARIANTS = ("en", "ko", "mixed-noisy")


def _git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / "cache"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Eval",
        GIT_AUTHOR_EMAIL="eval@example.invalid",
        GIT_COMMITTER_NAME="Eval",
        GIT_COMMITTER_EMAIL="eval@example.invalid",
        GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
        GIT_COMMITTER_DATE="2026-01-01T00:00:00Z",
        RAGIT_PROGRESS="0",
    )
    return env


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def _must(proc: subprocess.CompletedProcess[str], what: str) -> None:
    if proc.returncode != 0:
        raise SystemExit(f"{what} failed ({proc.returncode}): {proc.stderr or proc.stdout}")


def load_dataset(path: Path) -> dict[str, Any]:
    """The dataset at ``path`` in the multi-repository format ``{repositories: [...]}``."""
    if path.is_dir():
        path = path / "cases.json"
    dataset: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if "repositories" in dataset:
        return dataset
    corpus = path.parent / dataset["corpus"]
    documents = [
        {"path": f"docs/{doc.relative_to(corpus)}", "content": doc.read_text(encoding="utf-8")}
        for doc in sorted(corpus.rglob("*"))
        if doc.is_file()
    ]
    variant = (
        "ko"
        if any("\uac00" <= ch <= "\ud7a3" for c in dataset["cases"] for ch in c["query"])
        else "en"
    )
    topics = [
        {
            "id": c["id"],
            "queries": {variant: c["query"]},
            "judgments": [{**j, "path": f"docs/{j['path']}"} for j in c["judgments"]],
        }
        for c in dataset["cases"]
    ]
    repo = {
        "id": dataset.get("datasetId", path.parent.name),
        "documents": documents,
        "topics": topics,
    }
    return {"datasetId": dataset.get("datasetId"), "repositories": [repo]}


def build_repo(
    repo: dict[str, Any],
    dest: Path,
    impl: list[str],
    env: dict[str, str],
    config: list[tuple[str, str]],
) -> str:
    dest.mkdir(parents=True)
    _must(_run(["git", "init", "-q", "-b", "main"], dest, env), "git init")
    for doc in repo["documents"]:
        path = dest / doc["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(doc["content"], encoding="utf-8")
    _must(_run(["git", "add", "-A"], dest, env), "git add")
    _must(_run(["git", "commit", "-q", "-m", "corpus"], dest, env), "git commit")
    _must(_run([*impl, "init", "--yes"], dest, env), "ragit init")
    for key, value in config:
        _must(_run([*impl, "config", "set", key, value], dest, env), f"config set {key}")
    _must(_run(["git", "add", "-A"], dest, env), "git add")
    _must(_run(["git", "commit", "-q", "-m", "ragit init"], dest, env), "git commit")
    proc = _run([*impl, "ingest", "--all", "--format", "json"], dest, env)
    _must(proc, "ragit ingest")
    return str(json.loads(proc.stdout)["data"]["commitSha"])


def run_case(
    impl: list[str], repo_dir: Path, env: dict[str, str], query: str, head: str, top_k: int
) -> tuple[list[str], float]:
    started = time.perf_counter()
    proc = _run(
        [*impl, "query", query, "--top-k", str(top_k), "--format", "json", "--view", "minimal"],
        repo_dir,
        env,
    )
    elapsed = (time.perf_counter() - started) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"query failed: {proc.stderr or proc.stdout}")
    data = json.loads(proc.stdout)["data"]
    if data["snapshotSha"] != head or data["snapshot"]["resolvedSha"] != head:
        raise SystemExit("query answered from another snapshot than the exact HEAD")
    ranked: list[str] = []
    for hit in data["hits"]:
        if hit["path"] not in ranked:
            ranked.append(hit["path"])
    return ranked, elapsed


def nearest_rank(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    k = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[k - 1]


def score(cases: list[dict[str, Any]]) -> dict[str, float]:
    import ir_measures
    from ir_measures import RR, Qrel, R, ScoredDoc, nDCG

    measures = {"ndcgAt10": nDCG(gains={3: 7, 1: 1}) @ 10, "recallAt5": R @ 5, "mrrAt10": RR @ 10}
    qrels = [Qrel(c["id"], j["path"], j["gain"]) for c in cases for j in c["judgments"]]
    run = [
        ScoredDoc(c["id"], path, float(len(c["ranked"]) - rank))
        for c in cases
        for rank, path in enumerate(c["ranked"][:10])
    ]
    per_query: dict[str, dict[str, float]] = {c["id"]: {} for c in cases}
    for metric in ir_measures.iter_calc(list(measures.values()), qrels, run):
        name = next(k for k, v in measures.items() if v == metric.measure)
        per_query[metric.query_id][name] = metric.value
    out: dict[str, float] = {}
    for name in measures:
        # Queries with no hit at all are absent from ir-measures output: they score 0.
        out[name] = sum(per_query[c["id"]].get(name, 0.0) for c in cases) / len(cases)
    for c in cases:
        c["ndcgAt10"] = per_query[c["id"]].get("ndcgAt10", 0.0)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--impl", default=None, help="command to run (default: this venv's ragit)")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--json", type=Path, help="write the full report here")
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="ragit config set before ingest (repeatable)",
    )
    parser.add_argument("--min-ndcg", type=float, default=None, help="fail below this nDCG@10")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    impl = shlex.split(args.impl) if args.impl else [str(Path(sys.executable).with_name("ragit"))]
    config = [tuple(item.split("=", 1)) for item in args.config]
    dataset = load_dataset(args.dataset)
    work = Path(tempfile.mkdtemp(prefix="ragit-eval-"))
    cases: list[dict[str, Any]] = []
    try:
        env = _git_env(work / "home")
        (work / "home").mkdir()
        jobs: list[tuple[dict[str, Any], Path, str]] = []
        for repo in sorted(dataset["repositories"], key=lambda r: r["id"]):
            repo_dir = work / repo["id"]
            head = build_repo(repo, repo_dir, impl, env, config)  # type: ignore[arg-type]
            for topic in repo["topics"]:
                for variant in (v for v in VARIANTS if v in topic["queries"]):
                    case = {
                        "id": f"{repo['id']}/{topic['id']}/{variant}",
                        "repository": repo["id"],
                        "variant": variant,
                        "topic": topic["id"],
                        "query": topic["queries"][variant],
                        "judgments": topic["judgments"],
                    }
                    cases.append(case)
                    jobs.append((case, repo_dir, head))

        def work_one(job: tuple[dict[str, Any], Path, str]) -> None:
            case, repo_dir, head = job
            case["ranked"], case["latencyMs"] = run_case(
                impl, repo_dir, env, case["query"], head, args.top_k
            )

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(work_one, jobs))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    overall = score(cases)
    variants = [v for v in VARIANTS if any(c["variant"] == v for c in cases)]
    by_variant = {v: score([c for c in cases if c["variant"] == v]) for v in variants}
    by_repo = {
        r: score([c for c in cases if c["repository"] == r])
        for r in sorted({c["repository"] for c in cases})
    }
    score(cases)  # restore per-case nDCG after the slice passes
    clean, noisy = [], []
    for topic_key in sorted({(c["repository"], c["topic"]) for c in cases}):
        group = {
            c["variant"]: c["ndcgAt10"] for c in cases if (c["repository"], c["topic"]) == topic_key
        }
        if all(v in group for v in VARIANTS):
            clean.append((group["en"] + group["ko"]) / 2)
            noisy.append(group["mixed-noisy"])
    mean_clean = statistics.fmean(clean) if clean else 0.0
    noise_drop = max(0.0, mean_clean - statistics.fmean(noisy)) / mean_clean if mean_clean else 0.0
    latencies = [c["latencyMs"] for c in cases]
    report: dict[str, Any] = {
        "dataset": dataset.get("datasetId"),
        "cases": len(cases),
        "overall": overall,
        "byVariant": by_variant,
        "byRepository": by_repo,
        "relativeNoiseDrop": noise_drop if clean else None,
        "latencyMs": {
            "p50": nearest_rank(latencies, 50),
            "p95": nearest_rank(latencies, 95),
            "max": max(latencies),
        },
        "config": dict(config),
        "caseResults": [
            {
                "id": c["id"],
                "ndcgAt10": round(c["ndcgAt10"], 4),
                "ranked": c["ranked"],
                "judgments": c["judgments"],
                "query": c["query"],
            }
            for c in cases
        ],
        "worst": sorted(
            (
                {"id": c["id"], "ndcgAt10": round(c["ndcgAt10"], 4), "top3": c["ranked"][:3]}
                for c in cases
            ),
            key=lambda c: c["ndcgAt10"],
        )[:8],
    }
    print(f"{'slice':<22}{'nDCG@10':>9}{'R@5':>8}{'MRR@10':>9}")
    rows = (
        [("overall", overall)]
        + [(v, m) for v, m in by_variant.items()]
        + [(r, m) for r, m in by_repo.items()]
    )
    for name, m in rows:
        print(f"{name:<22}{m['ndcgAt10']:>9.4f}{m['recallAt5']:>8.4f}{m['mrrAt10']:>9.4f}")
    drop_text = f"{noise_drop:.4f}" if clean else "n/a"
    print(
        f"relative noise drop: {drop_text}   latency p50 {report['latencyMs']['p50']:.0f} ms"
        f"  p95 {report['latencyMs']['p95']:.0f} ms"
    )
    if args.json:
        args.json.write_text(
            json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    if args.min_ndcg is not None and overall["ndcgAt10"] < args.min_ndcg:
        print(f"FAIL: nDCG@10 {overall['ndcgAt10']:.4f} < {args.min_ndcg}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
