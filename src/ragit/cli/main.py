"""The `ragit` entry point: builds click commands from the registry and maps outcomes.

This is the one place where typed errors become envelopes and exit codes
(contract.md §2). Command modules only parse, call a core function and return an
:class:`~ragit.cli.invocation.Outcome`; they never print or exit.

Start-up is part of every command's cost (agents call the CLI in loops): ``ragit
--version`` answers before click or the registry is imported, and the click tree is
built lazily — a run constructs only the groups and the one command on its path
(docs/architecture.md, "Start-up").
"""

from __future__ import annotations

import os
import sys

from ragit import __version__

TYPE_CHECKING = False  # typing itself is not imported on the way to `--version`
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    import click

    from ragit.contract.command_spec import CommandSpec, Option

_VERSION_FLAGS = (["--version"], ["-V"])

_HELP = """RAGit — commit-bound retrieval memory for AI coding agents.

\b
Text at a terminal, the JSON envelope in a pipe (--format changes it).
Agents: read a command's contract with `ragit describe <command>`,
and validate mutating commands with `--dry-run` first.
"""


def _option_completer(opt: Option) -> Any:
    """What shell completion offers for an option's value (ragit.cli.complete)."""
    from ragit.cli import complete

    if opt.enum:
        return complete.values(opt.enum)
    if opt.completions:
        return complete.values(opt.completions)
    if opt.type == "path":
        return complete.paths
    return None


def _build_command(spec: CommandSpec) -> click.Command:
    import click

    from ragit.cli import complete
    from ragit.contract.command_spec import FORMATS, VIEWS

    params: list[click.Parameter] = []
    for arg in spec.arguments:
        completer = complete.ARGUMENTS.get(f"{spec.path} {arg.name}")
        if completer is None and arg.type == "path":
            completer = complete.paths
        params.append(
            click.Argument(
                [arg.name],
                required=arg.required and not spec.input_model,
                nargs=-1 if arg.variadic or arg.joins_words else 1,
                shell_complete=completer,
            )
        )
    for opt in spec.options:
        decls = [opt.name, *opt.aliases]
        if opt.type == "boolean":
            params.append(
                click.Option(
                    [*decls, opt.dest],
                    is_flag=True,
                    default=False,
                    show_default=False,
                    help=opt.description,
                )
            )
        else:
            params.append(
                click.Option(
                    [*decls, opt.dest],
                    default=None,
                    show_default=False,
                    multiple=opt.multiple,
                    help=opt.description
                    + (f" One of: {', '.join(opt.enum)}." if opt.enum else "")
                    + (f" Default: {opt.default}." if opt.default not in (None, False) else ""),
                    metavar=opt.type.upper() if opt.type != "enum" else "|".join(opt.enum or ()),
                    shell_complete=_option_completer(opt),
                )
            )
    fmt_decls = ["--format", *spec.extra_format_aliases]
    params.append(
        click.Option(
            [*fmt_decls, "format"],
            default=None,
            show_default=False,
            metavar="text|json|both",
            shell_complete=complete.values(FORMATS),
            help=(
                f"Output format (default: text at a terminal, {spec.pipe_format} otherwise; "
                "RAGIT_FORMAT or output.format change it)."
            ),
        )
    )
    if spec.views:
        params.append(
            click.Option(
                ["--view", "view"],
                default=None,
                metavar="minimal|default|full",
                shell_complete=complete.values(VIEWS),
                help=f"{spec.view_description} Default: default.",
            )
        )
    if spec.input_model:
        params.append(
            click.Option(
                ["--input", "input"],
                default=None,
                metavar="PATH|-",
                shell_complete=complete.paths,
                help="Read the request as a JSON object from a repo file or stdin (-).",
            )
        )
    if spec.supports_dry_run:
        params.append(
            click.Option(
                ["--dry-run", "dry_run"],
                is_flag=True,
                default=False,
                show_default=False,
                help="Validate and plan; write nothing.",
            )
        )
    if spec.mutating:
        params.append(
            click.Option(
                ["-v", "--verbose", "verbose"],
                is_flag=True,
                default=False,
                show_default=False,
                help="Progress lines on stderr even when it is not a terminal.",
            )
        )
        params.append(
            click.Option(
                ["-q", "--quiet", "quiet"],
                is_flag=True,
                default=False,
                show_default=False,
                help="No progress at all (a terminal shows it in place by default).",
            )
        )
    if spec.takes_cwd:
        params.append(
            click.Option(
                ["--cwd", "cwd"],
                default=None,
                metavar="PATH",
                shell_complete=complete.paths,
                help="Run in this repository (any directory inside it).",
            )
        )
    import functools

    return click.Command(
        spec.words[-1],
        params=params,
        callback=functools.partial(_dispatch, spec),
        help=spec.summary + ("\n\n" + spec.description if spec.description else ""),
        short_help=spec.summary,
        epilog=_examples(spec),
    )


def _examples(spec: CommandSpec) -> str | None:
    if not spec.examples:
        return None
    return "\b\nExamples:\n" + "\n".join(f"  {e}" for e in spec.examples[:3])


def _tree() -> dict[str, Any]:
    """The command words as nested dicts; a leaf is its :class:`CommandSpec`."""
    from ragit.contract.registry import COMMANDS

    root: dict[str, Any] = {}
    for spec in COMMANDS:
        node = root
        for word in spec.words[:-1]:
            node = node.setdefault(word, {})
        node[spec.words[-1]] = spec
    return root


def _lazy_group_class() -> type[click.Group]:
    import click

    class SpecGroup(click.Group):
        """A group whose subcommands are made from their specs when first asked for: a
        run builds only what its path needs, ``--help`` only the summaries it lists."""

        def __init__(self, name: str, children: dict[str, Any], **kwargs: Any) -> None:
            super().__init__(name, **kwargs)
            self._children = children

        def list_commands(self, ctx: click.Context) -> list[str]:
            return sorted(self._children)

        def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
            built = self.commands.get(cmd_name)
            if built is not None:
                return built
            child = self._children.get(cmd_name)
            if child is None:
                return None
            if isinstance(child, dict):
                from ragit.contract.command_spec import GROUP_HELP

                text = GROUP_HELP.get(cmd_name, f"`{cmd_name}` commands.")
                # short_help is the whole summary: listings wrap it instead of cutting it.
                built = SpecGroup(cmd_name, child, help=text, short_help=text, no_args_is_help=True)
            else:
                built = _build_command(child)
            self.add_command(built)
            return built

    return SpecGroup


def build_cli() -> click.Group:
    """The root click group; its leaf commands are built from the registry on demand."""
    import click

    root = _lazy_group_class()(
        "ragit",
        _tree(),
        help=_HELP,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    )
    root.params.append(
        click.Option(
            ["--version", "-V"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            help="Print the version and exit.",
            callback=_print_version,
        )
    )
    return root


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        import click

        click.echo(f"ragit {__version__}")
        ctx.exit(0)


def _dispatch(spec: CommandSpec, **params: Any) -> None:
    import click

    from ragit.cli.invocation import run_spec

    ctx = click.get_current_context()
    for arg in spec.arguments:
        if arg.joins_words and not arg.variadic:
            words = params.get(arg.name) or ()
            params[arg.name] = " ".join(words) if words else None
    raise SystemExit(run_spec(spec, params, ctx))


def _guess_spec(argv: Sequence[str]) -> CommandSpec | None:
    from ragit.contract.registry import by_path

    words = [a for a in argv if not a.startswith("-")]
    specs = by_path()
    for n in range(min(3, len(words)), 0, -1):
        spec = specs.get(" ".join(words[:n]))
        if spec:
            return spec
    return None


def _requested_format(argv: Sequence[str], spec: CommandSpec | None) -> str:
    names = {"--format", *(spec.extra_format_aliases if spec else ())}
    value: str | None = None
    for i, arg in enumerate(argv):
        if arg in names and i + 1 < len(argv):
            value = argv[i + 1]
        for name in names:
            if arg.startswith(name + "="):
                value = arg.split("=", 1)[1]
    if value in ("markdown", "table"):
        value = "text"
    from ragit.contract.command_spec import FORMATS

    if value in FORMATS:
        return value
    from ragit.cli.invocation import environment_format, stdout_is_terminal

    env = environment_format()
    if env is not None:
        return env
    if stdout_is_terminal():
        return "text"
    return spec.pipe_format if spec else "text"  # an unknown command has no envelope of its own


def _positionals(argv: Sequence[str], spec: CommandSpec) -> list[str]:
    """The words of ``argv`` that are not options or option values."""
    valued = {"--format", "--view", "--input", "--cwd", *spec.extra_format_aliases}
    for opt in spec.options:
        if opt.type != "boolean":
            valued.update((opt.name, *opt.aliases))
    words: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg.startswith("-") and arg != "-":
            skip = arg in valued
        else:
            words.append(arg)
    return words


def _extra_arguments(argv: Sequence[str], spec: CommandSpec | None) -> list[str] | None:
    """The words click found no place for, when that is the error (else None)."""
    if spec is None:
        return None
    words = _positionals(argv, spec)
    taken = len(spec.words) + len(spec.arguments)
    if any(arg.variadic or arg.joins_words for arg in spec.arguments):
        return None
    return words[taken:] or None


def _glob_hint(argv: Sequence[str], spec: CommandSpec | None, extra: list[str]) -> str:
    """What to type instead: the glob quoted (the same command, for a positional value).

    The shell expanded an unquoted glob into the file names it matched; their common
    directory gives the glob back (``text/0001.md text/0002.md`` → ``'text/**'``).
    """
    import os.path
    import shlex

    words = _positionals(argv, spec) if spec is not None else []
    first = len(spec.words) + len(spec.arguments) - 1 if spec and spec.arguments else None
    names = words[first:] if first is not None else extra
    relative = all(n and not os.path.isabs(n) for n in names)
    common = os.path.commonpath(names) if names and relative else ""
    glob = f"{common}/**" if common and common not in names else "<glob>"
    hint = "quote the glob so the shell does not expand it"
    if first is None:
        return f"{hint} ('{glob}', not {glob})" if glob != "<glob>" else hint
    given = " ".join(shlex.quote(w) for w in words[:first])
    return f"{hint}: ragit {given} '{glob}'"


def _usage_line(exc: click.UsageError, spec: CommandSpec | None, argv: Sequence[str] = ()) -> str:
    """One line for a click usage error, in the user's own words, with where to look."""
    import click

    from ragit.cli.render import did_you_mean, paint

    message = exc.format_message().rstrip(".")
    ctx = exc.ctx
    command = ctx.command if ctx is not None else None
    extra = _extra_arguments(argv, spec) if message.startswith("Got unexpected extra") else None
    missing = getattr(exc, "param", None) if isinstance(exc, click.MissingParameter) else None
    if spec is not None and isinstance(missing, click.Argument):
        from ragit.cli.render import usage_line

        for arg in spec.arguments:
            if arg.name == missing.name:
                text = usage_line(spec, arg)
                return text.replace("error:", paint("error:", "red", sys.stderr), 1) + "\n"
    if extra is not None and len(extra) > 1:
        message = (
            f"{len(extra)} more arguments than `ragit {spec.path if spec else ''}` takes "
            f"({extra[0]}, …): {_glob_hint(argv, spec, extra)}"
        )
    elif isinstance(exc, click.NoSuchOption) and exc.possibilities:
        message = f"no such option '{exc.option_name}'; did you mean '{exc.possibilities[0]}'?"
    elif isinstance(exc, click.NoSuchOption):
        message = f"no such option '{exc.option_name}'"
    elif message.startswith("No such command") and isinstance(command, click.Group):
        name = message.split("'")[1] if "'" in message else ""
        names = command.list_commands(ctx) if ctx is not None else list(command.commands)
        message = f"unknown command '{name}'{did_you_mean(name, names)}"
    elif message:
        message = message[0].lower() + message[1:]
    where = ctx.command_path if ctx is not None and ctx.command_path else "ragit"
    label = paint("error:", "red", sys.stderr)
    return f"{label} {message} (see: {where} --help)\n"


def _usage_failure(exc: click.UsageError, argv: Sequence[str]) -> int:
    from ragit.contract.envelope import emit_failure, envelope
    from ragit.contract.errors import InputInvalid

    spec = _guess_spec(argv)
    fmt = _requested_format(argv, spec)
    param = getattr(exc, "param", None)
    field = getattr(param, "name", None) or "arguments"
    reason = exc.format_message()
    extra = _extra_arguments(argv, spec) if reason.startswith("Got unexpected extra") else None
    if extra is not None and len(extra) > 1:  # an unquoted glob: never a list of file names
        reason = f"{len(extra)} unexpected extra arguments; {_glob_hint(argv, spec, extra)}"
    error = InputInvalid(str(field), reason)
    env = envelope(spec.path if spec else "ragit", os.getcwd(), None, [], error)
    human = _usage_line(exc, spec, argv) if fmt in ("text", "both") else None
    emit_failure(fmt, env, error, human=human)
    return error.exit_code


def main(argv: Sequence[str] | None = None) -> None:
    """Console entry point for `ragit` and `python -m ragit`."""
    from ragit._guard import RuntimeUnsupported, check_interpreter, exit_unsupported

    try:
        check_interpreter()
    except RuntimeUnsupported as exc:
        exit_unsupported(exc)
    args = list(sys.argv[1:] if argv is None else argv)
    if args in _VERSION_FLAGS:  # answered before click and the registry are imported
        sys.stdout.write(f"ragit {__version__}\n")
        sys.stdout.flush()
        raise SystemExit(0)
    # numpy's OpenBLAS starts a worker thread per core as it loads (with its buffers), which a
    # command's small matrices never need: the embedding encoders already ask for one BLAS
    # thread per caller (ragit.embed.minilm._blas). A setting of the user's own is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import gc

    import click

    from ragit import _process

    # A short-lived process: once a manifest is parsed, its objects (one per chunk id and
    # document) live until exit, so they move to the collector's permanent generation and
    # later full collections skip them (a cold `query` saves 50 ms at N=1,000, 85 ms at
    # N=10,000). Reference counting still frees them; only a cycle that becomes garbage
    # after the freeze stays, which does not outlive this process. `ragit-mcp` keeps the
    # default (nothing frozen).
    _process.on_manifest_loaded(gc.freeze)
    cli = build_cli()
    try:
        cli.main(args=args, prog_name="ragit", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else "", err=False)
        raise SystemExit(0) from None
    except click.UsageError as exc:
        raise SystemExit(_usage_failure(exc, args)) from None
    except click.exceptions.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except (click.Abort, KeyboardInterrupt):
        sys.stderr.write("[ragit] interrupted\n")
        raise SystemExit(130) from None
    raise SystemExit(0)
