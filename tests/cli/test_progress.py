"""Progress of long work: in place on a terminal, one display per phase;
nothing in a pipe unless -v; -q silences it everywhere. Terminals are real pseudo-terminals."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.build import build_fixture

RAGIT = [sys.executable, "-m", "ragit"]
# What an in-place redraw writes: back to the line start, then erase the line.
REDRAW = "\r\x1b[2K"


def _pty(args: list[str], cwd: Path) -> tuple[str, int]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "RAGIT_PROGRESS")}
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child process
        os.chdir(cwd)
        os.execve(sys.executable, [*RAGIT, *args], env)
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
    return out.decode("utf-8", "replace"), os.waitstatus_to_exitcode(status)


def _pipe(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "RAGIT_PROGRESS"}
    return subprocess.run(
        [*RAGIT, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def _repo(root: Path, docs: int) -> Path:
    build_fixture("docs-basic", root)
    for i in range(docs):
        (root / "docs" / f"generated-{i:04d}.md").write_text(
            f"# Generated {i}\n\n## Part A\n\nText {i} about retries.\n\n## Part B\n\nMore {i}.\n",
            encoding="utf-8",
        )
    assert _pipe(["init", "--yes", "--format", "json"], root).returncode == 0
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "docs and config"], cwd=root, check=True)
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return _repo(tmp_path / "repo", 300)


def _last_frame(out: str) -> list[str]:
    """The rows of the display's last frame, without colour codes."""
    display = out.split("\x1b[?25h", 1)[0]  # the cursor comes back when the display ends
    last = re.split(r"\r\x1b\[2K(?:\x1b\[1A\x1b\[2K)*", display)[-1]
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", last)
    return [line.strip() for line in plain.replace("\r", "").split("\n") if line.strip()]


def test_a_terminal_gets_one_in_place_display_per_phase(repo: Path) -> None:
    out, code = _pty(["ingest", "--all"], repo)
    assert code == 0, out
    assert REDRAW in out  # redrawn in place, not scrolled
    assert "[ragit]" not in out  # no scrolling lines at a terminal
    rows = _last_frame(out)
    phases = [next(w for w in row.split() if w.isalpha()) for row in rows]
    assert phases == ["plan", "embed", "store"], rows
    assert re.search(r"\b(\d+)/\1 documents", rows[0]), rows[0]  # planned every document
    assert "4/4" in rows[2] and "published" in rows[2]
    assert "indexed " in out.split("\x1b[?25h", 1)[1]  # the result follows the display


def test_a_pipe_gets_no_progress_unless_verbose(repo: Path) -> None:
    quiet = _pipe(["ingest", "--all", "--format", "json"], repo)
    assert quiet.returncode == 0 and quiet.stderr == ""
    (repo / "docs" / "late.md").write_text("# Late\n\nLate text.\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "late"], cwd=repo, check=True)
    loud = _pipe(["ingest", "-v", "--format", "json"], repo)
    assert loud.returncode == 0
    lines = loud.stderr.splitlines()
    assert lines and all(line.startswith("[ragit] ") for line in lines)
    assert any(line.startswith("[ragit] plan: ") for line in lines)
    assert any(line.startswith("[ragit] store: ") for line in lines)
    assert REDRAW not in loud.stderr


def test_quiet_silences_progress_at_a_terminal(repo: Path) -> None:
    out, code = _pty(["ingest", "--all", "-q"], repo)
    assert code == 0, out
    assert REDRAW not in out and "plan " not in out
    assert "indexed " in out


def test_commands_without_long_work_never_import_the_display_library(repo: Path) -> None:
    probe = (
        "import sys, runpy; sys.argv=['ragit','status','--format','json'];"
        "\ntry:\n runpy.run_module('ragit', run_name='__main__')\nexcept SystemExit: pass\n"
        "print('rich' in sys.modules, file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True, check=False
    )
    assert done.stderr.strip().endswith("False")


HOLDER = """
import sys, time
from pathlib import Path
from ragit.store.lock import WriterLock
from ragit.workspace import Workspace
with WriterLock.acquire(Workspace(Path(sys.argv[1])), command="ingest", head_sha=sys.argv[2]):
    print("held", flush=True)
    time.sleep(float(sys.argv[3]))
"""


def test_ingest_wait_leaves_no_frozen_wait_line_at_a_terminal(tmp_path: Path) -> None:
    """Implementation choice (docs/contract.md): the wait for another writer is shown while it
    lasts and removed when it ends; the display keeps only the work done."""
    root = _repo(tmp_path / "repo", 20)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root), head, "8"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        out, code = _pty(["ingest", "--all", "--wait"], root)
    finally:
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    assert code == 0, out
    assert "for the writer" in out  # the wait was shown while it lasted
    rows = _last_frame(out)
    phases = [next(w for w in row.split() if w.isalpha()) for row in rows]
    assert phases == ["plan", "embed", "store"], rows
