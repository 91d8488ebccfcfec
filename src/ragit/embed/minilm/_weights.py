"""Reading ``model.safetensors`` into numpy arrays."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ragit.embed.minilm._errors import EmbeddingModelInvalid
from ragit.embed.minilm._locate import ModelFiles


def load_weights(files: ModelFiles) -> dict[str, NDArray[np.float32]]:
    """Every fp32 tensor of ``model.safetensors``, C-contiguous.

    Raises:
        EmbeddingModelInvalid: the file is not a readable safetensors file.
    """
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        raw = load_file(str(files.weights))
    except (OSError, SafetensorError) as exc:
        raise EmbeddingModelInvalid(str(files.weights), "model.safetensors does not load") from exc
    return {
        name: np.ascontiguousarray(value, dtype=np.float32)
        for name, value in raw.items()
        if value.dtype == np.float32
    }


def tensor(
    weights: dict[str, NDArray[np.float32]], files: ModelFiles, name: str
) -> NDArray[np.float32]:
    """One named tensor.

    Raises:
        EmbeddingModelInvalid: the tensor is missing.
    """
    try:
        return weights[name]
    except KeyError:
        raise EmbeddingModelInvalid(str(files.weights), f"tensor {name} is missing") from None
