"""`status`'s cache summary without an embedder equals the dry-run embedder's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragit.contract.errors import RagitError
from ragit.embed import build_embedder
from ragit.embed.summary import dry_run_cache_summary


def _through_the_embedder(root: Path, embedding: dict[str, Any], security: dict[str, Any]) -> Any:
    try:
        embedder = build_embedder(root, embedding, security, mode="dry-run")
    except RagitError as exc:
        return ("error", exc.code, exc.message)
    try:
        return embedder.cache_summary(timeout_ms=1234)
    finally:
        embedder.close()


def _direct(root: Path, embedding: dict[str, Any], security: dict[str, Any]) -> Any:
    try:
        return dry_run_cache_summary(root, embedding, security, timeout_ms=1234)
    except RagitError as exc:
        return ("error", exc.code, exc.message)


@pytest.mark.parametrize(
    ("embedding", "security"),
    [
        ({}, {}),
        ({"cache_enabled": False}, {}),
        ({"cache_dir": "../outside"}, {}),
        ({"dimensions": 64}, {"remote_embedding_policy": "local-only"}),
        ({}, {"remote_embedding_policy": "bogus"}),
        ({"dimensions": 3}, {}),
        ({"provider": "ollama"}, {}),
        ({"provider": "openai"}, {"remote_embedding_policy": "local-only"}),
    ],
    ids=[
        "default",
        "cache disabled",
        "cache outside the repository",
        "local-only",
        "unknown policy",
        "invalid dimensions",
        "ollama",
        "openai under local-only",
    ],
)
def test_the_summary_is_the_dry_run_embedders(
    tmp_path: Path, embedding: dict[str, Any], security: dict[str, Any]
) -> None:
    """Implementation choice: the placeholder's summary is read from the cache alone; it is
    the dry-run embedder's, figure for figure and error for error."""
    expected = _through_the_embedder(tmp_path, embedding, security)
    assert _direct(tmp_path, embedding, security) == expected


def test_a_namespace_file_of_another_profile_is_judged_alike(tmp_path: Path) -> None:
    """The namespace's readability comes from its file either way (this one is foreign)."""
    summary = _through_the_embedder(tmp_path, {}, {})
    namespace = tmp_path / summary["dir"] / "v1" / summary["namespaceId"]
    namespace.mkdir(parents=True)
    (namespace / "namespace.json").write_text(json.dumps({"entryCount": 3}), encoding="utf-8")
    direct = _direct(tmp_path, {}, {})
    assert direct["namespaceReadable"] is False
    assert direct == _through_the_embedder(tmp_path, {}, {})
