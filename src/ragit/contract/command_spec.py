"""The shape of a command's contract: :class:`CommandSpec` and its arguments and options.

Plain data (no pydantic, no engine), so that ``ragit --help`` and ``ragit describe``
stay fast. The specs themselves are declared per command group in
:mod:`ragit.contract.specs_core`, :mod:`ragit.contract.specs_ops` and
:mod:`ragit.contract.specs_memory`; :mod:`ragit.contract.registry` collects them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FORMATS = ("text", "json", "both")
VIEWS = ("minimal", "default", "full")
SCOPES = ("durable", "session", "harness", "evidence", "all")
VIEW_HELP = (
    "How much of each hit: minimal (path, section, score, citation, 120-character "
    "excerpt), default (adds the scores, 200-character excerpt) or full (the whole text)."
)


# The keys of .ragit/config.toml (ragit.config.config_keys(); a test keeps them equal).
CONFIG_KEYS: tuple[str, ...] = (
    "project.name",
    "project.default_branch",
    "embedding.provider",
    "embedding.model",
    "embedding.base_url",
    "embedding.timeout_ms",
    "embedding.cache_enabled",
    "embedding.cache_dir",
    "embedding.dimensions",
    "embedding.model_path",
    "ingest.doc_globs",
    "ingest.include",
    "ingest.exclude",
    "ingest.max_file_bytes",
    "hooks.post_commit",
    "hooks.post_merge",
    "hooks.post_rewrite",
    "hooks.post_checkout",
    "retrieval.alpha",
    "retrieval.top_k",
    "retrieval.hits_per_document",
    "retrieval.rerank",
    "retrieval.wait_for_ingest",
    "memory.recall_top_k",
    "memory.corpus_dir",
    "security.secret_masking",
    "security.remote_embedding_policy",
    "security.admission_mode",
    "security.quarantine_on_redaction",
    "docs_authority.validate_on_ingest",
    "docs_authority.canonical_root",
    "docs_authority.sections_adr",
    "docs_authority.sections_prd",
    "docs_authority.sections_srs",
    "docs_authority.sections_spec",
    "docs_authority.sections_plan",
    "docs_authority.sections_ddd",
    "docs_authority.sections_glossary",
    "docs_authority.sections_pbd",
    "output.format",
    "store.backend",
    "store.repository",
)

# What each command group is for (the help of `ragit <group> --help`).
GROUP_HELP: dict[str, str] = {
    "doc": "Document authority: validate, realign, create and index the typed docs (docs/**).",
    "config": "Read and edit .ragit/config.toml: typed keys, comments and order kept.",
    "context": "Budgeted context packets for a goal, built from the snapshot of HEAD.",
    "hooks": "Git hooks that ingest every new commit in the background.",
    "memory": "Working memory across sessions: wrap the state, recall it, promote what lasts.",
    "session": "Session records as artifacts bound to the snapshot they were made on.",
    "artifact": "Review session, harness and evidence artifacts before they join retrieval.",
    "harness": "Test-harness resources captured, verified and promoted as artifacts.",
    "migrate": (
        "Move the store to a new embedding profile without losing snapshots; bring the shared "
        "store's schema to this RAGit's version."
    ),
    "model": "The offline semantic model (local-minilm): install it in one step.",
    "security": "Find and remove secrets from the configuration and the store.",
}


@dataclass(frozen=True)
class Argument:
    """A positional argument."""

    name: str
    type: str  # string | path | json
    description: str
    required: bool = True
    variadic: bool = False
    input_key: str | None = None  # the --input JSON key it mirrors (a domain argument)
    # The words of an unquoted question (`ragit query writer lock`) join into one value.
    joins_words: bool = False


@dataclass(frozen=True)
class Option:
    """A command-specific option (the common ones are added by the builder)."""

    name: str  # long form, e.g. "--top-k"
    type: str  # boolean | string | integer | enum | path
    description: str
    enum: tuple[str, ...] | None = None
    default: Any = None
    required: bool = False
    multiple: bool = False
    domain: bool = False  # cannot be combined with --input (contract §4)
    input_key: str | None = None
    maximum: int | None = None
    aliases: tuple[str, ...] = ()
    # Values shell completion offers for a non-enum option (e.g. doc types and aliases).
    completions: tuple[str, ...] = ()

    @property
    def dest(self) -> str:
        return self.name.lstrip("-").replace("-", "_")


def wait_options() -> tuple[Option, Option]:
    """``--wait SECONDS`` and ``--no-wait`` of the reads (query, context pack, memory recall):
    how long to wait for a running ingest of the asked commit. Not domain options: they
    combine with ``--input``."""
    return (
        Option(
            "--wait",
            "integer",
            "Seconds (0-600) to wait for a running ingest of the asked commit (a hook's, "
            "right after a commit) before SNAPSHOT_INGEST_RUNNING (default "
            "retrieval.wait_for_ingest, 10).",
            maximum=600,
        ),
        Option(
            "--no-wait",
            "boolean",
            "Do not wait for a running ingest: SNAPSHOT_INGEST_RUNNING at once.",
            default=False,
        ),
    )


@dataclass(frozen=True)
class CommandSpec:
    """The contract of one leaf command."""

    path: str
    summary: str
    handler: str  # "module:function", imported only when the command runs
    group: str = "root"
    mutating: bool = False
    supports_dry_run: bool = False
    views: bool = False
    input_model: str | None = None  # "module:Class" of the strict --input model
    input_required: bool = False
    output_model: str | None = None  # "module:Class" of the data model
    arguments: tuple[Argument, ...] = ()
    options: tuple[Option, ...] = ()
    examples: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    takes_cwd: bool = True
    description: str = ""
    extra_format_aliases: tuple[str, ...] = field(default=())
    # What --view changes for this command (its help and `describe`); see VIEW_HELP.
    view_help: str = ""
    # The format when stdout is not a terminal (a terminal gets text): json, the envelope, for
    # every command that prints one; completion prints its script (contract §2).
    pipe_format: str = "json"

    @property
    def view_description(self) -> str:
        return self.view_help or VIEW_HELP

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.path.split())
