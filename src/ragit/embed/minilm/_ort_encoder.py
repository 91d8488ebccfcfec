"""all-MiniLM-L6-v2 on onnxruntime with per-channel int8 weights (optional accelerator).

On first use the fp32 graph is built from the verified safetensors (no
torch, see :mod:`._onnx_graph`) and quantized with onnxruntime's dynamic
quantizer: int8 weights with one scale per output channel, activations
quantized per call. Per-tensor weight scales lose too much (cosine 0.94 to
fp32), so they are never used. The result, about 60 MB, is written once into
the user cache, keyed by the weights' sha256, the builder version and the
onnxruntime version (its quantizer decides the bytes), via a temporary folder
and an atomic rename; nothing is ever written into a repository.

Only the weight-times-activation MatMuls are quantized; the embedding tables
stay fp32, which is measurably closer to the fp32 encoder for short texts.
Before quantizing, each MatMul's input channels are rebalanced against its
weight rows (SmoothQuant, scales sized on a fixed calibration set, see
:func:`._onnx_graph.smoothing_scales`): activation outliers then cost little
precision, lifting the mean cosine to fp32 from 0.995 to 0.997 and the worst
sentence from 0.98 to 0.99, for about 3 % of the speed. Each text runs on its
own: dynamic quantization picks its activation range from the whole input
tensor, so a padded batch would make a text's vector depend on its neighbours.

This is a different numeric path from the numpy encoder (mean cosine 0.997,
worst text about 0.99), hence its own :data:`NUMERIC_PATH` for cache namespaces.
The int8 session applies onnxruntime's basic graph rewrites only (see :func:`_session`):
its extended fusions were slower here and quantize the activations their own way, so
the profile's version names the unfused path (``minilm-l6-v2-ort-int8-pc-2``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import onnxruntime as ort  # type: ignore[import-untyped,import-not-found,unused-ignore]
from numpy.typing import NDArray

from ragit.embed.minilm._errors import EmbeddingModelInvalid
from ragit.embed.minilm._graph_names import ATTENTION_MASK, BUILDER_VERSION, INPUT_IDS
from ragit.embed.minilm._locate import EXPECTED_CONFIG, MODEL_ID, ModelFiles, locate_model
from ragit.embed.minilm._text import (
    MAX_TOKENS,
    check_texts,
    encode_each,
    load_tokenizer,
    sanitize,
)
from ragit.workspace import user_cache_dir

NUMERIC_PATH = "ort-int8-pc"
DIMENSION: int = EXPECTED_CONFIG["hidden_size"]
INT8_FILE = "model-int8-pc.onnx"
FP32_FILE = "model-fp32.onnx"

_log = logging.getLogger(__name__)
_build_lock = threading.Lock()


def build_id(files: ModelFiles) -> str:
    """What a cached int8 build depends on: weights, builder and quantizer versions."""
    return f"{files.weights_sha256[:16]}-b{BUILDER_VERSION}-ort{ort.__version__}"


def onnx_cache_dir() -> Path:
    """Where int8 and fp32 builds are kept (a user cache, never a repository)."""
    return user_cache_dir() / "minilm" / "onnx"


def int8_model_path(files: ModelFiles, cache_dir: Path | None = None) -> Path:
    """Where the int8 model for ``files`` lives once built."""
    return (cache_dir or onnx_cache_dir()) / build_id(files) / INT8_FILE


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    # The quantizer calls logging.warning() on the root logger, which would
    # install a stderr handler on a process that configured none; a NullHandler
    # prevents that and the filter drops the advice (shape pre-processing does
    # not apply to a graph without dynamic shape ambiguity).
    root = logging.getLogger()
    handler = logging.NullHandler()

    def drop(record: logging.LogRecord) -> bool:
        return False

    root.addHandler(handler)
    root.addFilter(drop)
    try:
        yield
    finally:
        root.removeFilter(drop)
        root.removeHandler(handler)


def build_int8_model(files: ModelFiles, cache_dir: Path | None = None) -> Path:
    """Build (once) and return the per-channel int8 model for ``files``.

    Concurrent builders each write a private temporary folder; the last rename
    wins and every result is identical, so no file lock is needed.

    Raises:
        EmbeddingModelInvalid: the weights do not load or lack a tensor.
        OSError: the cache folder cannot be written.
    """
    target = int8_model_path(files, cache_dir)
    if target.is_file():
        return target
    import onnx
    from onnxruntime.quantization import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        QuantType,
        quantize_dynamic,
    )

    from ragit.embed.minilm._calibration import CALIBRATION_TEXTS
    from ragit.embed.minilm._numpy_encoder import MiniLMEncoder
    from ragit.embed.minilm._onnx_graph import build_model, smoothing_scales
    from ragit.embed.minilm._weights import load_weights

    with _build_lock:
        if target.is_file():
            return target
        weights = load_weights(files)
        try:
            smoothing = smoothing_scales(
                weights, MiniLMEncoder(files, workers=1).input_ranges(CALIBRATION_TEXTS)
            )
            model = build_model(weights, smoothing)
        except KeyError as exc:
            raise EmbeddingModelInvalid(
                str(files.weights), f"tensor {exc.args[0]} is missing"
            ) from None
        del weights
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix=".build-"))
        try:
            fp32_path = scratch / "model-fp32.onnx"
            int8_path = scratch / INT8_FILE
            onnx.save(model, str(fp32_path))
            del model
            with _quiet_root_logger():
                quantize_dynamic(
                    fp32_path,
                    int8_path,
                    per_channel=True,
                    weight_type=QuantType.QInt8,
                    op_types_to_quantize=["MatMul"],
                )
            os.replace(int8_path, target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    _log.debug("built %s", target)
    return target


def fp32_model_path(files: ModelFiles, cache_dir: Path | None = None) -> Path:
    """Where the fp32 model for ``files`` lives once built."""
    return (cache_dir or onnx_cache_dir()) / build_id(files) / FP32_FILE


def build_fp32_model(files: ModelFiles, cache_dir: Path | None = None) -> Path:
    """Build (once) and return the plain fp32 model for ``files``.

    Written like the int8 build: a private temporary folder, then an atomic rename.

    Raises:
        EmbeddingModelInvalid: the weights do not load or lack a tensor.
        OSError: the cache folder cannot be written.
    """
    target = fp32_model_path(files, cache_dir)
    if target.is_file():
        return target
    import onnx

    from ragit.embed.minilm._onnx_graph import build_model
    from ragit.embed.minilm._weights import load_weights

    with _build_lock:
        if target.is_file():
            return target
        weights = load_weights(files)
        try:
            model = build_model(weights)
        except KeyError as exc:
            raise EmbeddingModelInvalid(
                str(files.weights), f"tensor {exc.args[0]} is missing"
            ) from None
        del weights
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=target.parent, prefix=".build-"))
        try:
            onnx.save(model, str(scratch / FP32_FILE))
            del model
            os.replace(scratch / FP32_FILE, target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    _log.debug("built %s", target)
    return target


def _session(model: Path | bytes, *, fuse: bool = True) -> Any:
    # One thread per run; parallelism comes from running texts side by side.
    # Measured on 2 cores: a 2-thread intra-op pool spins and waits at every
    # operator, which halves throughput as soon as anything else runs, while
    # two callers with one thread each are the fastest whether busy or idle.
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    if not fuse:
        # Basic graph rewrites only: the int8 graph runs as quantized (DynamicQuantizeLinear,
        # MatMulInteger, LayerNormalization). onnxruntime's extended fusions of it
        # (DynamicQuantizeMatMul, SkipLayerNormalization) were 12-14% slower per text here,
        # and quantize the activations their own way (cosine 0.9985 to the unfused vectors,
        # both 0.9973 to fp32), so the fused and unfused int8 vectors are two numeric paths.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    source = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def _build(
    build: Callable[[ModelFiles, Path | None], Path], files: ModelFiles, cache_dir: Path | None
) -> Path:
    """``build``'s model file; an OS error that names no file (onnx's writer, the quantizer)
    names the cache folder it was writing, so a full or unwritable user cache is reported as
    such and not as the repository's.

    Raises:
        OSError: the cache folder cannot be written.
    """
    try:
        return build(files, cache_dir)
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        where = cache_dir if cache_dir is not None else onnx_cache_dir()
        raise OSError(exc.errno, exc.strerror or os.strerror(exc.errno), str(where)) from exc


def _built_session(
    build: Callable[[ModelFiles, Path | None], Path],
    files: ModelFiles,
    cache_dir: Path | None,
    label: str,
    *,
    fuse: bool = True,
) -> tuple[Any, Path]:
    """The session of the model ``build`` makes (or finds cached), and its file; a cached file
    that does not load is built again once.

    Raises:
        EmbeddingModelInvalid: the model built afresh does not load either.
    """
    path = _build(build, files, cache_dir)
    try:
        return _session(path, fuse=fuse), path
    except Exception:  # onnxruntime's errors share no base class; a damaged cache file
        path.unlink(missing_ok=True)
        path = _build(build, files, cache_dir)
        try:
            return _session(path, fuse=fuse), path
        except Exception as exc:
            raise EmbeddingModelInvalid(
                str(path), f"the {label} model built from the weights does not load"
            ) from exc


class OrtFp32Runner:
    """The fp32 encoder graph (no smoothing, no quantization) on onnxruntime.

    It computes the numpy encoder's function with onnxruntime's kernels: measured on
    300 RFC chunks, at most 4.2e-7 from it in cosine (2.3e-7 per component), and
    1.6 times its throughput per core. The graph is built once from the verified
    safetensors into the user cache next to the int8 build (:func:`build_fp32_model`,
    about 90 MB) and opened from there: opening the file peaks about 220 MB lower
    than building the graph in memory in every process. Each text runs on its own,
    which was faster here than padded batches of similar length.
    """

    def __init__(self, files: ModelFiles, cache_dir: Path | None = None) -> None:
        """Build the fp32 model if it is not cached yet, then open it.

        Raises:
            EmbeddingModelInvalid: the weights do not load or lack a tensor, or the
                built model does not load even after a rebuild.
            OSError: the cache folder cannot be written.
        """
        self._session, self.model_file = _built_session(build_fp32_model, files, cache_dir, "fp32")

    def embed_ids(self, ids: Sequence[int]) -> NDArray[np.float32]:
        """The unit vector of one text's token ids (already truncated)."""
        batch = np.asarray([ids], dtype=np.int64)
        feeds = {INPUT_IDS: batch, ATTENTION_MASK: np.ones_like(batch)}
        vector: NDArray[np.float32] = self._session.run(None, feeds)[0][0]
        return vector


class OrtInt8Encoder:
    """Sentence embeddings of all-MiniLM-L6-v2 on onnxruntime, int8 per-channel.

    About three times the numpy encoder's throughput per core (measured 43-47
    against 13-15 chunks of 256 tokens per CPU-second) at mean cosine 0.997
    to it.
    Safe to share between threads; keep one instance for the process.
    """

    numeric_path: ClassVar[str] = NUMERIC_PATH
    model_id: ClassVar[str] = MODEL_ID
    dimension: ClassVar[int] = DIMENSION
    max_tokens: ClassVar[int] = MAX_TOKENS

    def __init__(
        self, files: ModelFiles, *, workers: int = 2, cache_dir: Path | None = None
    ) -> None:
        """Build the int8 model if it is not cached yet, then load it.

        Raises:
            EmbeddingModelInvalid: the model files do not load, or the built
                model does not load even after a rebuild.
            OSError: the cache folder cannot be written.
        """
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.files = files
        self.workers = workers
        self.build_id = build_id(files)
        self._tokenizer = load_tokenizer(files.tokenizer)
        self._session, self.model_file = _built_session(
            build_int8_model, files, cache_dir, "int8", fuse=False
        )

    @classmethod
    def load(
        cls, model_path: str | None = None, *, workers: int = 2, cache_dir: Path | None = None
    ) -> OrtInt8Encoder:
        """Locate, verify, build if needed and load the model.

        Raises:
            EmbeddingModelInvalid: see :func:`locate_model`.
            OSError: the cache folder cannot be written.
        """
        return cls(locate_model(model_path), workers=workers, cache_dir=cache_dir)

    def token_ids(self, text: str) -> list[int]:
        """The token ids the model sees for ``text`` (with [CLS]/[SEP], cut at 256)."""
        return list(self._tokenizer.encode(sanitize(text)).ids)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """L2-normalized embeddings, one row of 384 per text, in input order.

        Raises:
            TypeError: ``texts`` is a single string or holds a non-string.
        """
        check_texts(texts)
        return encode_each(
            texts, self._embed, dimension=DIMENSION, workers=self.workers, thread_name="minilm-ort"
        )

    def _embed(self, text: str) -> NDArray[np.float32]:
        ids = np.asarray([self._tokenizer.encode(sanitize(text)).ids], dtype=np.int64)
        feeds = {INPUT_IDS: ids, ATTENTION_MASK: np.ones_like(ids)}
        vector: NDArray[np.float32] = self._session.run(None, feeds)[0][0]
        return vector
