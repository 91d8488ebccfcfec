"""A tool result never exceeds 20,000 tokens (contract §11; token_estimate of the JSON text)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _mcp_helpers import RAGIT, McpServer, make_repo, run

from ragit.mcp.service import DROP_WARNING, TRIM_WARNING, bound_result, dumps
from ragit.mcp.tools import RESULT_TOKEN_LIMIT
from ragit.text.tokens import token_estimate

StartServer = Callable[..., McpServer]
LETTERS = "abcdefghijklmnopqrstuvwxy"


def _dense_docs() -> dict[str, str]:
    """90 sections of ~450 one-letter words in 30 documents (a query answers with one hit per
    document), each a chunk of its own mentioning "zebra"."""
    files: dict[str, str] = {}
    for f in range(30):
        parts = [f"# Dense notes {f}\n"]
        for s in range(3):
            words = [LETTERS[(f * 7 + s * 3 + i) % 25] for i in range(450)]
            parts.append(f"## Part {f}-{s}\n\nzebra {' '.join(words)} zebra\n")
        files[f"docs/dense-{f}.md"] = "\n".join(parts)
    return files


def test_full_view_over_the_limit_trims_hit_texts_and_warns(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """Contract §11: full-view texts are trimmed with truncated: true and a warning."""
    root = make_repo(tmp_path, env, files=_dense_docs())
    server = start_server(root, env)
    # 24 hits: their explained metadata alone stays well under the limit, their texts do not.
    args = {"question": "zebra", "topK": 24, "view": "full", "explain": True}
    call = server.call("ragit_query", args)
    text = call.result.content[0].text
    assert token_estimate(text) <= RESULT_TOKEN_LIMIT
    data = call.data
    assert len(data["hits"]) == 24
    cli = json.loads(
        run(
            [
                RAGIT,
                "query",
                "zebra",
                "--top-k",
                "24",
                "--view",
                "full",
                "--explain",
                "--format",
                "json",
            ],
            cwd=root,
            env=env,
        ).stdout
    )["data"]
    assert token_estimate(dumps(cli)) > RESULT_TOKEN_LIMIT
    trimmed = [h for h in data["hits"] if h.get("truncated")]
    assert trimmed
    for mine, theirs in zip(data["hits"], cli["hits"], strict=True):
        if mine.get("truncated"):
            assert mine["truncated"] is True
            assert theirs["text"].startswith(mine["text"])
            assert len(mine["text"].split()) < len(theirs["text"].split())
            assert {k: v for k, v in mine.items() if k not in ("text", "truncated")} == {
                k: v for k, v in theirs.items() if k != "text"
            }
        else:
            assert mine == theirs
    note = TRIM_WARNING.format(limit=RESULT_TOKEN_LIMIT, count=len(trimmed))
    assert note in call.envelope["warnings"] and note in data["warnings"]
    # The default view of the same question is far below the limit: untouched, CLI-equal.
    small = server.call("ragit_query", {"question": "zebra", "topK": 50})
    assert all("truncated" not in h for h in small.data["hits"])
    assert not any("trimmed" in w for w in small.envelope["warnings"])


def _envelope(hits: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "ok": True,
        "tool": "ragit_query",
        "version": "0",
        "cwd": "/r",
        "data": {"query": "q", "hits": hits, "warnings": []},
        "warnings": [],
    }


def test_results_under_the_limit_are_serialized_unchanged() -> None:
    """Contract §11: nothing is trimmed below the limit."""
    env = _envelope([{"path": "a.md", "text": "word " * 100}])
    original = copy.deepcopy(env)
    assert bound_result(env) == dumps(original)
    assert env == original


def test_trimming_keeps_short_texts_whole_and_cuts_long_ones_to_a_common_length() -> None:
    """Implementation choice: the largest common per-hit word cap that fits is applied."""
    hits = [{"path": f"{i}.md", "text": "w " * (4000 if i % 2 else 10)} for i in range(10)]
    env = _envelope(hits)
    text = bound_result(env)
    assert token_estimate(text) <= RESULT_TOKEN_LIMIT
    assert json.loads(text) == env
    for i, hit in enumerate(env["data"]["hits"]):
        if i % 2:
            assert hit["truncated"] is True and 0 < len(hit["text"].split()) < 4000
        else:
            assert "truncated" not in hit and len(hit["text"].split()) == 10
    caps = {len(h["text"].split()) for h in env["data"]["hits"] if h.get("truncated")}
    assert len(caps) == 1
    assert TRIM_WARNING.format(limit=RESULT_TOKEN_LIMIT, count=5) in env["warnings"]


def test_a_result_that_trimming_cannot_fit_drops_trailing_hits() -> None:
    """Implementation choice: as a last resort trailing hits are dropped, with a warning."""
    hits = [{"path": f"{i}.md", "sectionTitle": "t " * 3000, "excerpt": "e"} for i in range(10)]
    env = _envelope(hits)
    text = bound_result(env)
    assert token_estimate(text) <= RESULT_TOKEN_LIMIT
    kept = len(env["data"]["hits"])
    assert 0 < kept < 10
    assert DROP_WARNING.format(limit=RESULT_TOKEN_LIMIT, count=10 - kept) in env["warnings"]


def test_context_pack_over_the_limit_drops_whole_passages_and_recounts(
    tmp_path: Path, env: dict[str, str], start_server: StartServer
) -> None:
    """Contract-mandated (§8, §11): a pack's passages are never cut: trailing ones are dropped
    whole, and usedTokens is the estimate summed over what is returned."""
    root = make_repo(tmp_path, env, files=_dense_docs())
    server = start_server(root, env)
    args = {"goal": "zebra", "budget": 32000, "view": "full"}
    call = server.call("ragit_context_pack", args)
    text = call.result.content[0].text
    assert token_estimate(text) <= RESULT_TOKEN_LIMIT
    data = call.data
    assert data["hits"] and all("excerpt" not in h and "truncated" not in h for h in data["hits"])
    assert all(h["tokens"] == token_estimate(h["text"]) for h in data["hits"])
    assert data["usedTokens"] == sum(h["tokens"] for h in data["hits"])
    assert data["selectedHits"] == len(data["hits"])
    assert any("dropped whole" in w for w in data["warnings"])
