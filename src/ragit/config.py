"""`.ragit/config.toml`: the typed model, defaults and loading.

The model lists only keys RAGit honours. Loading ignores keys it does not know
(they are preserved in the file and reported by ``doctor``); ``config set``
rejects them. This module only reads: ``config set`` lives in :mod:`ragit.ops.config.edit`,
so readers such as the MCP server never import a config writer.

Sections are plain records (:class:`ragit._sections.Section`), declared once below with
their bounds, so that every command reads its configuration without importing pydantic; a
value that is not of exactly its key's type is judged by a pydantic model generated from
the same declarations, so the rules and messages are pydantic's lax mode.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, ClassVar, Literal

from ragit import _toml
from ragit._sections import Rule
from ragit._sections import Section as _Section
from ragit.contract.errors import ConfigInvalid
from ragit.workspace import Workspace

DEFAULT_EXCLUDE = [
    "**/.git/**",
    "**/.ragit/**",
    "**/node_modules/**",
    "**/dist/**",
    "**/coverage/**",
    "**/.next/**",
]


class ProjectConfig(_Section):
    name: str = "ragit-project"
    default_branch: str = "main"


class EmbeddingConfig(_Section):
    provider: Literal["local-placeholder", "ollama", "openai", "local-minilm"] = "local-placeholder"
    model: str = "placeholder-v1"
    base_url: str | None = None
    timeout_ms: int = 30000
    cache_enabled: bool = True
    cache_dir: str = ".ragit/cache/embeddings"
    dimensions: int = 256
    model_path: str | None = None

    _rules: ClassVar[dict[str, Rule]] = {
        "timeout_ms": Rule(ge=100, le=600_000),
        "dimensions": Rule(ge=8, le=4096),
    }


class IngestConfig(_Section):
    doc_globs: list[str] = ["**/*.md", "**/*.mdx", "**/*.markdown"]  # noqa: RUF012 - copied per instance
    include: list[str] = ["README.md", "docs/**"]  # noqa: RUF012
    exclude: list[str] = DEFAULT_EXCLUDE
    max_file_bytes: int = 8 * 1024 * 1024

    _rules: ClassVar[dict[str, Rule]] = {"max_file_bytes": Rule(ge=1024, le=256 * 1024 * 1024)}


class HooksConfig(_Section):
    post_commit: bool = True
    post_merge: bool = True
    post_rewrite: bool = True
    post_checkout: bool = True


class RetrievalConfig(_Section):
    # None: the embedding provider's measured default (0.3 for local-placeholder).
    alpha: float | None = None
    top_k: int = 5
    # Hits one document may contribute to a durable query's answer (0: no limit).
    hits_per_document: int = 1
    # A second stage that scores the best candidates again with a local model (off: none).
    rerank: Literal["off", "local-minilm", "local-minilm-int8"] = "off"
    # Seconds a read (query, context pack, memory recall, ragit-mcp) waits for a running
    # ingest of the asked commit before SNAPSHOT_INGEST_RUNNING (0: never waits).
    wait_for_ingest: float = 10.0

    _rules: ClassVar[dict[str, Rule]] = {
        "alpha": Rule(ge=0.0, le=1.0),
        "top_k": Rule(ge=1, le=200),
        "hits_per_document": Rule(ge=0, le=200),
        "wait_for_ingest": Rule(ge=0.0, le=600.0),
    }


class MemoryConfig(_Section):
    recall_top_k: int = 8
    corpus_dir: str = "docs/memory"

    _rules: ClassVar[dict[str, Rule]] = {"recall_top_k": Rule(ge=1, le=200)}


class SecurityConfig(_Section):
    secret_masking: bool = True
    remote_embedding_policy: Literal["allow-sanitized", "local-only"] = "allow-sanitized"
    admission_mode: Literal["report-only", "enforce"] = "enforce"
    quarantine_on_redaction: bool = True


class DocsAuthorityConfig(_Section):
    """Document authority (`ragit doc *`, docs/authority.md). ``sections_<type>`` replaces the
    required sections of that type's contract (None: the built-in English and Korean names)."""

    validate_on_ingest: bool = False
    canonical_root: str = "docs"
    sections_adr: list[str] | None = None
    sections_prd: list[str] | None = None
    sections_srs: list[str] | None = None
    sections_spec: list[str] | None = None
    sections_plan: list[str] | None = None
    sections_ddd: list[str] | None = None
    sections_glossary: list[str] | None = None
    sections_pbd: list[str] | None = None


class OutputConfig(_Section):
    format: Literal["text", "json", "both"] | None = None

    @classmethod
    def _normalize(cls, name: str, value: Any) -> Any:
        if name == "format" and value in ("markdown", "table"):
            return "text"
        return value


class StoreConfig(_Section):
    """Where snapshots are stored and read (docs/team.md). ``backend``: ``zvec`` (the embedded
    store under ``.ragit/store``, the default) or ``postgres`` (the shared store; its server is
    named only by the environment: ``RAGIT_DATABASE_URL`` or libpq's ``PG*`` variables, never
    by this file). ``repository``: the name this repository's snapshots have on the shared
    store (None: ``git:<sha>`` of the root of HEAD's first-parent history, which every clone
    shares; ``project.name`` before the first commit — :mod:`ragit.snapshot.repository`)."""

    backend: Literal["zvec", "postgres"] = "zvec"
    repository: str | None = None

    _rules: ClassVar[dict[str, Rule]] = {"repository": Rule(min_length=1, max_length=200)}


class RagitConfig(_Section):
    project: ProjectConfig = ProjectConfig()
    embedding: EmbeddingConfig = EmbeddingConfig()
    ingest: IngestConfig = IngestConfig()
    hooks: HooksConfig = HooksConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    memory: MemoryConfig = MemoryConfig()
    security: SecurityConfig = SecurityConfig()
    docs_authority: DocsAuthorityConfig = DocsAuthorityConfig()
    output: OutputConfig = OutputConfig()
    store: StoreConfig = StoreConfig()


SECTIONS: dict[str, type[_Section]] = {
    name: info.annotation for name, info in RagitConfig.model_fields.items()
}

# Keys that `init` writes; optional keys (base_url, model_path, output.format) stay unset.
_NOT_WRITTEN = {
    ("embedding", "base_url"),
    ("embedding", "model_path"),
    ("output", "format"),
    ("store", "repository"),
}
# Sections `init` leaves out of a new file (their defaults apply; `config set` adds them).
_SECTIONS_NOT_WRITTEN = {"docs_authority", "store"}


def default_config_toml(
    default_branch: str | None = None,
    *,
    project_name: str | None = None,
    include: list[str] | None = None,
) -> str:
    """The commented config file `init` writes (``project.default_branch`` as detected,
    ``project.name`` the repository's folder, ``ingest.include`` the proposed surface)."""
    import tomlkit

    defaults = RagitConfig()
    if default_branch:
        defaults.project.default_branch = default_branch
    if project_name:
        defaults.project.name = project_name
    if include is not None:
        defaults.ingest.include = list(include)
    doc = tomlkit.document()
    doc.add(
        tomlkit.comment("RAGit configuration. Edit with `ragit config set <section.key> <value>`.")
    )
    doc.add(
        tomlkit.comment("Every key is described by `ragit describe config set` and docs/config.md.")
    )
    for section_name in SECTIONS:
        if section_name in _SECTIONS_NOT_WRITTEN:
            continue
        section = getattr(defaults, section_name)
        table = tomlkit.table()
        for key, value in section.model_dump().items():
            if (section_name, key) in _NOT_WRITTEN or value is None:
                continue
            table.add(key, value)
        if section_name == "output":
            table.add(
                tomlkit.comment('format = "json"  # default: text at a terminal, json otherwise')
            )
        doc.add(tomlkit.nl())
        doc.add(section_name, table)
    return tomlkit.dumps(doc)


def _read_toml(path: Path, shown: str | None = None) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        from ragit.contract.fs_errors import filesystem_error

        typed = filesystem_error(exc, path.parent.parent)  # <root>/.ragit/config.toml
        if typed is not None:  # no permission, .ragit not a directory: not the file's content
            raise typed from exc
        raise ConfigInvalid(shown or str(path), None, f"unreadable ({exc.strerror})") from exc
    return parse_toml(raw, shown or str(path))


def parse_toml(raw: bytes, shown: str) -> dict[str, Any]:
    """The TOML document ``raw`` (``shown`` names it in errors).

    Raises:
        ConfigInvalid: not UTF-8 or not valid TOML.
    """
    try:
        return _toml.loads(raw.decode("utf-8"))
    except Exception as exc:
        reason = f"not valid TOML ({type(exc).__name__})"
        raise ConfigInvalid(shown, None, reason) from exc


def _default_fix(key: str) -> str | None:
    """`ragit config set <key> <default>` for a known key, else None (the generic hint)."""
    section, _, name = key.partition(".")
    model = SECTIONS.get(section)
    if model is None or name not in model.model_fields:
        return None
    default = model.model_fields[name].get_default(call_default_factory=True)
    if default is None:
        return None
    if isinstance(default, bool):
        text = "true" if default else "false"
    elif isinstance(default, list):
        text = json.dumps(default)
    else:
        text = str(default)
    return f"ragit config set {key} {shlex.quote(text)}"


def validate_config(data: dict[str, Any], shown: str) -> RagitConfig:
    """The typed configuration of the TOML document ``data`` (``shown`` names it in errors).

    Raises:
        ConfigInvalid: a known key with a wrong value.
    """
    try:
        return RagitConfig.model_validate(data)
    except Exception as exc:
        from pydantic import ValidationError

        if not isinstance(exc, ValidationError):
            raise
        first = exc.errors(include_url=False, include_input=False)[0]
        key = ".".join(str(p) for p in first["loc"][:2])
        raise ConfigInvalid(shown, key, str(first["msg"]), recovery=_default_fix(key)) from None


# Configs this process loaded, keyed by file and (inode, size, mtime): a command asks for
# its configuration in several layers, and the file is read, parsed and validated once.
_LOADED: dict[tuple[str, str], tuple[tuple[int, int, int] | None, RagitConfig]] = {}


def load_config(ws: Workspace) -> RagitConfig:
    """Load the repository config (defaults when the file is missing).

    ``project.name`` defaults to the repository's folder name. Each call returns an
    object of its own (callers may change it).

    Raises:
        ConfigInvalid: unreadable file, invalid TOML, or a known key with a wrong value.
    """
    path = ws.config_path
    try:
        info = path.stat()
        stamp: tuple[int, int, int] | None = (info.st_ino, info.st_size, info.st_mtime_ns)
    except OSError:
        stamp = None
    key = (str(path), ws.root.name)
    cached = _LOADED.get(key)
    if cached is not None and cached[0] == stamp and stamp is not None:
        return cached[1].model_copy(deep=True)
    data = _read_toml(path, ws.relative(path))
    cfg = validate_config(data, ws.relative(path))
    project = data.get("project")
    if not (isinstance(project, dict) and "name" in project) and ws.root.name:
        cfg.project.name = ws.root.name
    if len(_LOADED) > 16:
        _LOADED.clear()
    _LOADED[key] = (stamp, cfg.model_copy(deep=True))
    return cfg


def unknown_keys(ws: Workspace) -> list[str]:
    """Keys present in the file that RAGit does not honour (reported by doctor)."""
    return unknown_keys_of(unknown_key_data(ws))


def unknown_key_data(ws: Workspace) -> dict[str, Any]:
    """The file's TOML document ({} when missing).

    Raises:
        ConfigInvalid: unreadable, or not TOML.
    """
    return _read_toml(ws.config_path, ws.relative(ws.config_path))


def unknown_keys_of(data: dict[str, Any]) -> list[str]:
    """The sections and ``section.key`` names of ``data`` that RAGit does not honour."""
    out: list[str] = []
    for section, table in data.items():
        model = SECTIONS.get(section)
        if model is None or not isinstance(table, dict):
            out.append(section)
            continue
        out.extend(f"{section}.{k}" for k in table if k not in model.model_fields)
    return sorted(out)


def _cli_value(value: Any) -> str:
    """``value`` as `config set` takes it on a command line (shell-quoted)."""
    import shlex

    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (list, dict)):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    else:
        text = str(value)
    return shlex.quote(text)


def unknown_key_fixes(data: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    """Each section or key of ``data`` RAGit does not honour, with the known name it most
    likely misspells (or None) and the command that fixes it: `config unset` of the unknown
    name, then `config set` of its value(s) under the known key when that key is not set
    already."""
    out: list[tuple[str, str | None, str]] = []
    for name in unknown_keys_of(data):
        guess = nearest_known(name)
        steps = [f"ragit config unset {name}"]
        if "." in name:
            section, _, key = name.partition(".")
            moves = {guess: data[section][key]} if guess is not None else {}
        else:
            table = data.get(name)
            moves = {}
            if guess is not None and isinstance(table, dict):
                model = SECTIONS[guess]
                for key, value in table.items():
                    close = key if key in model.model_fields else None
                    if close is None:
                        found = nearest_known(f"{guess}.{key}")
                        close = found.partition(".")[2] if found else None
                    if close is not None:
                        moves[f"{guess}.{close}"] = value
        for target, value in moves.items():
            section, _, key = target.partition(".")
            present = data.get(section)
            if isinstance(present, dict) and key in present:
                continue  # the file sets the right key already: only remove the typo
            steps.append(f"ragit config set {target} {_cli_value(value)}")
        out.append((name, guess, " && ".join(steps)))
    return out


def unknown_key_warnings(data: dict[str, Any], shown: str) -> list[str]:
    """One warning per unknown section or key of ``data``, with "did you mean" and the fix."""
    out: list[str] = []
    for name, guess, fix in unknown_key_fixes(data):
        kind = "key" if "." in name else "section"
        hint = f"; did you mean '{guess}'?" if guess else ""
        out.append(f"unknown config {kind} '{name}' in {shown} is ignored{hint} (fix: {fix})")
    return out


def file_warnings(ws: Workspace) -> list[str]:
    """The unknown-key warnings of the repository's config file (none when the file is
    missing or cannot be read: the commands that load it report that)."""
    from ragit.contract.fs_errors import FilesystemUnusable

    try:
        data = _read_toml(ws.config_path, ws.relative(ws.config_path))
    except (ConfigInvalid, FilesystemUnusable):
        return []
    return unknown_key_warnings(data, ws.relative(ws.config_path))


def nearest_known(name: str) -> str | None:
    """The section or ``section.key`` RAGit honours that ``name`` most likely misspells."""
    import difflib

    if "." in name:
        section, _, key = name.partition(".")
        model = SECTIONS.get(section)
        if model is not None:
            close = difflib.get_close_matches(key, list(model.model_fields), n=1, cutoff=0.6)
            return f"{section}.{close[0]}" if close else None
        choices = config_keys()
    else:
        choices = list(SECTIONS)
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return close[0] if close else None


def config_keys() -> list[str]:
    """Every key RAGit honours, as ``section.key``, in file order."""
    return [
        f"{section}.{name}" for section, model in SECTIONS.items() for name in model.model_fields
    ]


def config_entries(ws: Workspace) -> list[dict[str, Any]]:
    """Each key with its effective value, its default and whether the file sets it.

    Raises:
        ConfigInvalid: the file is unreadable, not TOML, or holds a wrong value.
    """
    effective = load_config(ws)
    raw = _read_toml(ws.config_path, ws.relative(ws.config_path))
    out: list[dict[str, Any]] = []
    for section, model in SECTIONS.items():
        table = raw.get(section)
        values = getattr(effective, section)
        for name, info in model.model_fields.items():
            value = getattr(values, name)
            if name == "base_url" and isinstance(value, str):
                value = _without_userinfo(value)
            out.append(
                {
                    "key": f"{section}.{name}",
                    "value": value,
                    "default": info.get_default(call_default_factory=True),
                    "set": isinstance(table, dict) and name in table,
                }
            )
    return out


def config_entry(ws: Workspace, key: str) -> dict[str, Any]:
    """One key of :func:`config_entries`.

    Raises:
        InputInvalid: ``key`` is not a key RAGit honours (details name the nearest keys).
        ConfigInvalid: the file cannot be read.
    """
    from ragit.contract.errors import InputInvalid

    for entry in config_entries(ws):
        if entry["key"] == key:
            return entry
    raise InputInvalid("key", "unknown key")


def _without_userinfo(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
