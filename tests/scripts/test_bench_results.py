"""scripts/bench's rows: targets per N, the original's wall and CPU figures, the CPU ratio
and its column in both tables."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
if str(_SCRIPTS) not in sys.path:
    sys.path.insert(0, str(_SCRIPTS))

from bench_lib.results import Row, markdown_table, render_table  # noqa: E402
from bench_lib.scenarios import SCENARIOS  # noqa: E402


def _timed(key: str, n: int, wall: list[float], cpu: list[float], scenario: str = "s") -> Row:
    return Row(scenario, "wall", "s", wall, n, key, cpu=cpu)


def test_cpu_ratio_is_our_cpu_median_over_the_originals_cpu() -> None:
    row = _timed("query.wall", 1000, [0.2, 0.21, 0.3], [0.3, 0.2, 0.4])
    assert row.cpu_ratio == pytest.approx(0.3 / 0.569)
    assert row.to_json()["cpuRatio"] == pytest.approx(0.3 / 0.569)
    assert row.to_json()["originalCpu"] == {"low": 0.569, "high": 0.569}
    assert row.to_json()["cpuRatioTarget"] == 0.6


def test_a_cpu_ratio_over_its_target_fails_the_row_even_within_the_wall_target() -> None:
    within = _timed("ingest-all.wall", 1000, [2.4], [3.5])  # 3.5 / 5.06 = 0.69
    over = _timed("ingest-all.wall", 1000, [2.4], [3.6])  # 3.6 / 5.06 = 0.71
    slow = _timed("ingest-all.wall", 1000, [2.6], [3.0])
    assert (within.passed, over.passed, slow.passed) == (True, False, False)


def test_rows_without_an_original_cpu_figure_have_no_cpu_ratio() -> None:
    row = _timed("query.wall", 200, [0.2], [0.1])  # the original's CPU: N=1000 only
    assert row.cpu_ratio is None
    assert row.passed is True
    assert Row("help", "ragit --version", "s", [0.05], 1000, "version").passed is True


def test_n10000_rows_carry_their_own_targets_and_originals() -> None:
    status = _timed("status.wall", 10000, [0.3], [0.25])
    assert (status.target, status.original, status.passed) == (0.12, (0.23, 0.23), False)
    since = _timed("ingest-since.wall", 10000, [1.84], [1.9])
    assert (since.target, since.original) == (None, (3.68, 3.68))
    assert since.ratio == pytest.approx(0.5)
    copies = Row("sizes", "store + copies / store", "x", [1.4], 10000, "sizes.with-copies-ratio")
    assert (copies.target, copies.passed) == (1.5, True)
    store = Row("sizes", "store", "MiB", [400.0], 10000, "sizes.store1")
    assert store.original == (272.0, 272.0)
    ingest = _timed("ingest-all.wall", 10000, [38.0], [46.07])
    assert (ingest.target, ingest.cpu_ratio_target) == (30.0, None)
    assert ingest.cpu_ratio == pytest.approx(0.85)
    assert _timed("query.wall", 10000, [0.9], [0.9]).original == (3.51, 3.51)


def test_both_tables_show_the_cpu_ratio_column() -> None:
    rows = [
        _timed("context-pack.wall", 1000, [0.25], [0.469]),
        Row("sizes", "failed", "s", [], 1000, error="boom"),
    ]
    md = markdown_table(rows).splitlines()
    assert md[0].split(" | ")[10] == "CPU ratio"
    assert md[2].split(" | ")[10] == "0.50"
    assert md[3].count("|") == md[0].count("|")
    term = render_table(rows).splitlines()
    assert "cpu ratio" in term[0]
    assert "0.50" in term[2].split()
    assert "CPU <= 0.6x orig." in render_table([_timed("query.wall", 1000, [0.1], [0.1])])


def test_n10k_runs_before_the_scenarios_that_read_the_shared_indexed_corpus() -> None:
    names = [s.name for s in SCENARIOS]
    assert all(names.index("n10k") < names.index(s) for s in ("ingest-since", "status", "sizes"))
