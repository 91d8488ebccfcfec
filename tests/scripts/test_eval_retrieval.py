"""The retrieval evaluation's metrics: exponential gains, Recall@5, MRR@10, nearest-rank."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

pytest.importorskip("ir_measures", reason="needs ir-measures (hatch test installs it)")

_PATH = Path(__file__).resolve().parents[2] / "scripts" / "eval_retrieval.py"
_SPEC = importlib.util.spec_from_file_location("eval_retrieval", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
ev = importlib.util.module_from_spec(_SPEC)
sys.modules["eval_retrieval"] = ev
_SPEC.loader.exec_module(ev)


def _case(ranked: list[str], judgments: dict[str, int], cid: str = "q") -> dict:
    return {
        "id": cid,
        "ranked": ranked,
        "judgments": [{"path": p, "gain": g} for p, g in judgments.items()],
    }


def test_ndcg_uses_exponential_gains() -> None:
    """Contract-mandated (benchmark SOURCE.md): gain 2^g − 1, not the linear default."""
    result = ev.score([_case(["b", "a"], {"a": 3, "b": 1})])
    dcg = 1 / math.log2(2) + 7 / math.log2(3)
    ideal = 7 / math.log2(2) + 1 / math.log2(3)
    assert result["ndcgAt10"] == pytest.approx(dcg / ideal)
    assert result["recallAt5"] == 1.0
    assert result["mrrAt10"] == 1.0


def test_queries_without_any_hit_score_zero() -> None:
    """Implementation choice: a query with no result counts as 0, not as missing."""
    result = ev.score([_case([], {"a": 3}, "q1"), _case(["a"], {"a": 3}, "q2")])
    assert result["ndcgAt10"] == pytest.approx(0.5)
    assert result["recallAt5"] == pytest.approx(0.5)


def test_recall_counts_judged_paths_of_any_gain_in_the_top_five() -> None:
    """Contract-mandated (benchmark SOURCE.md): Recall@5 over judged paths of any gain."""
    ranked = ["x1", "a", "x2", "x3", "x4", "b"]
    assert ev.score([_case(ranked, {"a": 3, "b": 1})])["recallAt5"] == pytest.approx(0.5)
    assert ev.score([_case(ranked, {"a": 3, "b": 1})])["mrrAt10"] == pytest.approx(0.5)


def test_nearest_rank_percentiles() -> None:
    """Implementation choice: nearest-rank p50/p95 as the benchmark defines them."""
    values = [float(v) for v in range(1, 21)]
    assert ev.nearest_rank(values, 50) == 10.0
    assert ev.nearest_rank(values, 95) == 19.0
