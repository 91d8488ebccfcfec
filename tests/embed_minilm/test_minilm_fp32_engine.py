"""The fp32 model on onnxruntime's kernels: same vectors as numpy, used for large calls only."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.embed_minilm.conftest import MODEL_SKIP_REASON, model_package_installed

pytestmark = pytest.mark.skipif(not model_package_installed(), reason=MODEL_SKIP_REASON)

ORT_INSTALLED = (
    importlib.util.find_spec("onnxruntime") is not None
    and importlib.util.find_spec("onnx") is not None
)
needs_ort = pytest.mark.skipif(
    not ORT_INSTALLED, reason="onnxruntime/onnx are not installed (`ragit-cli[minilm-fast]`)"
)

# Texts of the shapes an ingest embeds: short titles, paragraphs, a chunk cut at 256 tokens,
# code, non-Latin text; 40 of them, so one call is large enough for onnxruntime.
_PARAGRAPH = (
    "The borrow checker rejects a mutable reference while a shared one is alive; "
    "two-phase borrows relax this for method calls such as vec.push(vec.len()). "
)
TEXTS = (
    [
        "Snapshots are bound to commits",
        _PARAGRAPH,
        _PARAGRAPH * 12,  # far over 256 tokens: truncated
        'fn main() { let x: Vec<u8> = Vec::with_capacity(16); println!("{:?}", x); }',
        "커밋에 묶인 스냅샷",
        "",
        "a",
    ]
    + [f"RFC {i}: {_PARAGRAPH[: 40 + 13 * i]}" for i in range(33)]
)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@needs_ort
def test_fp32_model_on_onnxruntime_gives_numpys_vectors_within_1e6_cosine(
    numpy_encoder: Any,
) -> None:
    """Implementation choice: a faster engine for the fp32 model keeps every vector (1e-6
    cosine)."""
    from ragit.embed.minilm import load_encoder

    encoder: Any = load_encoder("numpy-fp32")
    got = encoder.encode(TEXTS)
    assert encoder.engine_used == "onnxruntime-fp32"
    expected = numpy_encoder.encode(TEXTS)
    assert got.shape == expected.shape == (len(TEXTS), 384)
    assert got.dtype == np.float32
    assert float((1.0 - _cosines(got, expected)).max()) < 1e-6
    assert float(np.abs(got - expected).max()) < 1e-5
    # The numeric path (hence the profile and the cache namespace) is the fp32 one.
    assert encoder.numeric_path == numpy_encoder.numeric_path == "numpy-fp32"


@needs_ort
def test_fp32_engine_matches_sentence_transformers_reference(reference: dict[str, Any]) -> None:
    """Implementation choice, kept on the new engine: max abs difference to the reference 1e-5."""
    from ragit.embed.minilm import load_encoder

    texts = [case["text"] for case in reference["cases"]]
    vectors = np.asarray([case["vector"] for case in reference["cases"]], dtype=np.float32)
    encoder: Any = load_encoder("numpy-fp32")
    repeats = -(-32 // len(texts))  # enough texts for one large call
    got = encoder.encode(texts * repeats)[: len(texts)]
    assert encoder.engine_used == "onnxruntime-fp32"
    assert float(np.abs(got - vectors).max()) < 1e-5


def test_engine_numpy_keeps_large_calls_on_numpy(numpy_encoder: Any) -> None:
    """Implementation choice: RAGIT_MINILM_ENGINE=numpy measures and runs numpy alone."""
    from ragit.embed.minilm import load_encoder

    encoder: Any = load_encoder("numpy-fp32", engine="numpy")
    got = encoder.encode(TEXTS)
    assert encoder.engine_used == "numpy"
    assert float(np.abs(got - numpy_encoder.encode(TEXTS)).max()) == 0.0


def test_a_question_is_embedded_without_importing_onnxruntime(tmp_path: Path) -> None:
    """Implementation choice: a cold query pays no onnxruntime import or graph build."""
    script = (
        "import json, sys\n"
        "from ragit.embed.minilm import load_encoder\n"
        "e = load_encoder('numpy-fp32')\n"
        "v = e.encode(['how are snapshots bound to commits?'])\n"
        "print(json.dumps([e.engine_used, 'onnxruntime' in sys.modules, v.shape[1]]))\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert json.loads(out.stdout) == ["numpy", False, 384]


def test_unknown_engine_is_a_typed_input_error() -> None:
    """Implementation choice: a mistyped RAGIT_MINILM_ENGINE fails loudly, not silently slow."""
    from ragit.contract.errors import InputInvalid
    from ragit.embed.base import ProviderOptions
    from ragit.embed.profile import resolve_profile
    from ragit.embed.providers.minilm import MiniLMEmbedder

    profile = resolve_profile({"provider": "local-minilm", "model": "all-MiniLM-L6-v2"}, {})
    with pytest.raises(InputInvalid) as caught:
        MiniLMEmbedder(profile, ProviderOptions(env={"RAGIT_MINILM_ENGINE": "gpu"}))
    assert caught.value.code == "INPUT_INVALID"
    assert caught.value.details["field"] == "RAGIT_MINILM_ENGINE"
    MiniLMEmbedder(profile, ProviderOptions(env={"RAGIT_MINILM_ENGINE": "NumPy"}))


@needs_ort
def test_opening_a_built_int8_model_does_not_import_onnx(ort_encoder: Any) -> None:
    """Implementation choice (cold semantic query): only building the int8 model needs onnx.

    Importing onnx (with ml_dtypes) cost about 0.6 CPU-seconds of every cold int8 query.
    """
    cache_dir = ort_encoder.model_file.parent.parent
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from ragit.embed.minilm import OrtInt8Encoder\n"
        "e = OrtInt8Encoder.load(cache_dir=Path(sys.argv[1]))\n"
        "v = e.encode(['how are snapshots bound to commits?'])\n"
        "print(json.dumps(['onnx' in sys.modules, 'ml_dtypes' in sys.modules, v.shape[1]]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(cache_dir)], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == [False, False, 384]


@needs_ort
def test_fp32_model_is_built_once_into_the_user_cache_and_numpy_weights_stay_unloaded(
    tmp_path: Path,
) -> None:
    """Implementation choice: opening a cached file peaks ~220 MB lower than an in-memory
    build, and an ingest on onnxruntime does not also hold numpy's copy of the weights."""
    from ragit.embed.minilm import locate_model
    from ragit.embed.minilm._fp32_encoder import Fp32Encoder
    from ragit.embed.minilm._ort_encoder import fp32_model_path

    files = locate_model(None)
    first = Fp32Encoder(files)
    first.encode(TEXTS)
    assert first.engine_used == "onnxruntime-fp32"
    assert first._numpy is None
    built = fp32_model_path(files)
    assert built.is_file()
    assert str(built).startswith(os.environ["XDG_CACHE_HOME"])
    stamp = built.stat().st_mtime_ns
    second = Fp32Encoder(files)
    second.encode(TEXTS)
    assert built.stat().st_mtime_ns == stamp  # reused, not rebuilt
    # A damaged file is rebuilt, not trusted.
    built.write_bytes(b"not an onnx model")
    third = Fp32Encoder(files)
    vectors = third.encode(TEXTS)
    assert third.engine_used == "onnxruntime-fp32"
    assert float((1.0 - _cosines(vectors, second.encode(TEXTS))).max()) < 1e-6
