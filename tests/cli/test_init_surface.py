"""`init` proposes an ingest surface that covers the repository's documents, names the
project after its folder, asks at a terminal, and points outside a repository at
`ragit init --git-init`. Real repositories, the real CLI; terminals are real pseudo-terminals."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

RAGIT = [sys.executable, "-m", "ragit"]


def _run(args: list[str], cwd: Path, stdin: str | None = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*RAGIT, *args], cwd=cwd, input=stdin, capture_output=True, text=True, check=False
    )


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    _git(root, "init", "-q")
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "documents")
    return root


def _rfcs(n: int) -> dict[str, str]:
    files = {
        f"text/{i:04d}-idea.md": f"# RFC {i}\n\nAsync await design note {i}.\n" for i in range(n)
    }
    files["SOURCE.md"] = "# Source\n\nWhere these RFCs come from.\n"
    return files


def test_init_writes_an_include_covering_documents_outside_docs(tmp_path: Path) -> None:
    """Contract-mandated (contract §6): init proposes a surface covering where the documents
    live; when that is clear it writes it and says so; the README steps then index them."""
    root = _repo(tmp_path / "rfcs", _rfcs(12))
    data = json.loads(_run(["init", "--yes", "--format", "json"], root).stdout)["data"]
    surface = data["surface"]
    assert surface["status"] == "written"
    assert surface["markdown"] == 13 and surface["defaultCovers"] == 0
    assert surface["include"] == ["README.md", "docs/**", "text/**", "SOURCE.md"]
    text = (root / ".ragit" / "config.toml").read_text(encoding="utf-8")
    assert 'include = ["README.md", "docs/**", "text/**", "SOURCE.md"]' in text
    _git(root, "add", ".ragit/config.toml", ".gitignore")
    _git(root, "commit", "-qm", "Track the RAGit config")
    ingest = json.loads(_run(["ingest", "--all", "--format", "json"], root).stdout)
    assert ingest["data"]["documents"] == 13
    assert ingest["warnings"] == []


def test_init_proposes_the_command_when_documents_are_spread_out(tmp_path: Path) -> None:
    """Contract-mandated (contract §6): where the surface is ambiguous, init proposes it with
    the exact command (first of nextActions), writes the default, and the command works."""
    files = {
        f"{folder}/note-{i}.md": f"# {folder} {i}\n\nText.\n"
        for folder in "abcde"
        for i in range(3)
    }
    root = _repo(tmp_path / "spread", files)
    data = json.loads(_run(["init", "--yes", "--format", "json"], root).stdout)["data"]
    surface = data["surface"]
    assert surface["status"] == "proposed" and surface["reason"]
    assert data["nextActions"][0] == surface["command"]
    assert 'include = ["README.md", "docs/**"]' in (root / ".ragit/config.toml").read_text(
        encoding="utf-8"
    )
    done = subprocess.run(
        surface["command"].replace("ragit ", " ".join(RAGIT) + " ", 1),
        shell=True,
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    value = json.loads(_run(["config", "get", "ingest.include", "--format", "json"], root).stdout)
    assert set(value["data"]["value"]) >= {"a/**", "b/**", "c/**", "d/**", "e/**"}


def test_init_never_rewrites_an_existing_config_and_proposes_instead(tmp_path: Path) -> None:
    """Contract-mandated (contract §12: never overwrites user files)."""
    root = _repo(tmp_path / "rfcs", _rfcs(6))
    (root / ".ragit").mkdir()
    (root / ".ragit" / "config.toml").write_text('[project]\nname = "mine"\n', encoding="utf-8")
    before = (root / ".ragit" / "config.toml").read_bytes()
    data = json.loads(_run(["init", "--yes", "--format", "json"], root).stdout)["data"]
    assert data["surface"]["status"] == "proposed"
    assert "text/**" in data["surface"]["command"]
    assert (root / ".ragit" / "config.toml").read_bytes() == before


def test_project_name_defaults_to_the_folder_name(tmp_path: Path) -> None:
    """Implementation choice (docs/config.md): init writes the folder's name, and a config
    without the key reads it too."""
    root = _repo(tmp_path / "ledger-service", {"docs/a.md": "# A\n\nText.\n"})
    _run(["init", "--yes"], root)
    text = (root / ".ragit" / "config.toml").read_text(encoding="utf-8")
    assert 'name = "ledger-service"' in text
    (root / ".ragit" / "config.toml").write_text(
        text.replace('name = "ledger-service"\n', ""), encoding="utf-8"
    )
    got = json.loads(_run(["config", "get", "project.name", "--format", "json"], root).stdout)
    assert got["data"]["value"] == "ledger-service"


def _pty(args: list[str], cwd: Path, answer: bytes) -> tuple[str, int]:
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child process
        os.chdir(cwd)
        os.execv(sys.executable, [*RAGIT, *args])
    out = b""
    answered = False
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
        if not answered and b"Write these files?" in out:
            os.write(fd, answer)
            answered = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return out.decode("utf-8", "replace"), os.waitstatus_to_exitcode(status)


def test_init_at_a_terminal_asks_before_writing(tmp_path: Path) -> None:
    """Contract-mandated (contract §12, `--yes`: "Accept defaults without prompting"): at a
    terminal without --yes init shows the plan and asks; no writes nothing, yes writes."""
    root = _repo(tmp_path / "repo", {"docs/a.md": "# A\n\nText.\n"})
    out, code = _pty(["init"], root, b"n\n")
    assert code == 0, out
    assert "Write these files?" in out
    assert not (root / ".ragit").exists()
    assert "nothing written" in out
    out, code = _pty(["init"], root, b"y\n")
    assert code == 0, out
    assert (root / ".ragit" / "config.toml").is_file()


def test_init_never_asks_when_stdin_is_not_a_terminal(tmp_path: Path) -> None:
    """Contract-mandated (contract §12): a pipe or a file on stdin is never prompted."""
    root = _repo(tmp_path / "repo", {"docs/a.md": "# A\n\nText.\n"})
    run = _run(["init", "--format", "text"], root, stdin="n\n")
    assert run.returncode == 0
    assert "Write these files?" not in run.stdout + run.stderr
    assert (root / ".ragit" / "config.toml").is_file()


def test_outside_a_repository_next_names_init_git_init_which_works(tmp_path: Path) -> None:
    """Implementation choice (docs/contract.md): the text `next:` outside a repository is
    `ragit init --git-init`; the envelope keeps the catalog's `git init`."""
    plain = tmp_path / "plain"
    plain.mkdir()
    run = _run(["query", "anything", "--format", "text"], plain)
    assert run.returncode == 3
    assert "next: ragit init --git-init" in run.stderr
    env = json.loads(_run(["status", "--format", "json"], plain).stdout)
    assert env["error"]["recovery"]["command"] == "git init"
    made = _run(["init", "--git-init", "--yes", "--format", "json"], plain)
    assert made.returncode == 0, made.stderr
    assert (plain / ".git").is_dir() and (plain / ".ragit" / "config.toml").is_file()
