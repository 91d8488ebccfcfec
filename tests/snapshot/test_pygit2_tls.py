"""pygit2 is imported without reading the CA bundle, and the environment is left as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_PROBE = """
import json, os, ssl, sys
before = {k: os.environ.get(k) for k in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
from ragit.snapshot import _git
import pygit2
after = {k: os.environ.get(k) for k in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
root = _git.discover_root(__import__("pathlib").Path(sys.argv[1]))
print(json.dumps({
    "before": before,
    "after": after,
    "file": pygit2.settings.ssl_cert_file,
    "dir": pygit2.settings.ssl_cert_dir,
    "root": str(root),
    "capath": ssl.get_default_verify_paths().capath,
}))
"""


def _probe(repo: Path, **env: str) -> dict[str, object]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SSL_CERT_")}
    environ.update(env)
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(repo)],
        capture_output=True,
        text=True,
        env=environ,
        check=True,
    )
    result: dict[str, object] = json.loads(proc.stdout)
    return result


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def test_libgit2_gets_the_certificate_directory_and_no_bundle(repo: Path) -> None:
    """Implementation choice: libgit2 is pointed at the system's certificate directory, not
    its bundle file, and the process environment is restored after the import."""
    bundle = repo / "bundle.pem"
    bundle.write_text("")  # libgit2 refuses an empty bundle: it must not be read
    got = _probe(repo, SSL_CERT_FILE=str(bundle))
    if not got["capath"]:
        pytest.skip("this system has no CA directory")
    assert got["before"] == got["after"] == {"SSL_CERT_FILE": str(bundle), "SSL_CERT_DIR": None}
    assert got["file"] is None
    assert got["dir"] == got["capath"]
    assert got["root"] == str(repo.resolve())


def test_a_certificate_directory_named_by_the_user_is_the_one_used(repo: Path) -> None:
    """Implementation choice: SSL_CERT_DIR keeps its meaning, and is left set afterwards."""
    certs = repo / "certs"
    certs.mkdir()
    got = _probe(repo, SSL_CERT_DIR=str(certs))
    assert got["after"] == {"SSL_CERT_FILE": None, "SSL_CERT_DIR": str(certs)}
    assert got["dir"] == str(certs)
