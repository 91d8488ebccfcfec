"""The MiniLM encoders against sentence-transformers' reference vectors, and odd inputs."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragit.embed.minilm import WEIGHTS_SHA256

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "minilm" / "reference.json"


def _texts(reference: dict[str, Any]) -> list[str]:
    return [case["text"] for case in reference["cases"]]


def _vectors(reference: dict[str, Any]) -> np.ndarray:
    return np.asarray([case["vector"] for case in reference["cases"]], dtype=np.float32)


def test_reference_fixture_was_made_from_the_pinned_weights(reference: dict[str, Any]) -> None:
    """Implementation choice: the fixture is only meaningful for the weights the encoder pins."""
    assert reference["weightsSha256"] == WEIGHTS_SHA256
    assert reference["maxSeqLength"] == 256
    assert len(reference["cases"]) >= 12
    assert all(len(case["vector"]) == 384 for case in reference["cases"])
    assert REFERENCE.is_file()


def test_numpy_encoder_matches_sentence_transformers_within_1e5(
    numpy_encoder: Any, reference: dict[str, Any]
) -> None:
    """Implementation choice: the numpy path reproduces sentence-transformers (max abs diff
    1e-5)."""
    got = numpy_encoder.encode(_texts(reference))
    assert got.shape == (len(reference["cases"]), 384)
    assert got.dtype == np.float32
    assert float(np.abs(got - _vectors(reference)).max()) < 1e-5


def test_numpy_encoder_truncates_at_256_tokens_like_sentence_transformers(
    numpy_encoder: Any, reference: dict[str, Any]
) -> None:
    """Implementation choice: the shipped 128-token truncation is overridden with 256."""
    counts = [len(numpy_encoder.token_ids(text)) for text in _texts(reference)]
    assert counts == [case["tokenCount"] for case in reference["cases"]]
    assert max(counts) == 256


def test_single_text_encode_equals_its_row_in_a_batch(
    numpy_encoder: Any, reference: dict[str, Any]
) -> None:
    """Implementation choice: batching changes nothing beyond float rounding."""
    texts = _texts(reference)
    batch = numpy_encoder.encode(texts)
    singles = np.stack([numpy_encoder.encode([text])[0] for text in texts])
    assert float(np.abs(batch - singles).max()) < 1e-6


def test_ort_int8_encoder_keeps_cosine_098_to_reference(
    ort_encoder: Any, reference: dict[str, Any]
) -> None:
    """Implementation choice: the int8 per-channel path stays within cosine 0.98 per sentence."""
    got = ort_encoder.encode(_texts(reference))
    cosines = (got * _vectors(reference)).sum(axis=1)
    assert got.shape == (len(reference["cases"]), 384)
    assert float(cosines.min()) >= 0.98
    assert float(cosines.mean()) >= 0.985


def test_ort_int8_vector_does_not_depend_on_batch_neighbours(
    ort_encoder: Any, reference: dict[str, Any]
) -> None:
    """Implementation choice: each text runs alone, so its int8 vector is reproducible."""
    texts = _texts(reference)
    batch = ort_encoder.encode(texts)
    alone = ort_encoder.encode([texts[0]])
    assert np.array_equal(batch[0], alone[0])


def test_ort_int8_build_is_cached_outside_the_repository_and_reused(
    ort_encoder: Any, tmp_path: Path
) -> None:
    """Implementation choice: the int8 model is built once into the user cache, never a repo."""
    from ragit.embed.minilm import OrtInt8Encoder

    built: Path = ort_encoder.model_file
    assert built.is_file()
    assert not built.is_relative_to(Path(__file__).resolve().parents[2])
    assert ort_encoder.build_id in str(built)
    stamp = built.stat().st_mtime_ns
    again = OrtInt8Encoder(ort_encoder.files, cache_dir=built.parent.parent)
    assert again.model_file == built
    assert built.stat().st_mtime_ns == stamp
    assert not [p for p in built.parent.parent.iterdir() if p.name.startswith(".build-")]


def test_numeric_paths_name_the_two_encoders_apart(ort_encoder: Any, numpy_encoder: Any) -> None:
    """Implementation choice: int8 vectors are namespaced apart from fp32 ones."""
    assert numpy_encoder.numeric_path == "numpy-fp32"
    assert ort_encoder.numeric_path == "ort-int8-pc"


def test_encoding_no_texts_returns_an_empty_matrix(numpy_encoder: Any) -> None:
    """Implementation choice: an empty batch is not an error."""
    got = numpy_encoder.encode([])
    assert got.shape == (0, 384)


def test_text_far_over_256_tokens_embeds_as_its_first_256_tokens(numpy_encoder: Any) -> None:
    """Implementation choice: long texts truncate, so what follows token 256 changes nothing."""
    head = " ".join(f"word{i}" for i in range(400))
    a, b = numpy_encoder.encode([head, head + " tail " * 20000])
    assert len(numpy_encoder.token_ids(head + " tail " * 20000)) == 256
    assert float(np.abs(a - b).max()) < 1e-6


def test_empty_and_whitespace_texts_embed_to_the_same_unit_vector(numpy_encoder: Any) -> None:
    """Implementation choice: texts with no tokens embed as [CLS] [SEP], not as an error."""
    empty, blank = numpy_encoder.encode(["", " \t\n "])
    assert np.allclose(empty, blank, atol=1e-6)
    assert abs(float(np.linalg.norm(empty)) - 1.0) < 1e-5


def test_nul_and_control_characters_are_dropped_by_the_normalizer(numpy_encoder: Any) -> None:
    """Implementation choice: NUL and control bytes embed as if absent, as in BERT's normalizer."""
    clean, dirty = numpy_encoder.encode(["commit graph", "commit\x00\x07 graph\x00"])
    assert float(np.abs(clean - dirty).max()) < 1e-6


def test_lone_surrogates_embed_as_if_absent(numpy_encoder: Any) -> None:
    """Implementation choice: lone surrogates become U+FFFD, which the normalizer drops."""
    garbage = "commit\ud800 graph\udfff" + bytes(range(256)).decode("latin-1")
    clean_text = "commit graph" + bytes(range(256)).decode("latin-1")
    got, clean = numpy_encoder.encode([garbage, clean_text])
    assert np.isfinite(got).all()
    assert float(np.abs(got - clean).max()) < 1e-6


def test_binary_garbage_decoded_with_surrogateescape_encodes(numpy_encoder: Any) -> None:
    """Implementation choice: undecodable bytes never crash the encoder."""
    text = bytes([0xFF, 0xFE, 0x00, 0x80, 0x41, 0xC3]).decode("utf-8", "surrogateescape") * 50
    (got,) = numpy_encoder.encode([text])
    assert np.isfinite(got).all()
    assert abs(float(np.linalg.norm(got)) - 1.0) < 1e-5


def test_ort_encoder_survives_the_same_garbage(ort_encoder: Any) -> None:
    """Implementation choice: the int8 path sanitizes inputs exactly as the numpy path."""
    got = ort_encoder.encode(["", "\x00", "a\ud800b", "x " * 5000])
    assert got.shape == (4, 384)
    assert np.isfinite(got).all()


def test_encode_rejects_a_bare_string(numpy_encoder: Any) -> None:
    """Implementation choice: a str is a sequence of characters, almost surely a caller bug."""
    with pytest.raises(TypeError):
        numpy_encoder.encode("hello")
    with pytest.raises(TypeError):
        numpy_encoder.encode(["hello", b"bytes"])


def test_one_encoder_serves_concurrent_callers(numpy_encoder: Any) -> None:
    """Implementation choice: the MCP server shares one loaded encoder between threads."""
    texts = [f"query number {i} about snapshots" for i in range(6)]
    expected = numpy_encoder.encode(texts)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(numpy_encoder.encode(texts))
        except BaseException as exc:  # collected and re-asserted in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 3
    for result in results:
        assert float(np.abs(result - expected).max()) < 1e-6


def test_blas_threads_are_limited_during_encode_and_restored_after(numpy_encoder: Any) -> None:
    """Implementation choice: one BLAS thread per worker, set at run time since numpy is loaded."""
    from ragit.embed.minilm._blas import _openblas_controls, blas_threads

    controls = _openblas_controls()
    if controls is None:
        pytest.skip("this numpy does not use its bundled OpenBLAS; threadpoolctl path applies")
    get, set_ = controls
    before = get()
    set_(2)
    try:
        with blas_threads(1) as method:
            assert method == "openblas"
            assert get() == 1
        assert get() == 2
        numpy_encoder.encode(["a", "b", "c"])
        assert get() == 2
    finally:
        set_(before)


def test_torch_free_onnx_graph_with_smoothing_matches_reference_in_fp32(
    ort_encoder: Any, numpy_encoder: Any, reference: dict[str, Any]
) -> None:
    """Implementation choice: the graph and its smoothing are exact before quantization."""
    import onnx
    import onnxruntime

    from ragit.embed.minilm._calibration import CALIBRATION_TEXTS
    from ragit.embed.minilm._onnx_graph import build_model, smoothing_scales
    from ragit.embed.minilm._weights import load_weights

    weights = load_weights(ort_encoder.files)
    smoothing = smoothing_scales(weights, numpy_encoder.input_ranges(CALIBRATION_TEXTS))
    model = build_model(weights, smoothing)
    onnx.checker.check_model(model)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    texts = _texts(reference)
    ids_list = [numpy_encoder.token_ids(text) for text in texts]
    # One padded batch also exercises the attention mask and masked mean pooling.
    width = max(len(ids) for ids in ids_list)
    ids = np.zeros((len(texts), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, token_ids in enumerate(ids_list):
        ids[row, : len(token_ids)] = token_ids
        mask[row, : len(token_ids)] = 1
    (got,) = session.run(None, {"input_ids": ids, "attention_mask": mask})
    assert float(np.abs(got - _vectors(reference)).max()) < 1e-5
