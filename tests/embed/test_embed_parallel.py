"""The embedding helper process: the same vectors, computed on the second core."""

from __future__ import annotations

import subprocess
import time
from array import array
from pathlib import Path
from typing import Any

from ragit.config import load_config
from ragit.embed import build_embedder
from ragit.embed.parallel import Helper, eligible
from ragit.workspace import Workspace

WORDS = [
    "store",
    "writer",
    "lock",
    "저장소",
    "snapshot",
    "commit",
    "vector",
    "keyword",
    "index",
    "merge",
    "커밋을",
    "publish",
]


def _texts(n: int) -> list[str]:
    return [
        " ".join(WORDS[(i * 7 + k) % len(WORDS)] + str((i + k) % 13) for k in range(9 + i % 5))
        for i in range(n)
    ]


def _repo(tmp_path: Path) -> tuple[Path, Any]:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    cfg = load_config(Workspace(root))
    return root, build_embedder(root, cfg.embedding, cfg.security, mode="cli")


def _slow(embedder: Any) -> Any:
    def embed(texts: list[str]) -> list[Any]:
        time.sleep(0.2)  # leave the helper batches to do, whatever the machine's load
        return embedder.embed(texts)

    return embed


def test_helper_vectors_are_the_bits_this_process_computes(tmp_path: Path) -> None:
    """Implementation choice: batches from the helper and from this process are the same
    float32 vectors as embedding everything here."""
    root, embedder = _repo(tmp_path)
    texts = _texts(2600)
    helper = Helper(root, embedder.profile.as_dict(), texts, 256)
    seen: list[int] = []
    got = helper.collect(_slow(embedder), seen.append)
    want = [array("f", v) for v in embedder.embed(texts)]
    assert 1 <= helper.helped < helper.count  # both processes took batches
    assert seen
    assert [v.tobytes() for v in got] == [v.tobytes() for v in want]


def test_a_helper_for_another_profile_leaves_every_batch_to_this_process(tmp_path: Path) -> None:
    """Implementation choice: the helper checks it built the caller's embedder; when not, it
    sends nothing and this process embeds every batch."""
    root, embedder = _repo(tmp_path)
    texts = _texts(700)
    other = {**embedder.profile.as_dict(), "dimensions": 64}
    helper = Helper(root, other, texts, 256)
    got = helper.collect(_slow(embedder), lambda _done: None)
    assert helper.helped == 0
    assert [v.tobytes() for v in got] == [array("f", v).tobytes() for v in embedder.embed(texts)]


def test_only_large_local_placeholder_batches_use_a_helper(monkeypatch: Any) -> None:
    monkeypatch.delenv("RAGIT_EMBED_HELPER", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert eligible("local-placeholder", 5000)
    assert not eligible("local-placeholder", 100)
    assert not eligible("openai", 5000)
    assert not eligible("local-minilm", 5000)
    monkeypatch.setenv("RAGIT_EMBED_HELPER", "0")
    assert not eligible("local-placeholder", 5000)
