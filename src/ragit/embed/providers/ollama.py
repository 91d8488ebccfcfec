"""``ollama``: ``POST <root>/api/embed`` with ``{"model", "input": [...]}``.

The answer is ``{"embeddings": [[...], ...]}`` in input order; the count must
match exactly. Loopback roots (the default ``http://127.0.0.1:11434``) are local
egress, any other host is remote (docs/embeddings.md).
"""

from __future__ import annotations

from ragit.embed.base import ProviderOptions, Vector
from ragit.embed.profile import EmbeddingProfile
from ragit.embed.providers._http import HttpEmbedder


class OllamaEmbedder(HttpEmbedder):
    """The Ollama embedding API."""

    def __init__(self, profile: EmbeddingProfile, options: ProviderOptions | None = None) -> None:
        super().__init__(profile, options)
        root = profile.base_url or profile.spec.default_base_url or ""
        self._url = f"{root}/api/embed"

    def _embed_batch(self, texts: list[str]) -> list[Vector]:
        answer = self._post_json(self._url, {"model": self._profile.model, "input": texts}, {})
        if not isinstance(answer, dict) or "embeddings" not in answer:
            raise self.fail("response_invalid: unexpected shape")
        return self._vectors(answer["embeddings"])
