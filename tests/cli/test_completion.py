"""Shell completion completes option values and config keys, in real shells on a pty."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli._pty import Session, ragit_pipe

from fixtures.build import build_fixture

BIN = str(Path(sys.executable).parent)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("complete") / "repo"
    build_fixture("docs-basic", root)
    assert ragit_pipe(["init", "--yes"], root).returncode == 0
    return root


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BASH", "ZDOTDIR"))}
    env.update(PATH=f"{BIN}:{os.environ.get('PATH', '')}", HOME=str(home), TERM="xterm")
    return env


def _protocol(shell: str, words: str, cword: int, cwd: Path) -> list[str]:
    """What click's completion protocol answers (the shell scripts call exactly this)."""
    import subprocess

    incomplete = words.rsplit(" ", maxsplit=1)[-1]
    env = {
        **os.environ,
        "_RAGIT_COMPLETE": f"{shell}_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": incomplete if shell == "fish" else str(cword),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "ragit"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize(
    ("words", "cword", "expected"),
    [
        ("ragit query x --scope ", 4, {"durable", "session", "harness", "evidence", "all"}),
        ("ragit log --view ", 3, {"minimal", "default", "full"}),
        ("ragit status --format ", 3, {"text", "json", "both"}),
        ("ragit config set retr", 3, {"retrieval.alpha", "retrieval.top_k"}),
        ("ragit config set output.format ", 4, {"text", "json", "both"}),
        ("ragit config set hooks.post_commit ", 4, {"true", "false"}),
        ("ragit doc validate --type gl", 4, {"glossary"}),
    ],
)
def test_the_protocol_completes_values_and_keys(
    repo: Path, shell: str, words: str, cword: int, expected: set[str]
) -> None:
    """Implementation choice: every enum option, config key and config value completes."""
    answer = " ".join(_protocol(shell, words, cword, repo))
    for value in expected:
        assert value in answer, (shell, words, answer)


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "home"
    path.mkdir()
    yield path


def test_bash_completes_config_keys_and_option_values_at_a_terminal(repo: Path, home: Path) -> None:
    """Implementation choice: `ragit config set retr<TAB><TAB>` lists the retrieval keys."""
    shell = Session(["bash", "--norc", "--noprofile", "-i"], repo, {**_env(home), "PS1": "$ "})
    try:
        shell.send('eval "$(ragit completion bash)"; echo READY\n')
        shell.expect("READY")
        shell.send("ragit config set retr\t")
        shell.expect("ieval.")  # the common prefix, completed in place
        shell.send("\t\t")
        shell.expect("retrieval.alpha", "retrieval.top_k", "retrieval.hits_per_document")
        shell.send("\x15ragit drift --scope \t\t")  # Ctrl-U clears the line first
        shell.expect("durable", "memory", "harness")
    finally:
        shell.close()


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completes_config_keys_at_a_terminal(repo: Path, home: Path) -> None:
    """Implementation choice: the same in zsh (compinit, then the ragit script)."""
    shell = Session(["zsh", "-f", "-i"], repo, {**_env(home), "PS1": "$ "})
    try:
        shell.send('autoload -Uz compinit && compinit -u; eval "$(ragit completion zsh)"\n')
        shell.send("echo RE''ADY\n")
        shell.expect("READY")
        shell.send("ragit config set retr\t")
        shell.expect("ieval.")
        shell.send("\t")
        shell.expect("retrieval.alpha", "retrieval.top_k")
    finally:
        shell.close()


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_option_values_at_a_terminal(repo: Path, home: Path) -> None:
    """Implementation choice: the same in fish."""
    shell = Session(["fish", "--no-config", "-i"], repo, _env(home))
    try:
        shell.send("ragit completion fish | source; echo RE''ADY\n")
        shell.expect("READY")
        shell.send("ragit log --view \t")
        shell.expect("minimal", "default", "full")
    finally:
        shell.close()
