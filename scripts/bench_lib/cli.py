"""Command line of ``scripts/bench``: choose scenarios, run them, print and save figures."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bench_lib import machine
from bench_lib.context import Context, Options, resolve_impl, resolve_mcp_impl
from bench_lib.proc import BenchError
from bench_lib.results import Row, markdown_table, render_table
from bench_lib.scenarios import BY_NAME, SCENARIOS

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_GEN = ROOT.parent / "shared" / "bench" / "gen_corpus.py"
DEFAULT_RFCS = ROOT.parent / "shared" / "corpora" / "rust-rfcs" / "text"

EPILOG = "scenarios (default set unless marked opt-in):\n" + "\n".join(
    f"  {s.name:<18} {s.summary}" for s in SCENARIOS
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="scripts/bench",
        description="Whole-process benchmarks of the ragit CLI and ragit-mcp "
        "(docs/benchmarks.md). Each command is a fresh process; "
        "figures are min/median/max over --runs after --warmup.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--n", type=int, default=1000, help="generator corpus size (1000)")
    parser.add_argument("--runs", type=int, default=5, help="counted runs per figure (5)")
    parser.add_argument("--warmup", type=int, default=1, help="uncounted runs first (1)")
    parser.add_argument(
        "--only",
        nargs="+",
        action="extend",
        metavar="SCENARIO",
        choices=sorted(BY_NAME),
        help="run only these scenarios",
    )
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write figures as JSON")
    parser.add_argument(
        "--markdown", type=Path, metavar="OUT", help="also write the table as Markdown"
    )
    parser.add_argument(
        "--impl",
        help='ragit command, e.g. "node dist/cli.js" (default: the ragit beside this Python)',
    )
    parser.add_argument("--mcp-impl", help="ragit-mcp command (default: beside ragit)")
    parser.add_argument(
        "--mcp-calls", type=int, default=100, help="warm ragit_query calls per MCP session (100)"
    )
    parser.add_argument(
        "--gen-corpus", type=Path, default=DEFAULT_GEN, help="path of gen_corpus.py"
    )
    parser.add_argument(
        "--rfcs", type=Path, default=DEFAULT_RFCS, help="directory of the Rust RFC markdown files"
    )
    parser.add_argument(
        "--semantic-docs",
        type=int,
        default=0,
        metavar="K",
        help="semantic-ingest: only the first K RFC files (a quick run; default all)",
    )
    parser.add_argument(
        "--semantic-backends",
        nargs="+",
        choices=["numpy", "fp32-ort", "int8"],
        metavar="B",
        help="semantic-ingest: only these backends (numpy, fp32-ort, int8; default all installed)",
    )
    parser.add_argument(
        "--postgres-parts",
        nargs="+",
        choices=["ingest", "cold", "mcp", "writers"],
        metavar="P",
        help="postgres: only these parts (ingest, cold, mcp, writers; cold and mcp need "
        "ingest; default all)",
    )
    parser.add_argument(
        "--workdir", type=Path, help="parent directory for the work tree (default: system temp)"
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the work tree (corpora, run copies) and print its path",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when a figure misses its target (default: report only)",
    )
    parser.add_argument("--list", action="store_true", help="list the scenarios and exit")
    args = parser.parse_args(argv)
    if (
        args.runs < 1
        or args.warmup < 0
        or args.n < 10
        or args.mcp_calls < 1
        or args.semantic_docs < 0
    ):
        parser.error(
            "--runs >= 1, --warmup >= 0, --n >= 10, --mcp-calls >= 1, --semantic-docs >= 0"
        )
    return args


def _impl_version(impl: list[str]) -> str | None:
    try:
        out = subprocess.run(
            [*impl, "--version"], capture_output=True, text=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def _project_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return None
    return out.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        print(EPILOG)
        return 0
    try:
        impl = resolve_impl(args.impl)
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    names = args.only or [s.name for s in SCENARIOS if s.default]
    ordered = [s for s in SCENARIOS if s.name in names]
    opts = Options(
        n=args.n,
        runs=args.runs,
        warmup=args.warmup,
        impl=impl,
        mcp_impl=resolve_mcp_impl(args.mcp_impl, impl) if args.mcp_impl else None,
        gen_corpus=args.gen_corpus,
        rfcs=args.rfcs,
        mcp_calls=args.mcp_calls,
        keep=args.keep,
        semantic_docs=args.semantic_docs,
        semantic_backends=tuple(args.semantic_backends or ()),
        postgres_parts=tuple(args.postgres_parts or ()),
    )
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="ragit-bench-", dir=args.workdir))
    meta: dict[str, Any] = {
        "startedAt": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "n": args.n,
        "runs": args.runs,
        "warmup": args.warmup,
        "scenarios": [s.name for s in ordered],
        "projectCommit": _project_commit(),
        "machine": machine.describe(workdir, impl, _impl_version(impl)),
        "workdir": str(workdir),
    }
    m = meta["machine"]
    print(
        f"ragit bench: impl {' '.join(impl)} ({m['ragitVersion']}), N={args.n}, "
        f"runs={args.runs}, warm-up={args.warmup}",
        file=sys.stderr,
    )
    print(
        f"machine: {m['cpuModel']}, nproc {m['nproc']}, {m['memTotalGiB']} GiB, "
        f"Python {m['python']}, zvec {m['zvec']}, load {m['loadavgAtStart']}",
        file=sys.stderr,
    )
    ctx = Context(opts, workdir)
    rows: list[Row] = []
    timings: dict[str, Any] = {}
    try:
        for scenario in ordered:
            load_before = machine.loadavg()
            started = time.perf_counter()
            ctx.progress(f"== {scenario.name}")
            try:
                rows.extend(scenario.fn(ctx))
            except Exception as exc:  # one broken scenario must not lose the others
                message = str(exc)
                ctx.progress(f"{scenario.name} failed:\n{message}")
                if not isinstance(exc, BenchError):
                    traceback.print_exc(file=sys.stderr)
                rows.append(Row(scenario.name, "scenario failed", "s", [], args.n, error=message))
            timings[scenario.name] = {
                "seconds": round(time.perf_counter() - started, 1),
                "loadavgBefore": load_before,
                "loadavgAfter": machine.loadavg(),
            }
    finally:
        if args.keep:
            print(f"bench: work tree kept at {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    meta["finishedAt"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    meta["loadavgAtEnd"] = machine.loadavg()
    meta["scenarioTimings"] = timings
    print(render_table(rows))
    print(
        f"\nload average: start {m['loadavgAtStart']}, end {meta['loadavgAtEnd']} "
        f"({m['nproc']} CPUs). Targets are those of docs/benchmarks.md (set for N=1000 "
        "and applied as is at smaller N, or for N=10,000). Ratio = our median / the "
        "original's midpoint; CPU ratio = our CPU median / the original's CPU."
    )
    if args.json:
        args.json.write_text(
            json.dumps({"meta": meta, "results": [r.to_json() for r in rows]}, indent=2) + "\n",
            encoding="utf-8",
        )
    if args.markdown:
        args.markdown.write_text(markdown_table(rows) + "\n", encoding="utf-8")
    if any(r.error is not None for r in rows):
        return 1
    if args.check and any(r.passed is False for r in rows):
        return 1
    return 0
