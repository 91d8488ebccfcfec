"""Command specs: agent memory (docs/reference/memory.md).

``memory wrap``/``recall``/``promote``, ``session materialize``, ``artifact review``,
``harness`` and ``timeline`` (see :mod:`ragit.contract.registry`).
"""

from __future__ import annotations

from ragit.contract.command_spec import Argument, CommandSpec, Option, wait_options

MEMORY_COMMANDS: tuple[CommandSpec, ...] = (
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
        group="memory",
        views=True,
        arguments=(
            Argument(
                "goal",
                "string",
                "The goal to resume (unquoted words join into one goal).",
                joins_words=True,
            ),
        ),
        options=wait_options(),
        examples=(
            "ragit memory recall resume the auth flow",
            'ragit memory recall "resume auth flow" --view minimal --format json',
        ),
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
        group="session",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.memory.models:SessionMaterializeInput",
        input_required=True,
        examples=(
            "ragit session materialize --input session.json --dry-run --format json",
            "ragit session materialize --input session.json",
        ),
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
        group="artifact",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.memory.models:ArtifactReviewInput",
        input_required=True,
        examples=(
            "ragit artifact review --input review.json --dry-run --format json",
            "ragit artifact review --input review.json",
        ),
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
        group="harness",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.harness.models:HarnessCaptureInput",
        input_required=True,
        examples=(
            "ragit harness capture --input harness.json --dry-run --format json",
            "ragit harness capture --input harness.json",
        ),
        related=("harness verify", "harness run", "harness pack"),
    ),
    CommandSpec(
        path="harness verify",
        summary="Structural preflight of a harness suite (no execution, writes nothing).",
        handler="ragit.cli.commands.artifacts:run_harness_verify",
        group="harness",
        options=(
            Option(
                "--suite",
                "string",
                "Suite artifact id or its JSON path under .ragit/artifacts/harness/.",
                required=True,
            ),
        ),
        examples=(
            "ragit harness verify --suite art_harness_suite_0123456789abcdef",
            "ragit harness verify --suite art_harness_suite_0123456789abcdef --format json",
        ),
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
        group="harness",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.harness.models:HarnessRunInput",
        input_required=True,
        examples=(
            "ragit harness run --input run.json --dry-run --format json",
            "ragit harness run --input run.json",
        ),
        related=("harness verify", "harness capture", "timeline"),
    ),
    CommandSpec(
        path="harness pack",
        summary="Read-only packet of a harness suite and its resources.",
        handler="ragit.cli.commands.artifacts:run_harness_pack",
        group="harness",
        arguments=(Argument("suite_ref", "string", "Suite artifact id or its JSON path."),),
        examples=(
            "ragit harness pack art_harness_suite_0123456789abcdef",
            "ragit harness pack art_harness_suite_0123456789abcdef --format json",
        ),
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
        group="harness",
        mutating=True,
        supports_dry_run=True,
        input_model="ragit.harness.models:HarnessPromoteInput",
        input_required=True,
        examples=(
            "ragit harness promote --input promote.json --dry-run --format json",
            "ragit harness promote --input promote.json",
        ),
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
        views=True,
        view_help=(
            "How much of each event: minimal (time, type and summary), default (adds ids) or "
            "full (every field)."
        ),
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
            Option(
                "--since",
                "string",
                "Only events recorded at or after this ISO-8601 instant or date (UTC day).",
            ),
            Option(
                "--until",
                "string",
                "Only events recorded at or before this ISO-8601 instant or date (UTC day).",
            ),
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
)
