"""What a semantic ingest of a repository has to compute, and onnxruntime's own fp32 rate.

Run by the ``semantic-ingest`` scenario with the Python interpreter of the ragit under
test (it imports ragit, tokenizers and onnxruntime; the rest of ``bench_lib`` is stdlib
only). Prints one JSON object:

* ``chunks`` and ``tokens``: the texts an ``ingest --all`` of the repository embeds
  (recorded from an in-process ingest with the placeholder profile, so the chunking is
  the real one) and their token counts as the model sees them (cut at 256);
* ``padding``: the share of padded positions in what the encoders compute (each text
  runs on its own: none), and, for comparison, in batches of 64 in ingest order and in
  batches of 64 sorted by token count;
* ``ceiling``: onnxruntime running the same fp32 graph on a seeded sample of the chunks,
  three ways (one text per call on a session with one thread per core; two threads each
  with a one-thread session; sorted batches of 8), each as chunks/s and tokens/s of wall
  time; the best is the practical ceiling of fp32 arithmetic on this machine.

    python semantic_probe.py REPO [--sample 300]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

BATCH = 64
MAX_TOKENS = 256


def recorded_texts(repo: Path) -> list[str]:
    """The distinct texts an ``ingest --all`` of ``repo`` embeds, in the order it embeds them."""
    import ragit.embed as embed_package
    from ragit.cli.main import main

    original = embed_package.build_embedder
    texts: list[str] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        embedder = original(*args, **kwargs)
        inner = embedder.embed

        def embed(batch: list[str]) -> Any:
            texts.extend(batch)
            return inner(batch)

        embedder.embed = embed
        return embedder

    embed_package.build_embedder = recording  # type: ignore[assignment]
    cwd = Path.cwd()
    os.chdir(repo)
    try:
        main(["ingest", "--all", "--format", "json"])
    except SystemExit:
        pass
    finally:
        os.chdir(cwd)
        embed_package.build_embedder = original  # type: ignore[assignment]
    return list(dict.fromkeys(texts))


def padding_share(lengths: list[int]) -> float:
    padded = real = 0
    for i in range(0, len(lengths), BATCH):
        part = lengths[i : i + BATCH]
        real += sum(part)
        padded += max(part) * len(part)
    return 1.0 - real / padded if padded else 0.0


def ceiling(token_ids: list[list[int]]) -> dict[str, Any]:
    import numpy as np
    import onnxruntime as ort

    from ragit.embed.minilm import locate_model
    from ragit.embed.minilm._onnx_graph import build_model
    from ragit.embed.minilm._weights import load_weights

    data = build_model(load_weights(locate_model(None))).SerializeToString()
    cores = os.cpu_count() or 1

    def session(threads: int) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.log_severity_level = 3
        return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])

    def run(sess: Any, batch: list[list[int]]) -> None:
        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, item in enumerate(batch):
            ids[row, : len(item)] = item
            mask[row, : len(item)] = 1
        sess.run(None, {"input_ids": ids, "attention_mask": mask})

    tokens = sum(len(ids) for ids in token_ids)
    ways: dict[str, Any] = {}

    def timed(name: str, fn: Any) -> None:
        fn(token_ids[:4])  # warm the session's kernels
        wall0, cpu0 = time.perf_counter(), time.process_time()
        fn(token_ids)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        ways[name] = {
            "wallS": round(wall, 3),
            "cpuS": round(cpu, 3),
            "chunksPerS": round(len(token_ids) / wall, 1),
            "tokensPerS": round(tokens / wall),
            "chunksPerCpuS": round(len(token_ids) / cpu, 1),
        }

    wide = session(cores)
    timed("one text per call, intra-op threads = cores", lambda ids: [run(wide, [x]) for x in ids])
    narrow = session(1)

    def two_callers(ids: list[list[int]]) -> None:
        with ThreadPoolExecutor(cores) as pool:
            list(pool.map(lambda x: run(narrow, [x]), ids))

    timed(f"{cores} callers, one text each, 1 intra-op thread", two_callers)

    def sorted_batches(ids: list[list[int]]) -> None:
        ordered = sorted(ids, key=len)
        for i in range(0, len(ordered), 8):
            run(wide, ordered[i : i + 8])

    timed("sorted batches of 8, intra-op threads = cores", sorted_batches)
    best = max(ways.values(), key=lambda way: way["chunksPerS"])
    return {
        "onnxruntime": ort.__version__,
        "sampleChunks": len(token_ids),
        "sampleTokens": tokens,
        "ways": ways,
        "chunksPerS": best["chunksPerS"],
        "tokensPerS": best["tokensPerS"],
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", type=Path)
    parser.add_argument("--sample", type=int, default=300)
    args = parser.parse_args()
    texts = recorded_texts(args.repo)
    from ragit.embed.minilm import locate_model
    from ragit.embed.minilm._text import load_tokenizer, sanitize

    tokenizer = load_tokenizer(locate_model(None).tokenizer)
    token_ids = [e.ids for e in tokenizer.encode_batch([sanitize(t) for t in texts])]
    lengths = [len(ids) for ids in token_ids]
    tokenizer.no_truncation()
    full = [len(e.ids) for e in tokenizer.encode_batch([sanitize(t) for t in texts])]
    out: dict[str, Any] = {
        "chunks": len(texts),
        "tokens": sum(lengths),
        "meanTokens": round(sum(lengths) / max(len(lengths), 1), 1),
        "truncatedChunks": sum(1 for n in full if n > MAX_TOKENS),
        "tokensCutOff": sum(full) - sum(lengths),
        "padding": {
            "encoders": 0.0,
            "batches64InIngestOrder": round(padding_share(lengths), 4),
            "batches64SortedByTokens": round(padding_share(sorted(lengths)), 4),
        },
    }
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        out["ceiling"] = None
    else:
        rng = random.Random(16)
        picks = sorted(rng.sample(range(len(texts)), min(args.sample, len(texts))))
        out["ceiling"] = ceiling([token_ids[i] for i in picks])
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
