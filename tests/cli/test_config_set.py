"""`ragit config set` against a real repository: the provider URL rules (EMB-006)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fixtures.build import build_fixture

RAGIT = [sys.executable, "-m", "ragit"]


def _config_set(repo: Path, key: str, value: str) -> tuple[int, str]:
    proc = subprocess.run(
        [*RAGIT, "config", "set", key, value, "--format", "json"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_a_base_url_with_a_password_is_refused_and_an_old_one_is_never_echoed(
    tmp_path: Path,
) -> None:
    """Contract-mandated (EMB-006, docs/embeddings.md): no credentials in a provider URL; a value an
    older file already holds is shown without its user:password part."""
    repo = tmp_path / "repo"
    build_fixture("docs-basic", repo)
    subprocess.run([*RAGIT, "init", "--yes"], cwd=repo, check=True, capture_output=True)
    config = repo / ".ragit" / "config.toml"
    before = config.read_bytes()

    code, out = _config_set(repo, "embedding.base_url", "http://bob:hunter2@127.0.0.1:11434")
    assert code == 2
    assert "hunter2" not in out
    assert config.read_bytes() == before

    # A file edited by hand (or by an older RAGit) may hold one: replacing it works and the
    # envelope's `previous` hides the credentials.
    text = before.decode("utf-8")
    config.write_text(
        text.replace("[embedding]", '[embedding]\nbase_url = "http://bob:hunter2@old.example/v"'),
        encoding="utf-8",
    )
    code, out = _config_set(repo, "embedding.base_url", "http://127.0.0.1:11434/")
    assert code == 0, out
    data = json.loads(out)["data"]
    assert data["previous"] == "http://***@old.example/v"
    assert "hunter2" not in out
    assert 'base_url = "http://127.0.0.1:11434/"' in config.read_text(encoding="utf-8")


def test_store_backend_is_a_key_and_connection_keys_point_to_the_environment(
    tmp_path: Path,
) -> None:
    """EXT-041/EXT-042: ``store.backend`` takes ``zvec`` or ``postgres``; a key that would hold
    the shared store's connection (url, dsn, password, host, user, ...) or a connection string
    as a value is INPUT_INVALID naming RAGIT_DATABASE_URL, writes nothing and echoes no
    secret."""
    repo = tmp_path / "repo"
    build_fixture("docs-basic", repo)
    subprocess.run([*RAGIT, "init", "--yes"], cwd=repo, check=True, capture_output=True)
    config = repo / ".ragit" / "config.toml"
    before = config.read_bytes()
    assert b"[store]" not in before  # init leaves the section out: zvec is the default

    for key, value in (
        ("store.url", "postgresql://ci:s3cr3t-pw@db.example/ragit"),
        ("store.database_url", "postgresql://ci:s3cr3t-pw@db.example/ragit"),
        ("store.dsn", "host=db.example password=s3cr3t-pw"),
        ("store.password", "s3cr3t-pw"),
        ("store.host", "db.example"),
        ("postgres.url", "postgresql://ci:s3cr3t-pw@db.example/ragit"),
        ("database.password", "s3cr3t-pw"),
        ("store.repository", "postgresql://ci:s3cr3t-pw@db.example/ragit"),
        ("store.repository", "host=db.example password=s3cr3t-pw"),
    ):
        code, out = _config_set(repo, key, value)
        assert code == 2, (key, out)
        error = json.loads(out)["error"]
        assert error["code"] == "INPUT_INVALID"
        assert "RAGIT_DATABASE_URL" in error["details"]["reason"], (key, error)
        assert "s3cr3t-pw" not in out
        assert config.read_bytes() == before

    code, out = _config_set(repo, "store.backend", "mysql")
    assert code == 2 and json.loads(out)["error"]["code"] == "INPUT_INVALID"
    code, out = _config_set(repo, "store.backend", "postgres")
    assert code == 0, out
    assert json.loads(out)["data"]["previous"] == "zvec"
    code, out = _config_set(repo, "store.repository", "team/handbook")
    assert code == 0, out
    text = config.read_text(encoding="utf-8")
    assert 'backend = "postgres"' in text and 'repository = "team/handbook"' in text
