"""The fp32 model (``all-MiniLM-L6-v2``) on the fastest engine installed.

Both engines compute the same fp32 function: the numpy encoder, and, when
onnxruntime and onnx are installed, the fp32 graph on onnxruntime
(:class:`._ort_encoder.OrtFp32Runner`, within 4.2e-7 cosine of numpy and 1.6
times its throughput per core). The vectors agree far below what the store
keeps apart, so the numeric path, the profile and the cache namespace stay
``numpy-fp32`` whichever engine ran.

A call of :data:`ORT_MIN_TEXTS` texts or more (an ingest's batches) opens the
onnxruntime session once (building the fp32 model into the user cache the first
time on a machine) and uses it from then on; fewer texts (a question) run on
numpy, so a cold ``query`` never imports onnxruntime. Each engine's weights are
loaded only when that engine first runs, so an ingest on onnxruntime does not
also hold numpy's copy.
``RAGIT_MINILM_ENGINE=numpy`` keeps every call on numpy (measurements of numpy
alone); ``auto`` (the default) is the behaviour above.

The int8 model is not used in place of this one: its vectors differ (cosine
0.997), so it is a profile of its own (``all-MiniLM-L6-v2-int8``), chosen in
the configuration.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ragit.contract.errors import InputInvalid
from ragit.embed.minilm._blas import blas_threads
from ragit.embed.minilm._locate import MODEL_ID, ModelFiles
from ragit.embed.minilm._numpy_encoder import DIMENSION, NUMERIC_PATH, MiniLMEncoder
from ragit.embed.minilm._text import MAX_TOKENS, check_texts, load_tokenizer, sanitize

ENGINE_ENV = "RAGIT_MINILM_ENGINE"
ENGINE_AUTO = "auto"
ENGINE_NUMPY = "numpy"
ENGINES = (ENGINE_AUTO, ENGINE_NUMPY)
# Below this many texts in one call, numpy answers (building the session costs
# about as much CPU as embedding a dozen chunks).
ORT_MIN_TEXTS = 32

_log = logging.getLogger(__name__)


def engine_choice(raw: str | None) -> str:
    """The engine setting from ``RAGIT_MINILM_ENGINE`` (unset or empty: ``auto``).

    Raises:
        InputInvalid: the value is not ``auto`` or ``numpy``.
    """
    value = (raw or ENGINE_AUTO).strip().lower()
    if value not in ENGINES:
        raise InputInvalid(ENGINE_ENV, f"expected one of {', '.join(ENGINES)}, got {raw!r}")
    return value


def onnxruntime_installed() -> bool:
    """Whether onnxruntime and onnx can be found (without importing them)."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))
    except (ImportError, ValueError):
        return False


class Fp32Encoder:
    """all-MiniLM-L6-v2 in fp32: numpy, or onnxruntime's fp32 kernels for large calls.

    Safe to share between threads; keep one instance for the process.
    """

    numeric_path: ClassVar[str] = NUMERIC_PATH
    model_id: ClassVar[str] = MODEL_ID
    dimension: ClassVar[int] = DIMENSION
    max_tokens: ClassVar[int] = MAX_TOKENS

    def __init__(self, files: ModelFiles, *, workers: int = 2, engine: str = ENGINE_AUTO) -> None:
        """Load the numpy encoder; the onnxruntime session is built on the first large call.

        Raises:
            EmbeddingModelInvalid: a model file does not load.
            InputInvalid: ``engine`` is not ``auto`` or ``numpy``.
        """
        self.files = files
        self.workers = workers
        self.engine = engine_choice(engine)
        self.tokenizer = load_tokenizer(files.tokenizer)
        self._numpy: MiniLMEncoder | None = None
        self._runner: Any = None
        self._runner_failed = self.engine == ENGINE_NUMPY or not onnxruntime_installed()
        self._lock = threading.Lock()
        self.engine_used: str | None = None  # the engine of the last call, for diagnostics

    @property
    def numpy(self) -> MiniLMEncoder:
        """The numpy encoder, loaded on first use.

        Raises:
            EmbeddingModelInvalid: the weights do not load or lack a tensor.
        """
        if self._numpy is None:
            with self._lock:
                if self._numpy is None:
                    self._numpy = MiniLMEncoder(self.files, workers=self.workers)
        return self._numpy

    def token_ids(self, text: str) -> list[int]:
        """The token ids the model sees for ``text`` (with [CLS]/[SEP], cut at 256)."""
        return list(self.tokenizer.encode(sanitize(text)).ids)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """L2-normalized embeddings, one row of 384 per text, in input order.

        Raises:
            TypeError: ``texts`` is a single string or holds a non-string.
        """
        check_texts(texts)
        runner = self._onnx_runner(len(texts))
        if runner is None:
            self.engine_used = "numpy"
            return self.numpy.encode(texts)
        self.engine_used = "onnxruntime-fp32"
        tokenizer = self.tokenizer
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)

        def embed(index: int) -> NDArray[np.float32]:
            vector: NDArray[np.float32] = runner.embed_ids(
                tokenizer.encode(sanitize(texts[index])).ids
            )
            return vector

        # Longest first so the workers finish together; onnxruntime releases the GIL.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        with blas_threads(1):
            if self.workers == 1:
                for row in order:
                    out[row] = embed(row)
                return out
            with ThreadPoolExecutor(self.workers, thread_name_prefix="minilm-fp32") as pool:
                for row, vector in zip(order, pool.map(embed, order), strict=True):
                    out[row] = vector
        return out

    def _onnx_runner(self, count: int) -> Any:
        if self._runner is not None:
            return self._runner
        if self._runner_failed or count < ORT_MIN_TEXTS:
            return None
        with self._lock:
            if self._runner is None and not self._runner_failed:
                try:
                    from ragit.embed.minilm._ort_encoder import OrtFp32Runner

                    self._runner = OrtFp32Runner(self.files)
                except Exception:  # a broken onnxruntime install costs speed, never vectors
                    _log.debug("onnxruntime fp32 engine unavailable; using numpy", exc_info=True)
                    self._runner_failed = True
        return self._runner
