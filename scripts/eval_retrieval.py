#!/usr/bin/env python3
"""Retrieval evaluation through the real CLI, as a development tool and as CI's regression guard.

For each repository of the dataset: write its documents into a fresh git
repository, commit, ``ragit init --yes``, commit the config, ``ragit ingest
--all``, then run every query as its own ``ragit query`` process against that
exact HEAD and rank documents by their best chunk (repeats removed).

The ingested repositories are cached (``$XDG_CACHE_HOME/ragit-eval``, ``--cache-dir``)
under a key of the dataset's bytes, the configuration, the implementation's
``--version`` and, for this implementation, the bytes of every module that
ingest runs (the query-time packages ``ragit.retrieve`` and ``ragit.mcp`` are
left out of the key: a ranking change reuses the ingest). ``--no-cache`` builds
afresh in a temporary directory.

Metrics are computed with ``ir-measures`` (a maintained IR-metrics library):
Recall@5 and MRR@10 over judged paths of any gain, nDCG@10 with exponential
gains (2^g − 1, as the benchmark's SOURCE.md requires: ``gains={3: 7, 1: 1}``),
overall, per style (the cases' ``style``; the query language for the upstream
format), per half (A = odd case numbers, B = even: choose on one, confirm on the
other) and per repository, plus the relative noise drop and nearest-rank
p50/p95 query latency.

    python scripts/eval_retrieval.py                       # upstream-retrieval-v1
    python scripts/eval_retrieval.py --dataset ../shared/benchmarks/kep-dev-v1 --json kep.json
    python scripts/eval_retrieval.py --dataset ../shared/benchmarks/kep-dev-v1 --compare kep.json
    python scripts/eval_retrieval.py --dataset ../shared/benchmarks/ko-react-dev-v1 --guard
    python scripts/eval_retrieval.py --config embedding.provider=local-minilm --guard

With ``--config store.backend=postgres`` the repositories are ingested into PostgreSQL +
pgvector: the server ``RAGIT_DATABASE_URL`` names, else one the script starts from the
``pgserver`` wheel on a temporary directory (stopped at the end); the schema is applied
with ``ragit migrate store``, each repository is ``store.repository = eval/<id>``, and
nothing is cached (the server's data does not outlive the run). ``--guard`` then compares
with the zvec baseline of the same profile: the shared store's quality parity.

``--compare OLD.json`` prints every slice's change and the cases that rose or fell.
``--guard`` fails (exit 1) when overall nDCG@10 falls more than the baseline file's
``maxDrop`` (0.01) below the checked-in baseline of this profile and dataset
(``scripts/eval_baselines.json``); raising a baseline is a deliberate commit
(``--write-baseline``).

A dataset in the single-corpus format (a directory, or its ``cases.json``, holding
``{datasetId, corpus, cases: [{id, query, style, judgments}]}`` with the documents
under ``corpus/``, placed under ``docs/`` so that the default surface indexes them)
is read as one repository whose queries are one variant (``ko`` for a Korean set);
the noise drop needs all three variants of the upstream format and is reported
only then.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
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
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = ROOT.parent / "shared" / "benchmarks" / "upstream-retrieval-v1" / "dataset.json"
VARIANTS = ("en", "ko", "mixed-noisy")
BASELINES = ROOT / "scripts" / "eval_baselines.json"
METRICS = ("ndcgAt10", "recallAt5", "mrrAt10")
# Query-time packages: a change there reuses a cached ingest (see the module docstring).
QUERY_ONLY_PACKAGES = ("retrieve", "mcp")


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


def dataset_file(path: Path) -> Path:
    """The dataset file of ``path``: itself, or a directory's ``cases.json`` / ``dataset.json``."""
    if not path.is_dir():
        return path
    return path / "cases.json" if (path / "cases.json").is_file() else path / "dataset.json"


def load_dataset(path: Path) -> dict[str, Any]:
    """The dataset at ``path`` in the multi-repository format ``{repositories: [...]}``."""
    path = dataset_file(path)
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
            "style": c.get("style", variant),
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


@contextlib.contextmanager
def shared_store(impl: list[str]) -> Iterator[str]:
    """The PostgreSQL the run ingests into, migrated: ``RAGIT_DATABASE_URL`` when set, else
    a server from the ``pgserver`` wheel on a temporary directory (a unix socket only),
    stopped and deleted afterwards. The URL is put in this process's environment, which
    every ``ragit`` process inherits."""
    given = os.environ.get("RAGIT_DATABASE_URL")
    base: Path | None = None
    handle: Any = None
    if given:
        url = given
    else:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver  # the wheel that ships PostgreSQL with pgvector

        base = Path(tempfile.mkdtemp(prefix="ragit-epg-"))  # short: a socket path's limit
        handle = pgserver.get_server(base, cleanup_mode="delete")
        url = handle.get_uri()
        os.environ["RAGIT_DATABASE_URL"] = url
    try:
        with tempfile.TemporaryDirectory(prefix="ragit-epg-home-") as home:
            _must(_run([*impl, "migrate", "store"], Path(home), _git_env(Path(home))), "migrate")
        yield url
    finally:
        if handle is not None:
            os.environ.pop("RAGIT_DATABASE_URL", None)
            with contextlib.suppress(Exception):
                handle.cleanup()
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)


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
    if dict(config).get("store.backend") == "postgres":
        name = f"eval/{repo['id']}"
        _must(_run([*impl, "config", "set", "store.repository", name], dest, env), "config set")
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


def dataset_fingerprint(path: Path) -> str:
    """A digest of every byte the dataset consists of (cases and corpus files)."""
    digest = hashlib.sha256()
    path = dataset_file(path)
    digest.update(path.read_bytes())
    raw = json.loads(path.read_text(encoding="utf-8"))
    if "corpus" in raw:
        corpus = path.parent / raw["corpus"]
        for doc in sorted(p for p in corpus.rglob("*") if p.is_file()):
            digest.update(str(doc.relative_to(corpus)).encode() + b"\0")
            digest.update(doc.read_bytes())
    return digest.hexdigest()


def ingest_fingerprint(impl: list[str], env: dict[str, str], own: bool) -> str:
    """What decides an ingest's result: the implementation's version and, for this
    implementation, the bytes of every module outside the query-time packages."""
    version = _run([*impl, "--version"], Path.cwd(), env)
    _must(version, "ragit --version")
    digest = hashlib.sha256(version.stdout.encode())
    if own:
        import ragit

        package = Path(ragit.__file__).resolve().parent
        for module in sorted(package.rglob("*")):
            rel = module.relative_to(package)
            if rel.parts[0] in QUERY_ONLY_PACKAGES or "__pycache__" in rel.parts:
                continue
            if module.is_file():
                digest.update(str(rel).encode() + b"\0" + module.read_bytes())
    return digest.hexdigest()


def prepared_repositories(
    dataset: dict[str, Any],
    impl: list[str],
    config: list[tuple[str, str]],
    entry: Path,
) -> tuple[dict[str, str], dict[str, str], float]:
    """Ingested repositories of ``dataset`` under ``entry`` (built once, then reused).

    Returns the query environment, each repository's HEAD and the seconds spent
    ingesting (0 when the entry was reused). An entry is complete once its
    ``ready.json`` exists; an incomplete one (an interrupted build) is rebuilt. The
    repositories are built where they stay: a background merge an ingest started keeps
    running in the directory it was started for.
    """
    ready = entry / "ready.json"
    env = _git_env(entry / "home")
    if ready.is_file():
        return env, json.loads(ready.read_text(encoding="utf-8"))["heads"], 0.0
    shutil.rmtree(entry, ignore_errors=True)
    (entry / "home").mkdir(parents=True)
    started = time.perf_counter()
    heads: dict[str, str] = {}
    for repo in sorted(dataset["repositories"], key=lambda r: r["id"]):
        print(f"ingesting {repo['id']} ({len(repo['documents'])} documents)", file=sys.stderr)
        heads[repo["id"]] = build_repo(repo, entry / "repos" / repo["id"], impl, env, config)
    seconds = time.perf_counter() - started
    ready.write_text(
        json.dumps({"heads": heads, "ingestSeconds": round(seconds, 2)}) + "\n", encoding="utf-8"
    )
    return env, heads, seconds


def case_number(case_id: str) -> int:
    digits = "".join(ch if ch.isdigit() else " " for ch in case_id).split()
    return int(digits[-1]) if digits else 0


def half_of(topic_id: str, position: int) -> str:
    """A for odd case numbers, B for even; topics named without a number go by position."""
    number = case_number(topic_id) if any(ch.isdigit() for ch in topic_id) else position
    return "A" if number % 2 == 1 else "B"


def slices(cases: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Metrics overall and per style, half, half × style, variant and repository."""
    groups: dict[str, list[dict[str, Any]]] = {"all": cases}

    def add(name: str, members: Iterable[dict[str, Any]]) -> None:
        chosen = list(members)
        if chosen:
            groups[name] = chosen

    for half in ("A", "B"):
        add(f"half {half}", (c for c in cases if c["half"] == half))
    styles = sorted({c["style"] for c in cases})
    for style in styles:
        add(f"style {style}", (c for c in cases if c["style"] == style))
        for half in ("A", "B"):
            add(
                f"style {style} / {half}",
                (c for c in cases if (c["style"], c["half"]) == (style, half)),
            )
    variants = sorted({c["variant"] for c in cases})
    if variants != styles:
        for variant in variants:
            add(f"variant {variant}", (c for c in cases if c["variant"] == variant))
    repositories = sorted({c["repository"] for c in cases})
    if len(repositories) > 1:
        for repository in repositories:
            add(f"repository {repository}", (c for c in cases if c["repository"] == repository))
    out = {name: {**score(members), "cases": len(members)} for name, members in groups.items()}
    score(cases)  # restore per-case nDCG after the slice passes
    return out


def profile_of(config: list[tuple[str, str]]) -> str:
    """What the guard's baselines are kept by: the embedding provider, and the re-ranking
    model when ``retrieval.rerank`` is set."""
    chosen = dict(config)
    profile = chosen.get("embedding.provider", "local-placeholder")
    rerank = chosen.get("retrieval.rerank", "off")
    return profile if rerank == "off" else f"{profile}+rerank-{rerank}"


def compare(report: dict[str, Any], old: dict[str, Any], *, shown: int = 12) -> None:
    """Print every slice's change and the cases that rose or fell (old → new)."""
    print(f"\ncompared with {old.get('label') or old.get('dataset')}:")
    print(f"{'slice':<26}{'old':>8}{'new':>8}{'change':>9}")
    for name, metrics in report["slices"].items():
        before = old.get("slices", {}).get(name)
        if before is None:
            continue
        delta = metrics["ndcgAt10"] - before["ndcgAt10"]
        print(f"{name:<26}{before['ndcgAt10']:>8.4f}{metrics['ndcgAt10']:>8.4f}{delta:>+9.4f}")
    previous = {c["id"]: c for c in old.get("caseResults", [])}
    moved = []
    for case in report["caseResults"]:
        before = previous.get(case["id"])
        if before is not None and abs(case["ndcgAt10"] - before["ndcgAt10"]) > 1e-9:
            moved.append((case["ndcgAt10"] - before["ndcgAt10"], case, before))
    rose = sorted((m for m in moved if m[0] > 0), key=lambda m: -m[0])
    fell = sorted((m for m in moved if m[0] < 0), key=lambda m: m[0])
    print(
        f"cases: {len(rose)} rose, {len(fell)} fell, {len(report['caseResults']) - len(moved)} same"
    )
    for title, group in (("fell", fell), ("rose", rose)):
        for delta, case, before in group[:shown]:
            print(
                f"  {title} {delta:+.4f}  {case['id']} [{case['style']}]"
                f"  {before['ndcgAt10']:.3f} -> {case['ndcgAt10']:.3f}  {case['query'][:70]}"
            )


def guard(report: dict[str, Any], baselines_path: Path) -> int:
    """0 when overall nDCG@10 holds within ``maxDrop`` of the checked-in baseline."""
    baselines = json.loads(baselines_path.read_text(encoding="utf-8"))
    profile, dataset = report["profile"], report["dataset"]
    baseline = baselines["baselines"].get(profile, {}).get(dataset)
    if baseline is None:
        print(
            f"FAIL: no baseline for profile {profile} on {dataset} in {baselines_path}",
            file=sys.stderr,
        )
        return 1
    floor = baseline["ndcgAt10"] - baselines["maxDrop"]
    got = report["slices"]["all"]["ndcgAt10"]
    verdict = "holds" if got >= floor else "FAIL"
    print(
        f"guard {profile} / {dataset}: nDCG@10 {got:.4f}, baseline {baseline['ndcgAt10']:.4f}, "
        f"floor {floor:.4f}: {verdict}",
        file=sys.stderr,
    )
    return 0 if got >= floor else 1


def write_baseline(report: dict[str, Any], baselines_path: Path) -> None:
    baselines = json.loads(baselines_path.read_text(encoding="utf-8"))
    entry = {name: round(report["slices"]["all"][name], 4) for name in METRICS}
    entry["cases"] = report["cases"]
    baselines["baselines"].setdefault(report["profile"], {})[report["dataset"]] = entry
    baselines_path.write_text(
        json.dumps(baselines, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--impl", default=None, help="command to run (default: this venv's ragit)")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--json", type=Path, help="write the full report here ('-': stdout)")
    parser.add_argument("--label", default=None, help="a name for this run in reports")
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="ragit config set before ingest (repeatable)",
    )
    parser.add_argument("--min-ndcg", type=float, default=None, help="fail below this nDCG@10")
    parser.add_argument("--compare", type=Path, help="a previous --json report: print changes")
    parser.add_argument("--guard", action="store_true", help="fail below the baseline - maxDrop")
    parser.add_argument("--baselines", type=Path, default=BASELINES)
    parser.add_argument(
        "--write-baseline", action="store_true", help="record this run as the baseline"
    )
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--no-cache", action="store_true", help="ingest afresh, keep nothing")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    own = args.impl is None
    impl = shlex.split(args.impl) if args.impl else [str(Path(sys.executable).with_name("ragit"))]
    config: list[tuple[str, str]] = [tuple(item.split("=", 1)) for item in args.config]  # type: ignore[misc]
    dataset = load_dataset(args.dataset)
    scratch = Path(tempfile.mkdtemp(prefix="ragit-eval-"))
    postgres = dict(config).get("store.backend") == "postgres"
    store = shared_store(impl) if postgres else contextlib.nullcontext("")
    if args.no_cache or postgres:
        entry = scratch / "entry"
    else:
        key = hashlib.sha256(
            json.dumps(
                [
                    dataset_fingerprint(args.dataset),
                    config,
                    ingest_fingerprint(impl, _git_env(scratch), own),
                    " ".join(impl),
                ]
            ).encode()
        ).hexdigest()[:20]
        cache = (
            args.cache_dir
            or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ragit-eval"
        )
        entry = cache / f"{dataset.get('datasetId') or 'dataset'}-{profile_of(config)}-{key}"
    cases: list[dict[str, Any]] = []
    stack = contextlib.ExitStack()
    try:
        stack.enter_context(store)
        env, heads, ingest_seconds = prepared_repositories(dataset, impl, config, entry)
        jobs: list[tuple[dict[str, Any], Path, str]] = []
        for repo in sorted(dataset["repositories"], key=lambda r: r["id"]):
            for position, topic in enumerate(repo["topics"], start=1):
                for variant in (v for v in VARIANTS if v in topic["queries"]):
                    case = {
                        "id": f"{repo['id']}/{topic['id']}/{variant}",
                        "repository": repo["id"],
                        "variant": variant,
                        "style": topic.get("style", variant),
                        "half": half_of(topic["id"], position),
                        "topic": topic["id"],
                        "query": topic["queries"][variant],
                        "judgments": topic["judgments"],
                    }
                    cases.append(case)
                    jobs.append((case, entry / "repos" / repo["id"], heads[repo["id"]]))

        def work_one(job: tuple[dict[str, Any], Path, str]) -> None:
            case, repo_dir, head = job
            case["ranked"], case["latencyMs"] = run_case(
                impl, repo_dir, env, case["query"], head, args.top_k
            )

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(work_one, jobs))
    finally:
        stack.close()
        shutil.rmtree(scratch, ignore_errors=True)

    report_slices = slices(cases)
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
        "label": args.label,
        "profile": profile_of(config),
        "config": dict(config),
        "cases": len(cases),
        "ingestSeconds": round(ingest_seconds, 2),
        "ingestCached": ingest_seconds == 0.0,
        "overall": report_slices["all"],
        "slices": report_slices,
        "relativeNoiseDrop": noise_drop if clean else None,
        "latencyMs": {
            "p50": nearest_rank(latencies, 50),
            "p95": nearest_rank(latencies, 95),
            "max": max(latencies),
        },
        "caseResults": [
            {
                "id": c["id"],
                "style": c["style"],
                "half": c["half"],
                "ndcgAt10": round(c["ndcgAt10"], 4),
                "ranked": c["ranked"],
                "judgments": c["judgments"],
                "query": c["query"],
            }
            for c in cases
        ],
    }
    out = sys.stderr if args.json == Path("-") else sys.stdout
    print(f"{'slice':<26}{'cases':>6}{'nDCG@10':>9}{'R@5':>8}{'MRR@10':>9}", file=out)
    for name, m in report_slices.items():
        print(
            f"{name:<26}{m['cases']:>6}{m['ndcgAt10']:>9.4f}{m['recallAt5']:>8.4f}{m['mrrAt10']:>9.4f}",
            file=out,
        )
    drop_text = f"{noise_drop:.4f}" if clean else "n/a"
    ingest_text = "cached" if report["ingestCached"] else f"{ingest_seconds:.1f} s"
    print(
        f"relative noise drop: {drop_text}   latency p50 {report['latencyMs']['p50']:.0f} ms"
        f"  p95 {report['latencyMs']['p95']:.0f} ms   ingest {ingest_text}",
        file=out,
    )
    if args.compare:
        with contextlib.redirect_stdout(out):
            compare(report, json.loads(args.compare.read_text(encoding="utf-8")))
    if args.json == Path("-"):
        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    elif args.json:
        args.json.write_text(
            json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    if args.write_baseline:
        write_baseline(report, args.baselines)
    status = 0
    if args.guard:
        status = guard(report, args.baselines)
    if args.min_ndcg is not None and report_slices["all"]["ndcgAt10"] < args.min_ndcg:
        print(
            f"FAIL: nDCG@10 {report_slices['all']['ndcgAt10']:.4f} < {args.min_ndcg}",
            file=sys.stderr,
        )
        status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
