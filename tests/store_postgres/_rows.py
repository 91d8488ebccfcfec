"""Chunk rows for the shared-store tests, deterministic from a seed."""

from __future__ import annotations

import hashlib
import json

import numpy as np

from ragit.store.rows import ChunkRow

WORDS = [
    "snapshot",
    "commit",
    "query",
    "queries",
    "queried",
    "index",
    "indexing",
    "store",
    "stores",
    "chunk",
    "chunks",
    "vector",
    "keyword",
    "ranking",
    "manifest",
    "release",
    "kubernetes",
    "feature",
    "gate",
    "gates",
    "rollout",
    "api",
    "server",
    "claim",
    "claim's",
    "v1.28",
    "kubernetes.io",
    "feature_gate",
    "kube-apiserver",
    "scheduler",
    "node",
    "pod",
    "pods",
]
KOREAN = ("커밋을", "커밋", "스냅샷", "검색은", "색인", "문서를", "질문")
DIM = 8


def chunk_id(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def make_rows(n: int, seed: int = 0, dim: int = DIM) -> list[ChunkRow]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        words = rng.choice(WORDS, size=int(rng.integers(3, 40))).tolist()
        korean = rng.choice(KOREAN, size=int(rng.integers(0, 6))).tolist()
        text = f"{seed}-{i}: " + " ".join(words) + " " + " ".join(korean)
        vector = rng.normal(size=dim).astype(np.float32)
        rows.append(
            ChunkRow(
                chunk_id=chunk_id(text),
                text=text,
                search_en=" ".join(words),
                search_cjk=" ".join(korean),
                section_title=f"Section {i}",
                heading_path=f"Doc > Section {i}",
                token_count=len(words) + len(korean),
                vector=vector.tolist(),
            )
        )
    return rows


def manifest_bytes(commit_sha: str, chunk_ids: list[str]) -> bytes:
    return (json.dumps({"commitSha": commit_sha, "chunkIds": chunk_ids}) + "\n").encode()
