"""``openai``: ``POST <root>/v1/embeddings`` with ``{"model", "input": [...]}``.

The key is read from ``OPENAI_API_KEY`` in the environment only, and its absence
is reported before any request. The answer's ``data[]`` items are put back in
input order by their ``index``; a missing, repeated or out-of-range index is an
invalid answer. A root that already ends in ``/v1`` (the OpenAI SDK's convention
for ``OPENAI_BASE_URL``) is not given a second ``/v1``.
"""

from __future__ import annotations

from ragit.contract.errors import EmbeddingCredentialsMissing
from ragit.embed.base import ProviderOptions, Vector
from ragit.embed.profile import EmbeddingProfile
from ragit.embed.providers._http import HttpEmbedder

API_KEY_ENV = "OPENAI_API_KEY"


class OpenAIEmbedder(HttpEmbedder):
    """The OpenAI embeddings API (or a compatible server at another root)."""

    def __init__(self, profile: EmbeddingProfile, options: ProviderOptions | None = None) -> None:
        super().__init__(profile, options)
        root = profile.base_url or profile.spec.default_base_url or ""
        self._url = f"{root}/embeddings" if root.endswith("/v1") else f"{root}/v1/embeddings"

    def _embed_batch(self, texts: list[str]) -> list[Vector]:
        key = self._options.env.get(API_KEY_ENV, "").strip()
        if not key:
            raise EmbeddingCredentialsMissing(self._profile.provider, API_KEY_ENV)
        answer = self._post_json(
            self._url,
            {"model": self._profile.model, "input": texts},
            {"Authorization": f"Bearer {key}"},
        )
        if not isinstance(answer, dict) or not isinstance(answer.get("data"), list):
            raise self.fail("response_invalid: unexpected shape")
        items = answer["data"]
        if len(items) != len(texts):
            raise self.fail(
                f"response_invalid: wrong cardinality (expected {len(texts)}, got {len(items)})"
            )
        ordered: list[object] = [None] * len(texts)
        seen: set[int] = set()
        for item in items:
            index = item.get("index") if isinstance(item, dict) else None
            if type(index) is not int or not 0 <= index < len(texts):
                raise self.fail("response_invalid: missing or out-of-range index")
            if index in seen:
                raise self.fail("response_invalid: duplicate index")
            seen.add(index)
            ordered[index] = item.get("embedding")
        return self._vectors(ordered)
