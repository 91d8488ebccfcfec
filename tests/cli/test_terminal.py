"""What a person sees at a terminal: formats, usage errors, text, colour.

Terminal behaviour runs under a real pseudo-terminal (``pty``); pipes are real pipes.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli._many import run_lines
from tests.cli._pty import indexed_docs_basic

from fixtures.build import build_fixture

RAGIT = [sys.executable, "-m", "ragit"]


def _pty(args: list[str], cwd: Path, **env: str) -> tuple[str, int]:
    """Run ragit with stdout and stderr on a pseudo-terminal; return what it shows."""
    full = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    full.update(env)
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child process
        os.chdir(cwd)
        os.execve(sys.executable, [*RAGIT, *args], full)
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return out.decode("utf-8", "replace").replace("\r\n", "\n"), os.waitstatus_to_exitcode(status)


def _pipe(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*RAGIT, *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_docs_basic(tmp_path_factory.mktemp("term") / "repo")


# ---------------------------------------------------------------- item 1: formats


def test_status_at_a_terminal_is_text(repo: Path) -> None:
    """docs/contract.md: with no flag, env or config, a terminal gets text for every command."""
    out, code = _pty(["status"], repo)
    assert code == 0
    assert "snapshot:" in out and "indexed" in out
    assert '"command"' not in out


def test_query_at_a_terminal_has_no_envelope_line(repo: Path) -> None:
    out, code = _pty(["query", "ledger"], repo)
    assert code == 0
    assert "---" not in out.splitlines() and '{"command"' not in out


def test_a_pipe_gets_the_json_envelope(repo: Path) -> None:
    """Contract-mandated (§2): json when stdout is not a terminal."""
    proc = _pipe(["status"], repo)
    assert json.loads(proc.stdout)["command"] == "status"


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("query", ["query", "ledger"]),
        ("context pack", ["context", "pack", "ledger"]),
        ("memory recall", ["memory", "recall", "ledger"]),
        ("log", ["log"]),
        ("drift", ["drift"]),
        ("timeline", ["timeline"]),
        ("doctor", ["doctor"]),
        ("init", ["init", "--yes"]),
        ("hooks install", ["hooks", "install", "--dry-run"]),
        ("narrative", ["narrative", "--dry-run"]),
    ],
)
def test_a_pipe_gets_one_json_envelope_from_every_command(
    repo: Path, command: str, args: list[str]
) -> None:
    """Contract-mandated (§2): `ragit … | jq .ok` works for every command, one rule for all."""
    proc = _pipe(args, repo)
    assert proc.returncode == 0, proc.stderr
    envelope = json.loads(proc.stdout)
    assert envelope["ok"] is True and envelope["command"] == command


@pytest.mark.parametrize(
    "args",
    [
        ["query", "ledger"],
        ["context", "pack", "ledger"],
        ["memory", "recall", "ledger"],
        ["log"],
        ["ingest", "--all"],
        ["config", "list"],
        ["hooks", "status"],
        ["security", "audit"],
    ],
)
def test_a_terminal_gets_text_from_every_command(repo: Path, args: list[str]) -> None:
    """Contract-mandated (§2): text at a terminal; `both` never unless asked for."""
    out, code = _pty(args, repo, NO_COLOR="1")
    assert code == 0, out
    assert '"command"' not in out and "---" not in out.splitlines()


def test_completion_prints_its_script_in_a_pipe_and_the_envelope_when_asked(repo: Path) -> None:
    """Contract-mandated (§2): completion prints its shell script either way."""
    script = _pipe(["completion", "bash"], repo).stdout
    assert script.lstrip().startswith("_ragit_completion") or "complete " in script
    assert json.loads(_pipe(["completion", "bash", "--format", "json"], repo).stdout)["ok"]


def test_both_is_printed_only_when_asked_for(repo: Path) -> None:
    """Contract-mandated (§2): the flag, RAGIT_FORMAT or output.format asks for both."""
    assert "---" not in _pipe(["query", "ledger"], repo).stdout.splitlines()
    asked = _pipe(["query", "ledger"], repo, RAGIT_FORMAT="both").stdout.splitlines()
    assert asked[-2] == "---" and json.loads(asked[-1])["command"] == "query"


def test_every_command_has_a_conformance_case_for_the_format_in_a_pipe() -> None:
    """Contract-mandated (§2): the suite pins the pipe format of every command (FMT-007)."""
    from ragit.contract.registry import COMMANDS

    cases = Path(__file__).resolve().parents[2] / "conformance" / "cases"
    covered: set[str] = set()
    for path in cases.glob("*/*.json"):
        case = json.loads(path.read_text(encoding="utf-8"))
        step = case["step"]
        argv = step.get("argv")
        if argv is None or "FMT-007" not in case["requirements"]:
            continue
        if "--format" in argv or "RAGIT_FORMAT" in (step.get("env") or {}):
            continue
        words = [a for a in argv if not a.startswith("-")]
        for spec in COMMANDS:
            if words[: len(spec.words)] == list(spec.words):
                expected = "text" if spec.pipe_format == "text" else "envelope"
                if case["expect"]["stdout"] == expected:
                    covered.add(spec.path)
    assert {spec.path for spec in COMMANDS} - covered == set()


def test_ragit_format_beats_the_terminal_rule(repo: Path) -> None:
    out, code = _pty(["status"], repo, RAGIT_FORMAT="json")
    assert code == 0 and '"command": "status"' in out


def test_ragit_format_beats_output_format_and_flag_beats_both(tmp_path: Path) -> None:
    root = tmp_path / "r"
    build_fixture("docs-basic", root)
    assert _pipe(["init", "--yes"], root).returncode == 0
    assert _pipe(["config", "set", "output.format", "json"], root).returncode == 0
    env_text = _pipe(["status"], root, RAGIT_FORMAT="text")
    assert env_text.stdout.startswith("snapshot:")
    flag = _pipe(["status", "--format", "both"], root, RAGIT_FORMAT="text")
    assert flag.stdout.splitlines()[-2] == "---"
    config_over_terminal, _ = _pty(["status"], root)
    assert '"command": "status"' in config_over_terminal


def test_an_unknown_ragit_format_is_ignored(repo: Path) -> None:
    proc = _pipe(["status"], repo, RAGIT_FORMAT="yaml")
    assert proc.returncode == 0 and json.loads(proc.stdout)["ok"] is True


# ---------------------------------------------------------------- item 2: help


def test_help_shows_no_placeholder_defaults_and_ends_with_examples() -> None:
    from ragit.contract.registry import COMMANDS

    helps = run_lines(Path.cwd(), [[*spec.words, "--help"] for spec in COMMANDS])
    for spec, proc in zip(COMMANDS, helps, strict=True):
        assert proc.code == 0, spec.path
        assert "[default: (" not in proc.stdout, spec.path
        tail = proc.stdout.rstrip().split("Examples:")[-1]
        assert "Examples:" in proc.stdout and 2 <= tail.count("\n    ") <= 3, spec.path


def test_group_help_says_what_the_group_is_for() -> None:
    proc = _pipe(["memory", "--help"], Path.cwd())
    assert "`memory` commands." not in proc.stdout and "Working memory" in proc.stdout


# ---------------------------------------------------------------- item 3: usage errors


def test_a_bad_flag_value_is_one_line_in_the_flags_name(repo: Path) -> None:
    out, code = _pty(["query", "x", "--top-k", "abc"], repo, NO_COLOR="1")
    assert code == 2
    assert out.strip() == (
        "error: invalid value 'abc' for '--top-k': expected an integer 1–200 "
        "(see: ragit query --help)"
    )


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (["query", "x", "--scope", "durabel"], "did you mean 'durable'?"),
        (["config", "set", "retrieval.topk", "10"], "did you mean 'retrieval.top_k'?"),
        (["describe", "qurey"], "did you mean 'query'?"),
        (["qurey", "x"], "did you mean 'query'?"),
        (["query", "x", "--tpo-k", "3"], "did you mean '--top-k'?"),
    ],
)
def test_did_you_mean(repo: Path, args: list[str], suggestion: str) -> None:
    out, code = _pty(args, repo, NO_COLOR="1")
    assert code == 2 and suggestion in out
    assert "Traceback" not in out and "operational error" not in out


def test_config_key_error_lists_the_sections_keys(repo: Path) -> None:
    out, _ = _pty(["config", "set", "retrieval.topk", "10"], repo, NO_COLOR="1")
    assert "keys: retrieval.alpha, retrieval.top_k" in out


def test_json_envelope_of_a_usage_error_is_unchanged(repo: Path) -> None:
    proc = _pipe(["query", "x", "--top-k", "abc", "--format", "json"], repo)
    error = json.loads(proc.stdout)["error"]
    assert error["details"] == {"field": "topK", "reason": "must be a positive integer"}
    assert proc.stderr == ""


# ---------------------------------------------------------------- item 8: text


def test_text_has_no_python_reprs(repo: Path) -> None:
    outputs = [
        _pipe(["ingest", "--all", "--format", "text"], repo).stdout,
        _pipe(["ingest", "--all", "--dry-run", "--format", "text"], repo).stdout,
        _pipe(
            ["config", "set", "output.format", "text", "--dry-run", "--format", "text"], repo
        ).stdout,
        _pipe(["status", "--format", "text"], repo).stdout,
    ]
    for out in outputs:
        for leak in ("None", "False", "True", "{'", "'text'"):
            assert leak not in out, (leak, out)
    assert "writer lock:  free" in outputs[3]


def test_query_text_puts_hits_first_and_keeps_line_breaks(repo: Path) -> None:
    out = _pipe(["query", "how are postings validated", "--format", "text"], repo).stdout
    assert out.startswith("1. ")
    assert "hits for" in out.splitlines()[-1] or "hits for" in out.splitlines()[-2]
    first = out.split("\n\n2. ")[0]
    assert first.count("\n") > 3  # the heading and the paragraph stay on their own lines


def test_colour_on_a_terminal_only_and_never_with_no_color(repo: Path) -> None:
    coloured, _ = _pty(["doctor"], repo)
    assert "\x1b[" in coloured
    plain, _ = _pty(["doctor"], repo, NO_COLOR="1")
    assert "\x1b[" not in plain
    piped = _pipe(["doctor"], repo)
    assert "\x1b[" not in piped.stdout and "\x1b[" not in piped.stderr


# ---------------------------------------------------------------- item 9: dirty warning


def test_the_dirty_warning_names_dirty_documents_only(repo: Path) -> None:
    scratch = repo / "scratch.txt"
    doc = repo / "docs" / "glossary" / "terms.md"
    original = doc.read_text(encoding="utf-8")
    try:
        scratch.write_text("x\n", encoding="utf-8")
        text = _pipe(["query", "ledger", "--format", "text"], repo).stdout
        assert "warning:" not in text
        env = json.loads(_pipe(["query", "ledger", "--format", "json"], repo).stdout)
        assert env["data"]["snapshot"]["worktreeDirty"] is True and len(env["warnings"]) == 1
        doc.write_text(original + "\nmore\n", encoding="utf-8")
        text = _pipe(["query", "ledger", "--format", "text"], repo).stdout
        assert "warning:" in text and "docs/glossary/terms.md" in text
    finally:
        scratch.unlink()
        doc.write_text(original, encoding="utf-8")


# ---------------------------------------------------------------- item 11: conventions


def test_an_unquoted_question_joins_into_one(repo: Path) -> None:
    env = json.loads(_pipe(["query", "writer", "lock", "--format", "json"], repo).stdout)
    assert env["ok"] is True and env["data"]["query"] == "writer lock"


def test_dash_v_prints_the_version() -> None:
    proc = _pipe(["-V"], Path.cwd())
    assert proc.returncode == 0 and proc.stdout.startswith("ragit ")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_a_script_that_completes(repo: Path, shell: str) -> None:
    proc = _pipe(["completion", shell], repo)
    assert proc.returncode == 0 and "_RAGIT_COMPLETE" in proc.stdout
    answer = _pipe([], repo, _RAGIT_COMPLETE="bash_complete", COMP_WORDS="ragit qu", COMP_CWORD="1")
    assert "query" in answer.stdout


def test_config_get_and_list(repo: Path) -> None:
    got = _pipe(["config", "get", "retrieval.top_k", "--format", "text"], repo)
    assert got.stdout.strip() == "5"
    listed = json.loads(_pipe(["config", "list"], repo).stdout)["data"]["entries"]
    entry = next(e for e in listed if e["key"] == "output.format")
    assert {k: entry[k] for k in ("value", "default", "set")} == {
        "value": None,
        "default": None,
        "set": False,
    }
    assert entry["source"] == "terminal"
    alpha = _pipe(["config", "get", "retrieval.alpha", "--format", "text"], repo)
    assert alpha.stdout.strip() == "0.3"  # the provider's value in force


def test_config_keys_in_the_registry_match_the_model() -> None:
    from ragit.config import config_keys
    from ragit.contract.command_spec import CONFIG_KEYS

    assert list(CONFIG_KEYS) == config_keys()


def test_timeline_since_accepts_a_date(repo: Path) -> None:
    proc = _pipe(["timeline", "--since", "2026-12-01", "--format", "json"], repo)
    assert proc.returncode == 0, proc.stdout


def test_init_writes_the_branch_head_names(tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "master"], cwd=root, check=True)
    assert _pipe(["init", "--yes"], root).returncode == 0
    assert 'default_branch = "master"' in (root / ".ragit" / "config.toml").read_text()


# ---------------------------------------------------------------- item 4: recoveries


def test_a_dirty_path_with_a_space_is_quoted_and_the_recovery_runs(tmp_path: Path) -> None:
    root = tmp_path / "s"
    build_fixture("docs-basic", root)
    assert _pipe(["init", "--yes"], root).returncode == 0
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "config"], cwd=root, check=True)
    (root / "docs" / "meeting notes.md").write_text("# Notes\n\nDecided.\n", encoding="utf-8")
    env = json.loads(_pipe(["ingest", "--all", "--format", "json"], root).stdout)
    recovery = env["error"]["recovery"]["command"]
    assert "'docs/meeting notes.md'" in recovery
    subprocess.run(recovery, shell=True, cwd=root, check=True, stdin=subprocess.DEVNULL)
    assert _pipe(["ingest", "--all"], root).returncode == 0
