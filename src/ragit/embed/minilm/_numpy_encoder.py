"""all-MiniLM-L6-v2 in plain numpy (fp32), matching sentence-transformers.

The forward pass is BERT-base's, at MiniLM-L6's size: 6 layers, hidden 384,
12 heads of 32, feed-forward 1536, exact-erf GELU, post-LayerNorm; then mean
pooling over the tokens and L2 normalization. Three choices make it fast on a
small CPU:

* every text runs on its own, unpadded, so no (batch, 12, T, T) score tensor
  and no work on padding is ever made;
* GELU is computed in place as ``relu(x) - |x| * erfc(|x|/sqrt 2) / 2`` with the
  Abramowitz-Stegun 7.1.26 erfc (absolute error below 1.5e-7), with no scipy;
* a batch is spread over two Python threads with one BLAS thread each; numpy
  releases the GIL inside matmul and ufuncs, and this scales better than one
  thread with a two-thread BLAS (see :mod:`._blas` for how the BLAS thread
  count is limited even when numpy was imported first).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from ragit.embed.minilm._blas import blas_threads
from ragit.embed.minilm._locate import EXPECTED_CONFIG, MODEL_ID, ModelFiles, locate_model
from ragit.embed.minilm._text import (
    MAX_TOKENS,
    check_texts,
    encode_each,
    load_tokenizer,
    sanitize,
)
from ragit.embed.minilm._weights import load_weights, tensor

Array = NDArray[np.float32]

NUMERIC_PATH = "numpy-fp32"
DIMENSION: int = EXPECTED_CONFIG["hidden_size"]
_HEADS: int = EXPECTED_CONFIG["num_attention_heads"]
_HEAD_DIM = DIMENSION // _HEADS
_LAYERS: int = EXPECTED_CONFIG["num_hidden_layers"]
_LN_EPS = np.float32(EXPECTED_CONFIG["layer_norm_eps"])

# Abramowitz & Stegun 7.1.26: erfc(z) ~ t*(a1 + t*(a2 + ...)) * exp(-z^2), t = 1/(1 + p*z).
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)


@dataclass(frozen=True)
class _Layer:
    wqkv: Array  # (384, 1152): query, key and value projections side by side
    bqkv: Array
    wo: Array
    bo: Array
    ln1_g: Array
    ln1_b: Array
    w1: Array  # (384, 1536)
    b1: Array
    w2: Array  # (1536, 384)
    b2: Array
    ln2_g: Array
    ln2_b: Array


def _layer_norm(x: Array, gamma: Array, beta: Array) -> Array:
    """LayerNorm over the last axis; overwrites and returns ``x``."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.mean(np.square(x), axis=-1, keepdims=True)
    var += _LN_EPS
    np.sqrt(var, out=var)
    x /= var
    x *= gamma
    x += beta
    return x


def gelu_(x: Array) -> Array:
    """Exact-erf GELU of ``x``, computed in place; returns ``x``."""
    a = np.abs(x)
    t = a * np.float32(_AS_P * _INV_SQRT2)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    poly = t * np.float32(_AS_A[4])
    for coefficient in reversed(_AS_A[:4]):
        poly += np.float32(coefficient)
        poly *= t
    # exp(-z^2) with z = |x|/sqrt(2) is exp(-x^2/2); t is free again, so reuse it.
    np.square(a, out=t)
    t *= np.float32(-0.5)
    np.exp(t, out=t)
    poly *= t  # erfc(|x|/sqrt 2)
    poly *= a
    poly *= np.float32(0.5)
    np.maximum(x, np.float32(0.0), out=x)
    x -= poly
    return x


class MiniLMEncoder:
    """Sentence embeddings of all-MiniLM-L6-v2, computed with numpy in fp32.

    One instance holds about 90 MB of weights and is safe to share between
    threads; keep it for the life of the process.
    """

    numeric_path: ClassVar[str] = NUMERIC_PATH
    model_id: ClassVar[str] = MODEL_ID
    dimension: ClassVar[int] = DIMENSION
    max_tokens: ClassVar[int] = MAX_TOKENS

    def __init__(self, files: ModelFiles, *, workers: int = 2) -> None:
        """Load the verified files (see :func:`locate_model`).

        Raises:
            EmbeddingModelInvalid: a file does not load or lacks a tensor.
        """
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.files = files
        self.workers = workers
        self._tokenizer = load_tokenizer(files.tokenizer)
        weights = load_weights(files)

        def get(name: str) -> Array:
            return tensor(weights, files, name)

        self._word = get("embeddings.word_embeddings.weight")
        self._position = get("embeddings.position_embeddings.weight")
        # Sentence-transformers passes token type 0 for every token.
        self._type0 = get("embeddings.token_type_embeddings.weight")[0].copy()
        self._emb_ln_g = get("embeddings.LayerNorm.weight")
        self._emb_ln_b = get("embeddings.LayerNorm.bias")
        layers = []
        for index in range(_LAYERS):
            p = f"encoder.layer.{index}."
            # Stored as torch Linear (out, in); transposed once so x @ w needs no copy.
            wqkv = np.concatenate(
                [get(p + f"attention.self.{part}.weight").T for part in ("query", "key", "value")],
                axis=1,
            )
            bqkv = np.concatenate(
                [get(p + f"attention.self.{part}.bias") for part in ("query", "key", "value")]
            )
            layers.append(
                _Layer(
                    wqkv=np.ascontiguousarray(wqkv),
                    bqkv=bqkv,
                    wo=np.ascontiguousarray(get(p + "attention.output.dense.weight").T),
                    bo=get(p + "attention.output.dense.bias"),
                    ln1_g=get(p + "attention.output.LayerNorm.weight"),
                    ln1_b=get(p + "attention.output.LayerNorm.bias"),
                    w1=np.ascontiguousarray(get(p + "intermediate.dense.weight").T),
                    b1=get(p + "intermediate.dense.bias"),
                    w2=np.ascontiguousarray(get(p + "output.dense.weight").T),
                    b2=get(p + "output.dense.bias"),
                    ln2_g=get(p + "output.LayerNorm.weight"),
                    ln2_b=get(p + "output.LayerNorm.bias"),
                )
            )
        self._layers = tuple(layers)

    @classmethod
    def load(cls, model_path: str | None = None, *, workers: int = 2) -> MiniLMEncoder:
        """Locate, verify and load the model.

        Raises:
            EmbeddingModelInvalid: see :func:`locate_model`.
        """
        return cls(locate_model(model_path), workers=workers)

    def token_ids(self, text: str) -> list[int]:
        """The token ids the model sees for ``text`` (with [CLS]/[SEP], cut at 256)."""
        return list(self._tokenizer.encode(sanitize(text)).ids)

    def encode(self, texts: Sequence[str]) -> Array:
        """L2-normalized embeddings, one row of 384 per text, in input order.

        Texts longer than 256 tokens are truncated as sentence-transformers does.

        Raises:
            TypeError: ``texts`` is a single string or holds a non-string.
        """
        check_texts(texts)
        # One BLAS thread even for a single query: a two-thread BLAS saves about
        # 2 ms on an idle machine but is 3-4x slower when other work competes
        # for the cores (OpenBLAS threads spin and wait on each other).
        with blas_threads(1):
            return encode_each(
                texts, self._embed, dimension=DIMENSION, workers=self.workers, thread_name="minilm"
            )

    def _embed(self, text: str) -> Array:
        ids = np.asarray(self._tokenizer.encode(sanitize(text)).ids, dtype=np.int64)
        return self._forward(ids)

    def input_ranges(self, texts: Sequence[str]) -> dict[str, Array]:
        """Per-channel max |activation| entering each weight MatMul, over ``texts``.

        Keys are ``l{layer}_{wqkv|wo|w1|w2}``; the int8 builder uses them to
        balance activation outliers against the weights before quantizing.
        """
        check_texts(texts)
        ranges: dict[str, Array] = {}

        def probe(name: str, value: Array) -> None:
            peak = np.abs(value).max(axis=0)
            ranges[name] = np.maximum(ranges[name], peak) if name in ranges else peak

        for text in texts:
            ids = np.asarray(self._tokenizer.encode(sanitize(text)).ids, dtype=np.int64)
            self._forward(ids, probe)
        return ranges

    def _forward(
        self, ids: NDArray[np.int64], probe: Callable[[str, Array], None] | None = None
    ) -> Array:
        length = ids.shape[0]
        x = self._word[ids]
        x += self._position[:length]
        x += self._type0
        x = _layer_norm(x, self._emb_ln_g, self._emb_ln_b)
        scale = np.float32(1.0 / math.sqrt(_HEAD_DIM))
        for index, layer in enumerate(self._layers):
            if probe is not None:
                probe(f"l{index}_wqkv", x)
            qkv: Array = x @ layer.wqkv
            qkv += layer.bqkv
            # (T, 3*384) -> (3, heads, T, head_dim) as strided views, no copy.
            heads = qkv.reshape(length, 3, _HEADS, _HEAD_DIM).transpose(1, 2, 0, 3)
            query, key, value = heads[0], heads[1], heads[2]
            scores = np.matmul(query, key.transpose(0, 2, 1))
            scores *= scale
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = np.matmul(scores, value).transpose(1, 0, 2).reshape(length, DIMENSION)
            if probe is not None:
                probe(f"l{index}_wo", context)
            attended: Array = context @ layer.wo
            attended += layer.bo
            attended += x
            x = _layer_norm(attended, layer.ln1_g, layer.ln1_b)
            if probe is not None:
                probe(f"l{index}_w1", x)
            hidden: Array = x @ layer.w1
            hidden += layer.b1
            gelu_(hidden)
            if probe is not None:
                probe(f"l{index}_w2", hidden)
            output: Array = hidden @ layer.w2
            output += layer.b2
            output += x
            x = _layer_norm(output, layer.ln2_g, layer.ln2_b)
        pooled: Array = x.mean(axis=0, dtype=np.float32)
        norm = max(float(np.linalg.norm(pooled)), 1e-12)
        pooled /= np.float32(norm)
        return pooled
