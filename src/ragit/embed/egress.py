"""``security.remote_embedding_policy``: which profiles may embed at all (contract §10).

Apart from :mod:`ragit.embed.policy` so that a reader of the configuration (``status``'s
cache summary) judges it without importing the provider base and the cached embedder.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ragit.contract.errors import InputInvalid
from ragit.embed.profile import EmbeddingProfile, as_mapping

RemotePolicy = Literal["allow-sanitized", "local-only"]

REMOTE_POLICIES: tuple[str, ...] = ("allow-sanitized", "local-only")


def remote_policy(security_cfg: Mapping[str, object] | Any) -> RemotePolicy:
    """``security.remote_embedding_policy`` (default ``allow-sanitized``).

    Raises:
        InputInvalid: an unknown value.
    """
    value = as_mapping(security_cfg).get("remote_embedding_policy", "allow-sanitized")
    if value is None:
        return "allow-sanitized"
    if value == "allow-sanitized":
        return "allow-sanitized"
    if value == "local-only":
        return "local-only"
    raise InputInvalid(
        "security.remote_embedding_policy", "must be one of: " + ", ".join(REMOTE_POLICIES)
    )


def check_egress(profile: EmbeddingProfile, policy: RemotePolicy) -> None:
    """Refuse a remote-egress profile under ``local-only``.

    Raises:
        InputInvalid: on field ``security.remote_embedding_policy``.
    """
    if policy == "local-only" and profile.egress == "remote":
        raise InputInvalid(
            "security.remote_embedding_policy",
            f"provider {profile.provider} requires remote egress but policy is local-only",
        )
