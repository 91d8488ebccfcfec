"""`ragit config set`: validate and write one key of `.ragit/config.toml`.

The write half of :mod:`ragit.config` (which re-exports these names). Edits go
through tomlkit so comments, key order and every other byte of the file survive.
"""

from __future__ import annotations

import json
import re
import types
import typing
from typing import Any

from ragit import _json
from ragit._fs import atomic_write_text
from ragit.config import SECTIONS, load_config
from ragit.contract.errors import ConfigInvalid, InputInvalid
from ragit.workspace import Workspace


class ConfigSetResult:
    """Result of `config set` (its wire shape for ``describe``:
    :class:`ragit.cli.commands.config_data.ConfigSetData`)."""

    __slots__ = ("changed", "dry_run", "key", "path", "previous", "value")

    def __init__(
        self, *, key: str, value: Any, previous: Any, changed: bool, dry_run: bool, path: str
    ) -> None:
        self.key = key
        self.value = value
        self.previous = previous
        self.changed = changed
        self.dry_run = dry_run
        self.path = path

    def dump(self) -> dict[str, Any]:
        """The envelope's ``data`` (camelCase keys)."""
        return {
            "key": self.key,
            "value": self.value,
            "previous": self.previous,
            "changed": self.changed,
            "dryRun": self.dry_run,
            "path": self.path,
        }


def _coerce(section: str, key: str, raw: str) -> Any:
    model = SECTIONS[section]
    annotation = model.model_fields[key].annotation
    text = raw.strip()
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        annotation = args[0]  # Optional[X]: a value given on the command line is an X
    origin = getattr(annotation, "__origin__", None)
    if annotation is bool:
        if text not in ("true", "false"):
            raise InputInvalid("value", "must be true or false")
        return text == "true"
    if annotation is int:
        try:
            return int(text, 10)
        except ValueError:
            raise InputInvalid("value", "must be an integer") from None
    if annotation is float:
        try:
            return float(text)
        except ValueError:
            raise InputInvalid("value", "must be a number") from None
    if origin is list:
        if text.startswith("["):
            try:
                items = _json.loads(text)
            except json.JSONDecodeError:
                raise InputInvalid("value", "must be a JSON array of strings") from None
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise InputInvalid("value", "must be a JSON array of strings")
            return [i.strip() for i in items if i.strip()]
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


# Key names that would hold (part of) a connection to the shared store. Its server is named
# only by the environment; a config file is often committed, so it never holds one.
_CONNECTION_KEY = re.compile(
    r"(?:^|_)(?:url|uri|dsn|conninfo|connection|conn|password|passwd|pwd|secret|host|port|"
    r"user|username|database|dbname|service|sslmode|sslkey|sslcert)(?:$|_)"
)
_CONNECTION_VALUE = re.compile(
    r"(?i)^\s*postgres(?:ql)?://|(?:^|\s)(?:password|host|dbname|user|port|service)\s*="
)
CONNECTION_REASON = (
    "the shared store's connection is never stored in the config file: set "
    "RAGIT_DATABASE_URL (or libpq's PG* variables) in the environment"
)


def refuse_connection(dotted: str, raw: str) -> None:
    """Refuse a key (not one RAGit honours) named like a connection setting, or a value that
    is a connection string, with :data:`CONNECTION_REASON`; the value is never echoed.

    Raises:
        InputInvalid: ``field`` ``key`` or ``value``.
    """
    parts = dotted.split(".")
    known = len(parts) == 2 and parts[0] in SECTIONS and parts[1] in SECTIONS[parts[0]].model_fields
    if not known and any(_CONNECTION_KEY.search(part.lower()) for part in parts):
        raise InputInvalid("key", CONNECTION_REASON)
    if known and parts[0] == "store" and _CONNECTION_VALUE.search(raw):
        raise InputInvalid("value", CONNECTION_REASON)


def _has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


def _check_strings(dotted: str, value: Any) -> None:
    """Refuse a value that the commands reading it would reject (contract §4): a control
    character in any string, and an ingest glob that is not repository-relative.

    Raises:
        InputInvalid: ``field`` ``value`` (the value is not echoed).
    """
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, str) and _has_control(item):
            raise InputInvalid("value", "contains a control character")
    if dotted in ("ingest.doc_globs", "ingest.include", "ingest.exclude"):
        from ragit.snapshot.surface import validate_repo_glob

        for item in items:
            validate_repo_glob(str(item), "value")


def _raw_value(ws: Workspace, section: str, key: str) -> Any:
    import tomlkit

    try:
        doc = tomlkit.parse(ws.config_path.read_text(encoding="utf-8")).unwrap()
    except Exception:
        return None
    table = doc.get(section)
    return table.get(key) if isinstance(table, dict) else None


def _without_userinfo(url: str) -> str:
    """``url`` with any ``user:password@`` part replaced by ``***@`` (an older file may hold
    one; it is never echoed)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, path = rest.partition("/")
    if "@" not in authority:
        return url
    return f"{scheme}://***@{authority.rsplit('@', 1)[1]}{slash}{path}"


def set_value(ws: Workspace, dotted: str, raw: str, *, dry_run: bool) -> ConfigSetResult:
    """Validate and write one key, preserving the rest of the file byte for byte.

    Raises:
        InputInvalid: unknown key or a value of the wrong type.
        NotInitialized: the repository has no config yet.
        ConfigInvalid: the existing file cannot be parsed.
    """
    import tomlkit

    from ragit.contract.errors import NotInitialized

    refuse_connection(dotted, raw)
    parts = dotted.split(".")
    if len(parts) != 2 or parts[0] not in SECTIONS:
        raise InputInvalid("key", "unknown key; use section.key (see `ragit describe config set`)")
    section, key = parts
    if key not in SECTIONS[section].model_fields:
        raise InputInvalid("key", f"unknown key in [{section}]")
    if not ws.is_initialized():
        raise NotInitialized(str(ws.root))
    value = _coerce(section, key, raw)
    # Validate the new value on its own (defaults for the rest of the section): a file
    # that already holds an invalid value elsewhere must stay repairable with `config set`.
    model = SECTIONS[section]
    try:
        model.model_validate({key: value})  # pydantic is imported only for a value it must judge
    except Exception as exc:
        from pydantic import ValidationError

        if not isinstance(exc, ValidationError):
            raise
        first = exc.errors(include_url=False, include_input=False)[0]
        raise InputInvalid("value", str(first["msg"])) from None
    _check_strings(dotted, value)
    if section == "embedding" and key == "base_url" and value:
        # The rules every provider applies (docs/config.md), before the value reaches a file that
        # may be committed: a password in the URL is refused, never stored.
        from ragit.embed.urls import normalize_base_url

        normalize_base_url(str(value))
    try:
        previous = getattr(getattr(load_config(ws), section), key)
    except ConfigInvalid:
        previous = _raw_value(ws, section, key)
    if section == "embedding" and key == "base_url" and isinstance(previous, str):
        previous = _without_userinfo(previous)
    if section == "output" and key == "format" and value in ("markdown", "table"):
        value = "text"
    text = ws.config_path.read_text(encoding="utf-8")
    try:
        doc = tomlkit.parse(text)
    except Exception as exc:
        raise ConfigInvalid(
            ws.relative(ws.config_path), None, f"not valid TOML ({type(exc).__name__})"
        ) from exc
    table = doc.get(section)
    if table is None:
        table = tomlkit.table()
        doc.add(section, table)
    table[key] = value
    changed = previous != value
    if changed and not dry_run:
        atomic_write_text(ws.config_path, tomlkit.dumps(doc))
    return ConfigSetResult(
        key=dotted,
        value=value,
        previous=previous,
        changed=changed,
        dry_run=dry_run,
        path=ws.relative(ws.config_path),
    )


class ConfigUnsetResult:
    """Result of `config unset` (its wire shape for ``describe``:
    :class:`ragit.cli.commands.config_data.ConfigUnsetData`)."""

    __slots__ = ("dry_run", "key", "path", "previous", "removed")

    def __init__(self, *, key: str, previous: Any, removed: bool, dry_run: bool, path: str) -> None:
        self.key = key
        self.previous = previous
        self.removed = removed
        self.dry_run = dry_run
        self.path = path

    def dump(self) -> dict[str, Any]:
        """The envelope's ``data`` (camelCase keys)."""
        return {
            "key": self.key,
            "previous": self.previous,
            "removed": self.removed,
            "dryRun": self.dry_run,
            "path": self.path,
        }


def unset_value(ws: Workspace, dotted: str, *, dry_run: bool) -> ConfigUnsetResult:
    """Remove one key (``section.key``) or a whole section from the file, keeping every other
    byte; a key RAGit honours then takes its default. Removing what the file does not hold
    is a no-op (``removed: false``), so a printed fix can be run twice.

    Raises:
        InputInvalid: ``key`` is empty, has more than two parts or a control character.
        NotInitialized: the repository has no config yet.
        ConfigInvalid: the existing file cannot be parsed.
    """
    import tomlkit

    from ragit.contract.errors import NotInitialized

    parts = dotted.split(".")
    if not dotted.strip() or len(parts) > 2 or not all(parts) or _has_control(dotted):
        raise InputInvalid("key", "use section or section.key (see `ragit config list`)")
    if not ws.is_initialized():
        raise NotInitialized(str(ws.root))
    text = ws.config_path.read_text(encoding="utf-8")
    try:
        doc = tomlkit.parse(text)
    except Exception as exc:
        raise ConfigInvalid(
            ws.relative(ws.config_path), None, f"not valid TOML ({type(exc).__name__})"
        ) from exc
    previous: Any = None
    removed = False
    if len(parts) == 1:
        if parts[0] in doc:
            previous = doc[parts[0]].unwrap() if hasattr(doc[parts[0]], "unwrap") else None
            del doc[parts[0]]
            removed = True
    else:
        table = doc.get(parts[0])
        if table is not None and hasattr(table, "__contains__") and parts[1] in table:
            item = table[parts[1]]
            previous = item.unwrap() if hasattr(item, "unwrap") else item
            del table[parts[1]]
            removed = True
    if isinstance(previous, str) and parts[-1] == "base_url":
        previous = _without_userinfo(previous)
    if removed and not dry_run:
        atomic_write_text(ws.config_path, tomlkit.dumps(doc))
    return ConfigUnsetResult(
        key=dotted,
        previous=previous,
        removed=removed,
        dry_run=dry_run,
        path=ws.relative(ws.config_path),
    )
