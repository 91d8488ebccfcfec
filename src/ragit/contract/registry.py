"""The command registry: one definition per leaf command.

Each :class:`CommandSpec` drives both the click command (``ragit.cli``) and
``ragit describe``. This module is plain data so that ``ragit --help`` and
``ragit describe`` load neither pydantic nor any engine; the JSON Schemas that
``describe`` reports are generated from the pydantic models at build time by
``scripts/gen_describe.py`` into ``describe.json`` (with a ``--check`` twin).

Only commands that really work are registered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FORMATS = ("text", "json", "both")
VIEWS = ("minimal", "default", "full")
SCOPES = ("durable", "session", "harness", "evidence", "all")


@dataclass(frozen=True)
class Argument:
    """A positional argument."""

    name: str
    type: str  # string | path | json
    description: str
    required: bool = True
    variadic: bool = False
    input_key: str | None = None  # the --input JSON key it mirrors (a domain argument)


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

    @property
    def dest(self) -> str:
        return self.name.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class CommandSpec:
    """The contract of one leaf command."""

    path: str
    summary: str
    handler: str  # "module:function", imported only when the command runs
    default_format: str
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

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.path.split())


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


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        path="describe",
        summary="Print the machine-readable contract of a command (or list the commands).",
        description=(
            "Reads the contract of a leaf command: arguments, options with types, enums and "
            "defaults, whether it mutates, dry-run and --input support, the --input JSON Schema "
            "and a summary of the output data. Run it before first use of a command."
        ),
        handler="ragit.cli.commands.describe:run",
        default_format="json",
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
        summary="Create .ragit/config.toml and ignore RAGit's runtime state in .gitignore.",
        description=(
            "Bootstraps RAGit in a git repository: writes .ragit/config.toml with the documented "
            "defaults and adds .gitignore entries for runtime state. Idempotent; never overwrites "
            "user files. The store is created by the first ingest."
        ),
        handler="ragit.cli.commands.init:run",
        default_format="text",
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
        ),
        output_model="ragit.cli.commands.init:InitData",
        examples=("ragit init --yes", "ragit init --yes --dry-run --format json"),
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
        default_format="json",
        output_model="ragit.cli.commands.status:StatusData",
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
        default_format="json",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.ingest.pipeline:IngestInput",
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
        ),
        examples=(
            "ragit ingest --all --dry-run --format json",
            "ragit ingest --all",
            "ragit ingest --since HEAD~1",
            "ragit ingest --path docs/adr/0007-retries.md",
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
        default_format="both",
        views=True,
        input_model="ragit.retrieve.query:QueryInput",
        arguments=(
            Argument(
                "question", "string", "What to search for.", required=True, input_key="question"
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
            "Retrieves like query (30 candidates), drops duplicate citations, then fills the "
            "token budget (whitespace words) with whole hits: one per new source first, then in "
            "rank order. usedTokens never exceeds the budget."
        ),
        handler="ragit.cli.commands.query:run_context_pack_cmd",
        default_format="both",
        group="context",
        views=True,
        input_model="ragit.retrieve.query:ContextPackInput",
        arguments=(
            Argument(
                "goal", "string", "The goal the packet serves.", required=True, input_key="goal"
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
        ),
        examples=(
            'ragit context pack "implement the retry policy" --budget 1500 --view minimal',
            "ragit context pack --input context-pack.json --view minimal --format json",
        ),
        related=("query", "memory recall"),
    ),
    CommandSpec(
        path="hooks install",
        summary="Install git hooks that keep HEAD's snapshot current in the background.",
        description=(
            "post-commit, post-merge, post-rewrite and post-checkout (branch checkouts) start an "
            "incremental ingest of the new HEAD in the background; git is never slowed or "
            "blocked. A foreign hook is kept as <hook>.legacy and chained. Honours "
            "core.hooksPath and linked worktrees. Idempotent."
        ),
        handler="ragit.cli.commands.hooks:run_install",
        default_format="text",
        group="hooks",
        mutating=True,
        supports_dry_run=True,
        examples=("ragit hooks install --dry-run --format json", "ragit hooks install"),
        related=("hooks status", "hooks uninstall", "ingest"),
    ),
    CommandSpec(
        path="hooks uninstall",
        summary="Remove RAGit's git hooks and restore the hooks they chained.",
        handler="ragit.cli.commands.hooks:run_uninstall",
        default_format="text",
        group="hooks",
        mutating=True,
        supports_dry_run=True,
        examples=("ragit hooks uninstall --dry-run --format json",),
        related=("hooks install", "hooks status"),
    ),
    CommandSpec(
        path="hooks status",
        summary="Report which RAGit hooks are installed (reads only).",
        handler="ragit.cli.commands.hooks:run_status",
        default_format="json",
        group="hooks",
        examples=("ragit hooks status",),
        related=("hooks install",),
    ),
    CommandSpec(
        path="doctor",
        summary="Run named health checks; each failing check names the command that fixes it.",
        description=(
            "Checks the repository, config, manifests, HEAD's snapshot, the store (through the "
            "reader copy), manifest-to-store consistency, the writer lock, transaction journals, "
            "the embedding profile and cache. Writes nothing. Exits 1 with DOCTOR_CHECKS_FAILED "
            "when any check fails; the envelope still carries every check in data."
        ),
        handler="ragit.cli.commands.doctor:run",
        default_format="text",
        examples=("ragit doctor", "ragit doctor --format json"),
        related=("status", "repair"),
    ),
    CommandSpec(
        path="repair",
        summary="Plan repairs from what is wrong; --apply runs the safe ones under the lock.",
        description=(
            "Actions: ingest-recover (unfinished transaction journals), store-rebuild (store "
            "missing, unreadable or lacking manifest chunks: regenerated from every manifest's "
            "documents in git, verified, swapped atomically; manifests untouched), ingest (HEAD "
            "not indexed), release-lock (a lock whose owner cannot be checked; applied only when "
            "requested with --action). Without --apply nothing is written."
        ),
        handler="ragit.cli.commands.repair:run_repair_cmd",
        default_format="json",
        mutating=True,
        options=(
            Option(
                "--apply",
                "boolean",
                "Execute the safe actions (default: plan only).",
                default=False,
            ),
            Option(
                "--action",
                "enum",
                "Only this action (repeatable).",
                enum=("release-lock", "ingest-recover", "store-rebuild", "ingest"),
                multiple=True,
            ),
        ),
        examples=("ragit repair", "ragit repair --apply --action store-rebuild"),
        related=("doctor", "status", "ingest"),
    ),
    CommandSpec(
        path="migrate embeddings",
        summary="Re-embed every chunk any manifest references with the configured profile.",
        description=(
            "After changing embedding.provider/model (status shows embedding.needsMigration), "
            "rebuilds the store from all manifests with the configured profile into "
            ".ragit/store.next, verifies it and swaps it in atomically under the writer lock. "
            "Manifests are not rewritten: chunk ids do not depend on the profile."
        ),
        handler="ragit.cli.commands.repair:run_migrate_embeddings",
        default_format="json",
        group="migrate",
        mutating=True,
        supports_dry_run=True,
        examples=("ragit migrate embeddings --dry-run", "ragit migrate embeddings"),
        related=("status", "config set"),
    ),
    CommandSpec(
        path="config set",
        summary="Set one configuration key with typed validation, keeping comments and order.",
        description=(
            "Edits .ragit/config.toml in place. Keys are `section.key`; unknown keys and "
            "wrongly typed values are rejected. Lists are given comma-separated or as a JSON array."
        ),
        handler="ragit.cli.commands.config:run_set",
        default_format="json",
        group="config",
        mutating=True,
        supports_dry_run=True,
        arguments=(
            Argument("key", "string", "The `section.key` to set."),
            Argument("value", "string", "The new value."),
        ),
        output_model="ragit.ops.config_set:ConfigSetData",
        examples=("ragit config set retrieval.top_k 8", "ragit config set output.format json"),
        related=("status",),
    ),
    # ---- memory, session, artifact, harness, timeline (agent memory; issue 7)
    CommandSpec(
        path="memory wrap",
        summary=(
            "Record the session state (goal, decisions, open loops, next actions) into working "
            "memory."
        ),
        description=(
            "Masks and admission-checks the payload, then writes "
            ".ragit/memory/sessions/<sessionId>.json and merges it into .ragit/memory/working/ "
            "(decisions accumulate by id, open loops are keyed by id and closed ones leave the "
            "working set). Ingests nothing. decisions[] items may be strings or objects; createdAt "
            "must be an ISO-8601 instant. Validate with --dry-run first."
        ),
        handler="ragit.cli.commands.memory:run_wrap",
        default_format="json",
        group="memory",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.memory.models:WrapInput",
        input_required=True,
        examples=(
            "ragit memory wrap --input wrap.json --dry-run --format json",
            "ragit memory wrap --input - < wrap.json",
        ),
        related=("memory recall", "memory promote", "timeline"),
    ),
    CommandSpec(
        path="memory recall",
        summary="Resume packet: working memory, the latest wrap and snapshot retrieval for a goal.",
        description=(
            "Reads .ragit/memory/working, the latest session wrap, and retrieves from the exact "
            "snapshot of HEAD (topK memory.recall_top_k) plus reviewed artifacts. Without an "
            "indexed snapshot it degrades instead of failing: snapshotSha null, snapshot.status "
            "unavailable, keyword-only artifact hits, a warning. Reads only; output is re-masked."
        ),
        handler="ragit.cli.commands.memory:run_recall",
        default_format="both",
        group="memory",
        views=True,
        arguments=(Argument("goal", "string", "The goal to resume."),),
        examples=('ragit memory recall "resume auth flow" --view minimal --format json',),
        related=("memory wrap", "query", "context pack"),
    ),
    CommandSpec(
        path="memory promote",
        summary=(
            "Write stable knowledge as documents under docs/memory (never overwrites; not "
            "ingested)."
        ),
        description=(
            "Each candidate (kind decision|glossary|plan, or type adr|glossary|plan|<docType>) "
            "becomes <memory.corpus_dir>/decisions|glossary|plans/<slug>.md with frontmatter "
            "(type, source_session, promoted_at) and the sections of its document type. An "
            "existing file is never overwritten (-2, -3 suffixes). ingested is always false: "
            "review, git commit, then ragit ingest. The input may be an object or a bare array of "
            "candidates."
        ),
        handler="ragit.cli.commands.memory:run_promote",
        default_format="json",
        group="memory",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.memory.models:PromoteInput",
        input_required=True,
        examples=(
            "ragit memory promote --input promote.json --dry-run --format json",
            "ragit memory promote --input promote.json",
        ),
        related=("memory wrap", "ingest"),
    ),
    CommandSpec(
        path="session materialize",
        summary="Record a redacted session transcript and extract candidate session artifacts.",
        description=(
            "Masks and admission-checks every turn and tool trace, appends them to "
            ".ragit/log/transcripts/<sessionId>.jsonl and stores candidate artifacts (feedback, "
            "constraint, failure, openLoop, insight) as captured in .ragit/artifacts/session/. "
            "Promotes nothing; review the artifacts with `artifact review`."
        ),
        handler="ragit.cli.commands.artifacts:run_session_materialize",
        default_format="json",
        group="session",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.memory.models:SessionMaterializeInput",
        input_required=True,
        examples=("ragit session materialize --input session.json --dry-run --format json",),
        related=("artifact review", "timeline"),
    ),
    CommandSpec(
        path="artifact review",
        summary=(
            "Move artifacts through their lifecycle (reviewed, superseded, retracted, archived)."
        ),
        description=(
            "Applies {artifactId, nextStatus, reason?, supersedes?} updates. Allowed: captured -> "
            "reviewed|retracted|archived; reviewed -> superseded|retracted|archived; promoted -> "
            "superseded|archived. Unknown ids and disallowed transitions are warnings, not "
            "failures. Reviewed artifacts become searchable in the session/harness scopes."
        ),
        handler="ragit.cli.commands.artifacts:run_artifact_review",
        default_format="json",
        group="artifact",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.memory.models:ArtifactReviewInput",
        input_required=True,
        examples=("ragit artifact review --input review.json --dry-run --format json",),
        related=("session materialize", "harness promote", "query"),
    ),
    CommandSpec(
        path="harness capture",
        summary=(
            "Store harness resources (cases, oracles, fixtures...) and their suite as artifacts."
        ),
        description=(
            "Each resource becomes .ragit/artifacts/harness/<kind>/<artifactId>.json (captured). "
            "Rules for `harness run` live in `expected` (exitCode, mustInclude, mustNotInclude, "
            "stderrMustInclude, stderrMustNotInclude, jsonSubset); a case's `input` may give args, "
            "stdin, env and timeoutMs. Without a suite resource one is synthesized. Executes "
            "nothing."
        ),
        handler="ragit.cli.commands.artifacts:run_harness_capture",
        default_format="json",
        group="harness",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.harness.models:HarnessCaptureInput",
        input_required=True,
        examples=("ragit harness capture --input harness.json --dry-run --format json",),
        related=("harness verify", "harness run", "harness pack"),
    ),
    CommandSpec(
        path="harness verify",
        summary="Structural preflight of a harness suite (no execution, writes nothing).",
        handler="ragit.cli.commands.artifacts:run_harness_verify",
        default_format="json",
        group="harness",
        options=(
            Option(
                "--suite",
                "string",
                "Suite artifact id or its JSON path under .ragit/artifacts/harness/.",
                required=True,
            ),
        ),
        examples=("ragit harness verify --suite art_harness_suite_0123456789abcdef",),
        related=("harness capture", "harness run"),
    ),
    CommandSpec(
        path="harness run",
        summary="Run a harness suite's cases with the command executor and record the results.",
        description=(
            "Sequential command executor: argv + case args, per-case timeouts, deterministic "
            "rules. Records .ragit/log/harness-runs/<runId>.json (environment values are never "
            "recorded) and failure artifacts for failed or errored cases. Refuses a suite that "
            "fails preflight except with --dry-run, which executes nothing."
        ),
        handler="ragit.cli.commands.artifacts:run_harness_run",
        default_format="json",
        group="harness",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.harness.models:HarnessRunInput",
        input_required=True,
        examples=("ragit harness run --input run.json --dry-run --format json",),
        related=("harness verify", "harness capture", "timeline"),
    ),
    CommandSpec(
        path="harness pack",
        summary="Read-only packet of a harness suite and its resources.",
        handler="ragit.cli.commands.artifacts:run_harness_pack",
        default_format="json",
        group="harness",
        arguments=(Argument("suite_ref", "string", "Suite artifact id or its JSON path."),),
        examples=("ragit harness pack art_harness_suite_0123456789abcdef",),
        related=("harness verify", "harness run"),
    ),
    CommandSpec(
        path="harness promote",
        summary="Write reviewed harness artifacts as documents under docs/harness (not ingested).",
        description=(
            "Only reviewed harness artifacts are promoted (others are warnings): suite and "
            "envAssumption -> docs/harness/plans, checker/rubric/case/oracle/trace -> "
            "docs/harness/specs, promptTemplate/fixture/golden/failure -> docs/harness/pbds. Never "
            "overwrites a file; ingested is always false: review, commit, then ingest."
        ),
        handler="ragit.cli.commands.artifacts:run_harness_promote",
        default_format="json",
        group="harness",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.harness.models:HarnessPromoteInput",
        input_required=True,
        examples=("ragit harness promote --input promote.json --dry-run --format json",),
        related=("artifact review", "ingest"),
    ),
    CommandSpec(
        path="timeline",
        summary=(
            "Show the operational event ledger (wraps, promotions, reviews, harness runs), newest "
            "first."
        ),
        description=(
            "Reads .ragit/log/events/*.jsonl. Filters by goal, episode, session, kind (the event "
            "type before the dot) and an ISO-8601 time window. Reads only; output is re-masked."
        ),
        handler="ragit.cli.commands.timeline:run",
        default_format="text",
        views=True,
        options=(
            Option("--goal", "string", "Only events of this goal id."),
            Option("--episode", "string", "Only events of this episode id."),
            Option("--session", "string", "Only events of this session id."),
            Option(
                "--kind",
                "enum",
                "Only events of this kind.",
                enum=("session", "artifact", "memory", "harness", "ingest", "security"),
            ),
            Option("--since", "string", "Only events recorded at or after this ISO-8601 instant."),
            Option("--until", "string", "Only events recorded at or before this ISO-8601 instant."),
            Option(
                "--max-count",
                "integer",
                "At most this many events (1-10000; default 50).",
                maximum=10_000,
                aliases=("-n",),
            ),
        ),
        examples=("ragit timeline", "ragit timeline --kind memory -n 20 --format json"),
        related=("memory wrap", "status"),
    ),
    CommandSpec(
        path="security audit",
        summary="Find raw secrets left in control-plane files, the store and indexed documents.",
        description=(
            "A string the current masking rules would change still holds a raw secret. Scans "
            ".ragit/log, .ragit/artifacts, .ragit/memory and the .ragit/security ledgers (warn), "
            "every chunk of the published store (critical), the documents ingest would read at "
            "HEAD through admission control (critical when blocked, warn when secret-like), and a "
            "remote embedding provider under remote_embedding_policy local-only (critical). "
            "Findings name a path and a field, never the value. Reads only."
        ),
        handler="ragit.cli.commands.security:run_audit_cmd",
        default_format="json",
        group="security",
        examples=("ragit security audit", "ragit security audit --format text"),
        related=("security purge", "status"),
    ),
    CommandSpec(
        path="security purge",
        summary="Remove raw secrets: re-mask control-plane files, rebuild the store, clear caches.",
        description=(
            "Under the writer lock. control-plane: re-masks those files in place (atomic writes). "
            "store: regenerates the store from git with the current masking rules, verifies it and "
            "swaps it in; a snapshot whose chunks change under the current rules loses its "
            "manifest and is listed in staleSnapshots with the `ragit ingest --all --at <sha>` "
            "that re-indexes it. cache: deletes the embedding cache. quarantine: clears the "
            "quarantine ledger. all (default): all four. Repository documents are never rewritten. "
            "--dry-run writes nothing and lists planned[]."
        ),
        handler="ragit.cli.commands.security:run_purge_cmd",
        default_format="json",
        group="security",
        mutating=True,
        supports_dry_run=True,
        options=(
            Option(
                "--target",
                "enum",
                "What to purge.",
                enum=("control-plane", "store", "cache", "quarantine", "all"),
                default="all",
            ),
        ),
        examples=(
            "ragit security purge --dry-run",
            "ragit security purge --target control-plane",
        ),
        related=("security audit", "ingest", "doctor"),
    ),
)


def by_path() -> dict[str, CommandSpec]:
    """Specs keyed by their command path."""
    return {spec.path: spec for spec in COMMANDS}


def command_paths() -> list[str]:
    """Every describable leaf command path, sorted."""
    return sorted(spec.path for spec in COMMANDS)


def families() -> set[str]:
    """Group names that are not leaves themselves (e.g. ``config``)."""
    return {spec.words[0] for spec in COMMANDS if len(spec.words) > 1}
