#!/usr/bin/env python3
"""Context packs on a retrieval dataset: how full they are, and how on topic, by position.

Uses the repositories ``eval_retrieval.py`` ingests (the same cache entry: ingest once, reuse).
For every case and every ``--budget``, runs ``ragit context pack <query> --budget B --view
minimal --format json`` against the exact HEAD and reports, per budget:

* fill: ``usedTokens / budget``;
* pool: ``selection.candidateHits`` (how many ranked candidates the selection saw);
* on-topic tokens: the share of the pack's tokens from documents the case judges relevant;
* on topic by position: the share of passages from judged-relevant documents at pack positions
  1, 2-5, 6-10, 11-20, 21-50 and 51 on ("is the 20th passage of a big pack still on topic?").

Judgments name a few documents per case, so these shares are lower bounds: an unjudged
document can be on topic too.

    python scripts/eval_pack.py --dataset ../shared/benchmarks/kep-dev-v1
    python scripts/eval_pack.py --dataset ../shared/benchmarks/ko-react-dev-v1 --budget 32000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import eval_retrieval as er  # the sibling script, found through sys.path

BANDS = ((1, 1), (2, 5), (6, 10), (11, 20), (21, 50), (51, 10_000))
DEFAULT_BUDGETS = (1200, 8000, 32000)


def cache_entry(
    dataset_path: Path, dataset: dict[str, Any], impl: list[str], scratch: Path
) -> Path:
    """``eval_retrieval.py``'s cache entry for the default profile of this implementation."""
    key = hashlib.sha256(
        json.dumps(
            [
                er.dataset_fingerprint(dataset_path),
                [],
                er.ingest_fingerprint(impl, er._git_env(scratch), True),
                " ".join(impl),
            ]
        ).encode()
    ).hexdigest()[:20]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ragit-eval"
    return cache / f"{dataset.get('datasetId') or 'dataset'}-{er.profile_of([])}-{key}"


def pack(
    impl: list[str], repo: Path, env: dict[str, str], query: str, budget: int
) -> dict[str, Any]:
    proc = er._run(
        [
            *impl,
            "context",
            "pack",
            query,
            "--budget",
            str(budget),
            "--view",
            "minimal",
            "--format",
            "json",
        ],
        repo,
        env,
    )
    er._must(proc, "ragit context pack")
    data: dict[str, Any] = json.loads(proc.stdout)["data"]
    return data


def summary(packs: list[tuple[dict[str, Any], set[str]]], budget: int) -> dict[str, Any]:
    """The figures of one budget over every case."""
    fill = [p["usedTokens"] / budget for p, _ in packs]
    pool = [p["selection"]["candidateHits"] for p, _ in packs]
    on_topic = [
        sum(h["tokens"] for h in p["hits"] if h["path"] in relevant) / p["usedTokens"]
        for p, relevant in packs
        if p["usedTokens"]
    ]
    bands: dict[str, float | None] = {}
    for low, high in BANDS:
        marks = [h["path"] in relevant for p, relevant in packs for h in p["hits"][low - 1 : high]]
        name = f"{low}" if low == high else (f"{low}-{high}" if high < 10_000 else f"{low}+")
        bands[name] = round(sum(marks) / len(marks), 3) if marks else None
    mean = lambda values: round(sum(values) / len(values), 3) if values else None  # noqa: E731
    return {
        "budget": budget,
        "cases": len(packs),
        "fill": mean(fill),
        "pool": mean(pool),
        "passages": mean([len(p["hits"]) for p, _ in packs]),
        "onTopicTokens": mean(on_topic),
        "onTopicByPosition": bands,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--budget", type=int, action="append", default=[])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, help="write the report here")
    args = parser.parse_args()
    impl = [str(Path(sys.executable).with_name("ragit"))]
    dataset = er.load_dataset(args.dataset)
    scratch = Path(tempfile.mkdtemp(prefix="ragit-eval-pack-"))
    try:
        entry = cache_entry(args.dataset, dataset, impl, scratch)
        env, _heads, _ = er.prepared_repositories(dataset, impl, [], entry)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    jobs = [
        (entry / "repos" / repo["id"], topic)
        for repo in dataset["repositories"]
        for topic in repo["topics"]
    ]
    report = []
    for budget in args.budget or DEFAULT_BUDGETS:

        def one(job: tuple[Path, dict[str, Any]], budget: int = budget) -> Any:
            repo, topic = job
            query = next(iter(topic["queries"].values()))
            relevant = {j["path"] for j in topic["judgments"] if j["gain"] > 0}
            return pack(impl, repo, env, query, budget), relevant

        with ThreadPoolExecutor(max_workers=args.jobs) as workers:
            packs = list(workers.map(one, jobs))
        line = summary(packs, budget)
        report.append(line)
        print(json.dumps(line), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
