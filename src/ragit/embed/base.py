"""The provider interface: deduplication, batching and response validation.

A concrete provider implements :meth:`Embedder._embed_batch` for one batch that
already respects its limits. :meth:`Embedder.embed` does the rest for every
provider alike: it embeds each distinct text once, cuts the distinct texts into
batches by item count and by UTF-8 bytes (docs/embeddings.md), checks every answer (one
vector per text, the profile's dimension, finite numbers) and restores the
caller's order. A wrong answer is an :class:`EmbeddingProviderFailed` that is
never retried and never quotes the input text; there is no zero-vector fallback.
"""

from __future__ import annotations

import math
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from ragit.contract.errors import EmbeddingProviderFailed
from ragit.embed.profile import DEFAULT_TIMEOUT_MS, BatchPolicy, EmbeddingProfile

Vector = list[float]


@dataclass(frozen=True)
class ProviderOptions:
    """Runtime knobs a provider factory receives besides the profile.

    ``sleep`` and ``jitter`` exist so the retry schedule can be observed without
    waiting; ``env`` is where credentials are read (never from config);
    ``config`` is the raw ``[embedding]`` section for provider-specific keys.
    """

    timeout_ms: int = DEFAULT_TIMEOUT_MS
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    sleep: Callable[[float], None] = time.sleep
    jitter: Callable[[float, float], float] = random.uniform
    config: Mapping[str, Any] = field(default_factory=dict, repr=False)


class Embedder(ABC):
    """Turns texts into vectors of one :class:`EmbeddingProfile`."""

    def __init__(self, profile: EmbeddingProfile, batch: BatchPolicy | None = None) -> None:
        self._profile = profile
        self._batch = batch or profile.spec.batch
        # Provider requests attempted (HTTP attempts, retries included; one per
        # computed batch for in-process providers).
        self.requests_sent = 0

    @property
    def profile(self) -> EmbeddingProfile:
        return self._profile

    @property
    def batch_policy(self) -> BatchPolicy:
        return self._batch

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in order; identical texts are embedded once.

        Raises:
            EmbeddingProviderFailed: the provider failed or answered wrongly.
            EmbeddingCredentialsMissing: the provider needs a credential that is not set.
        """
        if not texts:
            return []
        slot: dict[str, int] = {}
        order = [slot.setdefault(text, len(slot)) for text in texts]
        unique = list(slot)
        for text in unique:
            if not isinstance(text, str):
                raise TypeError(f"embed() takes strings, got {type(text).__name__}")
        vectors: list[Vector] = []
        for batch in self._batches(unique):
            answer = self._embed_batch(batch)
            self._check(batch, answer)
            vectors.extend(answer)
        if len(unique) == len(texts):
            return vectors
        return [vectors[i] for i in order]

    def close(self) -> None:  # noqa: B027 - optional hook; in-process providers hold nothing
        """Release connections (no-op for in-process providers)."""

    def __enter__(self) -> Embedder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> list[Vector]:
        """Vectors for one batch of distinct texts, in the same order."""

    def fail(self, reason: str, *, retryable: bool = False) -> EmbeddingProviderFailed:
        """The typed failure of this provider; ``reason`` must not contain input text."""
        return EmbeddingProviderFailed(
            self._profile.provider, self._profile.model, reason, retryable=retryable
        )

    def _batches(self, texts: list[str]) -> Iterator[list[str]]:
        """Greedy batches within both limits; a text larger than ``max_bytes`` goes alone."""
        limit_items = self._batch.max_items
        limit_bytes = self._batch.max_bytes
        batch: list[str] = []
        size = 0
        for text in texts:
            n = len(text) if text.isascii() else len(text.encode("utf-8"))
            if batch and (len(batch) >= limit_items or size + n > limit_bytes):
                yield batch
                batch, size = [], 0
            batch.append(text)
            size += n
        if batch:
            yield batch

    def _check(self, batch: list[str], answer: object) -> None:
        if not isinstance(answer, list) or len(answer) != len(batch):
            got = len(answer) if isinstance(answer, list) else "none"
            raise self.fail(
                f"response_invalid: wrong cardinality (expected {len(batch)}, got {got})"
            )
        dims = self._profile.dimensions
        for vector in answer:
            if not isinstance(vector, list):
                raise self.fail("response_invalid: a vector is not an array")
            if len(vector) != dims:
                raise self.fail(f"dimension_mismatch: expected {dims}, got {len(vector)}")
            # sum() is C-speed and propagates NaN and infinities; a TypeError means
            # a non-number slipped through.
            try:
                total = sum(vector)
            except TypeError:
                raise self.fail("response_invalid: non-numeric value") from None
            if not math.isfinite(total):
                raise self.fail("response_invalid: non-finite value")
