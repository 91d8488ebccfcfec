"""Config typos are caught: unknown sections and keys warn on every command, doctor fails on
them with a fix that works as printed, and `config set` refuses what readers reject."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.snapshot._kit import (
    RagitRepo,
    make_repo,
    private_cache,  # noqa: F401 - autouse fixture
)


def _typo_repo(tmp_path: Path) -> RagitRepo:
    repo = make_repo(tmp_path, "docs-basic", commit_init=True)
    text = repo.ws.config_path.read_text(encoding="utf-8")
    text = text.replace("[retrieval]\n", "[retrieval]\nalhpa = 0.5\n", 1)
    text += "\n[retreival]\ntop_kk = 3\n"
    repo.ws.config_path.write_text(text, encoding="utf-8")
    return repo


@pytest.mark.parametrize(
    "argv",
    [
        ("status",),
        ("query", "idempotency keys"),
        ("config", "get", "retrieval.top_k"),
        ("ingest", "--all", "--dry-run"),
    ],
)
def test_unknown_config_keys_warn_on_every_command_with_did_you_mean(
    tmp_path: Path, argv: tuple[str, ...]
) -> None:
    """Contract-mandated (contract §6 config; docs/contract.md): an unknown section or key is
    a warning in `warnings[]` (JSON) and on stderr (text), with the key it misspells."""
    repo = _typo_repo(tmp_path)
    env = repo.ragit(*argv, "--format", "json").envelope
    joined = "\n".join(env["warnings"])
    assert "unknown config section 'retreival'" in joined
    assert "did you mean 'retrieval'?" in joined
    assert "unknown config key 'retrieval.alhpa'" in joined
    assert "did you mean 'retrieval.alpha'?" in joined
    text = repo.ragit(*argv, "--format", "text")
    assert "warning: unknown config section 'retreival'" in text.stderr
    assert "retreival" not in text.stdout


def test_doctor_fails_on_unknown_keys_and_its_fix_runs_as_printed(tmp_path: Path) -> None:
    """Contract-mandated (contract §12): doctor's ragit.config check fails (exit 1) on keys
    RAGit ignores, and its recovery, run as printed, makes it pass."""
    repo = _typo_repo(tmp_path)
    run = repo.ragit("doctor", "--format", "json")
    assert run.code == 1
    (check,) = [c for c in run.envelope["data"]["checks"] if c["name"] == "ragit.config"]
    assert not check["ok"]
    assert "did you mean 'retrieval.alpha'?" in check["detail"]
    fix = check["recovery"]
    assert "ragit config unset retreival" in fix
    assert "ragit config set retrieval.alpha 0.5" in fix
    shell = subprocess.run(
        ["bash", "-c", fix.replace("ragit ", f"{_ragit()} ")],
        cwd=repo.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert shell.returncode == 0, shell.stderr
    after = repo.ragit("doctor", "--format", "json").envelope["data"]["checks"]
    (check,) = [c for c in after if c["name"] == "ragit.config"]
    assert check["ok"], check
    assert repo.ragit("config", "get", "retrieval.alpha", "--format", "json").data["value"] == 0.5


def _ragit() -> str:
    import shlex
    import sys

    return f"{shlex.quote(sys.executable)} -m ragit"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("ingest.include", "../**"),
        ("ingest.exclude", '["docs/**", "/etc/**"]'),
        ("ingest.doc_globs", "docs/\x01*.md"),
        ("project.name", "bad\x1bname"),
        ("memory.corpus_dir", "docs/\x7fmemory"),
    ],
)
def test_config_set_refuses_values_later_commands_reject(
    tmp_path: Path, key: str, value: str
) -> None:
    """Contract-mandated (contract §4, §12): a glob outside the repository or a control
    character is INPUT_INVALID from `config set`, and nothing is written."""
    repo = make_repo(tmp_path, "docs-basic", commit_init=True)
    before = repo.ws.config_path.read_bytes()
    run = repo.ragit("config", "set", key, value, "--format", "json")
    assert run.code == 2
    assert run.error["code"] == "INPUT_INVALID"
    assert run.error["details"]["field"] == "value"
    assert repo.ws.config_path.read_bytes() == before


def test_config_unset_removes_a_key_and_is_a_no_op_the_second_time(tmp_path: Path) -> None:
    """Implementation choice (docs/config.md): `config unset` removes a key or a section,
    keeping every other byte; what the file does not hold is a no-op."""
    repo = _typo_repo(tmp_path)
    before = repo.ws.config_path.read_text(encoding="utf-8")
    first = repo.ragit("config", "unset", "retreival", "--format", "json").data
    assert first["removed"] is True and first["previous"] == {"top_kk": 3}
    after = repo.ws.config_path.read_text(encoding="utf-8")
    assert "retreival" not in after
    assert after.replace("alhpa = 0.5\n", "") in before.replace("alhpa = 0.5\n", "")
    again = repo.ragit("config", "unset", "retreival", "--format", "json").data
    assert again["removed"] is False
    assert repo.ws.config_path.read_text(encoding="utf-8") == after
