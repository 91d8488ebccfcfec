"""Command specs: introspection, setup, ingest and retrieval.

``describe``, ``init``, ``status``, ``ingest``, ``query`` and ``context pack``
(see :mod:`ragit.contract.registry`). Only commands that really work are registered.
"""

from __future__ import annotations

from ragit.contract.command_spec import SCOPES, Argument, CommandSpec, Option, wait_options


def _scope_option(choices: tuple[str, ...] = SCOPES) -> Option:
    return Option(
        "--scope",
        "enum",
        "Knowledge scope to search.",
        enum=choices,
        default="durable",
        domain=True,
        input_key="scope",
    )


CORE_COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        path="describe",
        summary="Print the machine-readable contract of a command (or list the commands).",
        description=(
            "Reads the contract of a leaf command: arguments, options with types, enums and "
            "defaults, whether it mutates, dry-run and --input support, the --input JSON Schema "
            "and a summary of the output data. Run it before first use of a command."
        ),
        handler="ragit.cli.commands.describe:run",
        arguments=(
            Argument(
                "command",
                "string",
                "Command path as separate words, e.g. `memory promote`.",
                required=False,
                variadic=True,
            ),
        ),
        takes_cwd=False,
        examples=("ragit describe", "ragit describe context pack --format json"),
        related=("status",),
    ),
    CommandSpec(
        path="init",
        summary="Scan the repository, report its knowledge, create .ragit/config.toml and "
        "ignore entries.",
        description=(
            "Discover-first bootstrap: scans the working tree (languages, frameworks, package "
            "manager, monorepo markers, CI and infrastructure files, docs and their types), "
            "classifies the repository mode, reports knowledge-slot coverage, maturity scores, "
            "the knowledge map and a plan that reuses existing docs first. Writes "
            ".ragit/config.toml and .gitignore entries; --strategy balanced|full also creates "
            "the missing stage-1 drafts (marked as inferred), templates, AGENTS.md when absent "
            "and the guide and doc-authority indexes. Idempotent; never overwrites user files. "
            "The store is created by the first ingest."
        ),
        handler="ragit.cli.commands.init:run",
        mutating=True,
        supports_dry_run=True,
        options=(
            Option(
                "--yes",
                "boolean",
                "Accept defaults without prompting.",
                default=False,
                aliases=("--non-interactive",),
            ),
            Option(
                "--git-init",
                "boolean",
                "Run `git init` when the directory is not a repository.",
                default=False,
            ),
            Option(
                "--mode",
                "enum",
                "Repository mode; auto detects it from the scan.",
                enum=("auto", "empty", "existing", "monorepo", "docs-heavy"),
                default="auto",
            ),
            Option(
                "--strategy",
                "enum",
                "Stage-1 drafts: minimal writes only the config and ignore entries; balanced "
                "adds the missing drafts, templates, AGENTS.md and indexes; full drafts even "
                "what existing docs cover.",
                enum=("minimal", "balanced", "full"),
                default="minimal",
            ),
            Option(
                "--merge-existing",
                "boolean",
                "Reuse existing docs as primary sources (always on; accepted for compatibility).",
                default=False,
            ),
        ),
        output_model="ragit.cli.commands.init_data:InitData",
        examples=(
            "ragit init --yes",
            "ragit init --yes --dry-run --format json",
            "ragit init --yes --strategy balanced --dry-run",
        ),
        related=("status", "config set", "ingest"),
        extra_format_aliases=("--output",),
    ),
    CommandSpec(
        path="status",
        summary="Summarize RAGit state here; read-only; never fails on a missing snapshot.",
        description=(
            "The first readiness check for an agent: branch and HEAD, whether HEAD's exact "
            "snapshot is indexed (and why not), store statistics from RAGit's own metadata, "
            "configuration and writer-lock state. Reads only; opens no store."
        ),
        handler="ragit.cli.commands.status:run",
        output_model="ragit.cli.commands.status_data:StatusData",
        examples=("ragit status", "ragit status --cwd path/to/repo --format json"),
        related=("doctor", "ingest", "init"),
    ),
    CommandSpec(
        path="ingest",
        summary="Index the documents of a commit into a snapshot bound to its SHA.",
        description=(
            "Reads knowledge from the commit (git objects), never from the working tree. "
            "--all builds a full snapshot; --since <ref> requires an indexed ancestor; --files and "
            "--path re-index selected paths on top of the target's (or its parent's) snapshot; no "
            "selector continues from the nearest indexed ancestor. Dirty candidates block apply; "
            "--dry-run reports plannedFiles, dirtyCandidates, wouldFail and blockers and exits 0. "
            "Re-ingesting an unchanged commit writes nothing."
        ),
        handler="ragit.cli.commands.ingest:run",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.ingest.inputs:IngestInput",
        options=(
            Option(
                "--all",
                "boolean",
                "Build a full snapshot of the implicit surface.",
                default=False,
                domain=True,
                input_key="all",
            ),
            Option(
                "--since",
                "string",
                "Incremental from this indexed ancestor (any commit-ish).",
                domain=True,
                input_key="since",
            ),
            Option(
                "--files",
                "string",
                "Comma-separated repo-relative globs to re-index.",
                domain=True,
                input_key="files",
            ),
            Option(
                "--path",
                "path",
                "A repo-relative path to re-index (repeatable).",
                multiple=True,
                domain=True,
                input_key="paths",
            ),
            Option(
                "--at",
                "string",
                "Index this commit instead of HEAD (any commit-ish).",
                domain=True,
                input_key="at",
            ),
            Option(
                "--scope",
                "enum",
                "durable, or all to also bind reviewed artifacts.",
                enum=("durable", "all"),
                default="durable",
                domain=True,
                input_key="scope",
            ),
            Option(
                "--wait",
                "boolean",
                "Wait for a running writer (a hook's ingest) instead of failing "
                "with STORE_WRITE_BUSY.",
                default=False,
            ),
            Option(
                "--wait-timeout",
                "integer",
                "Seconds --wait waits for the writer before STORE_WRITE_BUSY.",
                default=120,
                maximum=3600,
            ),
        ),
        examples=(
            "ragit ingest --all --dry-run --format json",
            "ragit ingest --all",
            "ragit ingest --since HEAD~1",
            "ragit ingest --path docs/adr/0007-retries.md",
            "ragit ingest --wait",
        ),
        related=("status", "query", "hooks install"),
    ),
    CommandSpec(
        path="query",
        summary="Search the exact snapshot of HEAD (or --at) and return cited hits.",
        description=(
            "Hybrid BM25 + vector retrieval restricted to one commit's snapshot. Omitting --at "
            "means exactly HEAD; --at accepts only HEAD, a full SHA or a unique hex prefix. "
            "A missing snapshot is a typed error naming the nearest indexed ancestor; a dirty "
            "worktree is a warning. Output is always re-masked."
        ),
        handler="ragit.cli.commands.query:run_query_cmd",
        views=True,
        input_model="ragit.retrieve.inputs:QueryInput",
        arguments=(
            Argument(
                "question",
                "string",
                "What to search for (unquoted words join into one question).",
                required=True,
                input_key="question",
                joins_words=True,
            ),
        ),
        options=(
            Option(
                "--top-k",
                "integer",
                "Number of hits (1-200; default retrieval.top_k).",
                domain=True,
                input_key="topK",
                maximum=200,
            ),
            _scope_option(),
            Option(
                "--at",
                "string",
                "Snapshot: HEAD, a full SHA or a unique hex prefix.",
                domain=True,
                input_key="at",
            ),
            Option(
                "--explain",
                "boolean",
                "Add scoreBreakdown to each hit.",
                default=False,
                domain=True,
                input_key="explain",
            ),
            *wait_options(),
        ),
        examples=(
            'ragit query "how are retries configured?" --view minimal --format json',
            "ragit query --input query.json --view minimal --format json",
        ),
        related=("context pack", "memory recall", "status"),
    ),
    CommandSpec(
        path="context pack",
        summary="Build a budgeted, citation-diverse context packet for a goal.",
        description=(
            "Retrieves like query from a candidate pool that grows with the budget (at least "
            "30), drops duplicate citations, then fills the token budget with whole passages: "
            "one per new source first, then in rank order; the selected passages are output in "
            "rank order. Every view carries each passage's whole text and its token count, and "
            "usedTokens, their sum, never exceeds the budget (tokens: RAGit's estimate, at least "
            "GPT-4's count)."
        ),
        handler="ragit.cli.commands.query:run_context_pack_cmd",
        group="context",
        views=True,
        input_model="ragit.retrieve.inputs:ContextPackInput",
        arguments=(
            Argument(
                "goal",
                "string",
                "The goal the packet serves (unquoted words join into one goal).",
                required=True,
                input_key="goal",
                joins_words=True,
            ),
        ),
        options=(
            Option(
                "--budget",
                "integer",
                "Token budget (1-200000; default 1200).",
                domain=True,
                input_key="budget",
                maximum=200_000,
            ),
            _scope_option(),
            Option(
                "--at",
                "string",
                "Snapshot: HEAD, a full SHA or a unique hex prefix.",
                domain=True,
                input_key="at",
            ),
            *wait_options(),
        ),
        examples=(
            'ragit context pack "implement the retry policy" --budget 1500 --view minimal',
            "ragit context pack --input context-pack.json --view minimal --format json",
        ),
        related=("query", "memory recall"),
    ),
)
