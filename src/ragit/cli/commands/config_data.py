"""The shapes of the `ragit config` commands' data for ``describe`` (pydantic models: loaded
when the contract is generated, never by the commands, which build plain records)."""

from __future__ import annotations

from typing import Any

from ragit.contract.models import WireModel


class ConfigSetData(WireModel):
    """Result of `config set`."""

    key: str
    value: Any
    previous: Any
    changed: bool
    dry_run: bool
    path: str


class ConfigUnsetData(WireModel):
    """Result of `config unset`."""

    key: str
    previous: Any
    removed: bool
    dry_run: bool
    path: str


class ConfigEntry(WireModel):
    """One key: its value, its default, whether the file sets it, and the value in force
    with its source (file, default, provider, environment, contract, terminal)."""

    key: str
    value: Any
    default: Any
    set: bool
    in_force: Any
    source: str
    source_detail: str | None


class ConfigListData(WireModel):
    """Every key RAGit honours (`config list`)."""

    path: str
    entries: list[ConfigEntry]
