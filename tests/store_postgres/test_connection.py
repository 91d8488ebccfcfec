"""The connection comes only from the environment and no error shows its password."""

from __future__ import annotations

import json
import traceback
from urllib.parse import parse_qs, urlsplit

import pytest

from ragit.contract.errors import RagitError, SnapshotStoreUnavailable
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


def test_password_never_appears_when_the_connection_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    monkeypatch.setenv(
        "RAGIT_DATABASE_URL",
        f"postgresql://ragit:{SECRET}@/ragit?host=/nonexistent-ragit-socket-dir&connect_timeout=2",
    )
    with pytest.raises(SnapshotStoreUnavailable) as info:
        PgReader.open()
    assert "cannot connect" in info.value.message
    assert SECRET not in _every_text(info.value)
    with pytest.raises(SnapshotStoreUnavailable) as info:
        migrate()
    assert SECRET not in _every_text(info.value)


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
