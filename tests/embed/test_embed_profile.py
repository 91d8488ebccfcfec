"""Embedding profiles: resolution from config, namespace ids, egress, the registry."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from ragit.contract.errors import InputInvalid, RagitError
from ragit.embed import (
    PLACEHOLDER_DEFAULT_DIMENSIONS,
    PLACEHOLDER_VERSION,
    EmbeddingProfile,
    profile_from_store,
    resolve_profile,
    resolve_settings,
)
from ragit.embed.urls import is_loopback_url, normalize_base_url


def test_namespace_id_is_sha1_of_the_profile_key() -> None:
    """Contract-mandated (docs/embeddings.md): first 16 hex of
    sha1(1:provider:model:version:dims:baseUrl)."""
    profile = EmbeddingProfile(
        "ollama", "nomic-embed-text", 768, "ollama-nomic-embed-text-768", "http://127.0.0.1:11434"
    )
    key = "1:ollama:nomic-embed-text:ollama-nomic-embed-text-768:768:http://127.0.0.1:11434"
    assert profile.namespace_id == hashlib.sha1(key.encode()).hexdigest()[:16]
    placeholder = resolve_profile({}, {})
    key = f"1:local-placeholder:placeholder-v1:{PLACEHOLDER_VERSION}:512:none"
    assert placeholder.namespace_id == hashlib.sha1(key.encode()).hexdigest()[:16]


def test_default_profile_is_the_placeholder() -> None:
    """Contract-mandated (§10): local-placeholder is the default, offline, local egress."""
    profile = resolve_profile({}, {})
    assert profile.as_dict() == {
        "namespaceId": profile.namespace_id,
        "provider": "local-placeholder",
        "model": "placeholder-v1",
        "dimensions": PLACEHOLDER_DEFAULT_DIMENSIONS,
        "version": PLACEHOLDER_VERSION,
        "baseUrl": None,
    }
    assert profile.egress == "local"


@pytest.mark.parametrize(
    ("provider", "model", "dims", "version"),
    [
        ("ollama", "nomic-embed-text", 768, "ollama-nomic-embed-text-768"),
        ("openai", "text-embedding-3-small", 1536, "openai-text-embedding-3-small-1536"),
    ],
)
def test_placeholder_model_name_maps_to_the_provider_default(
    provider: str, model: str, dims: int, version: str
) -> None:
    """Contract-mandated (docs/config.md): model placeholder-v1 means the provider's default
    model."""
    for cfg in ({"provider": provider, "model": "placeholder-v1"}, {"provider": provider}):
        profile = resolve_profile(cfg, {})
        assert (profile.model, profile.dimensions, profile.version) == (model, dims, version)


def test_known_models_have_their_fixed_dimensions() -> None:
    """Contract-mandated (docs/embeddings.md): the four recognized remote models and their sizes."""
    sizes = {
        ("ollama", "mxbai-embed-large"): 1024,
        ("openai", "text-embedding-3-large"): 3072,
    }
    for (provider, model), dims in sizes.items():
        profile = resolve_profile({"provider": provider, "model": model, "dimensions": 99}, {})
        assert profile.dimensions == dims
    settings = resolve_settings({"provider": "openai", "dimensions": 99}, {})
    assert settings.ignored_fields == ("dimensions",)


@pytest.mark.parametrize(
    ("cfg", "field"),
    [
        ({"provider": "cohere"}, "embedding.provider"),
        ({"provider": "ollama", "model": "llama3"}, "embedding.model"),
        ({"provider": "local-placeholder", "model": "text-embedding-3-small"}, "embedding.model"),
        ({"dimensions": 4}, "embedding.dimensions"),
        ({"dimensions": 5000}, "embedding.dimensions"),
        ({"dimensions": True}, "embedding.dimensions"),
        ({"dimensions": "512"}, "embedding.dimensions"),
        ({"timeout_ms": 0}, "embedding.timeout_ms"),
        ({"cache_enabled": "yes"}, "embedding.cache_enabled"),
        ({"version": "v1"}, "embedding.version"),
    ],
)
def test_invalid_embedding_config_is_input_invalid(cfg: dict[str, Any], field: str) -> None:
    """Contract-mandated (§3): bad embedding config is INPUT_INVALID naming the field."""
    with pytest.raises(InputInvalid) as info:
        resolve_settings(cfg, {})
    assert info.value.details["field"] == field


def test_placeholder_dimensions_come_from_config() -> None:
    """Contract-mandated (docs/embeddings.md): placeholder dimensions are configurable (8..4096)."""
    assert resolve_profile({"dimensions": 8}, {}).dimensions == 8
    assert resolve_profile({"dimensions": 4096}, {}).dimensions == 4096
    a = resolve_profile({"dimensions": 256}, {})
    b = resolve_profile({"dimensions": 512}, {})
    assert a.namespace_id != b.namespace_id


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("http://127.0.0.1:11434/", "http://127.0.0.1:11434"),
        ("HTTPS://API.Example.COM//", "https://api.example.com"),
        ("https://gateway.example/openai///", "https://gateway.example/openai"),
        ("http://[::1]:8080", "http://[::1]:8080"),
    ],
)
def test_base_url_is_normalized(raw: str, normalized: str) -> None:
    """Contract-mandated (docs/embeddings.md): trailing slashes trimmed; scheme and host
    canonical."""
    assert normalize_base_url(raw) == normalized


@pytest.mark.parametrize(
    "raw",
    [
        "ftp://example.com",
        "example.com:11434",
        "/relative/path",
        "http://user:hunter2@example.com",
        "http://example.com/?token=abc",
        "http://example.com/#frag",
        "http://exa mple.com",
        "http://example.com:99999",
        "http://",
    ],
)
def test_base_url_rules_reject_without_echoing_the_value(raw: str) -> None:
    """Contract-mandated (docs/embeddings.md): absolute http(s), no userinfo/query/fragment."""
    with pytest.raises(InputInvalid) as info:
        resolve_profile({"provider": "ollama", "base_url": raw}, {})
    assert info.value.details["field"] == "embedding.base_url"
    assert "hunter2" not in info.value.message
    assert "token=abc" not in info.value.message


def test_base_url_falls_back_to_the_provider_environment_variable() -> None:
    """Contract-mandated (docs/config.md): OLLAMA_BASE_URL / OPENAI_BASE_URL when config has
    none."""
    env = {"OLLAMA_BASE_URL": "http://gpu-box:11434/", "OPENAI_BASE_URL": "https://proxy.example"}
    assert resolve_profile({"provider": "ollama"}, env).base_url == "http://gpu-box:11434"
    assert resolve_profile({"provider": "openai"}, env).base_url == "https://proxy.example"
    configured = {"provider": "ollama", "base_url": "http://localhost:1"}
    assert resolve_profile(configured, env).base_url == "http://localhost:1"
    assert resolve_profile({"provider": "ollama"}, {}).base_url == "http://127.0.0.1:11434"
    assert resolve_profile({"provider": "openai"}, {}).base_url == "https://api.openai.com"
    with pytest.raises(InputInvalid) as info:
        resolve_profile({"provider": "openai"}, {"OPENAI_BASE_URL": "https://u:p@x.example"})
    assert info.value.details["field"] == "embedding.base_url"


@pytest.mark.parametrize(
    ("url", "egress"),
    [
        ("http://127.0.0.1:11434", "local"),
        ("http://localhost:11434", "local"),
        ("http://[::1]:11434", "local"),
        ("http://127.0.0.9:11434", "local"),
        ("http://127.0.0.1.evil.com:11434", "remote"),
        ("http://localhost.evil.com", "remote"),
        ("http://evil.com/127.0.0.1", "remote"),
        ("http://10.255.255.1:9", "remote"),
        ("http://gpu-box:11434", "remote"),
    ],
)
def test_ollama_egress_is_local_only_for_loopback_hosts(url: str, egress: str) -> None:
    """Contract-mandated (docs/embeddings.md): the host is parsed, never substring-matched."""
    assert resolve_profile({"provider": "ollama", "base_url": url}, {}).egress == egress


def test_openai_is_always_remote_and_the_placeholder_always_local() -> None:
    """Contract-mandated (docs/embeddings.md): egress classes of the fixed providers."""
    openai = resolve_profile({"provider": "openai", "base_url": "http://127.0.0.1:1"}, {})
    assert openai.egress == "remote"
    assert resolve_profile({"base_url": "https://x.example"}, {}).egress == "local"
    assert not is_loopback_url(None)
    assert not is_loopback_url("not a url")


def test_config_sections_from_ragit_config_are_accepted() -> None:
    """Implementation choice: the pydantic [embedding] section works like a mapping."""
    from ragit.config import RagitConfig

    cfg = RagitConfig()
    settings = resolve_settings(cfg.embedding, {})
    assert settings.profile.provider == "local-placeholder"
    assert settings.cache_dir == ".ragit/cache/embeddings"


def test_store_profile_round_trips_to_the_same_namespace() -> None:
    """Implementation choice: queries embed with the store's profile, not the current config."""
    store = resolve_profile({"provider": "ollama", "base_url": "http://localhost:1"}, {})
    cfg = profile_from_store(store.as_dict(), {"provider": "openai", "timeout_ms": 1234})
    again = resolve_settings(cfg, {})
    assert again.profile == store
    assert again.timeout_ms == 1234


def test_store_profile_of_another_placeholder_version_requires_migration() -> None:
    """Contract-mandated (docs/embeddings.md): vectors of an unknown version are never mixed."""
    from ragit.contract.errors import EmbeddingMigrationRequired

    stored = resolve_profile({}, {}).as_dict() | {"version": "v1", "namespaceId": "0" * 16}
    with pytest.raises(EmbeddingMigrationRequired):
        profile_from_store(stored, {})
    with pytest.raises(EmbeddingMigrationRequired):
        profile_from_store({"provider": "cohere", "model": "x", "version": "1"}, {})


def test_missing_credential_names_the_variable_only_for_providers_that_need_one() -> None:
    """Contract-mandated (§3): credentials come from the environment only."""
    from ragit.embed import missing_credential

    openai = resolve_profile({"provider": "openai"}, {})
    assert missing_credential(openai, {}) == "OPENAI_API_KEY"
    assert missing_credential(openai, {"OPENAI_API_KEY": " "}) == "OPENAI_API_KEY"
    assert missing_credential(openai, {"OPENAI_API_KEY": "sk-x"}) is None
    assert missing_credential(resolve_profile({"provider": "ollama"}, {}), {}) is None
    assert missing_credential(resolve_profile({}, {}), {}) is None


def test_complete_profile_restores_the_version_a_manifest_block_omits() -> None:
    """A snapshot read from the shared store carries only the manifest's ``embedding`` block
    (namespace, provider, model, dimensions): the full profile is the one whose namespace id
    is the block's, with the configured endpoint or the provider's default; a block no
    profile of this RAGit reproduces stays as it is (and a query then asks for a migration)."""
    from ragit.embed import complete_profile, profile_from_store, resolve_profile

    for cfg in (
        {"provider": "local-placeholder", "model": "placeholder-v1", "dimensions": 64},
        {"provider": "ollama", "model": "nomic-embed-text"},
        {"provider": "ollama", "model": "nomic-embed-text", "base_url": "http://127.0.0.1:9/o"},
    ):
        full = resolve_profile(cfg).as_dict()
        block = {k: full[k] for k in ("namespaceId", "provider", "model", "dimensions")}
        assert complete_profile(block, cfg) == full
        assert complete_profile(full, cfg) == full
        profile_from_store(complete_profile(block, cfg), cfg)  # reproducible: no error

    other = {"namespaceId": "0" * 16, "provider": "local-placeholder", "model": "placeholder-v1"}
    assert complete_profile({**other, "dimensions": 64}, {}) == {**other, "dimensions": 64}
    with pytest.raises(RagitError) as caught:
        profile_from_store(complete_profile({**other, "dimensions": 64}, {}), {})
    assert caught.value.code == "EMBEDDING_MIGRATION_REQUIRED"
