"""Pydantic building blocks shared by every contract model.

Wire casing is camelCase (contract.md preamble); Python attributes stay
snake_case. Input models forbid unknown keys; output models are dumped with
``dump()`` so every command serializes the same way.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """Output model: camelCase on the wire, attribute names in Python."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    def dump(self) -> dict[str, Any]:
        """JSON-ready dict with wire (camelCase) keys."""
        return self.model_dump(mode="json", by_alias=True)


class InputModel(BaseModel):
    """Strict input model for ``--input`` payloads and MCP tool arguments."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=False,
        extra="forbid",
        strict=True,
        frozen=True,
    )
