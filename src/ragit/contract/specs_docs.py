"""Command specs: the document authority family ``doc create|refresh|validate|reconcile``
(docs/authority.md; see :mod:`ragit.contract.registry`)."""

from __future__ import annotations

from ragit.contract.command_spec import Argument, CommandSpec, Option

_TYPES = "adr, prd, srs, spec, plan, ddd, glossary, pbd (aliases such as decision, term accepted)"


def _type_option(description: str, *, required: bool = False) -> Option:
    return Option(
        "--type",
        "string",
        f"{description} One of {_TYPES}.",
        required=required,
        completions=("adr", "prd", "srs", "spec", "plan", "ddd", "glossary", "pbd"),
    )


DOC_COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        path="doc validate",
        summary="Check typed documents against their type's contract, as a linter does.",
        description=(
            "Reads the markdown documents of the working tree — the given files and "
            "directories, else the ingest surface — whose type is detected (frontmatter, path, "
            "first heading; README/index files found in a directory are directory indexes) and "
            "reports, per file, each violation of its contract: frontmatter type missing or "
            "different, H1 missing or without the type's prefix (`ADR:`...), each missing "
            "required section (English or Korean headings, case-insensitive; configurable with "
            "docs_authority.sections_<type>), PBD without a `## [B1] ...` topology heading. "
            "Every markdown file it does not check is counted with the reason (untyped, "
            "directory index, another type, outside the ingest surface, not markdown, "
            "unreadable). Writes nothing. Exits 1 with DOC_VALIDATION_FAILED when it finds a "
            "violation (the report stays in data), 0 otherwise or with --exit-zero."
        ),
        handler="ragit.cli.commands.doc:run_validate",
        group="doc",
        arguments=(
            Argument(
                "paths",
                "path",
                "Files or directories to check (relative to the current directory); "
                "default: the ingest surface.",
                required=False,
                variadic=True,
            ),
        ),
        options=(
            _type_option("Check only documents of this type."),
            Option("--all", "boolean", "Check every type (the default).", default=False),
            Option(
                "--exit-zero",
                "boolean",
                "Exit 0 even when violations are found (the envelope then has ok: true).",
                default=False,
            ),
        ),
        output_model="ragit.cli.commands.doc:DocValidateData",
        examples=(
            "ragit doc validate",
            "ragit doc validate docs/adr --format text",
            "ragit doc validate --type adr --exit-zero --format json",
        ),
        related=("doc refresh", "doc reconcile"),
    ),
    CommandSpec(
        path="doc refresh",
        summary="Realign documents with their contracts by insertion only (never rewrites).",
        description=(
            "Adds `type: <type>` to the frontmatter (or a frontmatter block), an H1 "
            "`<Prefix>: <title>` when there is none, and each missing required section with a "
            "TODO bullet at the end (a `[B1]` boundary section for PBD). Never removes, edits "
            "or reorders existing text: the old text is a subsequence of the new one. What "
            "insertion cannot fix (a different frontmatter type, an H1 without the prefix) "
            "stays reported in violationsAfter and warnings. Updates .ragit/docs/index.json "
            "once the repository is initialized. Writes are atomic."
        ),
        handler="ragit.cli.commands.doc:run_refresh",
        group="doc",
        mutating=True,
        supports_dry_run=True,
        options=(
            _type_option("Refresh only documents of this type."),
            Option(
                "--files",
                "string",
                "Comma-separated repo-relative globs of the documents to refresh (may go "
                "beyond ingest.include).",
            ),
        ),
        output_model="ragit.cli.commands.doc:DocRefreshData",
        examples=(
            "ragit doc refresh --dry-run",
            "ragit doc refresh --type adr",
            "ragit doc refresh --files 'docs/decisions/*.md'",
        ),
        related=("doc validate", "doc reconcile"),
    ),
    CommandSpec(
        path="doc create",
        summary="Create a new typed document from its template or the built-in skeleton.",
        description=(
            "Writes <canonical_root>/<type>/<slug(title)>.md (a -2, -3 ... suffix when the "
            "name is taken) or the explicit --path, which must not exist. Uses "
            ".ragit/guide/templates/<type>.template.md when present ({{title}} filled in), "
            "else a skeleton; the result has frontmatter type, the `<Prefix>: <title>` H1 and "
            "every required section. Never overwrites a file."
        ),
        handler="ragit.cli.commands.doc:run_create",
        group="doc",
        mutating=True,
        supports_dry_run=True,
        options=(
            _type_option("Type of the new document.", required=True),
            Option("--title", "string", "Title of the new document.", required=True),
            Option("--path", "path", "Repo-relative path of the new file (must not exist)."),
        ),
        output_model="ragit.cli.commands.doc:DocCreateData",
        examples=(
            'ragit doc create --type adr --title "Use zvec for storage"',
            'ragit doc create --type spec --title "Ingest" --path docs/spec/ingest.md --dry-run',
        ),
        related=("doc validate", "doc reconcile"),
    ),
    CommandSpec(
        path="doc reconcile",
        summary="Write the authority index .ragit/docs/index.json; documents are never moved.",
        description=(
            "Maps each typed document to its canonical path <canonical_root>/<type>/<name> "
            "(status canonical when it is there, mapped otherwise) with its sha256 and "
            "violation codes. The index is rewritten only when an entry changed. Needs an "
            "initialized repository."
        ),
        handler="ragit.cli.commands.doc:run_reconcile",
        group="doc",
        mutating=True,
        supports_dry_run=True,
        output_model="ragit.cli.commands.doc:DocReconcileData",
        examples=("ragit doc reconcile", "ragit doc reconcile --dry-run --format text"),
        related=("doc validate", "status"),
    ),
)
