"""Latency of ragit-mcp over stdio (docs/benchmarks.md: warm ragit_query ≤ 30 ms median at N=1000).

Not a test (timed assertions are banned): run it by hand against an ingested repository::

    python3 ../shared/bench/gen_corpus.py generate --out /tmp/corpus-1000 -n 1000 --seed 42
    (cd /tmp/corpus-1000 && ragit init --yes && git add -A && git commit -qm init \\
        && ragit ingest --all)
    python tests/mcp/bench_mcp.py /tmp/corpus-1000 --calls 200 [--cold-copy] [--sdk]

It reports, as JSON: server start to the initialize answer, the first ``ragit_query`` (which
opens the reader copy; with ``--cold-copy`` the copies are deleted first so the first call
also makes the copy), and the median / p95 / max of warm ``ragit_query`` and
``ragit_context_pack`` calls, with the server process's CPU time per call (user + system,
all threads). The default client is a minimal raw JSON-RPC client (one line out, one line
in) so the figures are the server's; ``--sdk`` measures through the official SDK client
instead (which adds its own validation).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

QUESTIONS = [
    "why did we choose Avro for the metrics collector",
    "ingest pipeline testability goals and success metrics",
    "error handling in the query planner when the schema version changes",
    "rollout milestones for RabbitMQ in the payment ledger",
    "alternatives considered to Go for maintainability",
    "config server data model and Rust interfaces",
    "retry policy for the notification service",
    "how do we version the public API",
    "security review of the auth gateway",
    "capacity planning for the search indexer",
]


class RawClient:
    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr
        )
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        self.proc.stdin.flush()
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next_id:
                return dict(answer)

    def notify(self, method: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        answer = self.request("tools/call", {"name": tool, "arguments": arguments})
        result = answer["result"]
        if result.get("isError"):
            raise SystemExit(f"{tool} failed: {result['structuredContent']['error']}")
        return dict(result)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of the server process (all threads): load-independent cost."""
    import psutil

    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(ordered),
        "medianMs": round(statistics.median(ordered) * 1000, 2),
        "p95Ms": round(p95 * 1000, 2),
        "maxMs": round(ordered[-1] * 1000, 2),
        "minMs": round(ordered[0] * 1000, 2),
    }


def bench_raw(repo: Path, calls: int, mcp: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    client = RawClient([mcp, "--cwd", str(repo)], repo)
    client.request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    )
    client.notify("notifications/initialized")
    started = time.perf_counter() - t0
    t1 = time.perf_counter()
    client.call("ragit_query", {"question": QUESTIONS[0]})
    first = time.perf_counter() - t1
    query: list[float] = []
    cpu0 = _cpu_seconds(client.proc.pid)
    for n in range(calls):
        t = time.perf_counter()
        client.call("ragit_query", {"question": QUESTIONS[n % len(QUESTIONS)]})
        query.append(time.perf_counter() - t)
    query_cpu = (_cpu_seconds(client.proc.pid) - cpu0) / calls
    pack: list[float] = []
    packs = max(10, calls // 4)
    cpu0 = _cpu_seconds(client.proc.pid)
    for n in range(packs):
        t = time.perf_counter()
        client.call("ragit_context_pack", {"goal": QUESTIONS[n % len(QUESTIONS)]})
        pack.append(time.perf_counter() - t)
    pack_cpu = (_cpu_seconds(client.proc.pid) - cpu0) / packs
    status: list[float] = []
    for _ in range(max(10, calls // 10)):
        t = time.perf_counter()
        client.call("ragit_status", {})
        status.append(time.perf_counter() - t)
    client.close()
    return {
        "startToInitializeMs": round(started * 1000, 1),
        "firstQueryMs": round(first * 1000, 1),
        "warmQuery": {**_stats(query), "serverCpuMsPerCall": round(query_cpu * 1000, 2)},
        "warmContextPack": {**_stats(pack), "serverCpuMsPerCall": round(pack_cpu * 1000, 2)},
        "warmStatus": _stats(status),
    }


def bench_sdk(repo: Path, calls: int, mcp: str) -> dict[str, Any]:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def run() -> dict[str, Any]:
        import os

        params = StdioServerParameters(
            command=mcp, args=["--cwd", str(repo)], env=dict(os.environ), cwd=repo
        )
        t0 = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            started = time.perf_counter() - t0
            await session.list_tools()
            t1 = time.perf_counter()
            await session.call_tool("ragit_query", {"question": QUESTIONS[0]})
            first = time.perf_counter() - t1
            query: list[float] = []
            for n in range(calls):
                t = time.perf_counter()
                result = await session.call_tool(
                    "ragit_query", {"question": QUESTIONS[n % len(QUESTIONS)]}
                )
                query.append(time.perf_counter() - t)
                assert not result.is_error
        return {
            "startToInitializeMs": round(started * 1000, 1),
            "firstQueryMs": round(first * 1000, 1),
            "warmQuery": _stats(query),
        }

    result: dict[str, Any] = anyio.run(run)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--cold-copy", action="store_true", help="delete reader copies first")
    parser.add_argument("--sdk", action="store_true", help="measure through the SDK client")
    parser.add_argument("--mcp", default=str(Path(sys.executable).parent / "ragit-mcp"))
    args = parser.parse_args()
    repo = args.repo.resolve()
    if args.cold_copy:
        from ragit.store.copies import copies_root
        from ragit.workspace import Workspace

        shutil.rmtree(copies_root(Workspace(repo)), ignore_errors=True)
    report = (bench_sdk if args.sdk else bench_raw)(repo, args.calls, args.mcp)
    report["client"] = "sdk" if args.sdk else "raw"
    report["coldCopy"] = bool(args.cold_copy)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
