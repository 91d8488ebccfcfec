"""The connection comes only from the environment and no error shows its password."""

from __future__ import annotations

import json
import traceback
from urllib.parse import parse_qs, urlsplit

import pytest

from ragit.contract.errors import (
    RagitError,
    SnapshotStoreUnavailable,
    StoreReadBusy,
    StoreWriteBusy,
)
from ragit.store.postgres.connection import configured, mask
from ragit.store.postgres.migrate import migrate
from ragit.store.postgres.read import PgReader

SECRET = "s3cr3t-Pa55w0rd"


def _every_text(exc: RagitError) -> str:
    return "\n".join(
        [
            str(exc),
            json.dumps(exc.payload()),
            "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        ]
    )


@pytest.mark.parametrize(
    "text",
    [
        f"postgresql://ragit:{SECRET}@db.example:5432/ragit",
        f"postgres://{SECRET}@db.example/ragit",
        f"host=db.example user=ragit password={SECRET} dbname=ragit",
        f"host=db.example password='{SECRET} x' dbname=ragit",
        f"postgresql:///ragit?host=/tmp&password={SECRET}&sslmode=disable",
    ],
)
def test_mask_removes_passwords_and_userinfo(text: str) -> None:
    masked = mask(text, env={})
    assert SECRET not in masked
    assert "***" in masked


def test_mask_removes_the_configured_password_wherever_it_occurs() -> None:
    env = {"RAGIT_DATABASE_URL": f"postgresql://u:{SECRET}@h/d", "PGPASSWORD": "other-secret"}
    text = f"server said: bad word {SECRET} and other-secret"
    assert mask(text, env=env) == "server said: bad word *** and ***"


def test_nothing_configured_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RAGIT_DATABASE_URL", "PGHOST", "PGDATABASE", "PGUSER", "PGSERVICE", "PGPORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("PGHOSTADDR", raising=False)
    assert not configured()
    with pytest.raises(SnapshotStoreUnavailable, match="RAGIT_DATABASE_URL"):
        PgReader.open()


def test_password_never_appears_when_no_server_answers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv(
        "RAGIT_DATABASE_URL",
        f"postgresql://ragit:{SECRET}@/ragit?host=/nonexistent-ragit-socket-dir&connect_timeout=2",
    )
    with pytest.raises(StoreReadBusy) as read:
        PgReader.open()
    assert "cannot be reached right now" in read.value.message
    assert SECRET not in _every_text(read.value)
    with pytest.raises(StoreWriteBusy) as write:
        migrate()
    assert SECRET not in _every_text(write.value)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://ragit@/ragit?host=/nonexistent-ragit-socket-dir&connect_timeout=2",
        "postgresql://ragit@127.0.0.1:1/ragit?connect_timeout=2",
    ],
    ids=["no-socket", "refused-port"],
)
def test_a_server_that_does_not_answer_is_transient_and_retryable(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    """Implementation choice (docs/team.md): nothing listening is the server being away
    (stopped, restarting), not a configuration to fix: retryable, for readers and writers."""
    monkeypatch.setenv("RAGIT_DATABASE_URL", url)
    with pytest.raises(StoreReadBusy) as read:
        PgReader.open()
    assert read.value.category == "transient" and read.value.retryable is True
    assert read.value.details == {"waitedMs": 0}
    with pytest.raises(StoreWriteBusy) as write:
        migrate()
    assert write.value.retryable is True
    assert write.value.details == {"lockState": "unreachable", "owner": None}


def test_an_unknown_database_is_not_ready_and_not_retryable(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice (docs/team.md): a server that answers and refuses stays
    SNAPSHOT_STORE_UNAVAILABLE (not ready): the configuration must change."""
    host = parse_qs(urlsplit(database).query)["host"][0]
    monkeypatch.setenv("RAGIT_DATABASE_URL", f"postgresql://postgres@/no_such_db?host={host}")
    with pytest.raises(SnapshotStoreUnavailable) as info:
        PgReader.open()
    assert info.value.retryable is False


def test_password_never_appears_in_a_server_side_refusal(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real server: the password reaches it, the database named does not exist.
    host = parse_qs(urlsplit(database).query)["host"][0]
    url = f"postgresql://postgres:{SECRET}@/no_such_database_{SECRET}?host={host}"
    monkeypatch.setenv("RAGIT_DATABASE_URL", url)
    with pytest.raises(SnapshotStoreUnavailable) as info:
        PgReader.open()
    text = _every_text(info.value)
    assert "does not exist" in text  # the server's reason is kept ...
    assert SECRET not in text  # ... without the secret, even where the server echoed it


def test_password_from_pgpassword_is_masked(database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    host = parse_qs(urlsplit(database).query)["host"][0]
    monkeypatch.setenv("PGPASSWORD", SECRET)
    monkeypatch.setenv("RAGIT_DATABASE_URL", f"postgresql://postgres@/db_{SECRET}?host={host}")
    with pytest.raises(SnapshotStoreUnavailable) as info:
        PgReader.open()
    assert SECRET not in _every_text(info.value)
