"""Running one case against an implementation, as a black box.

A case runs in a fresh temporary directory::

    <tmp>/home/      HOME, with a fixed .gitconfig; XDG_* dirs live below it
    <tmp>/outside/   a scratch directory outside the repository (${OUTSIDE})
    <tmp>/repo/      the fixture repository, or a plain empty directory (${REPO})

The setup steps and the step under test are real subprocesses with a hermetic
environment; the expectations are checked on their exit status, streams, JSON
envelope and on the files of the repository. See docs/conformance.md.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from conformance.matchers import MatchContext, match
from conformance.suite import Case

DEFAULT_TIMEOUT = 120.0
PASSTHROUGH_ENV = ("PATH", "SYSTEMROOT", "TMPDIR", "TEMP", "TMP")
GIT_NAME = "RAGit Conformance"
GIT_EMAIL = "conformance@ragit.invalid"
# 2026-01-02T00:00:00Z: commits made by setup steps get this fixed date.
GIT_DATE = "1767312000 +0000"
_GITCONFIG = f"""[user]
\tname = {GIT_NAME}
\temail = {GIT_EMAIL}
[init]
\tdefaultBranch = main
[commit]
\tgpgsign = false
[core]
\tautocrlf = false
\tquotePath = false
"""
_TRACEBACK = "Traceback (most recent call last):"
_VARIABLE = re.compile(r"\$\{(REPO|OUTSIDE|HEAD|HOSTNAME)\}")


class CaseError(Exception):
    """The case cannot be run as written (bad path, unborn ${HEAD}, fixture build failure)."""


@dataclass(frozen=True)
class Impl:
    """The implementation under test: argv prefixes for the CLI and the MCP server."""

    cli: tuple[str, ...]
    mcp: tuple[str, ...] | None = None


@dataclass
class CaseResult:
    """What running one case gave: ``pass``, ``fail``, ``skip`` or ``error`` plus reasons."""

    case_id: str
    target: str
    status: str
    reasons: list[str] = field(default_factory=list)
    duration: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class ProcResult:
    """A finished subprocess, with both streams as bytes."""

    argv: list[str]
    exit: int
    stdout: bytes
    stderr: bytes


# ---------------------------------------------------------------- environment


def resolve_command(command: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Split an ``--impl`` command and make its paths absolute.

    Cases run with the temporary repository as their working directory, so every
    word that contains a ``/`` and exists relative to the runner's working
    directory (``node dist/cli.js``) is made absolute, and a bare program name in
    the first position is looked up on PATH.
    """
    import shlex

    parts = shlex.split(command) if isinstance(command, str) else list(command)
    if not parts:
        raise CaseError("empty implementation command")
    out: list[str] = []
    for index, part in enumerate(parts):
        if "/" in part or os.sep in part:
            # abspath, not resolve(): a venv's python is a symlink whose target lacks the venv.
            out.append(os.path.abspath(part) if Path(part).exists() else part)
        elif index == 0:
            out.append(shutil.which(part) or part)
        else:
            out.append(part)
    return tuple(out)


def hermetic_env(tmp: Path, pass_env: tuple[str, ...] = ()) -> dict[str, str]:
    """The base environment of every subprocess of a case (no inherited GIT_* or RAGIT_*)."""
    env = {
        key: value for key, value in os.environ.items() if key in PASSTHROUGH_ENV or key in pass_env
    }
    home = tmp / "home"
    env.update(
        {
            "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CEILING_DIRECTORIES": str(tmp),
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": GIT_NAME,
            "GIT_AUTHOR_EMAIL": GIT_EMAIL,
            "GIT_AUTHOR_DATE": GIT_DATE,
            "GIT_COMMITTER_NAME": GIT_NAME,
            "GIT_COMMITTER_EMAIL": GIT_EMAIL,
            "GIT_COMMITTER_DATE": GIT_DATE,
            "LC_ALL": "C.UTF-8",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "NO_COLOR": "1",
        }
    )
    return env


# ---------------------------------------------------------------- fixtures


class FixtureCache:
    """Builds each fixture once per process (``python fixtures/build.py``) and copies it.

    Thread-safe; :meth:`close` removes the built templates.
    """

    def __init__(self, builder: Path, python: str = sys.executable) -> None:
        self.builder = builder
        self.python = python
        self._dir: Path | None = None
        self._lock = threading.Lock()
        self._name_locks: dict[str, threading.Lock] = {}
        self._built: dict[str, Path] = {}

    def _template(self, name: str) -> Path:
        with self._lock:
            if self._dir is None:
                self._dir = Path(tempfile.mkdtemp(prefix="ragit-conformance-fixtures-"))
            lock = self._name_locks.setdefault(name, threading.Lock())
            base = self._dir
        with lock:
            if name in self._built:
                return self._built[name]
            if not self.builder.is_file():
                raise CaseError(f"fixture builder {self.builder} not found")
            dest = base / name
            proc = subprocess.run(
                [self.python, str(self.builder), name, str(dest)],
                capture_output=True,
                check=False,
                timeout=DEFAULT_TIMEOUT,
            )
            if proc.returncode != 0:
                err = proc.stderr.decode("utf-8", "replace").strip()
                raise CaseError(f"building fixture {name!r} failed ({proc.returncode}): {err}")
            self._built[name] = dest
            return dest

    def materialize(self, name: str, dest: Path, env: dict[str, str]) -> None:
        """Copy fixture ``name`` to ``dest`` (which must not exist).

        Raises:
            CaseError: the builder is missing or fails.
        """
        shutil.copytree(self._template(name), dest, symlinks=True)
        # A copy has new inodes and ctimes; refresh the index's stat cache so the
        # copy starts as the builder left it (content is unchanged either way).
        if (dest / ".git").exists():
            subprocess.run(
                ["git", "update-index", "-q", "--refresh"],
                cwd=dest,
                env=env,
                capture_output=True,
                check=False,
            )

    def close(self) -> None:
        """Remove every built template."""
        with self._lock:
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None
                self._built.clear()


# ---------------------------------------------------------------- running


class _Run:
    """State of one case run: directories, environment, captures."""

    def __init__(self, case: Case, impl: Impl, tmp: Path, env: dict[str, str]) -> None:
        self.case = case
        self.impl = impl
        self.tmp = tmp
        self.repo = tmp / "repo"
        self.outside = tmp / "outside"
        self.env = env
        self.captures: dict[str, Any] = {}
        self.timeout = float(case.data.get("timeout", DEFAULT_TIMEOUT))

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

    def subst(self, value: Any) -> Any:
        """Replace ${REPO}, ${OUTSIDE}, ${HEAD} and ${HOSTNAME} in every string of ``value``."""
        if isinstance(value, str):
            return _VARIABLE.sub(self._variable, value)
        if isinstance(value, list):
            return [self.subst(item) for item in value]
        if isinstance(value, dict):
            return {key: self.subst(item) for key, item in value.items()}
        return value

    def _variable(self, found: re.Match[str]) -> str:
        name = found.group(1)
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
        if kind in ("run", "git"):
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
            expected = step.get("expectExit", 0)
            if proc.exit != expected:
                raise SetupFailed(
                    f"{where} {kind} {argv!r}: expected exit {expected}; {_describe_proc(proc)}"
                )
            if "capture" in step:
                run.captures[step["capture"]] = _parse_captured(proc.stdout, where)
        elif kind == "write":
            spec = step["write"]
            target = run.path(spec["path"])
            if "contentBase64" in spec:
                data = base64.b64decode(spec["contentBase64"])
            elif "json" in spec:
                data = (json.dumps(run.subst(spec["json"]), ensure_ascii=True) + "\n").encode()
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
                raise CaseError(f"{where}: cannot delete {step['delete']!r}: it does not exist")
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


_SETUP_KINDS = ("run", "git", "write", "delete", "truncate", "mkdir", "symlink", "env")


class SetupFailed(Exception):
    """A setup step did not do what the case needs (a failure of the implementation or git)."""


def _parse_captured(stdout: bytes, where: str) -> Any:
    text = stdout.decode("utf-8", "replace").strip()
    for candidate in (text, text.rsplit("\n", 1)[-1] if text else ""):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    raise SetupFailed(f"{where}: capture needs a JSON envelope on stdout, got {text[:200]!r}")


# ---------------------------------------------------------------- filesystem


FileState = tuple[str, str, int]


def fs_snapshot(root: Path) -> dict[str, FileState]:
    """Map every regular file and symlink under ``root`` (``.git`` excluded) to its state.

    A file's state is ``("file", sha256, mtime_ns)``; a symlink's is
    ``("link", target, 0)``.
    """
    state: dict[str, FileState] = {}
    if not root.is_dir():
        return state
    for dirpath, dirnames, files in os.walk(root):
        here = Path(dirpath)
        if here == root:
            dirnames[:] = [d for d in dirnames if d != ".git"]
        names = [f for f in files if not (here == root and f == ".git")]
        for name in [*names, *(d for d in dirnames if (here / d).is_symlink())]:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                state[rel] = ("link", os.readlink(path), 0)
            elif path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                state[rel] = ("file", digest, path.stat().st_mtime_ns)
    return state


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a repository glob: ``*`` and ``?`` stay in one segment, ``**`` crosses them."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(r".*")
            i += 2
        elif pattern[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append(r"[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def fs_diff(before: dict[str, FileState], after: dict[str, FileState]) -> dict[str, list[str]]:
    """Classify changed paths: created, removed, modified (bytes), touched (mtime only)."""
    diff: dict[str, list[str]] = {"created": [], "removed": [], "modified": [], "touched": []}
    for rel in sorted(set(before) | set(after)):
        old, new = before.get(rel), after.get(rel)
        if old is None:
            diff["created"].append(rel)
        elif new is None:
            diff["removed"].append(rel)
        elif old[:2] != new[:2]:
            diff["modified"].append(rel)
        elif old != new:
            diff["touched"].append(rel)
    return diff


def check_fs(expect: Any, diff: dict[str, list[str]]) -> list[str]:
    """Compare a filesystem diff with the case's ``fs`` expectation."""
    if expect == "unchanged":
        changes = [f"fs: {kind} {rel}" for kind, rels in diff.items() for rel in rels]
        return [f"{c} (expected no change under the repository)" for c in changes]
    problems: list[str] = []
    allowed = [glob_regex(p) for p in expect.get("unchangedExcept", [])]
    wanted = {
        "created": [glob_regex(p) for p in expect.get("created", [])],
        "removed": [glob_regex(p) for p in expect.get("removed", [])],
        "modified": [glob_regex(p) for p in expect.get("modified", [])],
    }
    for kind, patterns in wanted.items():
        for pattern, raw in zip(patterns, expect.get(kind, []), strict=True):
            if not any(pattern.match(rel) for rel in diff[kind]):
                problems.append(f"fs: expected a {kind} path matching {raw!r}, got {diff[kind]}")
    for kind, rels in diff.items():
        own = wanted["modified"] if kind == "touched" else wanted.get(kind, [])
        for rel in rels:
            if not any(p.match(rel) for p in [*own, *allowed]):
                problems.append(f"fs: unexpected {kind} path {rel}")
    return problems


# ---------------------------------------------------------------- expectations


def _decode(data: bytes, stream: str, problems: list[str]) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(f"{stream}: not valid UTF-8 ({exc})")
        return data.decode("utf-8", "replace")


def _is_envelope(value: object) -> bool:
    return isinstance(value, dict) and "ok" in value and ("command" in value or "tool" in value)


def parse_stdout(mode: str, stdout: str) -> tuple[Any, list[str]]:
    """Check stdout against its mode; return the envelope it carries (if any) and problems."""
    if mode == "any":
        return None, []
    if mode == "empty":
        return None, [] if stdout == "" else [f"stdout: expected empty, got {stdout[:300]!r}"]
    if mode == "envelope":
        try:
            value = json.loads(stdout)
        except ValueError as exc:
            return None, [f"stdout: expected exactly one JSON envelope ({exc}): {stdout[:300]!r}"]
        if not isinstance(value, dict):
            return None, [f"stdout: expected a JSON object, got {stdout[:300]!r}"]
        return value, []
    if mode == "text":
        problems = []
        if not stdout.strip():
            problems.append("stdout: expected human text, got nothing")
        else:
            try:
                json.loads(stdout)
                problems.append(f"stdout: expected human text, got JSON {stdout[:300]!r}")
            except ValueError:
                pass
            for line in stdout.splitlines():
                try:
                    if _is_envelope(json.loads(line)):
                        problems.append("stdout: expected human text only, found an envelope line")
                        break
                except ValueError:
                    continue
        return None, problems
    if mode == "text+envelope":
        body = stdout[:-1] if stdout.endswith("\n") else stdout
        lines = body.split("\n")
        if len(lines) < 3 or lines[-2] != "---":
            return None, [
                "stdout: expected text, a '---' line and the envelope as the last line, "
                f"got {stdout[-400:]!r}"
            ]
        problems = []
        if not "\n".join(lines[:-2]).strip():
            problems.append("stdout: the text before '---' is empty")
        try:
            value = json.loads(lines[-1])
        except ValueError as exc:
            return None, [*problems, f"stdout: the last line is not one JSON envelope ({exc})"]
        if not isinstance(value, dict):
            return None, [*problems, "stdout: the last line is not a JSON object"]
        return value, problems
    return None, [f"stdout: unknown expectation {mode!r}"]


def check_stderr(expect: Any, stderr: str) -> list[str]:
    """Compare stderr with ``empty``, ``nonEmpty`` or ``{"contains": [...]}``."""
    if expect == "empty" and stderr != "":
        return [f"stderr: expected empty, got {stderr[:300]!r}"]
    if expect == "nonEmpty" and not stderr.strip():
        return ["stderr: expected a message, got nothing"]
    if isinstance(expect, dict):
        return [
            f"stderr: expected to contain {needle!r}, got {stderr[:300]!r}"
            for needle in expect.get("contains", [])
            if needle not in stderr
        ]
    return []


def check_absent(stream: str, needles: list[str], text: str) -> list[str]:
    """Strings that must not occur in a stream (a planted secret, a private query)."""
    return [
        f"{stream}: contains {needle!r}, which must not appear"
        for needle in needles
        if needle in text
    ]


def json_path(value: Any, path: str) -> Any:
    """Follow a dotted path (``data.hits.0.path``); raises KeyError when it does not exist."""
    current = value
    for part in [p for p in path.split(".") if p]:
        if isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        elif isinstance(current, dict) and part in current:
            current = current[part]
        else:
            raise KeyError(path)
    return current


def check_files(run: _Run, specs: list[dict[str, Any]], ctx: MatchContext) -> list[str]:
    """Check the ``files`` expectations (existence and content of repository paths)."""
    problems: list[str] = []
    for spec in specs:
        rel = spec["path"]
        path = run.path(rel)
        exists = path.exists() or path.is_symlink()
        if "exists" in spec and exists != spec["exists"]:
            problems.append(f"files: {rel} should {'' if spec['exists'] else 'not '}exist")
            continue
        content_checks = {"equals", "startsWith", "containsLines", "matches", "json"} & set(spec)
        if not content_checks:
            continue
        if not path.is_file():
            problems.append(f"files: {rel} is not a regular file")
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        if "equals" in spec and text != spec["equals"]:
            problems.append(f"files: {rel} is {text[:300]!r}, expected {spec['equals'][:300]!r}")
        if "startsWith" in spec and not text.startswith(spec["startsWith"]):
            problems.append(f"files: {rel} does not start with {spec['startsWith']!r}")
        lines = text.splitlines()
        for line in spec.get("containsLines", []):
            if line not in lines:
                problems.append(f"files: {rel} has no line {line!r}")
        if "matches" in spec and not re.search(spec["matches"], text, re.MULTILINE):
            problems.append(f"files: {rel} does not match /{spec['matches']}/")
        if "json" in spec:
            try:
                value = json.loads(text)
            except ValueError as exc:
                problems.append(f"files: {rel} is not JSON ({exc})")
            else:
                problems += [f"files: {rel}: {p}" for p in match(spec["json"], value, ctx)]
    return problems


# ---------------------------------------------------------------- one case


def run_case(
    case: Case,
    impl: Impl,
    fixtures: FixtureCache,
    *,
    keep: bool = False,
    pass_env: tuple[str, ...] = (),
) -> CaseResult:
    """Run ``case`` against ``impl`` in a fresh temporary directory and judge it."""
    started = time.monotonic()
    result = CaseResult(case.id, case.target, "pass")
    if case.uses_mcp and impl.mcp is None:
        result.status = "skip"
        result.reasons.append("needs an MCP implementation (--mcp-impl)")
        return result
    tmp = Path(tempfile.mkdtemp(prefix=f"ragit-case-{case.id[:40]}-")).resolve()
    try:
        (tmp / "home").mkdir()
        (tmp / "home" / ".gitconfig").write_text(_GITCONFIG, encoding="utf-8")
        (tmp / "outside").mkdir()
        run = _Run(case, impl, tmp, hermetic_env(tmp, pass_env))
        fixture = case.data.get("fixture")
        if fixture is None:
            run.repo.mkdir()
        else:
            fixtures.materialize(fixture, run.repo, run.env)
        try:
            _setup(run, case.data.get("setup", []))
        except SetupFailed as exc:
            result.status = "fail"
            result.reasons.append(f"setup failed: {exc}")
            return result
        result.reasons = _run_step(run, result)
        if result.reasons:
            result.status = "fail"
    except CaseError as exc:
        result.status = "error"
        result.reasons.append(str(exc))
    finally:
        result.duration = time.monotonic() - started
        if keep:
            result.detail["tmp"] = str(tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return result


def _run_step(run: _Run, result: CaseResult) -> list[str]:
    case = run.case
    step = case.data["step"]
    expect = case.data.get("expect", {})
    before = fs_snapshot(run.repo) if "fs" in expect else {}
    problems: list[str] = []
    envelope: Any = None
    if "mcp" in step:
        from conformance.mcp_driver import call_mcp

        cwd = run.path(step["cwd"]) if "cwd" in step else run.repo
        outcome = call_mcp(
            [*run.command("mcp"), *run.subst(step.get("serverArgs", []))],
            cwd=cwd,
            env=run.step_env(step),
            request=run.subst(step["mcp"]),
            timeout=run.timeout,
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
            problems.append(f"(server stderr: {outcome.stderr.strip()[-800:]!r})")
    else:
        proc = run.run_argv(step, step["argv"])
        result.detail.update(
            exit=proc.exit, stdout=_excerpt(proc.stdout, 4000), stderr=_excerpt(proc.stderr, 4000)
        )
        stdout = _decode(proc.stdout, "stdout", problems)
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
            problems.append(f"stdout: does not match /{expect['stdoutMatches']}/: {stdout[:200]!r}")
        problems += check_stderr(expect.get("stderr"), stderr)
        problems += check_absent("stdout", expect.get("stdoutNotContains", []), stdout)
        problems += check_absent("stderr", expect.get("stderrNotContains", []), stderr)
        debug = run.step_env(step).get("RAGIT_DEBUG") == "1"
        if _TRACEBACK in stderr and not debug:
            problems.append("stderr: a traceback leaked (only RAGIT_DEBUG=1 may print one)")
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
    problems += check_files(run, expect.get("files", []), ctx)
    if problems and "stdout" in result.detail:
        problems.append(f"(process: {_describe_proc_detail(result.detail)})")
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
