"""conformance.launcher: a forked command behaves as the program started on its own would.

The conformance suite under pytest starts ``ragit`` and ``ragit-mcp`` through the launcher;
these tests hold it to what a new process gives a command: its arguments, directory,
environment and streams, its exit status in every way a program ends, and the user's git
configuration read from its own ``HOME``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.environment import hermetic_env
from conformance.launcher import Launcher

PROGRAM = textwrap.dedent(
    """
    import json, os, sys, time

    def main():
        action = sys.argv[1]
        if action == "echo":
            sys.stdout.write(json.dumps({
                "argv": sys.argv, "cwd": os.getcwd(), "var": os.environ.get("PROBE"),
                "stdin": sys.stdin.read(), "main": sys.modules["__main__"].__file__,
            }))
            sys.stderr.write("to stderr")
        elif action == "return":
            return int(sys.argv[2])
        elif action == "exit":
            raise SystemExit(int(sys.argv[2]) if sys.argv[2].isdigit() else sys.argv[2])
        elif action == "raise":
            raise RuntimeError("boom")
        elif action == "kill":
            os.kill(os.getpid(), 9)
        elif action == "sleep":
            time.sleep(60)
        elif action == "git":
            import pygit2
            from pygit2.enums import ConfigLevel
            print(pygit2.settings.search_path[ConfigLevel.GLOBAL])
    """
)


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Launcher, dict[str, str], Path]]:
    root = tmp_path_factory.mktemp("launcher")
    (root / "launched_program.py").write_text(PROGRAM, encoding="utf-8")
    env = {**hermetic_env(root), "PYTHONPATH": str(root)}
    script = root / "program"
    launcher = Launcher.start(
        {(str(script),): ("launched_program:main", str(script))}, env, preload=("pygit2",)
    )
    if launcher is None:
        pytest.skip("LOUD SKIP: this system cannot fork a server (no pidfd_open or SOCK_SEQPACKET)")
    yield launcher, env, script
    launcher.close()


def test_a_command_gets_its_arguments_directory_environment_and_streams(
    served: tuple[Launcher, dict[str, str], Path], tmp_path: Path
) -> None:
    launcher, env, script = served
    argv = [str(script), "echo", "ünï", "two words"]
    assert launcher.serves(argv, {**env, "PROBE": "x"}, tmp_path)
    code, out, err = launcher.run(argv, cwd=tmp_path, env={**env, "PROBE": "x"}, input=b"in")
    assert code == 0
    assert err == b"to stderr"
    seen = json.loads(out)
    assert seen == {
        "argv": argv,
        "cwd": str(tmp_path),
        "var": "x",
        "stdin": "in",
        "main": str(script),
    }


@pytest.mark.parametrize(
    ("args", "code", "stderr"),
    [
        (["return", "0"], 0, b""),
        (["return", "4"], 4, b""),
        (["exit", "3"], 3, b""),
        (["exit", "not a number"], 1, b"not a number\n"),
        (["raise"], 1, b"RuntimeError: boom"),
        (["kill"], -signal.SIGKILL, b""),
    ],
)
def test_every_way_a_program_ends_gives_its_status(
    served: tuple[Launcher, dict[str, str], Path],
    tmp_path: Path,
    args: list[str],
    code: int,
    stderr: bytes,
) -> None:
    launcher, env, script = served
    got, _, err = launcher.run([str(script), *args], cwd=tmp_path, env=env)
    assert got == code
    assert stderr in err if stderr else err == b""


def test_a_command_past_its_timeout_is_killed(
    served: tuple[Launcher, dict[str, str], Path], tmp_path: Path
) -> None:
    launcher, env, script = served
    with launcher.popen([str(script), "sleep"], cwd=tmp_path, env=env) as proc:
        with pytest.raises(subprocess.TimeoutExpired):
            proc.communicate(timeout=0.5)
        assert proc.returncode == -signal.SIGKILL  # reported once the server reaped it


def test_git_configuration_comes_from_the_commands_home(
    served: tuple[Launcher, dict[str, str], Path], tmp_path: Path
) -> None:
    launcher, env, script = served
    home = tmp_path / "another-home"
    home.mkdir()
    code, out, _ = launcher.run([str(script), "git"], cwd=tmp_path, env={**env, "HOME": str(home)})
    assert code == 0
    assert out.decode().strip() == str(home)


def test_what_the_interpreter_reads_as_it_starts_must_match_else_not_served(
    served: tuple[Launcher, dict[str, str], Path], tmp_path: Path
) -> None:
    launcher, env, script = served
    assert launcher.serves([str(script)], env, tmp_path)
    assert not launcher.serves([str(script)], {**env, "LC_ALL": "POSIX"}, tmp_path)
    assert not launcher.serves([str(script)], {**env, "PYTHONHASHSEED": "1"}, tmp_path)
    assert not launcher.serves([str(script)], env, tmp_path / "missing")
    assert not launcher.serves(["/bin/true"], env, tmp_path)


def test_ragit_forked_answers_byte_for_byte_as_ragit_started(tmp_path: Path) -> None:
    cli = Path(sys.executable).parent / "ragit"
    if not cli.is_file():
        pytest.skip("LOUD SKIP: no ragit console script next to this interpreter")
    env = hermetic_env(tmp_path)
    launcher = Launcher.start({(str(cli),): ("ragit.cli.main:main", str(cli))}, env)
    assert launcher is not None
    try:
        for args in (["describe", "query", "--format", "json"], ["status", "--format", "json"]):
            argv = [str(cli), *args]
            forked = launcher.run(argv, cwd=tmp_path, env=env)
            started = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, check=False)
            assert forked == (started.returncode, started.stdout, started.stderr), args
    finally:
        launcher.close()


def test_a_caller_that_goes_away_takes_its_command_with_it(
    served: tuple[Launcher, dict[str, str], Path], tmp_path: Path
) -> None:
    launcher, env, script = served
    proc = launcher.popen([str(script), "sleep"], cwd=tmp_path, env=env)
    proc._conn.close()  # what a killed test process leaves: its end of the socket closed
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the command {proc.pid} outlived its caller")
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
