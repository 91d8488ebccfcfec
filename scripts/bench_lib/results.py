"""Result rows, the targets (docs/benchmarks.md) and the original's figures, and rendering.

Every row keeps its raw samples. The verdict compares the median with the target
(an upper bound unless the unit is ``bool``); rows without a target are reported,
never judged. The ratio is our median over the midpoint of the original's range; the
CPU ratio our CPU median over the original's CPU seconds (ORIGINAL_CPU), judged where a
``<scenario>.cpu-ratio`` target is set.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from bench_lib.proc import Sample

# Targets: metric key -> {corpus size it was set for: upper bound}. Below N=10,000 the
# N=1000 target applies (so at N=200 it is lenient); at N=10,000 only its own targets.
# A "<scenario>.cpu-ratio" key bounds the CPU ratio (our CPU median over the original's
# CPU, ORIGINAL_CPU) of the row whose key is "<scenario>.wall". Sizes are in MiB.
TARGETS: dict[str, dict[int, float]] = {
    "help": {1000: 0.06, 10000: 0.06},
    "version": {1000: 0.06, 10000: 0.06},
    "describe": {1000: 0.15},
    "ingest-all.wall": {1000: 2.5, 10000: 30.0},
    "ingest-all.cpu-ratio": {1000: 0.7},
    "ingest-all.rss": {1000: 300.0},
    "ingest-again.wall": {1000: 0.5},
    "ingest-again.writes": {1000: 1.0},
    "ingest-since.wall": {1000: 0.3},
    "commit-to-queryable.wall": {1000: 0.6},
    "query.wall": {1000: 0.22, 10000: 0.5},
    "query.cpu-ratio": {1000: 0.6},
    "context-pack.wall": {1000: 0.3},
    "status.wall": {1000: 0.12, 10000: 0.12},
    "sizes.store-ratio": {1000: 1.1},
    "sizes.with-copies-ratio": {1000: 1.5, 10000: 1.5},
    "sizes.manifest1": {1000: 0.3},
    "sizes.manifest-max": {1000: 0.3},
    "history.store-ratio": {1000: 1.3},
    "history.manifest-max": {1000: 0.5},
    "scaling.ratio": {1000: 1.5},
    "mcp.warm-query": {1000: 30.0, 10000: 80.0},
    "log.wall": {1000: 0.5},
    # The shared store (PostgreSQL), the same at every N.
    "pg.ingest-time-ratio": {1000: 2.0, 10000: 2.0},
    "pg.mcp-p50": {1000: 50.0, 10000: 50.0},
    "pg.mcp-p95": {1000: 120.0, 10000: 120.0},
    "pg.writers-exact": {1000: 1.0, 10000: 1.0},
    "pg.query.wall": {1000: 0.6, 10000: 0.6},
    # The Rust RFC corpus (648 RFCs, ~15.7k chunks) with local-minilm.
    "semantic-ingest.int8.wall": {1000: 120.0},
    "semantic-ingest.numpy.wall": {1000: 240.0},
    "semantic-ingest.fp32-ort.wall": {1000: 240.0},
}

# The original RAGit 1.0.1 on the same generator corpus (/work/shared/bench/README.md),
# as (low, high); "any" applies at every N. Wall times: its first series (N=200 and
# N=1000) and its N=10,000 series (one run each; query 5 runs, interleaved).
ORIGINAL: dict[str, dict[int | str, tuple[float, float]]] = {
    "help": {"any": (0.17, 0.17)},
    "version": {"any": (0.17, 0.17)},
    "ingest-all.wall": {200: (1.0, 1.15), 1000: (3.6, 4.4), 10000: (49.2, 49.2)},
    "ingest-all.rss": {200: (138.0, 138.0), 1000: (236.0, 236.0), 10000: (1126.4, 1126.4)},
    "ingest-again.wall": {1000: (4.0, 5.4)},
    "ingest-since.wall": {200: (0.32, 0.38), 1000: (0.46, 0.58), 10000: (3.68, 3.68)},
    "query.wall": {200: (0.26, 0.32), 1000: (0.48, 0.53), 10000: (3.51, 3.51)},
    "query.top5": {200: (2.0, 2.0), 1000: (3.0, 3.0)},
    "context-pack.wall": {200: (0.34, 0.34), 1000: (0.72, 0.89)},
    "status.wall": {200: (0.17, 0.19), 1000: (0.18, 0.21), 10000: (0.23, 0.23)},
    "sizes.store1": {200: (8.5, 8.5), 1000: (31.0, 31.0), 10000: (272.0, 272.0)},
    "sizes.manifest1": {200: (2.75, 2.75), 1000: (13.5, 13.5)},
    "sizes.store-after": {200: (21.0, 21.0), 1000: (59.0, 59.0)},
    "sizes.manifests-after": {200: (11.0, 11.0), 1000: (54.0, 54.0)},
    "sizes.store-ratio": {200: (21.0 / 8.5, 21.0 / 8.5), 1000: (59.0 / 31.0, 59.0 / 31.0)},
}

# The original's CPU seconds (user + sys, the process and its children), keyed like
# ORIGINAL by the row's wall-time key: its third series at N=1000 (interleaved with
# RAGit, medians) and its N=10,000 full ingest.
ORIGINAL_CPU: dict[str, dict[int | str, tuple[float, float]]] = {
    "ingest-all.wall": {1000: (5.06, 5.06), 10000: (54.2, 54.2)},
    "ingest-again.wall": {1000: (5.05, 5.05)},
    "ingest-since.wall": {1000: (0.57, 0.57)},
    "query.wall": {1000: (0.569, 0.569)},
    "context-pack.wall": {1000: (0.938, 0.938)},
    "status.wall": {1000: (0.227, 0.227)},
}


def target_for(key: str, n: int) -> float | None:
    by_n = TARGETS.get(key)
    if not by_n:
        return None
    if n >= 10000:
        return by_n.get(10000)
    return by_n.get(1000)


def original_for(
    key: str, n: int, table: dict[str, dict[int | str, tuple[float, float]]] = ORIGINAL
) -> tuple[float, float] | None:
    by_n = table.get(key)
    if not by_n:
        return None
    return by_n.get("any") or by_n.get(n)


def cpu_ratio_target_for(key: str, n: int) -> float | None:
    """The bound on the CPU ratio of the row keyed ``<scenario>.wall``, if any."""
    if not key.endswith(".wall"):
        return None
    return target_for(key.removesuffix(".wall") + ".cpu-ratio", n)


@dataclass
class Row:
    """One measured figure of one scenario."""

    scenario: str
    metric: str
    unit: str  # s, ms, MiB, x, /10, bool, count
    samples: list[float]
    n: int
    key: str | None = None
    cpu: list[float] | None = None
    rss: list[float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def target(self) -> float | None:
        return target_for(self.key, self.n) if self.key else None

    @property
    def original(self) -> tuple[float, float] | None:
        return original_for(self.key, self.n) if self.key else None

    @property
    def original_cpu(self) -> tuple[float, float] | None:
        return original_for(self.key, self.n, ORIGINAL_CPU) if self.key else None

    @property
    def cpu_ratio_target(self) -> float | None:
        return cpu_ratio_target_for(self.key, self.n) if self.key else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def cpu_median(self) -> float | None:
        return statistics.median(self.cpu) if self.cpu else None

    @property
    def ratio(self) -> float | None:
        orig = self.original
        med = self.median
        if orig is None or med is None or self.unit == "bool":
            return None
        mid = (orig[0] + orig[1]) / 2
        return med / mid if mid else None

    @property
    def cpu_ratio(self) -> float | None:
        """Our CPU median over the midpoint of the original's CPU figure."""
        orig = self.original_cpu
        cpu = self.cpu_median
        if orig is None or cpu is None:
            return None
        mid = (orig[0] + orig[1]) / 2
        return cpu / mid if mid else None

    @property
    def passed(self) -> bool | None:
        """Median within the target and, where one is set, the CPU ratio within its own."""
        if self.error is not None:
            return False
        verdicts: list[bool] = []
        target = self.target
        med = self.median
        if target is not None and med is not None:
            if self.unit == "bool":
                verdicts.append(all(s >= 1.0 for s in self.samples))
            else:
                verdicts.append(med <= target)
        cpu_target = self.cpu_ratio_target
        cpu_ratio = self.cpu_ratio
        if cpu_target is not None and cpu_ratio is not None:
            verdicts.append(cpu_ratio <= cpu_target)
        return all(verdicts) if verdicts else None

    def to_json(self) -> dict[str, Any]:
        orig = self.original
        orig_cpu = self.original_cpu
        return {
            "scenario": self.scenario,
            "metric": self.metric,
            "key": self.key,
            "n": self.n,
            "unit": self.unit,
            "runs": len(self.samples),
            "min": min(self.samples) if self.samples else None,
            "median": self.median,
            "max": max(self.samples) if self.samples else None,
            "samples": self.samples,
            "cpuMedian": self.cpu_median,
            "cpu": self.cpu,
            "rssMiB": self.rss,
            "target": self.target,
            "original": None if orig is None else {"low": orig[0], "high": orig[1]},
            "ratio": self.ratio,
            "originalCpu": None if orig_cpu is None else {"low": orig_cpu[0], "high": orig_cpu[1]},
            "cpuRatio": self.cpu_ratio,
            "cpuRatioTarget": self.cpu_ratio_target,
            "pass": self.passed,
            "error": self.error,
            **({"extra": self.extra} if self.extra else {}),
        }


def timed_row(
    scenario: str, metric: str, key: str | None, n: int, samples: list[Sample], **extra: Any
) -> Row:
    """A row of wall times, with the samples' CPU times and peak RSS beside them."""
    return Row(
        scenario,
        metric,
        "s",
        [s.wall for s in samples],
        n,
        key,
        cpu=[s.cpu for s in samples],
        rss=[s.max_rss_mib for s in samples],
        extra=dict(extra),
    )


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "ms":
        return f"{value:.1f} ms"
    if unit == "MiB":
        return f"{value:.2f} MiB" if value < 10 else f"{value:.1f} MiB"
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "/10":
        return f"{value:g}/10"
    if unit == "bool":
        return "true" if value >= 1.0 else "false"
    if unit == "chunks/s":
        return f"{value:,.0f}/s"
    if unit == "us":
        return f"{value:.1f} us"
    return f"{value:g}"


def _original_text(row: Row) -> str:
    orig = row.original
    if orig is None:
        return "-"
    if orig[0] == orig[1]:
        return fmt(orig[0], row.unit)
    low, high = fmt(orig[0], row.unit), fmt(orig[1], row.unit)
    unit_suffix = f" {row.unit}" if row.unit in ("s", "ms", "MiB") else ""
    if unit_suffix and low.endswith(unit_suffix):
        low = low[: -len(unit_suffix)]
    return f"{low}-{high}"


def _target_text(row: Row) -> str:
    parts: list[str] = []
    target = row.target
    if target is not None:
        parts.append("true" if row.unit == "bool" else "<= " + fmt(target, row.unit))
    cpu_target = row.cpu_ratio_target
    if cpu_target is not None:
        parts.append(f"CPU <= {cpu_target:g}x orig.")
    return ", ".join(parts) or "-"


HEADER = [
    "scenario",
    "metric",
    "runs",
    "min",
    "median",
    "max",
    "cpu med",
    "target",
    "original",
    "ratio",
    "cpu ratio",
    "verdict",
]
NUMERIC = {2, 3, 4, 5, 6, 9, 10}


def _cells(row: Row, fail: str) -> list[str]:
    """One row's cells, in the order of HEADER; ``fail`` is how a missed target reads."""
    if row.error is not None:
        return [row.scenario, row.metric, "0", *["-"] * (len(HEADER) - 4), "ERROR"]
    verdict = {True: "pass", False: fail, None: "-"}[row.passed]
    ratio, cpu_ratio = row.ratio, row.cpu_ratio
    return [
        row.scenario,
        row.metric,
        str(len(row.samples)),
        fmt(min(row.samples) if row.samples else None, row.unit),
        fmt(row.median, row.unit),
        fmt(max(row.samples) if row.samples else None, row.unit),
        fmt(row.cpu_median, "s"),
        _target_text(row),
        _original_text(row),
        "-" if ratio is None else f"{ratio:.2f}",
        "-" if cpu_ratio is None else f"{cpu_ratio:.2f}",
        verdict,
    ]


def render_table(rows: list[Row]) -> str:
    lines: list[list[str]] = [HEADER, *(_cells(row, "FAIL") for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    out = []
    for idx, line in enumerate(lines):
        cells = [
            cell.rjust(widths[i]) if i in NUMERIC else cell.ljust(widths[i])
            for i, cell in enumerate(line)
        ]
        out.append("  ".join(cells).rstrip())
        if idx == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def markdown_table(rows: list[Row]) -> str:
    """The same figures as a Markdown table (for docs/benchmarks.md)."""
    titles = [h[:1].upper() + h[1:] for h in HEADER]
    titles = [t.replace("Cpu", "CPU") for t in titles]
    align = ["---:" if i in NUMERIC else "---" for i in range(len(HEADER))]
    out = ["| " + " | ".join(titles) + " |", "| " + " | ".join(align) + " |"]
    out += ["| " + " | ".join(_cells(row, "**FAIL**")) + " |" for row in rows]
    return "\n".join(out)
