"""Command specs: history and trust.

``log``, ``drift`` and ``narrative`` (see :mod:`ragit.contract.registry`).
"""

from __future__ import annotations

from ragit.contract.command_spec import Argument, CommandSpec, Option

DOC_TYPES = ("adr", "prd", "srs", "spec", "plan", "ddd", "glossary", "pbd")

_REV_RANGE = Argument(
    "revRange",
    "string",
    "A revision or a range A..B (first parents of B without A's history); default HEAD.",
    required=False,
)

LOG = CommandSpec(
    path="log",
    summary="Snapshot-centred history: what searchable knowledge changed, commit by commit.",
    description=(
        "Walks the first-parent history of the range, newest first. For each indexed commit: "
        "documents added, modified (same document, another version) and deleted against the "
        "nearest previous snapshot (not the previous commit), with their doc types; docs and "
        "chunks counted (distinct chunks, as status counts them); types tallied; and the "
        "semantic overlay (beliefs, open loops, evidence and artifacts bound to that "
        "snapshot). Text shows one block per commit with its counts, as git log does; "
        "--name-only, --name-status and --stat add the changed documents, --oneline prints "
        "one line per commit. At a terminal the text goes through a pager (RAGIT_PAGER, "
        "PAGER, else less; --no-pager to print it). --type and --path filter the snapshot's "
        "documents. Commits without a snapshot are skipped unless --show-missing. Reads "
        "only; output is re-masked."
    ),
    handler="ragit.cli.commands.history:run_log",
    views=True,
    view_help=(
        "How much of each commit: minimal (one line, as --oneline), default (a block with "
        "the counts) or full (adds every changed document with its chunk count)."
    ),
    arguments=(_REV_RANGE,),
    options=(
        Option(
            "--max-count",
            "integer",
            "At most this many commits (1-10000; default 20).",
            maximum=10_000,
            aliases=("-n",),
        ),
        Option("--type", "enum", "Only documents of this type.", enum=DOC_TYPES),
        Option("--path", "string", "Only documents whose path matches this repo-relative glob."),
        Option(
            "--show-missing",
            "boolean",
            "Also list commits without a snapshot.",
            default=False,
        ),
        Option(
            "--oneline",
            "boolean",
            "One line per commit: short SHA, subject, counts (the same as --view minimal).",
            default=False,
        ),
        Option(
            "--name-only",
            "boolean",
            "Also list the paths of the changed documents (text).",
            default=False,
        ),
        Option(
            "--name-status",
            "boolean",
            "Also list the changed documents with A (added), M (modified) or D (deleted).",
            default=False,
        ),
        Option(
            "--stat",
            "boolean",
            "Also list the changed documents with their chunk counts (implies --view full).",
            default=False,
        ),
        Option(
            "--no-pager",
            "boolean",
            "Print the text instead of paging it at a terminal.",
            default=False,
        ),
    ),
    examples=(
        "ragit log",
        "ragit log HEAD~10..HEAD --oneline",
        "ragit log -n 5 --type adr --name-status",
    ),
    related=("timeline", "drift", "narrative", "ingest"),
)

DRIFT = CommandSpec(
    path="drift",
    summary="Which indexed knowledge can still be trusted at HEAD: fresh, suspect or stale.",
    description=(
        "Evaluates HEAD's baseline snapshot, every document of it, reviewed/promoted session "
        "artifacts (scope memory) and reviewed/promoted harness suites (scope harness). Reason "
        "codes: no_baseline, missing_manifest_anchor, missing_binding, binding_local_only, "
        "tracked_path_changed, related_path_changed, related_path_missing, source_head_behind, "
        "bound_head_behind, failure_evidence_present, dependency_stale. Each item recommends "
        "commands (ragit ingest, ragit artifact review). Structural only: nothing judges "
        "content. Reads only; output is re-masked."
    ),
    handler="ragit.cli.commands.history:run_drift",
    views=True,
    options=(
        Option(
            "--scope",
            "enum",
            "Which items (default all).",
            enum=("durable", "memory", "harness", "all"),
        ),
        Option("--path", "string", "Only items whose affected paths match this glob."),
        Option("--goal", "string", "Only artifacts of this goal id."),
        Option("--session", "string", "Only artifacts of this source session id."),
        Option(
            "--max-count",
            "integer",
            "At most this many items after sorting, stale first (1-100000; default 200).",
            maximum=100_000,
            aliases=("-n",),
        ),
    ),
    examples=("ragit drift", "ragit drift --scope durable --view minimal --format json"),
    related=("log", "narrative", "ingest", "artifact review"),
)

NARRATIVE = CommandSpec(
    path="narrative",
    summary="Write one self-contained HTML report: recover now, what to trust, how we got here.",
    description=(
        "Renders the Recovery View from the log window (first parents of the range, "
        "--max-commits commits), the drift evaluation at HEAD and the event ledger into one "
        "HTML file with no network, script, style or font dependency (default "
        ".ragit/reports/narrative/<anchorSha>.html, ignored by git). --emit-model also writes "
        "the versioned JSON model it renders (schemaVersion). Everything shown is masked like "
        "query output. --dry-run writes nothing and returns the planned paths and summary. No "
        "snapshot in the window gives an empty-state report, not an error. --open opens the "
        "report in a browser, best-effort."
    ),
    handler="ragit.cli.commands.history:run_narrative",
    mutating=True,
    supports_dry_run=True,
    arguments=(_REV_RANGE,),
    options=(
        Option(
            "--max-commits",
            "integer",
            "At most this many commits in the window (1-1000; default 10).",
            maximum=1_000,
            aliases=("-n",),
        ),
        Option("--output", "path", "Where to write the report (default under .ragit/reports)."),
        Option("--emit-model", "path", "Also write the JSON model of the report here."),
        Option("--open", "boolean", "Open the report in a browser (best-effort).", default=False),
    ),
    examples=(
        "ragit narrative",
        "ragit narrative HEAD~20..HEAD --emit-model narrative.json",
        "ragit narrative --dry-run --format json",
    ),
    related=("log", "drift", "timeline"),
)

HISTORY_COMMANDS: tuple[CommandSpec, ...] = (LOG, DRIFT, NARRATIVE)
