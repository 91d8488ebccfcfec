"""The `ragit` entry point: builds click commands from the registry and maps outcomes.

This is the one place where typed errors become envelopes and exit codes
(contract.md §2). Command modules only parse, call a core function and return an
:class:`~ragit.cli.invocation.Outcome`; they never print or exit.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Sequence
from typing import Any

import click

from ragit import __version__
from ragit.contract.command_spec import FORMATS, GROUP_HELP, CommandSpec
from ragit.contract.registry import COMMANDS, by_path

_HELP = """RAGit — commit-bound retrieval memory for AI coding agents.

\b
Text at a terminal, the JSON envelope in a pipe (--format changes it).
Agents: read a command's contract with `ragit describe <command>`,
and validate mutating commands with `--dry-run` first.
"""


def _build_command(spec: CommandSpec) -> click.Command:
    params: list[click.Parameter] = []
    for arg in spec.arguments:
        params.append(
            click.Argument(
                [arg.name],
                required=arg.required and not spec.input_model,
                nargs=-1 if arg.variadic or arg.joins_words else 1,
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
                )
            )
    fmt_decls = ["--format", *spec.extra_format_aliases]
    params.append(
        click.Option(
            [*fmt_decls, "format"],
            default=None,
            show_default=False,
            metavar="text|json|both",
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
                help="Projection of each hit (default: default).",
            )
        )
    if spec.input_model:
        params.append(
            click.Option(
                ["--input", "input"],
                default=None,
                metavar="PATH|-",
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
                help="Run in this repository (any directory inside it).",
            )
        )
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


def build_cli() -> click.Group:
    """The root click group with every registered leaf command."""
    root = click.Group(
        "ragit",
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
    for spec in COMMANDS:
        group = root
        for word in spec.words[:-1]:
            sub = group.commands.get(word)
            if sub is None:
                sub = click.Group(
                    word, help=GROUP_HELP.get(word, f"`{word}` commands."), no_args_is_help=True
                )
                group.add_command(sub)
            assert isinstance(sub, click.Group)
            group = sub
        group.add_command(_build_command(spec))
    return root


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"ragit {__version__}")
        ctx.exit(0)


def _dispatch(spec: CommandSpec, **params: Any) -> None:
    from ragit.cli.invocation import run_spec

    ctx = click.get_current_context()
    for arg in spec.arguments:
        if arg.joins_words and not arg.variadic:
            words = params.get(arg.name) or ()
            params[arg.name] = " ".join(words) if words else None
    raise SystemExit(run_spec(spec, params, ctx))


def _guess_spec(argv: Sequence[str]) -> CommandSpec | None:
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
    if value in FORMATS:
        return value
    from ragit.cli.invocation import environment_format, stdout_is_terminal

    env = environment_format()
    if env is not None:
        return env
    if stdout_is_terminal():
        return "text"
    return spec.pipe_format if spec else "text"  # an unknown command has no envelope of its own


def _usage_line(exc: click.UsageError, spec: CommandSpec | None) -> str:
    """One line for a click usage error, in the user's own words, with where to look."""
    from ragit.cli.render import did_you_mean, paint

    message = exc.format_message().rstrip(".")
    ctx = exc.ctx
    command = ctx.command if ctx is not None else None
    if isinstance(exc, click.NoSuchOption) and exc.possibilities:
        message = f"no such option '{exc.option_name}'; did you mean '{exc.possibilities[0]}'?"
    elif isinstance(exc, click.NoSuchOption):
        message = f"no such option '{exc.option_name}'"
    elif message.startswith("No such command") and isinstance(command, click.Group):
        name = message.split("'")[1] if "'" in message else ""
        message = f"unknown command '{name}'{did_you_mean(name, command.commands)}"
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
    error = InputInvalid(str(field), exc.format_message())
    env = envelope(spec.path if spec else "ragit", os.getcwd(), None, [], error)
    human = _usage_line(exc, spec) if fmt in ("text", "both") else None
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
