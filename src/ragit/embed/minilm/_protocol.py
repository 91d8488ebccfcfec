"""The surface both MiniLM encoders offer to the embedding provider."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ragit.embed.minilm._locate import ModelFiles


class Encoder(Protocol):
    """A loaded MiniLM encoder: texts in, unit-length 384-float rows out."""

    @property
    def numeric_path(self) -> str:
        """``numpy-fp32`` or ``ort-int8-pc``: vectors from different paths differ slightly."""
        ...

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def files(self) -> ModelFiles: ...

    def token_ids(self, text: str) -> list[int]:
        """The (truncated) token ids the model sees for ``text``."""
        ...

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One L2-normalized row per text, in input order."""
        ...
