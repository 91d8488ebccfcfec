"""Running one leaf command: options → core call → envelope on the right streams.

:func:`run_spec` is shared by every command. It resolves ``--cwd`` to the Git
root, picks the output format (:func:`resolve_format`), enforces the ``--input``
rules of contract §4, calls the handler, and emits the result or the typed failure
with the matching exit code.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ragit._guard import EXIT_NOT_READY as EXIT_UNSUPPORTED
from ragit._guard import RuntimeUnsupported
from ragit.contract.command_spec import CommandSpec
from ragit.contract.envelope import (
    FORMAT_ALIASES,
    FORMATS,
    VIEWS,
    configured_output_format,
    emit_failure,
    emit_success,
    envelope,
)
from ragit.contract.errors import (
    EXIT_INTERRUPTED,
    EXIT_UNEXPECTED,
    InputInvalid,
    NotAGitRepository,
    RagitError,
)
from ragit.contract.terminal import colour_enabled, printable

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ragit.cli.progress import ProgressDisplay
    from ragit.config import RagitConfig
    from ragit.workspace import Workspace


@dataclass
class Outcome:
    """What a command returns: JSON-ready data, its text rendering, warnings.

    ``error`` is set only by commands whose failure still carries data (doctor).
    """

    data: Any
    text: Callable[[], str] | str = ""
    warnings: list[str] = field(default_factory=list)
    error: RagitError | None = None
    # Long text a person reads at a terminal goes through the pager (ragit.cli.pager).
    paged: bool = False


class Invocation:
    """The parsed request of one command run, handed to its handler."""

    def __init__(self, spec: CommandSpec, params: dict[str, Any], start_dir: Path) -> None:
        self.spec = spec
        self.params = params
        self.start_dir = start_dir
        self.fmt = spec.pipe_format
        self.view = "default"
        self.dry_run = bool(params.get("dry_run", False))
        self.input_source: str | None = params.get("input")
        self.warnings: list[str] = []
        self._root: Path | None = None
        self._root_searched = False
        self._config: RagitConfig | None = None
        self._progress: ProgressDisplay | None = None

    # ------------------------------------------------------------ repository
    @property
    def root(self) -> Path | None:
        if not self._root_searched:
            from ragit.snapshot._git import discover_root

            self._root = discover_root(self.start_dir)
            self._root_searched = True
        return self._root

    def workspace(self) -> Workspace:
        """The repository this command runs in.

        Raises:
            NotAGitRepository: the start directory is not inside a git worktree.
        """
        from ragit.workspace import Workspace

        if self.root is None:
            raise NotAGitRepository(str(self.start_dir))
        return Workspace(self.root)

    def config(self) -> RagitConfig:
        """The repository config (defaults when not initialized)."""
        if self._config is None:
            from ragit.config import load_config

            self._config = load_config(self.workspace())
        return self._config

    @property
    def known_root(self) -> Path | None:
        """The repository root if this command has looked for it (no search here)."""
        return self._root if self._root_searched else None

    @property
    def envelope_cwd(self) -> str:
        root = self.known_root
        return str(root if root is not None else self.start_dir)

    # ------------------------------------------------------------ input
    def read_input(self, model: type[BaseModel]) -> Any:
        """Load and validate ``--input`` against ``model``.

        Raises:
            InputInvalid: any rule of contract §4.
        """
        from ragit.contract.inputs import load_input_payload, validate_payload

        assert self.input_source is not None
        root = self.root if self.root is not None else self.start_dir
        payload = load_input_payload(self.input_source, root, sys.stdin.buffer)
        return validate_payload(model, payload)

    def progress(self, message: str) -> None:
        """Progress for long work: stderr only, never stdout (see :mod:`ragit.cli.progress`)."""
        if self._progress is None:
            from ragit.cli.progress import ProgressDisplay, choose_mode

            mode = choose_mode(
                verbose=bool(self.params.get("verbose")), quiet=bool(self.params.get("quiet"))
            )
            self._progress = ProgressDisplay(mode)
        self._progress(message)

    def close_progress(self) -> None:
        """End an in-place progress display before the result is printed."""
        if self._progress is not None:
            self._progress.close()


def _normalize_format(raw: str | None) -> str | None:
    if raw is None:
        return None
    value = FORMAT_ALIASES.get(raw, raw)
    if value not in FORMATS:
        raise InputInvalid("format", f"must be one of {', '.join(FORMATS)}")
    return value


def stdout_is_terminal() -> bool:
    """Whether stdout is an interactive terminal (a pipe or a file is not)."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def environment_format() -> str | None:
    """``RAGIT_FORMAT``: a person's own default; an unknown value is ignored (None)."""
    raw = os.environ.get("RAGIT_FORMAT", "").strip().lower()
    value = FORMAT_ALIASES.get(raw, raw)
    return value if value in FORMATS else None


def resolve_format(spec: CommandSpec, explicit: str | None, root: Path | None) -> str:
    """The output format of one run (contract §2; docs/contract.md, "Envelope, formats").

    Precedence: ``--format`` > ``RAGIT_FORMAT`` > ``output.format`` in the repository's
    config > ``text`` when stdout is a terminal > ``json`` (pipes and files; ``completion``
    prints its script).
    """
    if explicit is not None:
        return explicit
    env = environment_format()
    if env is not None:
        return env
    if spec.takes_cwd and root is not None:
        configured = configured_output_format(root)
        if configured is not None:
            return configured
    if stdout_is_terminal():
        return "text"
    return spec.pipe_format


def _check_input_mixing(spec: CommandSpec, params: dict[str, Any], ctx: click.Context) -> None:
    if params.get("input") is None:
        return
    clashes: list[str] = []
    for arg in spec.arguments:
        value = params.get(arg.name)
        if value not in (None, (), ""):
            clashes.append(arg.name)
    for opt in spec.options:
        if not opt.domain:
            continue
        value = params.get(opt.dest)
        if value in (None, False, ()):
            continue
        if opt.default is not None and value == opt.default:
            continue
        clashes.append(opt.name)
    if clashes:
        raise InputInvalid(
            "input", f"cannot combine --input with positional/domain options: {', '.join(clashes)}"
        )


def _check_text_params(params: dict[str, Any]) -> None:
    """Refuse an argument that is not UTF-8 text (the shell passed raw bytes).

    Python decodes such bytes to lone surrogates (PEP 383); they cannot reach a JSON
    envelope, a question or a file name, so they are ``INPUT_INVALID`` before any work.
    """
    from ragit.contract.inputs import is_unicode_text

    for name, value in params.items():
        values = value if isinstance(value, (tuple, list)) else (value,)
        if any(isinstance(v, str) and not is_unicode_text(v) for v in values):
            raise InputInvalid(name, "not valid UTF-8 text (the argument holds other bytes)")


def _resolve_start_dir(params: dict[str, Any]) -> Path:
    from ragit.contract.inputs import existing_directory

    raw = params.get("cwd")
    if raw is None:
        return Path(os.getcwd()).resolve()
    return existing_directory(str(raw))


def _call_handler(spec: CommandSpec, inv: Invocation) -> Outcome:
    module_name, func_name = spec.handler.split(":")
    handler = getattr(importlib.import_module(module_name), func_name)
    try:
        outcome = handler(inv)
    finally:
        inv.close_progress()
    assert isinstance(outcome, Outcome)
    return outcome


def _emit_unexpected(exc: BaseException) -> int:
    if os.environ.get("RAGIT_DEBUG") == "1":
        traceback.print_exception(exc)
    message = str(exc) or type(exc).__name__
    sys.stderr.write(printable(f"[ragit] error: {message}\n"))
    return EXIT_UNEXPECTED


def run_spec(spec: CommandSpec, params: dict[str, Any], ctx: click.Context) -> int:
    """Run one command and return its exit code."""
    try:
        explicit_fmt = params.get("format")
        fmt_error: RagitError | None = None
        try:
            fmt = _normalize_format(explicit_fmt)
        except InputInvalid as exc:
            fmt, fmt_error = None, exc
        try:
            start_dir = _resolve_start_dir(params)
        except RagitError as exc:
            inv = Invocation(spec, params, Path(os.getcwd()))
            inv.fmt = resolve_format(spec, fmt, None)
            return _fail(inv, exc)
        inv = Invocation(spec, params, start_dir)
        inv.fmt = resolve_format(spec, fmt, None)
        if fmt_error is not None:
            return _fail(inv, fmt_error)
        if fmt is None and spec.takes_cwd:
            inv.fmt = resolve_format(spec, fmt, inv.root)
        try:
            if spec.views:
                view = params.get("view")
                if view is not None and view not in VIEWS:
                    raise InputInvalid("view", f"must be one of {', '.join(VIEWS)}")
                inv.view = view or "default"
            _check_input_mixing(spec, params, ctx)
            _check_text_params(params)
            if spec.input_required and params.get("input") is None:
                raise InputInvalid("input", "--input <path|-> is required")
            if spec.mutating and not inv.dry_run and inv.root is not None:
                inv.workspace().check_contained()  # never write through an escaping symlink
            outcome = _call_handler(spec, inv)
        except RagitError as exc:
            return _fail(inv, exc)
        except Exception as exc:
            from ragit.contract.fs_errors import filesystem_error

            # A full disk, a permission denied, a read-only mount: the machine's condition,
            # typed (FILESYSTEM_UNUSABLE) wherever in the command it surfaced.
            # Paths inside the repository the command works in are shown repo-relative; any
            # other (the user cache, a command that needs no repository) stays absolute.
            typed = filesystem_error(exc, inv.known_root)
            if typed is None:
                raise
            return _fail(inv, typed)
        _config_warnings(inv)
        warnings = _masked_output(outcome, [*inv.warnings, *outcome.warnings])
        env = envelope(spec.path, inv.envelope_cwd, outcome.data, warnings)
        if outcome.error is not None:
            # A failure that still carries data (doctor): the report goes to stdout like a
            # success, the failure block to stderr, and the exit code is the error's.
            env["ok"] = False
            env["error"] = outcome.error.payload()
            text = outcome.text
            emit_success(inv.fmt, env, text if callable(text) else (lambda: str(text)))
            if inv.fmt in ("text", "both"):
                from ragit.cli.render import human_failure

                human = human_failure(outcome.error, spec, params)
                sys.stderr.write(printable(human, keep_colour=colour_enabled(sys.stderr)))
            sys.stdout.flush()
            return outcome.error.exit_code
        text = outcome.text
        pager = None
        if outcome.paged and inv.fmt == "text":
            from ragit.cli.pager import page, wants_pager

            pager = page if wants_pager() else None
        emit_success(inv.fmt, env, text if callable(text) else (lambda: str(text)), pager=pager)
        sys.stdout.flush()
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("[ragit] interrupted\n")
        return EXIT_INTERRUPTED
    except RuntimeUnsupported as exc:
        sys.stderr.write(f"[ragit] {exc}\n")
        return EXIT_UNSUPPORTED
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except Exception as exc:
        return _emit_unexpected(exc)


def _config_warnings(inv: Invocation) -> None:
    """Unknown sections and keys of the repository's config file: a warning on every command
    that runs in a repository whose config exists (``warnings`` of the envelope; stderr for
    ``text`` and ``both``), read after the command so that `config unset` reports the file
    it leaves."""
    if not inv.spec.takes_cwd or not inv._root_searched or inv._root is None:
        return
    from ragit.workspace import Workspace

    ws = Workspace(inv._root)
    try:
        if not ws.config_path.is_file():
            return
    except OSError:  # .ragit unreadable: the command's own error (or check) says so
        return
    from ragit.cli.render import paint
    from ragit.config import file_warnings

    found = file_warnings(ws)
    inv.warnings.extend(found)
    if inv.fmt in ("text", "both"):
        for warning in found:
            sys.stderr.write(f"{paint('warning:', 'yellow', sys.stderr)} {warning}\n")


def _masked_output(outcome: Outcome, warnings: list[str]) -> list[str]:
    """Mask what the command prints (contract §7): its data — in place, so the text
    rendering shows the same —, its warnings and its error; returns the warnings."""
    from ragit.security.masking import mask_text
    from ragit.security.output import mask_error, mask_in_place

    mask_in_place(outcome.data)
    mask_in_place(warnings)
    if isinstance(outcome.text, str):
        outcome.text = mask_text(outcome.text).text
    if outcome.error is not None:
        mask_error(outcome.error)
    return warnings


def _fail(inv: Invocation, error: RagitError) -> int:
    from ragit.cli.render import human_failure
    from ragit.security.output import mask_error, mask_in_place

    _config_warnings(inv)
    mask_error(error)  # contract §3: nothing secret in message or details
    mask_in_place(inv.warnings)
    env = envelope(inv.spec.path, inv.envelope_cwd, None, inv.warnings, error)
    human = human_failure(error, inv.spec, inv.params) if inv.fmt in ("text", "both") else None
    try:
        emit_failure(inv.fmt, env, error, human=human)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    return error.exit_code


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
