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


def test_halves_go_by_case_number_or_by_position() -> None:
    """Implementation choice: A = odd case numbers, B = even; unnumbered topics by position."""
    assert [ev.half_of(cid, 0) for cid in ("k001", "k002", "r013")] == ["A", "B", "A"]
    assert [ev.half_of("snapshot-selection", pos) for pos in (1, 2, 3)] == ["A", "B", "A"]


def _styled(cid: str, style: str, half: str, ranked: list[str]) -> dict:
    return {
        **_case(ranked, {"a": 3}, cid),
        "style": style,
        "half": half,
        "variant": "en",
        "repository": "r",
    }


def test_slices_report_every_style_and_half() -> None:
    cases = [
        _styled("q1", "question", "A", ["a"]),
        _styled("q2", "question", "B", ["x", "a"]),
        _styled("q3", "keywords", "A", []),
    ]
    slices = ev.slices(cases)
    assert slices["all"]["cases"] == 3
    assert slices["half A"]["ndcgAt10"] == pytest.approx(0.5)
    assert slices["style question"]["cases"] == 2
    assert slices["style keywords / A"]["ndcgAt10"] == 0.0
    assert "style keywords / B" not in slices  # no case: no slice
    assert cases[1]["ndcgAt10"] == pytest.approx(1 / math.log2(3))  # restored per case


def _report(dataset: str, ndcg: float) -> dict:
    return {
        "dataset": dataset,
        "profile": "local-placeholder",
        "cases": 2,
        "slices": {"all": {"ndcgAt10": ndcg, "recallAt5": 1.0, "mrrAt10": 1.0, "cases": 2}},
    }


def test_the_guard_fails_only_beyond_the_allowed_drop(tmp_path: Path) -> None:
    baselines = tmp_path / "baselines.json"
    baselines.write_text('{"schemaVersion": 1, "maxDrop": 0.01, "baselines": {}}')
    assert ev.guard(_report("d", 0.8), baselines) == 1  # no baseline: fail, never pass
    ev.write_baseline(_report("d", 0.8), baselines)
    assert ev.guard(_report("d", 0.791), baselines) == 0
    assert ev.guard(_report("d", 0.789), baselines) == 1
    assert ev.guard(_report("other", 0.9), baselines) == 1


def test_a_reranked_run_is_guarded_by_its_own_baseline() -> None:
    """A run with ``retrieval.rerank`` set is neither compared with nor written over the
    baseline of its embedding profile alone."""
    assert ev.profile_of([]) == "local-placeholder"
    assert ev.profile_of([("retrieval.rerank", "off")]) == "local-placeholder"
    assert (
        ev.profile_of([("retrieval.rerank", "local-minilm-int8")])
        == "local-placeholder+rerank-local-minilm-int8"
    )
    assert ev.profile_of([("embedding.provider", "local-minilm")]) == "local-minilm"


def test_compare_lists_the_cases_that_rose_and_fell(capsys: pytest.CaptureFixture[str]) -> None:
    def run(scores: dict[str, float]) -> dict:
        return {
            "label": "old",
            "slices": {"all": {"ndcgAt10": sum(scores.values()) / len(scores)}},
            "caseResults": [
                {"id": cid, "style": "question", "ndcgAt10": v, "query": f"query {cid}"}
                for cid, v in scores.items()
            ],
        }

    ev.compare(run({"q1": 1.0, "q2": 0.5, "q3": 0.0}), run({"q1": 0.5, "q2": 0.5, "q3": 1.0}))
    out = capsys.readouterr().out
    assert "cases: 1 rose, 1 fell, 1 same" in out
    assert "fell -1.0000  q3" in out and "rose +0.5000  q1" in out
    assert "all" in out and "-0.1667" in out


def test_an_ingest_is_built_once_and_reused(tmp_path: Path) -> None:
    """Through the real CLI: the second run over the same dataset and configuration reuses
    the ingested repository (cached) and answers exactly as the first."""
    import json
    import subprocess

    dataset = tmp_path / "tiny"
    (dataset / "corpus").mkdir(parents=True)
    (dataset / "corpus" / "tea.md").write_text("# Tea\n\nGreen tea is steeped at 80 degrees.\n")
    (dataset / "corpus" / "rust.md").write_text(
        "# Rust\n\nThe borrow checker enforces ownership.\n"
    )
    (dataset / "cases.json").write_text(
        json.dumps(
            {
                "datasetId": "tiny",
                "corpus": "corpus",
                "cases": [
                    {"id": "t1", "query": "steeped tea", "style": "keywords",
                     "judgments": [{"path": "tea.md", "gain": 3}]},
                    {"id": "t2", "query": "What enforces ownership?", "style": "question",
                     "judgments": [{"path": "rust.md", "gain": 3}]},
                ],
            }
        )
    )  # fmt: skip
    reports = []
    for n in (1, 2):
        out = tmp_path / f"run{n}.json"
        proc = subprocess.run(
            [sys.executable, str(_PATH), "--dataset", str(dataset), "--json", str(out),
             "--cache-dir", str(tmp_path / "cache")],
            capture_output=True, text=True, check=False, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        reports.append(json.loads(out.read_text()))
    assert not reports[0]["ingestCached"] and reports[1]["ingestCached"]
    assert [c["ranked"] for c in reports[0]["caseResults"]] == [
        c["ranked"] for c in reports[1]["caseResults"]
    ]
    assert reports[1]["slices"]["all"]["ndcgAt10"] == 1.0
    assert set(reports[1]["slices"]) >= {"half A", "half B", "style keywords", "style question"}
    assert len(list((tmp_path / "cache").iterdir())) == 1
