"""Running one case against an implementation, as a black box.

A case runs in a fresh temporary directory::

    <tmp>/home/      HOME, with a fixed .gitconfig; XDG_* dirs live below it
    <tmp>/outside/   a scratch directory outside the repository (${OUTSIDE})
    <tmp>/repo/      the fixture repository, or a plain empty directory (${REPO})

The setup steps and the step under test are real subprocesses with a hermetic
environment; the expectations are checked on their exit status, streams, JSON
envelope and on the files of the repository. See docs/conformance.md.

A setup step that does not do what the case needs makes the case ERROR (it never
reached its rule), naming the step, its exit status and the implementation's own
words; only a step marked ``judged`` (it is itself what the rule promises, such as
running a recovery command) turns into a FAIL of the rule.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from conformance.backends import STORE_DIR, Backend, not_applicable
from conformance.checks import (
    TRACEBACK,
    check_absent,
    check_files,
    check_stderr,
    decode,
    envelope_words,
    json_path,
    own_words,
    parse_stdout,
)
from conformance.environment import DEFAULT_TIMEOUT, GITCONFIG, CaseError, Impl, hermetic_env
from conformance.fixture_cache import FixtureCache
from conformance.fsdiff import check_fs, fs_diff, fs_snapshot
from conformance.matchers import MatchContext, match
from conformance.setup_cache import SetupCache
from conformance.suite import Case

_VARIABLE = re.compile(r"\$\{(REPO|OUTSIDE|HEAD|HOSTNAME|CAPTURE:[A-Za-z][A-Za-z0-9_-]*:[^}]*)\}")


@dataclass
class CaseResult:
    """What running one case gave: ``pass``, ``fail``, ``skip``, ``error`` or ``n/a`` (the
    case does not apply to the run's store backend) plus reasons."""

    case_id: str
    target: str
    status: str
    reasons: list[str] = field(default_factory=list)
    duration: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)
    backend: str = "zvec"


@dataclass
class ProcResult:
    """A finished subprocess, with both streams as bytes."""

    argv: list[str]
    exit: int
    stdout: bytes
    stderr: bytes


# ---------------------------------------------------------------- running


class _Run:
    """State of one case run: directories, environment, captures."""

    def __init__(
        self,
        case: Case,
        impl: Impl,
        tmp: Path,
        env: dict[str, str],
        backend: Backend | None = None,
    ) -> None:
        self.case = case
        self.impl = impl
        self.tmp = tmp
        self.repo = tmp / "repo"
        self.outside = tmp / "outside"
        self.backend = backend or Backend()
        self.env = {**env, **self.backend.env}
        self.repository = self.backend.repository_name(case)
        self.captures: dict[str, Any] = {}
        self.timeout = float(case.data.get("timeout", DEFAULT_TIMEOUT))

    # ------------------------------------------------------------ backend
    def prepare(self) -> None:
        """Point the repository at the run's store backend once it has a config."""
        self.backend.prepare(self.repo, self.repository)

    def has_store_dir(self) -> bool:
        return (self.repo / STORE_DIR).exists()

    def store_dir_created(self, had: bool, what: str) -> str | None:
        """On the shared store, a command that created the embedded store's directory."""
        if self.backend.name == "zvec" or had or not self.has_store_dir():
            return None
        return f"{what} created {STORE_DIR} (the {self.backend.name} backend has no local store)"

    # ------------------------------------------------------------ substitution
    def head(self) -> str | None:
        if not (self.repo / ".git").exists():
            return None
        proc = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            cwd=self.repo,
            env=self.env,
            capture_output=True,
            check=False,
        )
        sha = proc.stdout.decode("ascii", "replace").strip()
        return sha if proc.returncode == 0 and sha else None

    def subst(self, value: Any, *, whole: bool = False) -> Any:
        """Replace ${REPO}, ${OUTSIDE}, ${HEAD}, ${HOSTNAME} and ${CAPTURE:name:path} in
        every string of ``value``; with ``whole``, a string that is exactly one
        ${CAPTURE:…} becomes the captured value itself (a list, a number, …)."""
        if isinstance(value, str):
            found = _VARIABLE.fullmatch(value)
            if whole and found and found.group(1).startswith("CAPTURE:"):
                return self._captured(found.group(1))
            return _VARIABLE.sub(self._variable, value)
        if isinstance(value, list):
            return [self.subst(item, whole=whole) for item in value]
        if isinstance(value, dict):
            return {key: self.subst(item, whole=whole) for key, item in value.items()}
        return value

    def _captured(self, token: str) -> Any:
        """The value at ``path`` of the envelope a setup step captured as ``name``."""
        _, name, path = token.split(":", 2)
        if name not in self.captures:
            raise SetupFailed(f"${{{token}}}: no capture named {name!r} so far")
        try:
            return json_path(self.captures[name], path)
        except KeyError:
            raise SetupFailed(
                f"${{{token}}}: capture {name!r} has no {path!r}",
                words=envelope_words(self.captures[name]),
            ) from None

    def _variable(self, found: re.Match[str]) -> str:
        name = found.group(1)
        if name.startswith("CAPTURE:"):
            value = self._captured(name)
            return value if isinstance(value, str) else json.dumps(value)
        if name == "REPO":
            return str(self.repo)
        if name == "OUTSIDE":
            return str(self.outside)
        if name == "HOSTNAME":
            return socket.gethostname()
        head = self.head()
        if head is None:
            raise CaseError("${HEAD} is used but the repository has no HEAD commit")
        return head

    def path(self, raw: str) -> Path:
        """A step path: relative to the repository, or absolute under ${REPO} or ${OUTSIDE}."""
        text = self.subst(raw)
        if ".." in PurePosixPath(text).parts:
            raise CaseError(f"path {raw!r} must not contain '..'")
        path = Path(text)
        if not path.is_absolute():
            return self.repo / path
        for base in (self.repo, self.outside):
            if path == base or base in path.parents:
                return path
        raise CaseError(f"path {raw!r} is outside the case directories")

    # ------------------------------------------------------------ processes
    def command(self, which: str) -> tuple[str, ...]:
        if which == "mcp":
            if self.impl.mcp is None:
                raise CaseError("the case needs --mcp-impl")
            return self.impl.mcp
        return self.impl.cli

    def proc(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        stdin: bytes = b"",
    ) -> ProcResult:
        launcher = self.impl.launcher
        if launcher is not None and launcher.serves(argv, env, cwd):
            try:
                code, out, err = launcher.run(
                    argv, cwd=cwd, env=env, input=stdin, timeout=self.timeout
                )
            except subprocess.TimeoutExpired as exc:
                raise CaseError(f"{argv!r} did not finish within {self.timeout:g}s") from exc
            return ProcResult(argv, code, out, err)
        try:
            done = subprocess.run(
                argv,
                cwd=cwd,
                env=env,
                input=stdin,
                capture_output=True,
                check=False,
                timeout=self.timeout,
            )
        except subprocess.TimeoutExpired as exc:
            raise CaseError(f"{argv!r} did not finish within {self.timeout:g}s") from exc
        except OSError as exc:
            raise CaseError(f"cannot run {argv!r}: {exc}") from exc
        return ProcResult(argv, done.returncode, done.stdout, done.stderr)

    def step_env(self, step: dict[str, Any]) -> dict[str, str]:
        env = dict(self.env)
        for key, value in self.subst(step.get("env", {})).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = str(value)
        return env

    def stdin_of(self, step: dict[str, Any]) -> bytes:
        if "stdinBase64" in step:
            return base64.b64decode(step["stdinBase64"])
        return str(self.subst(step.get("stdin", ""))).encode("utf-8")

    def shim_dir(self) -> Path:
        """A directory holding ``ragit``: a script that runs the CLI under test."""
        bindir = self.tmp / "bin"
        script = bindir / "ragit"
        if not script.exists():
            bindir.mkdir(exist_ok=True)
            command = " ".join(shlex.quote(word) for word in self.impl.cli)
            script.write_text(f'#!/bin/sh\nexec {command} "$@"\n', encoding="utf-8")
            script.chmod(0o755)
        return bindir

    def run_argv(self, step: dict[str, Any], argv: list[str]) -> ProcResult:
        full = [*self.command(step.get("impl", "cli")), *self.subst(argv)]
        cwd = self.path(step["cwd"]) if "cwd" in step else self.repo
        return self.proc(full, cwd=cwd, env=self.step_env(step), stdin=self.stdin_of(step))


def _excerpt(data: bytes, limit: int = 800) -> str:
    text = data.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more chars]"


def _describe_proc(proc: ProcResult) -> str:
    return f"exit {proc.exit}; stdout: {_excerpt(proc.stdout)!r}; stderr: {_excerpt(proc.stderr)!r}"


def _setup(run: _Run, steps: list[dict[str, Any]]) -> None:
    for index, step in enumerate(steps):
        where = f"setup[{index}]"
        kind = next(iter(k for k in step if k in _SETUP_KINDS), None)
        if kind is None:
            raise CaseError(f"{where}: unknown setup step {sorted(step)}")
        try:
            _setup_step(run, step, kind, where)
        except OSError as exc:
            # A file step on a path the implementation did not create (or cannot be read).
            failed = SetupFailed(f"{where}: {exc.strerror}: {exc.filename}")
            failed.judged = bool(step.get("judged"))
            raise failed from exc
        except SetupFailed as exc:
            exc.judged = exc.judged or bool(step.get("judged"))
            raise
        run.prepare()


def _check_exit(step: dict[str, Any], shown: str, proc: ProcResult) -> None:
    expected = step.get("expectExit", 0)
    if proc.exit != expected:
        raise SetupFailed(
            f"{shown} exited {proc.exit}, expected {expected}",
            _describe_proc(proc),
            words=own_words(proc.stdout, proc.stderr),
        )


def _setup_step(run: _Run, step: dict[str, Any], kind: str, where: str) -> None:
    if kind in ("run", "git"):
        had_store = run.has_store_dir()
        argv = step[kind]
        if kind == "git":
            cwd = run.path(step["cwd"]) if "cwd" in step else run.repo
            proc = run.proc(
                ["git", *run.subst(argv)],
                cwd=cwd,
                env=run.step_env(step),
                stdin=run.stdin_of(step),
            )
        else:
            proc = run.run_argv(step, argv)
        shown = " ".join(str(word) for word in argv)
        _check_exit(step, f"{where} `{'git ' if kind == 'git' else ''}{shown}`", proc)
        if "capture" in step:
            run.captures[step["capture"]] = _parse_captured(proc.stdout, where)
        created = run.store_dir_created(had_store, f"{where} `{shown}`")
        if created is not None:  # a rule of the backend broken in setup: judged
            raise SetupFailed(created, _describe_proc(proc), judged=True)
    elif kind == "recover":
        _recover(run, step, where)
    elif kind == "write":
        spec = step["write"]
        target = run.path(spec["path"])
        if "contentBase64" in spec:
            data = base64.b64decode(spec["contentBase64"])
        elif "json" in spec:
            value = run.subst(spec["json"], whole=True)
            data = (json.dumps(value, ensure_ascii=True) + "\n").encode()
        else:
            data = str(run.subst(spec["content"])).encode("utf-8")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        target.write_bytes(data)
    elif kind == "delete":
        target = run.path(step["delete"])
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        else:
            raise SetupFailed(f"{where}: cannot delete {step['delete']!r}: it does not exist")
    elif kind == "truncate":
        spec = step["truncate"]
        with run.path(spec["path"]).open("r+b") as handle:
            handle.truncate(int(spec["bytes"]))
    elif kind == "mkdir":
        run.path(step["mkdir"]).mkdir(parents=True, exist_ok=True)
    elif kind == "symlink":
        spec = step["symlink"]
        link = run.path(spec["path"])
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(run.subst(spec["target"]))
    elif kind == "env":
        for key, value in run.subst(step["env"]).items():
            if value is None:
                run.env.pop(key, None)
            else:
                run.env[key] = str(value)


def _recover(run: _Run, step: dict[str, Any], where: str) -> None:
    """Run a recovery command an earlier envelope printed, as written, with ``sh -c``.

    ``ragit`` in it is the implementation under test: a script of that name, first on
    PATH, runs the ``--impl`` command (contract §2: a recovery runs as written).
    """
    spec = step["recover"]
    path = spec.get("path", "error.recovery.command")
    command = run.subst(f"${{CAPTURE:{spec['capture']}:{path}}}", whole=True)
    if not isinstance(command, str) or not command.strip():
        raise SetupFailed(
            f"{where}: capture {spec['capture']!r} has no recovery command at {path!r} "
            f"(found {json.dumps(command)})",
            words=envelope_words(run.captures.get(spec["capture"])),
        )
    env = run.step_env(step)
    env["PATH"] = f"{run.shim_dir()}{os.pathsep}{env.get('PATH', '')}"
    proc = run.proc(["sh", "-c", command], cwd=run.repo, env=env)
    _check_exit(step, f"{where} recovery `{command}`", proc)


_SETUP_KINDS = ("run", "git", "recover", "write", "delete", "truncate", "mkdir", "symlink", "env")


class SetupFailed(Exception):
    """A setup step did not do what the case needs (a failure of the implementation or git).

    The case is an ERROR (its rule was never reached) unless the step is ``judged``: part
    of what the case's rule promises, so its failure is a FAIL of that rule.
    """

    def __init__(
        self, message: str, excerpt: str = "", *, words: str | None = None, judged: bool = False
    ) -> None:
        super().__init__(message)
        self.excerpt = excerpt
        self.words = words
        self.judged = judged


def _parse_captured(stdout: bytes, where: str) -> Any:
    text = stdout.decode("utf-8", "replace").strip()
    for candidate in (text, text.rsplit("\n", 1)[-1] if text else ""):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    raise SetupFailed(f"{where}: capture needs a JSON envelope on stdout, got {text[:200]!r}")


# ---------------------------------------------------------------- one case


def run_case(
    case: Case,
    impl: Impl,
    fixtures: FixtureCache,
    *,
    keep: bool = False,
    pass_env: tuple[str, ...] = (),
    backend: Backend | None = None,
    setups: SetupCache | None = None,
) -> CaseResult:
    """Run ``case`` against ``impl`` in a fresh temporary directory and judge it.

    On a ``backend`` the case does not apply to, the result is ``n/a`` with the reason.
    With ``setups``, a leading run of setup steps other cases share comes from that cache
    (conformance.setup_cache), restored at the directory it was built in.
    """
    started = time.monotonic()
    result = CaseResult(case.id, case.target, "pass")
    if backend is not None:
        result.backend = backend.name
        reason = not_applicable(case, backend.name)
        if reason is not None:
            result.status = "n/a"
            result.reasons.append(reason)
            return result
    if case.uses_mcp and impl.mcp is None:
        result.status = "skip"
        result.reasons.append("needs an MCP implementation (--mcp-impl)")
        return result
    steps: list[dict[str, Any]] = case.data.get("setup", [])
    cached = 0
    server = backend.databases if backend is not None else None
    if setups is not None and not keep:
        name = backend.name if backend is not None else "zvec"
        cached = setups.prefix(case, name, server_copies=server is not None)
    try:
        if cached:
            key = [case.data.get("fixture"), steps[:cached], list(pass_env)]
            if server is not None and backend is not None:
                key.append(backend.name)

            def on(server_env: dict[str, str]) -> Backend | None:
                if backend is None or not server_env:
                    return backend
                return dataclasses.replace(backend, env={**backend.env, **server_env})

            def build(tmp: Path, server_env: dict[str, str]) -> bool:
                run = _start(case, impl, fixtures, tmp, pass_env, on(server_env))
                try:
                    _setup(run, steps[:cached])
                except (SetupFailed, CaseError, OSError):
                    return False
                return True

            assert setups is not None
            with setups.directory(
                key, build, lambda tmp: hermetic_env(tmp, pass_env), server
            ) as restored:
                if restored is not None:
                    tmp, server_env = restored
                    run = _Run(case, impl, tmp, hermetic_env(tmp, pass_env), on(server_env))
                    run.prepare()
                    _judge(run, steps[cached:], result)
                    return result
        tmp = Path(tempfile.mkdtemp(prefix=f"ragit-case-{case.id[:40]}-")).resolve()
        try:
            _judge(_start(case, impl, fixtures, tmp, pass_env, backend), steps, result)
        finally:
            if keep:
                result.detail["tmp"] = str(tmp)
            else:
                shutil.rmtree(tmp, ignore_errors=True)
    except CaseError as exc:
        result.status = "error"
        result.reasons.append(str(exc))
    finally:
        result.duration = time.monotonic() - started
    return result


def _start(
    case: Case,
    impl: Impl,
    fixtures: FixtureCache,
    tmp: Path,
    pass_env: tuple[str, ...],
    backend: Backend | None,
) -> _Run:
    """A case's directories in ``tmp`` (which exists), its fixture materialized."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "home").mkdir()
    (tmp / "home" / ".gitconfig").write_text(GITCONFIG, encoding="utf-8")
    (tmp / "outside").mkdir()
    run = _Run(case, impl, tmp, hermetic_env(tmp, pass_env), backend)
    fixture = case.data.get("fixture")
    if fixture is None:
        run.repo.mkdir()
    else:
        fixtures.materialize(fixture, run.repo, run.env)
    run.prepare()
    return run


def _judge(run: _Run, steps: list[dict[str, Any]], result: CaseResult) -> None:
    """Run the remaining setup ``steps`` and the step under test; record the verdict."""
    try:
        _setup(run, steps)
    except SetupFailed as exc:
        # Not reaching the rule is no verdict on it: ERROR, unless the step was judged.
        result.status = "fail" if exc.judged else "error"
        result.reasons.append(f"{'' if exc.judged else 'setup failed: '}{exc}")
        if exc.words:
            result.detail["words"] = exc.words
        if exc.excerpt:
            result.detail["excerpt"] = exc.excerpt
        return
    try:
        result.reasons = _run_step(run, result)
    except SetupFailed as exc:  # the step under test names a capture setup did not make
        result.status = "error"
        result.reasons.append(f"step: {exc}")
        return
    if result.reasons:
        result.status = "fail"


def _run_step(run: _Run, result: CaseResult) -> list[str]:
    case = run.case
    step = case.data["step"]
    expect = case.data.get("expect", {})
    before = fs_snapshot(run.repo) if "fs" in expect else {}
    had_store = run.has_store_dir()
    problems: list[str] = []
    envelope: Any = None
    words: str | None = None
    if "mcp" in step:
        from conformance.mcp_driver import call_mcp

        cwd = run.path(step["cwd"]) if "cwd" in step else run.repo
        outcome = call_mcp(
            [*run.command("mcp"), *run.subst(step.get("serverArgs", []))],
            cwd=cwd,
            env=run.step_env(step),
            request=run.subst(step["mcp"]),
            timeout=run.timeout,
            launcher=run.impl.launcher,
        )
        result.detail["mcp"] = {"stderr": outcome.stderr[-2000:], "result": outcome.result}
        problems += outcome.problems
        envelope = outcome.envelope
        mcp_expect = expect.get("mcp", {})
        if outcome.result is not None:
            if "isError" in mcp_expect and outcome.is_error is not mcp_expect["isError"]:
                problems.append(
                    f"mcp: isError is {outcome.is_error}, expected {mcp_expect['isError']}"
                )
            if "result" in mcp_expect:
                problems += [
                    f"mcp result: {p}"
                    for p in match(mcp_expect["result"], outcome.result, _context(run))
                ]
        if problems and outcome.stderr.strip():
            result.detail["excerpt"] = f"server stderr: {outcome.stderr.strip()[-800:]!r}"
        words = envelope_words(envelope) or own_words("", outcome.stderr)
    else:
        proc = run.run_argv(step, step["argv"])
        result.detail.update(
            exit=proc.exit, stdout=_excerpt(proc.stdout, 4000), stderr=_excerpt(proc.stderr, 4000)
        )
        words = own_words(proc.stdout, proc.stderr)
        stdout = decode(proc.stdout, "stdout", problems)
        stderr = proc.stderr.decode("utf-8", "replace")
        want_exit = expect.get("exit")
        if want_exit == "nonZero":
            if proc.exit == 0:
                problems.append("exit: expected a non-zero status, got 0")
        elif want_exit is not None and proc.exit != want_exit:
            problems.append(f"exit: expected {want_exit}, got {proc.exit}")
        envelope, stdout_problems = parse_stdout(expect.get("stdout", "any"), stdout)
        problems += stdout_problems
        if "stdoutMatches" in expect and not re.search(expect["stdoutMatches"], stdout, re.M):
            problems.append(f"stdout: nothing matches /{expect['stdoutMatches']}/")
        problems += check_stderr(expect.get("stderr"), stderr)
        problems += check_absent("stdout", expect.get("stdoutNotContains", []), stdout)
        problems += check_absent("stderr", expect.get("stderrNotContains", []), stderr)
        debug = run.step_env(step).get("RAGIT_DEBUG") == "1"
        if TRACEBACK in stderr and not debug:
            problems.append("stderr: a traceback leaked (only RAGIT_DEBUG=1 may print one)")
    created = run.store_dir_created(had_store, "the step")
    if created is not None:
        problems.append(created)
    ctx = _context(run)
    if "envelope" in expect:
        if envelope is None:
            if not problems:
                problems.append("envelope: no envelope to compare")
        else:
            problems += [f"envelope: {p}" for p in match(expect["envelope"], envelope, ctx)]
    for spec in expect.get("equalCaptures", []):
        if envelope is not None:
            problems += _check_capture(run, spec, envelope)
        elif not problems:
            problems.append("equalCaptures: no envelope to compare")
    if "fs" in expect:
        problems += check_fs(expect["fs"], fs_diff(before, fs_snapshot(run.repo)))
    problems += check_files(run.path, expect.get("files", []), ctx)
    if problems and "stdout" in result.detail:
        result.detail["excerpt"] = _describe_proc_detail(result.detail)
    if problems and words:
        result.detail["words"] = words
    return problems


def _describe_proc_detail(detail: dict[str, Any]) -> str:
    return (
        f"exit {detail['exit']}; stdout: {detail['stdout'][:800]!r}; "
        f"stderr: {detail['stderr'][:800]!r}"
    )


def _context(run: _Run) -> MatchContext:
    return MatchContext(cwd=str(run.repo), outside=str(run.outside), head=run.head())


def _check_capture(run: _Run, spec: dict[str, Any], envelope: Any) -> list[str]:
    name = spec["capture"]
    if name not in run.captures:
        return [f"equalCaptures: no capture named {name!r}"]
    try:
        mine = json_path(envelope, spec.get("path", ""))
    except KeyError:
        return [f"equalCaptures: the envelope has no {spec.get('path')!r}"]
    try:
        theirs = json_path(run.captures[name], spec.get("capturePath", spec.get("path", "")))
    except KeyError:
        return [f"equalCaptures: capture {name!r} has no {spec.get('capturePath')!r}"]
    if mine != theirs:
        return [
            f"equalCaptures: {spec.get('path')!r} differs from capture {name!r}: "
            f"{json.dumps(mine)[:300]} != {json.dumps(theirs)[:300]}"
        ]
    return []
