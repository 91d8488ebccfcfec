"""The shared store's optional client (psycopg, pgvector) missing: one typed error everywhere.

The extra is ``ragit-cli[postgres]`` (the distribution's name; ``ragit`` on PyPI is another
project). Each command that reaches the shared store runs as a real process in which
importing psycopg and pgvector fails the way an interpreter without them fails.
"""

from __future__ import annotations

import pytest
from tests.cli._many import Ran, run_many
from tests.snapshot._kit import make_repo, private_cache  # noqa: F401 - autouse fixture

INSTALL = "pip install 'ragit-cli[postgres]'"
# Both client packages unimportable: None in sys.modules is what importing a package that
# is not installed finds (ModuleNotFoundError).
WITHOUT_CLIENT = 'sys.modules["psycopg"] = None\nsys.modules["pgvector"] = None'

COMMANDS = [
    ("query", "keys"),
    ("context", "pack", "keys"),
    ("ingest",),
    ("migrate", "store"),
    ("migrate", "embeddings"),
    ("security", "purge"),
    ("security", "audit"),
    ("status",),
    ("doctor",),
]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ran]:
    """Every command of :data:`COMMANDS`, run once in a repository on the shared store."""
    repo = make_repo(tmp_path_factory.mktemp("client"), "docs-basic", commit_init=True)
    config = repo.ws.config_path
    config.write_text(
        config.read_text(encoding="utf-8") + '\n[store]\nbackend = "postgres"\n',
        encoding="utf-8",
    )
    return run_many(
        repo.root,
        COMMANDS,
        env={"RAGIT_DATABASE_URL": "postgresql://ragit@127.0.0.1:9/ragit"},
        prelude=WITHOUT_CLIENT,
    )


@pytest.mark.parametrize("command", [" ".join(c) for c in COMMANDS[:6]])
def test_a_missing_postgres_client_is_store_unavailable_naming_the_ragit_cli_extra(
    ran: dict[str, Ran], command: str
) -> None:
    """Implementation choice (docs/team.md): the optional extra missing is
    SNAPSHOT_STORE_UNAVAILABLE whose message names the install command of `ragit-cli`."""
    run = ran[command]

    assert run.code == 3, run.output
    error = run.envelope["error"]
    assert error["code"] == "SNAPSHOT_STORE_UNAVAILABLE", error
    assert INSTALL in error["message"], error
    assert "'ragit[postgres]'" not in run.output


def test_status_reports_a_missing_postgres_client_with_its_install_command(
    ran: dict[str, Ran],
) -> None:
    """Contract §12: status never fails; its store block says why the store is unreadable."""
    run = ran["status"]

    assert run.code == 0, run.output
    store = run.envelope["data"]["store"]
    assert store["readable"] is False
    assert INSTALL in store["reason"]
    assert "'ragit[postgres]'" not in run.output


def test_doctor_names_the_ragit_cli_extra_as_the_fix_for_a_missing_postgres_client(
    ran: dict[str, Ran],
) -> None:
    """Contract §12: a failing check's recovery is the command that fixes it."""
    run = ran["doctor"]

    assert run.code == 1, run.output
    checks = {c["name"]: c for c in run.envelope["data"]["checks"]}
    assert checks["store.connection"]["ok"] is False
    assert checks["store.connection"]["recovery"] == INSTALL
    assert run.envelope["error"]["recovery"]["command"] == INSTALL
    assert "'ragit[postgres]'" not in run.output


def test_security_audit_reports_a_missing_postgres_client_with_its_install_command(
    ran: dict[str, Ran],
) -> None:
    """Implementation choice: audit never fails on the shared store; its finding says why."""
    run = ran["security audit"]

    assert run.code == 0, run.output
    findings = run.envelope["data"]["findings"]
    assert any(INSTALL in f["reason"] for f in findings if f["surface"] == "store"), findings
