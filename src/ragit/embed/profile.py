"""Embedding profiles and the provider registry (contract §10, docs/embeddings.md).

A profile names one vector space: the provider, the model, the model's contract
version, the dimension count and the endpoint root. Vectors from two different
profiles are never mixed, so the profile's ``namespace_id`` keys the embedding
cache and is recorded in every manifest.

Providers are described by :class:`ProviderSpec` entries in a registry. The
built-in entries are ``local-placeholder``, ``ollama`` and ``openai``; another
provider (for example an offline ``local-minilm``) joins with
:func:`register_provider`, naming its factory as a lazy ``"module:attr"`` string
so that resolving a profile never imports the provider's heavy libraries.

Nothing here imports an HTTP client or touches the filesystem.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ragit.contract.errors import InputInvalid
from ragit.embed.urls import is_loopback_url, normalize_base_url

Egress = Literal["local", "remote"]
EgressRule = Literal["local", "remote", "loopback-host"]

PLACEHOLDER = "local-placeholder"
OLLAMA = "ollama"
OPENAI = "openai"

# The config default model name; with a real provider it means "the provider's default".
PLACEHOLDER_MODEL = "placeholder-v1"

# The algorithm of ragit.embed.providers.placeholder. Any change to its tokenizer,
# stop words, hashing or weights must change this string: it is part of the
# namespace id, so old cache entries and stores stop matching instead of mixing.
PLACEHOLDER_VERSION = "ngram-hash-1"

# 512 dimensions: signed feature hashing puts every word and character n-gram of a
# chunk into this many buckets, and collisions are the placeholder's noise floor.
# On the original's 108-case retrieval benchmark (vector ranking alone, mean of 6
# hash salts) nDCG@10 was 0.921 at 256, 0.946 at 512, 0.958 at 768 and 0.968 at
# 1024, while the cost per vector (normalization, store bytes, list memory) grows
# linearly. 512 takes most of the gain at twice the 256 cost.
PLACEHOLDER_DEFAULT_DIMENSIONS = 512
MIN_DIMENSIONS = 8
MAX_DIMENSIONS = 4096

DEFAULT_TIMEOUT_MS = 30_000
MIN_TIMEOUT_MS = 1
MAX_TIMEOUT_MS = 600_000


@dataclass(frozen=True)
class ModelInfo:
    """A recognized model: its vector size and the contract version of its vectors."""

    dimensions: int
    version: str


@dataclass(frozen=True)
class BatchPolicy:
    """How many texts, and how many UTF-8 bytes of text, one provider request may carry."""

    max_items: int
    max_bytes: int

    def as_dict(self) -> dict[str, int]:
        return {"maxItems": self.max_items, "maxBytes": self.max_bytes}


@dataclass(frozen=True)
class RetryPolicy:
    """Delays (ms) before each retry; the number of retries is ``len(delays_ms)``."""

    delays_ms: tuple[int, ...] = ()

    @property
    def max_attempts(self) -> int:
        return 1 + len(self.delays_ms)

    def as_dict(self, timeout_ms: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "maxAttempts": self.max_attempts,
            "delaysMs": list(self.delays_ms),
            "jitter": [0.85, 1.15] if self.delays_ms else None,
        }
        if timeout_ms is not None:
            out["timeoutMs"] = timeout_ms
        return out


# (profile, ragit.embed.base.ProviderOptions) -> ragit.embed.base.Embedder. Typed loosely so
# this module does not import the provider base (which imports it); create_provider checks
# the result's type at run time.
Factory = Callable[["EmbeddingProfile", Any], Any]


@dataclass(frozen=True)
class ProviderSpec:
    """Everything RAGit knows about one provider before importing its code.

    ``factory`` is a ``"module:attr"`` path (imported on first use) or a callable
    taking ``(profile, options)``. ``models`` lists the recognized models; when
    ``configurable_dimensions`` is set, ``embedding.dimensions`` overrides the
    model's size (the placeholder). ``cacheable`` is false for providers whose
    vectors are cheaper to compute than to read back from the cache.
    """

    name: str
    models: Mapping[str, ModelInfo]
    default_model: str
    egress: EgressRule
    batch: BatchPolicy
    retry: RetryPolicy
    factory: str | Factory
    default_base_url: str | None = None
    base_url_env: str | None = None
    credential_env: str | None = None
    cacheable: bool = True
    configurable_dimensions: bool = False
    # Whether the model's vectors carry meaning for non-English (e.g. Korean) text.
    # Retrieval leans on the keyword indexes for the parts of a question it does not cover.
    # Measured for local-placeholder and local-minilm only; for Ollama and OpenAI it is an
    # assumption (the models' own documentation), not a measurement.
    multilingual: bool = True
    # The retrieval.alpha used when the config sets none. Measured (an α sweep on the
    # benchmark, docs/benchmarks.md) for local-placeholder and local-minilm; for the other
    # providers an unmeasured default: set retrieval.alpha to override it.
    default_alpha: float = 0.3
    # The share of a chunk's vector score that is its document's (the mean of the document's
    # two best candidate cosines; ragit.retrieve.engine). Measured for local-minilm (0.5:
    # kep-dev-v1 half A 0.8833 -> 0.9000, half B 0.8692 -> 0.8787) and local-placeholder (0:
    # its n-gram cosines lost on half A); 0 for the providers where it is unmeasured.
    document_vector_weight: float = 0.0


_REGISTRY: dict[str, ProviderSpec] = {}


def register_provider(spec: ProviderSpec, *, replace: bool = False) -> None:
    """Add a provider to the registry.

    Raises:
        ValueError: a provider of that name exists and ``replace`` is false.
    """
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"embedding provider {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec


def provider_spec(name: str) -> ProviderSpec:
    """The registered spec of ``name``.

    Raises:
        InputInvalid: ``embedding.provider`` names no registered provider.
    """
    spec = _REGISTRY.get(name)
    if spec is None:
        known = ", ".join(sorted(_REGISTRY))
        raise InputInvalid("embedding.provider", f"unknown provider {name!r}; known: {known}")
    return spec


def registered_providers() -> list[str]:
    """Names of every registered provider, sorted."""
    return sorted(_REGISTRY)


register_provider(
    ProviderSpec(
        name=PLACEHOLDER,
        models={PLACEHOLDER_MODEL: ModelInfo(PLACEHOLDER_DEFAULT_DIMENSIONS, PLACEHOLDER_VERSION)},
        default_model=PLACEHOLDER_MODEL,
        egress="local",
        batch=BatchPolicy(max_items=256, max_bytes=4 * 1024 * 1024),
        retry=RetryPolicy(),
        factory="ragit.embed.providers.placeholder:PlaceholderEmbedder",
        cacheable=False,
        configurable_dimensions=True,
    )
)
register_provider(
    ProviderSpec(
        name=OLLAMA,
        models={
            "nomic-embed-text": ModelInfo(768, "ollama-nomic-embed-text-768"),
            "mxbai-embed-large": ModelInfo(1024, "ollama-mxbai-embed-large-1024"),
        },
        default_model="nomic-embed-text",
        egress="loopback-host",
        batch=BatchPolicy(max_items=32, max_bytes=256 * 1024),
        retry=RetryPolicy((150, 300, 600, 1200, 2400)),
        factory="ragit.embed.providers.ollama:OllamaEmbedder",
        default_base_url="http://127.0.0.1:11434",
        base_url_env="OLLAMA_BASE_URL",
        # Unmeasured defaults: the tests run Ollama's API against a loopback fake, which
        # checks the protocol and cannot tell retrieval quality.
        multilingual=True,
        default_alpha=0.3,
    )
)
register_provider(
    ProviderSpec(
        name=OPENAI,
        models={
            "text-embedding-3-small": ModelInfo(1536, "openai-text-embedding-3-small-1536"),
            "text-embedding-3-large": ModelInfo(3072, "openai-text-embedding-3-large-3072"),
        },
        default_model="text-embedding-3-small",
        egress="remote",
        batch=BatchPolicy(max_items=96, max_bytes=1024 * 1024),
        retry=RetryPolicy((250, 500, 1000, 2000)),
        factory="ragit.embed.providers.openai:OpenAIEmbedder",
        default_base_url="https://api.openai.com",
        base_url_env="OPENAI_BASE_URL",
        credential_env="OPENAI_API_KEY",
        # Unmeasured defaults, as for Ollama (a loopback fake cannot tell quality).
        multilingual=True,
        default_alpha=0.3,
    )
)


register_provider(
    ProviderSpec(
        name="local-minilm",
        models={
            # The version names the numeric path: fp32 and int8 vectors never share a namespace.
            "all-MiniLM-L6-v2": ModelInfo(384, "minilm-l6-v2-numpy-fp32"),
            # -2: the int8 graph run unfused (ragit.embed.minilm._ort_encoder._session).
            "all-MiniLM-L6-v2-int8": ModelInfo(384, "minilm-l6-v2-ort-int8-pc-2"),
        },
        # int8: half the ingest time of fp32 at the same ranking (every development set level
        # or within one case on both halves; docs/benchmarks.md). fp32 stays a choice.
        default_model="all-MiniLM-L6-v2-int8",
        egress="local",
        batch=BatchPolicy(max_items=64, max_bytes=1024 * 1024),
        retry=RetryPolicy(),
        factory="ragit.embed.providers.minilm:MiniLMEmbedder",
        multilingual=False,
        default_alpha=0.7,  # centre of the 0.6-0.8 plateau on the original's benchmark
        document_vector_weight=0.5,
    )
)


@dataclass(frozen=True)
class EmbeddingProfile:
    """One vector space: provider, model, contract version, size and endpoint root."""

    provider: str
    model: str
    dimensions: int
    version: str
    base_url: str | None = None

    @property
    def namespace_id(self) -> str:
        """First 16 hex of sha1(``1:provider:model:version:dimensions:baseUrl|none``)."""
        key = (
            f"1:{self.provider}:{self.model}:{self.version}:{self.dimensions}:"
            f"{self.base_url or 'none'}"
        )
        return hashlib.sha1(key.encode("utf-8"), usedforsecurity=False).hexdigest()[:16]

    @property
    def spec(self) -> ProviderSpec:
        return provider_spec(self.provider)

    @property
    def egress(self) -> Egress:
        """``remote`` when text sent to this provider may leave the machine (docs/embeddings.md)."""
        rule = self.spec.egress
        if rule == "loopback-host":
            return "local" if is_loopback_url(self.base_url) else "remote"
        return rule

    def as_dict(self) -> dict[str, Any]:
        """The profile as manifests and ``status`` show it."""
        return {
            "namespaceId": self.namespace_id,
            "provider": self.provider,
            "model": self.model,
            "dimensions": self.dimensions,
            "version": self.version,
            "baseUrl": self.base_url,
        }


@dataclass(frozen=True)
class EmbeddingSettings:
    """A resolved ``[embedding]`` section: the profile plus how to reach and cache it."""

    profile: EmbeddingProfile
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    cache_enabled: bool = True
    cache_dir: str = ".ragit/cache/embeddings"
    ignored_fields: tuple[str, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


def missing_credential(profile: EmbeddingProfile, env: Mapping[str, str]) -> str | None:
    """The environment variable ``profile`` needs but ``env`` lacks, or None.

    For ``doctor``'s ``embedding.credentials`` check; credentials are never read
    from config.
    """
    variable = profile.spec.credential_env
    if variable is None or env.get(variable, "").strip():
        return None
    return variable


def as_mapping(cfg: object) -> Mapping[str, Any]:
    """A config section as a mapping (accepts a plain mapping or a pydantic section)."""
    if cfg is None:
        return {}
    if isinstance(cfg, Mapping):
        return cfg
    dump = getattr(cfg, "model_dump", None)
    if callable(dump):
        dumped = dump()
        if isinstance(dumped, Mapping):
            return dumped
    raise TypeError(f"expected a mapping or a pydantic model, got {type(cfg).__name__}")


def _opt_str(cfg: Mapping[str, Any], key: str) -> str | None:
    value = cfg.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputInvalid(f"embedding.{key}", "must be a string")
    return value


def _opt_int(cfg: Mapping[str, Any], key: str, low: int, high: int) -> int | None:
    value = cfg.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputInvalid(f"embedding.{key}", "must be an integer")
    if not low <= value <= high:
        raise InputInvalid(f"embedding.{key}", f"must be between {low} and {high}")
    return value


def resolve_profile(
    embedding_cfg: Mapping[str, object] | Any, env: Mapping[str, str] | None = None
) -> EmbeddingProfile:
    """The profile an ``[embedding]`` section selects.

    ``model = "placeholder-v1"`` (or no model) means the provider's default model.
    With ``local-placeholder`` the dimension count comes from ``embedding.dimensions``
    (default 512, range 8..4096); real providers take it from the model table and
    ignore the legacy ``dimensions`` knob. The base URL comes from
    ``embedding.base_url``, else the provider's environment variable
    (``OLLAMA_BASE_URL`` / ``OPENAI_BASE_URL``), else the provider's default root.

    Raises:
        InputInvalid: unknown provider or model, a bad base URL, or dimensions out of range.
    """
    return resolve_settings(embedding_cfg, env).profile


def resolve_settings(
    embedding_cfg: Mapping[str, object] | Any, env: Mapping[str, str] | None = None
) -> EmbeddingSettings:
    """Resolve a whole ``[embedding]`` section (see :func:`resolve_profile`).

    Raises:
        InputInvalid: an ``embedding.*`` value is invalid.
    """
    cfg = as_mapping(embedding_cfg)
    environ: Mapping[str, str] = env if env is not None else {}
    provider = _opt_str(cfg, "provider") or PLACEHOLDER
    spec = provider_spec(provider)
    ignored: list[str] = []

    model = _opt_str(cfg, "model")
    if model is None or model == PLACEHOLDER_MODEL:
        model = spec.default_model
    info = spec.models.get(model)
    if info is None:
        known = ", ".join(sorted(spec.models))
        raise InputInvalid(
            "embedding.model", f"unknown model {model!r} for provider {provider}; known: {known}"
        )

    dims_cfg = _opt_int(cfg, "dimensions", MIN_DIMENSIONS, MAX_DIMENSIONS)
    dimensions = info.dimensions
    if spec.configurable_dimensions:
        if dims_cfg is not None:
            dimensions = dims_cfg
    elif dims_cfg is not None and dims_cfg != info.dimensions:
        ignored.append("dimensions")

    version_cfg = _opt_str(cfg, "version")
    if version_cfg is not None and version_cfg != info.version:
        raise InputInvalid(
            "embedding.version",
            f"version {version_cfg!r} is not implemented for {provider}/{model}; "
            f"this ragit produces {info.version!r}",
        )

    base_url: str | None = None
    raw_url = _opt_str(cfg, "base_url")
    if spec.default_base_url is None:
        if raw_url:
            ignored.append("base_url")
    elif raw_url is not None and raw_url.strip():
        base_url = normalize_base_url(raw_url)
    elif spec.base_url_env and environ.get(spec.base_url_env, "").strip():
        base_url = normalize_base_url(
            environ[spec.base_url_env], f"embedding.base_url (from {spec.base_url_env})"
        )
    else:
        base_url = spec.default_base_url

    timeout_ms = _opt_int(cfg, "timeout_ms", MIN_TIMEOUT_MS, MAX_TIMEOUT_MS) or DEFAULT_TIMEOUT_MS
    cache_enabled = cfg.get("cache_enabled", True)
    if not isinstance(cache_enabled, bool):
        raise InputInvalid("embedding.cache_enabled", "must be true or false")
    cache_dir = _opt_str(cfg, "cache_dir") or ".ragit/cache/embeddings"
    if not cache_dir.strip() or "\x00" in cache_dir:
        raise InputInvalid("embedding.cache_dir", "must be a non-empty path")

    profile = EmbeddingProfile(
        provider=provider,
        model=model,
        dimensions=dimensions,
        version=info.version,
        base_url=base_url,
    )
    return EmbeddingSettings(
        profile=profile,
        timeout_ms=timeout_ms,
        cache_enabled=cache_enabled,
        cache_dir=cache_dir,
        ignored_fields=tuple(ignored),
        config=dict(cfg),
    )


def complete_profile(
    partial: Mapping[str, Any], embedding_cfg: Mapping[str, object] | Any
) -> dict[str, Any]:
    """The full profile (``version``, ``baseUrl``) of a manifest's ``embedding`` block, which
    names only the namespace, provider, model and dimensions (a snapshot read from the shared
    store carries no more). The version is the one this RAGit produces for the model and the
    endpoint the configured one or the provider's default, kept only when the namespace id
    they give is the manifest's. A block that names only the namespace (a snapshot
    republished in another namespace by ``ragit migrate embeddings``) is the configured
    profile when its namespace id is that one. Otherwise ``partial`` is returned as it is
    (and :func:`profile_from_store` then asks for a migration).
    """
    if "version" in partial:
        return dict(partial)
    with contextlib.suppress(InputInvalid):
        configured = resolve_profile(as_mapping(embedding_cfg))
        if configured.namespace_id == partial.get("namespaceId"):
            return configured.as_dict()
    provider, model, dimensions = (
        partial.get("provider"),
        partial.get("model"),
        partial.get("dimensions"),
    )
    spec = _REGISTRY.get(provider) if isinstance(provider, str) else None
    info = spec.models.get(model) if spec is not None and isinstance(model, str) else None
    if spec is None or info is None or not isinstance(dimensions, int):
        return dict(partial)
    cfg = dict(as_mapping(embedding_cfg))
    bases: list[str | None] = [None]
    if spec.default_base_url is not None:
        raw = cfg.get("base_url") if cfg.get("provider") == provider else None
        bases = [spec.default_base_url]
        if isinstance(raw, str) and raw.strip():
            with contextlib.suppress(InputInvalid):  # a bad URL: the default endpoint only
                bases.insert(0, normalize_base_url(raw))
    for base in bases:
        candidate = EmbeddingProfile(str(provider), str(model), dimensions, info.version, base)
        if candidate.namespace_id == partial.get("namespaceId"):
            return candidate.as_dict()
    return dict(partial)


def profile_from_store(
    store_profile: Mapping[str, Any], embedding_cfg: Mapping[str, object] | Any
) -> dict[str, Any]:
    """An ``[embedding]`` mapping that reproduces the profile a store was built with.

    Queries must embed in the store's vector space, whatever the config says now;
    timeout and cache settings still come from ``embedding_cfg``. The result can be
    passed to :func:`build_embedder <ragit.embed.build_embedder>`.

    Raises:
        EmbeddingMigrationRequired: this ragit cannot produce vectors of the store's
            profile (unknown provider, model or version); the store must be migrated.
    """
    from ragit.contract.errors import EmbeddingMigrationRequired

    cfg = dict(as_mapping(embedding_cfg))
    provider = store_profile.get("provider")
    model = store_profile.get("model")
    configured: dict[str, Any]
    try:
        configured = resolve_profile(cfg).as_dict()
    except InputInvalid:
        configured = {k: cfg.get(k) for k in ("provider", "model", "dimensions")}
    spec = _REGISTRY.get(provider) if isinstance(provider, str) else None
    info = spec.models.get(model) if spec is not None and isinstance(model, str) else None
    if spec is None or info is None or store_profile.get("version") != info.version:
        raise EmbeddingMigrationRequired(dict(store_profile), configured)
    cfg.update(
        provider=provider,
        model=model,
        dimensions=store_profile.get("dimensions"),
        version=store_profile.get("version"),
        base_url=store_profile.get("baseUrl") if spec.default_base_url else None,
    )
    try:
        resolved = resolve_profile(cfg)
    except InputInvalid as exc:
        raise EmbeddingMigrationRequired(dict(store_profile), configured) from exc
    expected = store_profile.get("namespaceId")
    if expected is not None and expected != resolved.namespace_id:
        raise EmbeddingMigrationRequired(dict(store_profile), configured)
    return cfg
