"""What a cold `ragit` process imports: the read path loads only what reading needs.

Every agent call is a fresh process, so each module a command imports is paid on every call
(docs/benchmarks.md, "Where the time goes"). These tests run real processes on a real indexed
repository and read their ``sys.modules`` at exit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.build import build_fixture

# Printed by an exit hook of the child process: every module it imported beyond those the
# interpreter had at start-up, and how many click commands it built. (What site and .pth
# files import before any code runs is the environment's, not ragit's: coverage's
# subprocess hook in `hatch test`'s environment imports json in every interpreter.)
_PROBE = """
import sys
startup = set(sys.modules)
import atexit, runpy
built = []
def _count():
    import click
    real = click.Command.__init__
    def init(self, *a, **k):
        built.append(type(self).__name__)
        real(self, *a, **k)
    click.Command.__init__ = init
def _report():
    names = sorted(set(sys.modules) - startup)
    import json
    sys.__stderr__.write("\\nMODULES " + json.dumps(names) + "\\n")
    sys.__stderr__.write("BUILT " + json.dumps(built) + "\\n")
    if "numpy" in sys.modules:
        from ragit.embed.minilm._blas import _openblas_controls
        controls = _openblas_controls()
        threads = controls[0]() if controls else None
        sys.__stderr__.write("BLAS " + json.dumps(threads) + "\\n")
atexit.register(_report)
if sys.argv[1] != "--version":
    _count()
sys.argv = ["ragit", *sys.argv[1:]]
runpy.run_module("ragit", run_name="__main__")
"""

# Heavy modules no read command needs: pydantic (the contract's models are for input
# validation and describe; config and manifests are read without it), the status report,
# every writer, HTTP clients, TOML editing and the terminal UI. (importlib.metadata is not
# listed: zvec reads its own version with it on import.)
_NEVER_ON_THE_READ_PATH = (
    "pydantic",
    "pydantic_core",
    "ragit.contract.models",
    "ragit.ops.status.report",
    "ragit.ingest",
    "ragit.store.writer",
    "ragit.store.publishing",
    "httpx",
    "rich",
    "tomlkit",
    "subprocess",
)


def _run(cwd: Path, *args: str) -> tuple[set[str], list[str], subprocess.CompletedProcess[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"},
    )
    modules: list[str] = []
    built: list[str] = []
    for line in proc.stderr.splitlines():
        if line.startswith("MODULES "):
            modules = json.loads(line[len("MODULES ") :])
        elif line.startswith("BUILT "):
            built = json.loads(line[len("BUILT ") :])
    assert modules, proc.stderr
    return set(modules), built, proc


def _offenders(modules: set[str], banned: tuple[str, ...]) -> set[str]:
    return {m for m in modules if any(m == b or m.startswith(b + ".") for b in banned)}


def test_version_answers_before_click_or_the_command_registry_is_imported(
    tmp_path: Path,
) -> None:
    """Implementation choice: `ragit --version` imports no third-party package and only the
    entry point of ragit itself."""
    modules, _, proc = _run(tmp_path, "--version")
    assert proc.returncode == 0 and proc.stdout.startswith("ragit ")
    ours = {m for m in modules if m.split(".")[0] == "ragit"}
    assert ours == {"ragit", "ragit.cli", "ragit.cli.main", "ragit._guard"}
    assert not _offenders(modules, ("click", "pydantic", "numpy", "json", "subprocess"))


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("startup") / "repo"
    build_fixture("docs-basic", root)
    for argv in (
        [sys.executable, "-m", "ragit", "init", "--yes"],
        ["git", "add", ".ragit/config.toml", ".gitignore"],
        ["git", "commit", "-q", "-m", "init ragit"],
        [sys.executable, "-m", "ragit", "ingest", "--all", "--format", "json"],
    ):
        subprocess.run(argv, cwd=root, capture_output=True, check=True)
    return root


@pytest.mark.parametrize(
    "args",
    [
        ("query", "how are postings validated", "--format", "json"),
        ("context", "pack", "how are postings validated", "--format", "json"),
        ("status", "--format", "json"),
    ],
    ids=["query", "context pack", "status"],
)
def test_a_cold_read_imports_no_model_library_and_builds_only_its_own_command(
    indexed: Path, args: tuple[str, ...]
) -> None:
    """Implementation choice: a cold read command imports no pydantic, no distribution
    metadata, no writer and no status report, and builds one click command, not the
    whole tree."""
    modules, built, proc = _run(indexed, *args)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True
    own = "ragit.ops.status.report" if args[0] == "status" else None  # the status report is its own
    assert not _offenders(modules, tuple(m for m in _NEVER_ON_THE_READ_PATH if m != own))
    assert built.count("Command") == 1


def test_status_opens_no_store_engine(indexed: Path) -> None:
    """Contract-mandated (§12): `status` never opens the store, so it loads neither zvec
    nor numpy (nor, therefore, the distribution metadata zvec reads for its version)."""
    modules, _, proc = _run(indexed, "status", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert not _offenders(modules, ("zvec", "numpy", "importlib.metadata"))


def test_a_cold_query_starts_no_blas_worker_threads(indexed: Path) -> None:
    """Implementation choice: numpy's OpenBLAS runs on the calling thread only in a `ragit`
    process: no worker thread is started as numpy loads."""
    _, _, proc = _run(indexed, "query", "how are postings validated", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    threads = [line for line in proc.stderr.splitlines() if line.startswith("BLAS ")]
    if threads == ["BLAS null"]:
        pytest.skip("numpy's BLAS here is not the OpenBLAS of its wheel")
    assert threads == ["BLAS 1"]


def test_status_reads_the_placeholder_cache_without_building_an_embedder(indexed: Path) -> None:
    """Implementation choice: `status` summarises the placeholder's embedding cache without
    the provider base, the cached embedder or the provider's module."""
    modules, _, proc = _run(indexed, "status", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    cache = json.loads(proc.stdout)["data"]["embedding"]["cache"]
    assert cache["mode"] == "readonly" and cache["namespaceReadable"] is True
    assert not _offenders(
        modules, ("ragit.embed.policy", "ragit.embed.base", "ragit.embed.providers")
    )


# pydantic, and the distribution metadata its plugin loader reads on import.
_NO_MODEL_LIBRARY = ("pydantic", "pydantic_core", "ragit.contract.models", "importlib.metadata")


def _initialized_docs_basic(root: Path) -> None:
    """The docs-basic fixture at ``root`` after a real `ragit init --yes`."""
    build_fixture("docs-basic", root)
    subprocess.run(
        [sys.executable, "-m", "ragit", "init", "--yes"], cwd=root, capture_output=True, check=True
    )


@pytest.mark.parametrize(
    "args",
    [
        ("config", "set", "retrieval.top_k", "7", "--format", "json"),
        ("config", "set", "retrieval.top_k", "8", "--dry-run", "--format", "json"),
        ("config", "get", "retrieval.top_k", "--format", "json"),
        ("config", "unset", "retrieval.top_k", "--format", "json"),
    ],
    ids=["config set", "config set --dry-run", "config get", "config unset"],
)
def test_config_commands_import_no_pydantic_for_a_valid_value(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """Implementation choice: `config set|get|unset` with a value of its key's type import
    no pydantic (a value pydantic must judge, such as `abc` for an integer, still does)."""
    _initialized_docs_basic(tmp_path)
    modules, _, proc = _run(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True
    assert not _offenders(modules, _NO_MODEL_LIBRARY)


def test_config_set_still_judges_a_wrong_value_with_pydantics_message(tmp_path: Path) -> None:
    _initialized_docs_basic(tmp_path)
    _, _, proc = _run(tmp_path, "config", "set", "retrieval.top_k", "0", "--format", "json")
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode != 0
    assert error["code"] == "INPUT_INVALID"
    assert "greater than or equal to 1" in json.dumps(error)


@pytest.mark.parametrize("dry_run", [False, True], ids=["init", "init --dry-run"])
def test_init_imports_no_pydantic(tmp_path: Path, dry_run: bool) -> None:
    """Implementation choice: `ragit init` builds its data as plain mappings; its pydantic
    models describe the shape for `describe` only."""
    build_fixture("docs-basic", tmp_path)
    args = ("init", "--yes", "--format", "json", *(("--dry-run",) if dry_run else ()))
    modules, _, proc = _run(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)["data"]
    assert data["dryRun"] is dry_run and data["declined"] is False
    assert not _offenders(modules, _NO_MODEL_LIBRARY)
