"""Which encoder backends can run here, and what to install when one cannot.

Only ``importlib.util.find_spec`` is used to look, so asking imports neither
numpy nor onnxruntime.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import Field

from ragit.contract.models import WireModel
from ragit.embed.minilm._errors import (
    MODEL_INSTALL_COMMAND,
    NUMPY_INSTALL_COMMAND,
    ORT_INSTALL_COMMAND,
    EmbeddingBackendUnavailable,
    EmbeddingModelInvalid,
)
from ragit.embed.minilm._locate import MODEL_ID, locate_model

if TYPE_CHECKING:
    from ragit.embed.minilm._protocol import Encoder

NUMPY_FP32 = "numpy-fp32"
ORT_INT8_PC = "ort-int8-pc"


@dataclass(frozen=True)
class _Backend:
    name: str
    modules: tuple[str, ...]
    install: str


_BACKENDS = (
    _Backend(NUMPY_FP32, ("numpy", "tokenizers", "safetensors"), NUMPY_INSTALL_COMMAND),
    _Backend(
        ORT_INT8_PC,
        ("numpy", "tokenizers", "safetensors", "onnxruntime", "onnx"),
        ORT_INSTALL_COMMAND,
    ),
)
BACKEND_NAMES = tuple(backend.name for backend in _BACKENDS)


def _backend(name: str) -> _Backend:
    for backend in _BACKENDS:
        if backend.name == name:
            return backend
    raise ValueError(f"unknown MiniLM backend {name!r}; choose one of {', '.join(BACKEND_NAMES)}")


def _missing(modules: tuple[str, ...]) -> list[str]:
    missing = []
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(module)
    return missing


def available_backends() -> list[str]:
    """Backends whose libraries are installed, fastest last (model files not checked)."""
    return [backend.name for backend in _BACKENDS if not _missing(backend.modules)]


def load_encoder(
    backend: str = NUMPY_FP32, model_path: str | None = None, engine: str = "auto"
) -> Encoder:
    """Locate and verify the model, then load it on ``backend``.

    Args:
        backend: ``numpy-fp32`` (exact) or ``ort-int8-pc`` (faster, approximate).
        model_path: an explicit model directory, or None for the installed package.
        engine: for ``numpy-fp32``, ``auto`` (onnxruntime's fp32 kernels for large
            calls when installed, same vectors within 1e-6) or ``numpy`` (numpy only).

    Raises:
        ValueError: ``backend`` is not a known name.
        InputInvalid: ``engine`` is not ``auto`` or ``numpy``.
        EmbeddingBackendUnavailable: a library the backend needs is missing.
        EmbeddingModelInvalid: the model files are missing or not the pinned ones.
    """
    spec = _backend(backend)
    missing = _missing(spec.modules)
    if missing:
        raise EmbeddingBackendUnavailable(spec.name, missing, spec.install)
    files = locate_model(model_path)
    try:
        if spec.name == NUMPY_FP32:
            from ragit.embed.minilm._fp32_encoder import Fp32Encoder

            return Fp32Encoder(files, engine=engine)
        from ragit.embed.minilm._ort_encoder import OrtInt8Encoder

        return OrtInt8Encoder(files)
    except ImportError as exc:
        # find_spec saw the module but importing it failed (a broken install).
        raise EmbeddingBackendUnavailable(spec.name, [exc.name or str(exc)], spec.install) from exc


class BackendStatus(WireModel):
    """One backend: whether its libraries are present, and what to install if not."""

    name: str
    available: bool
    missing: list[str]
    install: str | None


class ModelStatus(WireModel):
    """The model files: where they are and whether they verified."""

    model_id: str
    ok: bool
    source: str | None
    path: str | None
    package_version: str | None
    reason: str | None
    install: str | None


class MiniLMDoctorReport(WireModel):
    """What ``ragit doctor`` shows about the offline MiniLM embeddings."""

    ok: bool
    backends: list[BackendStatus]
    model: ModelStatus
    actions: list[str] = Field(default_factory=list)


def doctor_report(model_path: str | None = None) -> MiniLMDoctorReport:
    """Check the libraries and the model files; say exactly what to install.

    ``ok`` means the numpy backend can run. The model check hashes the files
    unless the verification cache already vouches for them.
    """
    backends = []
    actions: list[str] = []
    for backend in _BACKENDS:
        missing = _missing(backend.modules)
        backends.append(
            BackendStatus(
                name=backend.name,
                available=not missing,
                missing=missing,
                install=backend.install if missing else None,
            )
        )
        if missing:
            actions.append(backend.install)
    try:
        files = locate_model(model_path)
    except EmbeddingModelInvalid as exc:
        model = ModelStatus(
            model_id=MODEL_ID,
            ok=False,
            source="path" if model_path is not None else "package",
            path=exc.details.get("path"),
            package_version=None,
            reason=str(exc.details.get("reason")),
            install=exc.recovery,
        )
        if model_path is None:
            actions.insert(0, MODEL_INSTALL_COMMAND)
    else:
        model = ModelStatus(
            model_id=MODEL_ID,
            ok=True,
            source=files.source,
            path=str(files.directory),
            package_version=files.package_version,
            reason=None,
            install=None,
        )
    return MiniLMDoctorReport(
        ok=model.ok and backends[0].available,
        backends=backends,
        model=model,
        actions=actions,
    )
