"""Result rows, the targets (docs/benchmarks.md) and the original's figures, and rendering.

Every row keeps its raw samples. The verdict compares the median with the target
(an upper bound unless the unit is ``bool``); rows without a target are reported,
never judged. The ratio is our median over the midpoint of the original's range.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from bench_lib.proc import Sample

# Targets: metric key -> {corpus size it was set for: upper bound}. Below N=10,000 the
# N=1000 target applies (so at N=200 it is lenient); at N=10,000 only its own targets.
TARGETS: dict[str, dict[int, float]] = {
    "help": {1000: 0.15},
    "ingest-all.wall": {1000: 3.0, 10000: 30.0},
    "ingest-all.rss": {1000: 300.0},
    "ingest-again.wall": {1000: 0.5},
    "ingest-again.writes": {1000: 1.0},
    "ingest-since.wall": {1000: 0.4},
    "commit-to-queryable.wall": {1000: 1.0},
    "query.wall": {1000: 0.35, 10000: 0.6},
    "context-pack.wall": {1000: 0.40},
    "status.wall": {1000: 0.25},
    "sizes.store-ratio": {1000: 1.1},
    "sizes.with-copies-ratio": {1000: 1.3},
    "sizes.manifest1": {1000: 0.5},
    "sizes.manifest-max": {1000: 0.5},
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
# as (low, high); "any" applies at every N.
ORIGINAL: dict[str, dict[int | str, tuple[float, float]]] = {
    "help": {"any": (0.17, 0.17)},
    "ingest-all.wall": {200: (1.0, 1.15), 1000: (3.6, 4.4)},
    "ingest-all.rss": {200: (138.0, 138.0), 1000: (236.0, 236.0)},
    "ingest-again.wall": {1000: (4.0, 5.4)},
    "ingest-since.wall": {200: (0.32, 0.38), 1000: (0.46, 0.58)},
    "query.wall": {200: (0.26, 0.32), 1000: (0.48, 0.53)},
    "query.top5": {200: (2.0, 2.0), 1000: (3.0, 3.0)},
    "context-pack.wall": {200: (0.34, 0.34), 1000: (0.72, 0.89)},
    "status.wall": {200: (0.17, 0.19), 1000: (0.18, 0.21)},
    "sizes.store1": {200: (8.5, 8.5), 1000: (31.0, 31.0)},
    "sizes.manifest1": {200: (2.75, 2.75), 1000: (13.5, 13.5)},
    "sizes.store-after": {200: (21.0, 21.0), 1000: (59.0, 59.0)},
    "sizes.manifests-after": {200: (11.0, 11.0), 1000: (54.0, 54.0)},
    "sizes.store-ratio": {200: (21.0 / 8.5, 21.0 / 8.5), 1000: (59.0 / 31.0, 59.0 / 31.0)},
}


def target_for(key: str, n: int) -> float | None:
    by_n = TARGETS.get(key)
    if not by_n:
        return None
    if n >= 10000:
        return by_n.get(10000)
    return by_n.get(1000)


def original_for(key: str, n: int) -> tuple[float, float] | None:
    by_n = ORIGINAL.get(key)
    if not by_n:
        return None
    return by_n.get("any") or by_n.get(n)


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
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def ratio(self) -> float | None:
        orig = self.original
        med = self.median
        if orig is None or med is None or self.unit == "bool":
            return None
        mid = (orig[0] + orig[1]) / 2
        return med / mid if mid else None

    @property
    def passed(self) -> bool | None:
        if self.error is not None:
            return False
        target = self.target
        med = self.median
        if target is None or med is None:
            return None
        if self.unit == "bool":
            return all(s >= 1.0 for s in self.samples)
        return med <= target

    def to_json(self) -> dict[str, Any]:
        orig = self.original
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
            "cpuMedian": statistics.median(self.cpu) if self.cpu else None,
            "cpu": self.cpu,
            "rssMiB": self.rss,
            "target": self.target,
            "original": None if orig is None else {"low": orig[0], "high": orig[1]},
            "ratio": self.ratio,
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
    target = row.target
    if target is None:
        return "-"
    if row.unit == "bool":
        return "true"
    return "<= " + fmt(target, row.unit)


def render_table(rows: list[Row]) -> str:
    header = [
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
        "verdict",
    ]
    lines: list[list[str]] = [header]
    for row in rows:
        if row.error is not None:
            lines.append(
                [row.scenario, row.metric, "0", "-", "-", "-", "-", "-", "-", "-", "ERROR"]
            )
            continue
        verdict = {True: "pass", False: "FAIL", None: "-"}[row.passed]
        ratio = row.ratio
        lines.append(
            [
                row.scenario,
                row.metric,
                str(len(row.samples)),
                fmt(min(row.samples) if row.samples else None, row.unit),
                fmt(row.median, row.unit),
                fmt(max(row.samples) if row.samples else None, row.unit),
                fmt(statistics.median(row.cpu), "s") if row.cpu else "-",
                _target_text(row),
                _original_text(row),
                "-" if ratio is None else f"{ratio:.2f}",
                verdict,
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    numeric = {2, 3, 4, 5, 6, 9}
    out = []
    for idx, line in enumerate(lines):
        cells = [
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(line)
        ]
        out.append("  ".join(cells).rstrip())
        if idx == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def markdown_table(rows: list[Row]) -> str:
    """The same figures as a Markdown table (for docs/benchmarks.md)."""
    out = [
        "| Scenario | Metric | Runs | Min | Median | Max | CPU med | Target | Original "
        "| Ratio | Verdict |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | --- |",
    ]
    for row in rows:
        if row.error is not None:
            out.append(f"| {row.scenario} | {row.metric} | 0 | - | - | - | - | - | - | - | ERROR |")
            continue
        verdict = {True: "pass", False: "**FAIL**", None: "-"}[row.passed]
        ratio = row.ratio
        out.append(
            f"| {row.scenario} | {row.metric} | {len(row.samples)} "
            f"| {fmt(min(row.samples) if row.samples else None, row.unit)} "
            f"| {fmt(row.median, row.unit)} "
            f"| {fmt(max(row.samples) if row.samples else None, row.unit)} "
            f"| {fmt(statistics.median(row.cpu), 's') if row.cpu else '-'} "
            f"| {_target_text(row)} | {_original_text(row)} "
            f"| {'-' if ratio is None else f'{ratio:.2f}'} | {verdict} |"
        )
    return "\n".join(out)
