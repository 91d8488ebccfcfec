"""The all-MiniLM-L6-v2 sentence encoder as an ONNX graph, built without torch.

The graph is written node by node with ``onnx.helper`` straight from the
safetensors tensors (opset 17): embeddings, six post-LayerNorm BERT layers
with an erf GELU, masked mean pooling and L2 normalization. It takes
``input_ids`` and ``attention_mask`` (int64, batch x tokens) and returns
``sentence_embedding`` (float, batch x 384). Bump :data:`BUILDER_VERSION`
(in :mod:`._graph_names`) whenever the graph or its quantization changes, so
cached builds are redone.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
from numpy.typing import NDArray
from onnx import TensorProto, helper, numpy_helper

from ragit.embed.minilm._graph_names import ATTENTION_MASK, BUILDER_VERSION, INPUT_IDS, OUTPUT

__all__ = [
    "ATTENTION_MASK",
    "BUILDER_VERSION",
    "INPUT_IDS",
    "OPSET",
    "OUTPUT",
    "build_model",
    "smoothing_scales",
]

OPSET = 17

_HIDDEN = 384
_HEADS = 12
_HEAD_DIM = _HIDDEN // _HEADS
_LAYERS = 6
_LN_EPS = 1e-12


class _Graph:
    """Collects nodes and initializers, naming every value uniquely."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def const(self, name: str, value: NDArray[Any]) -> str:
        self.initializers.append(numpy_helper.from_array(value, name=name))
        return name

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def linear(
        self,
        name: str,
        x: str,
        weight: NDArray[np.float32],
        bias: NDArray[np.float32],
        smoothing: dict[str, NDArray[np.float32]] | None,
    ) -> str:
        """``x @ weight + bias``, with the weight's rows pre-scaled when smoothing.

        Smoothing multiplies input channel j of the weight by s_j and the
        activation by 1/s_j: exact in fp32, but it moves activation outliers
        into the per-channel-quantized weights, where they cost little.
        """
        scales = None if smoothing is None else smoothing.get(name)
        if scales is not None:
            weight = weight * scales[:, None]
            x = self.op("Mul", x, self.const(f"{name}_inv_scale", _f32(1.0 / scales)))
        matmul = self.op("MatMul", x, self.const(name, _f32(weight)))
        return self.op("Add", matmul, self.const(f"{name}_bias", _f32(bias)))

    def layer_norm(self, x: str, gamma: str, beta: str) -> str:
        return self.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=_LN_EPS)


def _f32(array: NDArray[Any]) -> NDArray[np.float32]:
    return np.ascontiguousarray(array, dtype=np.float32)


def smoothing_scales(
    weights: dict[str, NDArray[np.float32]],
    input_ranges: dict[str, NDArray[np.float32]],
    alpha: float = 0.65,
) -> dict[str, NDArray[np.float32]]:
    """SmoothQuant scales s_j = max|x_j|^alpha / max|W_j|^(1-alpha) for each MatMul.

    ``input_ranges`` are per-channel activation peaks keyed ``l{i}_{wqkv|wo|w1|w2}``
    (see ``MiniLMEncoder.input_ranges``). Measured against the fp32 encoder on
    held-out text (250 RFC chunks, 36 Korean benchmark texts, the 14 reference
    sentences), alpha 0.6-0.7 was best of 0.5-0.9: mean cosine 0.997 and worst
    sentence 0.99, against 0.995 and 0.98 unsmoothed; 0.5 and 0.75+ were worse.
    """
    matrices = _weight_matrices(weights)
    scales: dict[str, NDArray[np.float32]] = {}
    for name, peaks in input_ranges.items():
        weight_peaks = np.abs(matrices[name]).max(axis=1)
        raw = np.maximum(peaks, 1e-5) ** alpha / np.maximum(weight_peaks, 1e-5) ** (1 - alpha)
        scales[name] = _f32(np.clip(raw, 1e-2, 1e2))
    return scales


def _weight_matrices(weights: dict[str, NDArray[np.float32]]) -> dict[str, NDArray[np.float32]]:
    """Each layer's MatMul weights in (in, out) layout, keyed ``l{i}_{kind}``."""
    out: dict[str, NDArray[np.float32]] = {}
    for index in range(_LAYERS):
        p = f"encoder.layer.{index}."
        out[f"l{index}_wqkv"] = np.concatenate(
            [weights[p + f"attention.self.{part}.weight"].T for part in ("query", "key", "value")],
            axis=1,
        )
        out[f"l{index}_wo"] = weights[p + "attention.output.dense.weight"].T
        out[f"l{index}_w1"] = weights[p + "intermediate.dense.weight"].T
        out[f"l{index}_w2"] = weights[p + "output.dense.weight"].T
    return out


def build_model(
    weights: dict[str, NDArray[np.float32]],
    smoothing: dict[str, NDArray[np.float32]] | None = None,
) -> onnx.ModelProto:
    """The fp32 encoder graph for the given safetensors tensors.

    With ``smoothing`` (from :func:`smoothing_scales`) the graph computes the
    same function with rebalanced MatMul inputs, ready for int8 quantization.

    Raises:
        KeyError: a tensor of the BERT layout is missing.
    """
    g = _Graph()
    i64 = np.int64
    word = g.const("word_embeddings", _f32(weights["embeddings.word_embeddings.weight"]))
    position = g.const(
        "position_embeddings", _f32(weights["embeddings.position_embeddings.weight"])
    )
    type0 = g.const("token_type0", _f32(weights["embeddings.token_type_embeddings.weight"][0]))
    zero = g.const("zero_i64", np.array(0, dtype=i64))
    one = g.const("one_i64", np.array(1, dtype=i64))
    one_f = g.const("one_f", np.array(1.0, dtype=np.float32))
    half = g.const("half_f", np.array(0.5, dtype=np.float32))
    inv_sqrt2 = g.const("inv_sqrt2_f", np.array(1.0 / math.sqrt(2.0), dtype=np.float32))
    scale = g.const("attention_scale", np.array(1.0 / math.sqrt(_HEAD_DIM), dtype=np.float32))
    neg_large = g.const("mask_fill", np.array(np.finfo(np.float32).min, dtype=np.float32))
    axes_12 = g.const("axes_1_2", np.array([1, 2], dtype=i64))
    axes_1 = g.const("axes_1", np.array([1], dtype=i64))
    axes_2 = g.const("axes_2", np.array([2], dtype=i64))
    qkv_shape = g.const("qkv_shape", np.array([0, 0, 3, _HEADS, _HEAD_DIM], dtype=i64))
    merge_shape = g.const("merge_shape", np.array([0, 0, _HIDDEN], dtype=i64))
    pick = [g.const(f"pick_{i}", np.array(i, dtype=i64)) for i in range(3)]
    count_floor = g.const("count_floor", np.array(1e-9, dtype=np.float32))
    norm_floor = g.const("norm_floor", np.array(1e-12, dtype=np.float32))

    # Embeddings: word + position + token type 0, then LayerNorm.
    length = g.op("Gather", g.op("Shape", INPUT_IDS), one, axis=0)
    positions = g.op("Range", zero, length, one)
    x = g.op("Add", g.op("Gather", word, INPUT_IDS, axis=0), g.op("Gather", position, positions))
    x = g.op("Add", x, type0)
    x = g.layer_norm(
        x,
        g.const("emb_ln_g", _f32(weights["embeddings.LayerNorm.weight"])),
        g.const("emb_ln_b", _f32(weights["embeddings.LayerNorm.bias"])),
    )

    # Additive attention bias: 0 for real tokens, float32 min for padding.
    mask = g.op("Cast", ATTENTION_MASK, to=TensorProto.FLOAT)
    bias = g.op("Mul", g.op("Sub", one_f, g.op("Unsqueeze", mask, axes_12)), neg_large)

    matrices = _weight_matrices(weights)
    for index in range(_LAYERS):
        p = f"encoder.layer.{index}."
        bqkv = np.concatenate(
            [weights[p + f"attention.self.{part}.bias"] for part in ("query", "key", "value")]
        )
        qkv = g.linear(f"l{index}_wqkv", x, matrices[f"l{index}_wqkv"], bqkv, smoothing)
        # (B, T, 1152) -> (3, B, heads, T, head_dim)
        heads = g.op("Transpose", g.op("Reshape", qkv, qkv_shape), perm=[2, 0, 3, 1, 4])
        query, key, value = (g.op("Gather", heads, pick[i], axis=0) for i in range(3))
        scores = g.op("MatMul", query, g.op("Transpose", key, perm=[0, 1, 3, 2]))
        scores = g.op("Add", g.op("Mul", scores, scale), bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), value)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge_shape)
        attended = g.linear(
            f"l{index}_wo",
            context,
            matrices[f"l{index}_wo"],
            weights[p + "attention.output.dense.bias"],
            smoothing,
        )
        x = g.layer_norm(
            g.op("Add", attended, x),
            g.const(f"l{index}_ln1_g", _f32(weights[p + "attention.output.LayerNorm.weight"])),
            g.const(f"l{index}_ln1_b", _f32(weights[p + "attention.output.LayerNorm.bias"])),
        )
        hidden = g.linear(
            f"l{index}_w1",
            x,
            matrices[f"l{index}_w1"],
            weights[p + "intermediate.dense.bias"],
            smoothing,
        )
        # Exact GELU: x * (1 + erf(x / sqrt 2)) / 2.
        erf = g.op("Erf", g.op("Mul", hidden, inv_sqrt2))
        hidden = g.op("Mul", g.op("Mul", hidden, g.op("Add", erf, one_f)), half)
        output = g.linear(
            f"l{index}_w2",
            hidden,
            matrices[f"l{index}_w2"],
            weights[p + "output.dense.bias"],
            smoothing,
        )
        x = g.layer_norm(
            g.op("Add", output, x),
            g.const(f"l{index}_ln2_g", _f32(weights[p + "output.LayerNorm.weight"])),
            g.const(f"l{index}_ln2_b", _f32(weights[p + "output.LayerNorm.bias"])),
        )

    # Mean over real tokens, then unit length (sentence-transformers' Pooling + Normalize).
    summed = g.op("ReduceSum", g.op("Mul", x, g.op("Unsqueeze", mask, axes_2)), axes_1, keepdims=0)
    count = g.op("Max", g.op("ReduceSum", mask, axes_1, keepdims=1), count_floor)
    mean = g.op("Div", summed, count)
    norm = g.op("Max", g.op("ReduceL2", mean, axes=[1], keepdims=1), norm_floor)
    g.nodes.append(helper.make_node("Div", [mean, norm], [OUTPUT]))

    graph = helper.make_graph(
        g.nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info(INPUT_IDS, TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info(ATTENTION_MASK, TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", _HIDDEN])],
        initializer=g.initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="ragit",
        producer_version=str(BUILDER_VERSION),
    )
    # Older onnxruntime releases reject newer IR versions; opset 17 needs IR 8.
    model.ir_version = 8
    return model
