"""Names and version of the ONNX encoder graph, importable without onnx.

Opening an already built int8 model needs only these; importing ``onnx`` (which
pulls ``ml_dtypes``, about 0.5 CPU-seconds) is left to building it.
"""

from __future__ import annotations

# Bump whenever the graph or its quantization changes, so cached builds are redone.
BUILDER_VERSION = 1
INPUT_IDS = "input_ids"
ATTENTION_MASK = "attention_mask"
OUTPUT = "sentence_embedding"
