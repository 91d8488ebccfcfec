"""The embedding cache: layout, modes, invalid entries, foreign namespaces, cache dir rules."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragit.embed import CachedEmbedder, EmbeddingCache, build_embedder, resolve_profile, text_key

NOMIC = "nomic-embed-text"


@pytest.fixture
def ollama_embedder(
    repo: Path, ollama_server: Any, sleeps: Any
) -> Iterator[Callable[..., CachedEmbedder]]:
    """build_embedder for the fake loopback Ollama; every embedder is closed afterwards."""
    made: list[CachedEmbedder] = []

    def make(mode: str = "cli", **extra: Any) -> CachedEmbedder:
        cfg = {"provider": "ollama", "base_url": ollama_server.url, **extra}
        embedder = build_embedder(repo, cfg, {}, mode=mode, env={}, sleep=sleeps)  # type: ignore[arg-type]
        made.append(embedder)
        return embedder

    yield make
    for embedder in made:
        embedder.close()


def _profile(url: str) -> Any:
    return resolve_profile({"provider": "ollama", "base_url": url}, {})


def test_cli_mode_writes_entries_and_namespace_in_the_documented_layout(
    repo: Path, ollama_server: Any, ollama_embedder: Any, vectors_of: Any
) -> None:
    """Contract-mandated (§10, docs/embeddings.md): v1/<namespaceId>/namespace.json +
    entries/<sha1>.json."""
    embedder = ollama_embedder()
    embedder.embed(["alpha\r\nbeta", "gamma"])
    ns = repo / ".ragit/cache/embeddings/v1" / embedder.profile.namespace_id
    namespace = json.loads((ns / "namespace.json").read_text(encoding="utf-8"))
    assert namespace["schemaVersion"] == 1
    assert namespace["namespaceId"] == embedder.profile.namespace_id
    assert (namespace["provider"], namespace["model"], namespace["dimensions"]) == (
        "ollama",
        NOMIC,
        768,
    )
    assert namespace["baseUrl"] == ollama_server.url
    assert namespace["entryCount"] == 2
    key = text_key("alpha\nbeta")
    assert text_key("alpha\r\nbeta") == key
    entry = json.loads((ns / "entries" / f"{key}.json").read_text(encoding="utf-8"))
    assert entry["textHash"] == key
    assert entry["embedding"] == vectors_of("alpha\nbeta", 768)
    assert {"createdAt", "updatedAt", "lastHitAt", "hitCount", "cacheKey"} <= set(entry)
    raw = (ns / "entries" / f"{key}.json").read_text(encoding="utf-8")
    assert "alpha" not in raw and "beta" not in raw
    assert sorted(p.name for p in (ns / "entries").iterdir()) == sorted(
        [f"{key}.json", f"{text_key('gamma')}.json"]
    )


def test_cached_vectors_are_served_without_requests(
    ollama_server: Any, ollama_embedder: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): a second run hits the cache, the provider sees
    nothing."""
    first = ollama_embedder()
    vectors = first.embed(["one", "two", "three"])
    assert len(ollama_server.requests) == 1
    second = ollama_embedder()
    assert second.embed(["three", "one", "two", "one"]) == [
        vectors[2],
        vectors[0],
        vectors[1],
        vectors[0],
    ]
    assert len(ollama_server.requests) == 1
    stats = second.stats()
    assert (stats.cache_hits, stats.cache_misses, stats.embedded, stats.requests_sent) == (
        3,
        0,
        0,
        0,
    )


def test_only_misses_are_sent_and_then_cached(ollama_server: Any, ollama_embedder: Any) -> None:
    """Contract-mandated (docs/embeddings.md): the provider embeds exactly the missing texts."""
    ollama_embedder().embed(["a", "b"])
    embedder = ollama_embedder()
    embedder.embed(["a", "c", "b", "d", "c"])
    assert ollama_server.requests[-1].inputs == ["c", "d"]
    assert embedder.cache is not None
    assert embedder.cache.entry_count == 4
    assert embedder.cache_summary()["entryCount"] == 4


@pytest.mark.parametrize("mode", ["mcp", "dry-run"])
def test_readonly_modes_leave_every_file_byte_identical(
    repo: Path, ollama_server: Any, ollama_embedder: Any, snapshot_tree: Any, mode: str
) -> None:
    """Contract-mandated (§11, seed): read-only runs create, touch and update nothing."""
    ollama_embedder().embed(["cached one", "cached two"])
    before = snapshot_tree(repo)
    embedder = ollama_embedder(mode)
    vectors = embedder.embed(["cached one", "fresh text", "cached two"])
    assert len(vectors) == 3
    assert ollama_server.requests[-1].inputs == ["fresh text"]
    assert snapshot_tree(repo) == before
    assert embedder.cache_summary()["writable"] is False


def test_readonly_mode_on_an_empty_repo_creates_no_cache_dir(
    repo: Path, ollama_embedder: Any, snapshot_tree: Any
) -> None:
    """Contract-mandated (seed): MCP never creates namespace.json or any directory."""
    before = snapshot_tree(repo)
    ollama_embedder("mcp").embed(["x"])
    assert snapshot_tree(repo) == before
    assert not (repo / ".ragit").exists()


def test_disabled_cache_neither_reads_nor_writes(
    repo: Path, ollama_server: Any, ollama_embedder: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): embedding.cache_enabled = false disables the
    cache."""
    ollama_embedder().embed(["x"])
    embedder = ollama_embedder(cache_enabled=False)
    embedder.embed(["x", "y"])
    assert ollama_server.requests[-1].inputs == ["x", "y"]
    assert embedder.cache_summary()["enabled"] is False
    entries = repo / ".ragit/cache/embeddings/v1" / embedder.profile.namespace_id / "entries"
    assert len(list(entries.iterdir())) == 1


@pytest.mark.parametrize(
    "corruption",
    [
        "garbage",
        "truncated",
        "other-dimension",
        "other-model",
        "non-finite",
        "wrong-text-hash",
        "string-values",
    ],
)
def test_a_corrupt_or_mismatched_entry_is_a_miss_and_is_replaced(
    repo: Path, ollama_server: Any, ollama_embedder: Any, vectors_of: Any, corruption: str
) -> None:
    """Contract-mandated (docs/embeddings.md): invalid cache entries count as misses."""
    first = ollama_embedder()
    first.embed(["victim"])
    path = first.cache.entry_path(text_key("victim"))  # type: ignore[union-attr]
    entry = json.loads(path.read_text(encoding="utf-8"))
    raw = path.read_text(encoding="utf-8")
    if corruption == "garbage":
        raw = "\x00not json"
    elif corruption == "truncated":
        raw = raw[: len(raw) // 2]
    else:
        if corruption == "other-dimension":
            entry["embedding"] = entry["embedding"][:-1]
        elif corruption == "other-model":
            entry["model"] = "mxbai-embed-large"
        elif corruption == "non-finite":
            entry["embedding"][3] = float("nan")
        elif corruption == "wrong-text-hash":
            entry["textHash"] = "0" * 40
        elif corruption == "string-values":
            entry["embedding"] = [str(v) for v in entry["embedding"]]
        raw = json.dumps(entry)
    path.write_text(raw, encoding="utf-8")

    second = ollama_embedder()
    assert second.embed(["victim"]) == [vectors_of("victim", 768)]
    assert len(ollama_server.requests) == 2
    assert second.stats().cache_misses == 1
    assert json.loads(path.read_text(encoding="utf-8"))["embedding"] == vectors_of("victim", 768)
    assert second.cache.entry_count == 1  # type: ignore[union-attr]


def test_foreign_namespace_is_never_read_or_overwritten(
    repo: Path, ollama_server: Any, ollama_embedder: Any
) -> None:
    """Implementation choice: another profile's namespace.json makes the namespace foreign."""
    first = ollama_embedder()
    first.embed(["shared"])
    ns_file = first.cache.namespace_file  # type: ignore[union-attr]
    foreign = json.loads(ns_file.read_text(encoding="utf-8")) | {"provider": "openai"}
    ns_file.write_text(json.dumps(foreign), encoding="utf-8")
    foreign_bytes = ns_file.read_bytes()

    second = ollama_embedder()
    second.embed(["shared", "new"])
    assert ollama_server.requests[-1].inputs == ["shared", "new"]
    assert ns_file.read_bytes() == foreign_bytes
    entries = ns_file.parent / "entries"
    assert [p.name for p in entries.iterdir()] == [f"{text_key('shared')}.json"]
    checks = {c.name: c for c in second.health()}
    assert checks["embedding.cache-namespace"].ok is False
    assert checks["embedding.cache-namespace"].recovery == "ragit security purge --target cache"
    assert second.cache_summary()["namespaceReadable"] is False


def test_unreadable_namespace_json_is_rebuilt_on_write_with_a_recount(
    ollama_embedder: Any,
) -> None:
    """Implementation choice: a corrupt namespace.json of our profile is repaired on write."""
    first = ollama_embedder()
    first.embed(["a", "b"])
    ns_file = first.cache.namespace_file  # type: ignore[union-attr]
    ns_file.write_text("{broken", encoding="utf-8")
    second = ollama_embedder()
    assert second.cache_summary()["namespaceReadable"] is False
    second.embed(["a", "c"])
    assert json.loads(ns_file.read_text(encoding="utf-8"))["entryCount"] == 3
    assert all(c.ok for c in second.health())


def test_cache_dir_outside_the_repository_disables_the_cache(
    repo: Path, tmp_path: Path, ollama_server: Any, ollama_embedder: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): cache_dir outside the repo → disabled, doctor
    fails."""
    embedder = ollama_embedder(cache_dir="../outside-cache")
    embedder.embed(["x"])
    embedder.embed(["x"])
    assert len(ollama_server.requests) == 2
    assert not (tmp_path / "outside-cache").exists()
    summary = embedder.cache_summary()
    assert summary["enabled"] is False and summary["writable"] is False
    (check,) = [c for c in embedder.health() if c.name == "embedding.cache-dir"]
    assert check.ok is False
    assert check.detail.startswith("invalid cache_dir")
    assert check.recovery == "ragit config set embedding.cache_dir .ragit/cache/embeddings"


def test_cache_dir_symlinked_out_of_the_repository_disables_the_cache(
    repo: Path, tmp_path: Path, ollama_server: Any, ollama_embedder: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): symlinks are followed before the inside-repo
    check."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo / ".ragit").mkdir()
    (repo / ".ragit" / "cache").symlink_to(outside, target_is_directory=True)
    embedder = ollama_embedder()
    embedder.embed(["x"])
    assert list(outside.iterdir()) == []
    assert embedder.cache_summary()["enabled"] is False
    assert not next(c for c in embedder.health() if c.name == "embedding.cache-dir").ok


def test_absolute_cache_dir_inside_the_repository_is_accepted(
    repo: Path, ollama_embedder: Any
) -> None:
    """Implementation choice: an absolute cache_dir is fine if it resolves inside the repo."""
    embedder = ollama_embedder(cache_dir=str(repo / "var" / "emb"))
    embedder.embed(["x"])
    assert embedder.cache_summary()["dir"] == "var/emb"
    assert (repo / "var/emb/v1" / embedder.profile.namespace_id / "namespace.json").is_file()


def test_write_failures_never_fail_the_embedding_call(
    repo: Path, ollama_server: Any, ollama_embedder: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): cache writes are best effort."""
    ns = repo / ".ragit/cache/embeddings/v1" / _profile(ollama_server.url).namespace_id
    ns.mkdir(parents=True)
    (ns / "entries").write_text("a file where the directory should be", encoding="utf-8")
    embedder = ollama_embedder()
    assert len(embedder.embed(["x", "y"])) == 2
    assert embedder.cache.write_errors >= 1  # type: ignore[union-attr]


def test_status_summary_has_the_documented_fields(
    repo: Path, ollama_server: Any, ollama_embedder: Any
) -> None:
    """Contract-mandated (docs/embeddings.md): status.embedding.cache fields."""
    embedder = ollama_embedder()
    embedder.embed(["x"])
    summary = embedder.cache_summary(timeout_ms=30000)
    assert {
        "enabled",
        "dir",
        "namespaceId",
        "entryCount",
        "batchPolicy",
        "retryPolicy",
        "writable",
        "namespaceReadable",
    } <= set(summary)
    assert summary["dir"] == ".ragit/cache/embeddings"
    assert summary["entryCount"] == 1
    assert summary["batchPolicy"] == {"maxItems": 32, "maxBytes": 256 * 1024}
    assert summary["retryPolicy"]["delaysMs"] == [150, 300, 600, 1200, 2400]
    assert summary["retryPolicy"]["timeoutMs"] == 30000
    assert summary["enabled"] is True and summary["writable"] is True


def test_health_reads_only(repo: Path, ollama_server: Any, snapshot_tree: Any) -> None:
    """Contract-mandated (§12): doctor's cache checks write nothing."""
    before = snapshot_tree(repo)
    cache = EmbeddingCache(repo, _profile(ollama_server.url), "readwrite")
    checks = {c.name: c.ok for c in cache.health()}
    assert checks == {"embedding.cache-dir": True, "embedding.cache-namespace": True}
    assert snapshot_tree(repo) == before


def test_batches_embedded_before_a_failure_stay_cached(
    ollama_server: Any, ollama_embedder: Any
) -> None:
    """Implementation choice: a failing batch does not throw away vectors already paid for."""
    from ragit.contract.errors import EmbeddingProviderFailed

    texts = [f"t{i}" for i in range(40)]
    ollama_server.push("ok", ("status", 400, {}))
    with pytest.raises(EmbeddingProviderFailed):
        ollama_embedder().embed(texts)
    embedder = ollama_embedder()
    embedder.embed(texts)
    assert ollama_server.requests[-1].inputs == texts[32:]
    assert embedder.stats().cache_hits == 32


_CONCURRENT_WRITER = """
import sys, time
from pathlib import Path
from ragit.embed import EmbeddingCache, resolve_profile
root, me, go = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
profile = resolve_profile({"provider": "local-placeholder", "dimensions": 8}, {})
cache = EmbeddingCache(root, profile, "readwrite")  # the count is read here, at open
while not go.exists():
    time.sleep(0.005)
keys = [f"{me:02d}{i:038d}" for i in range(40)] + [f"{'f' * 38}{i:02d}" for i in range(10)]
for start in range(0, len(keys), 5):
    cache.put_many((k, [0.5] * 8) for k in keys[start : start + 5])
"""


def test_concurrent_writers_keep_entry_count_exact(tmp_path: Path) -> None:
    """Implementation choice: four processes writing at once (ingest and queries do) lose no count
    and count no shared entry twice: ``entryCount`` equals the entries on disk."""
    import subprocess
    import sys

    root = tmp_path / "repo"
    root.mkdir()
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", _CONCURRENT_WRITER, str(root), str(n), str(go)])
        for n in range(4)
    ]
    import time

    time.sleep(1.0)  # every process has opened the cache and read its count
    go.touch()
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    profile = resolve_profile({"provider": "local-placeholder", "dimensions": 8}, {})
    cache = EmbeddingCache(root, profile, "readwrite")
    on_disk = len(list(cache.entries_dir.glob("*.json")))
    assert on_disk == 4 * 40 + 10
    assert cache.entry_count == on_disk
