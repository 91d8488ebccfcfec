"""A snapshot is a function of its commit, configuration included (contract §6).

The keys that decide a snapshot's content are read from `.ragit/config.toml` as committed
in the target commit; a working-tree edit of them changes nothing until it is committed,
and is reported as a warning naming the keys and the commit step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.snapshot._kit import (
    make_repo,
    private_cache,  # noqa: F401 - autouse fixture
)

from ragit.contract.errors import ConfigInvalid
from ragit.snapshot.config_at import SNAPSHOT_KEYS
from ragit.snapshot.surface import SurfaceMatcher, is_markdown

EDITS: dict[str, Any] = {
    "ingest.doc_globs": st.sampled_from([["docs/adr/*.md"], ["**/*.txt"], [], ["**/*.MD"]]),
    "ingest.include": st.sampled_from([["docs/adr/**"], ["**"], ["README.md"], []]),
    "ingest.exclude": st.sampled_from([["docs/**"], ["**/notes/**"], []]),
    "ingest.max_file_bytes": st.integers(min_value=1024, max_value=4096),
    "security.secret_masking": st.just(False),
    "security.admission_mode": st.just("report-only"),
}


def _edit_config(path: Path, edit: dict[str, Any]) -> None:
    doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    for dotted, value in edit.items():
        section, _, key = dotted.partition(".")
        if section not in doc:
            doc.add(section, tomlkit.table())
        doc[section][key] = value  # type: ignore[index]
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")


def _expected_docs(repo: Any, edit: dict[str, Any]) -> set[str]:
    """The documents the edited settings select at HEAD (what committing must give)."""
    from ragit.config import load_config
    from ragit.snapshot._git import GitRepo

    cfg = load_config(repo.ws)
    surface = SurfaceMatcher(cfg.ingest.doc_globs, cfg.ingest.include, cfg.ingest.exclude)
    git = GitRepo(repo.root)
    return {
        item.path
        for item in git.tree_files(repo.head())
        if surface.matches(item.path)
        and is_markdown(item.path)
        and not item.is_symlink
        and git.blob_size(item.blob_sha) <= cfg.ingest.max_file_bytes
    }


def _answer(repo: Any, sha: str) -> str:
    """The answer at ``sha``: its hits and evidence, byte for byte (the edited config makes
    the worktree dirty, which a read reports beside the answer)."""
    data = repo.query("idempotency keys for postings", at=sha, view="full")
    return json.dumps([data["snapshotSha"], data["hits"], data["evidence"]], sort_keys=True)


def test_every_snapshot_key_is_named_by_the_edit_strategies() -> None:
    """Implementation choice: the property below edits every snapshot-deciding key."""
    assert set(EDITS) == set(SNAPSHOT_KEYS)


def test_working_tree_config_edits_never_change_an_indexed_commit_until_committed(
    tmp_path: Path,
) -> None:
    """Contract-mandated (contract §6): for a commit S, any working-tree edit of the keys that
    decide a snapshot leaves `ingest --all --at S`'s manifest and the answers at S
    byte-identical; committing the edit and ingesting the new commit takes effect."""
    repo = make_repo(tmp_path, "docs-basic", commit_init=True)
    config = repo.ws.config_path
    pristine = config.read_text(encoding="utf-8")
    s = repo.head()
    repo.ingest(all=True)
    manifest_bytes = repo.ws.manifest_path(s).read_bytes()
    answer = _answer(repo, s)

    @settings(
        max_examples=10,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        edit=st.dictionaries(st.sampled_from(sorted(EDITS)), st.none(), min_size=1).flatmap(
            lambda keys: st.fixed_dictionaries({k: EDITS[k] for k in keys})
        )
    )
    def check(edit: dict[str, Any]) -> None:
        repo.git("reset", "-q", "--hard", s)
        config.write_text(pristine, encoding="utf-8")
        _edit_config(config, edit)

        data = repo.ingest(all=True, at=s)
        assert data["noop"], data
        assert repo.ws.manifest_path(s).read_bytes() == manifest_bytes
        assert _answer(repo, s) == answer
        assert data["configSource"]["worktreeDiffers"] == sorted(edit, key=SNAPSHOT_KEYS.index)
        assert any("git add .ragit/config.toml && git commit" in w for w in data["warnings"])

        t = repo.commit({".ragit/config.toml": config.read_text(encoding="utf-8")}, "edit")
        if edit.get("security.secret_masking") is False:
            with pytest.raises(ConfigInvalid):
                repo.ingest(all=True)
            return
        committed = repo.ingest(all=True)
        assert committed["commitSha"] == t
        assert committed["configSource"]["worktreeDiffers"] == []
        assert {d["path"] for d in repo.manifest(t)["docs"]} == _expected_docs(repo, edit)

    try:
        check()
    finally:
        repo.git("reset", "-q", "--hard", s)
        config.write_text(pristine, encoding="utf-8")


def test_a_commit_without_a_config_file_is_indexed_with_the_defaults(tmp_path: Path) -> None:
    """Contract-mandated (contract §6): defaults when the commit has no config; the working
    tree's include does not reach it."""
    repo = make_repo(tmp_path, "docs-basic")  # .ragit/config.toml never committed
    _edit_config(repo.ws.config_path, {"ingest.include": ["docs/adr/**"]})
    data = repo.ingest(all=True)
    assert data["configSource"]["committed"] is False
    assert data["documents"] == 13  # README.md + docs/** (the defaults), not docs/adr only


def test_status_and_config_set_warn_about_an_uncommitted_snapshot_key(tmp_path: Path) -> None:
    """Contract-mandated (contract §6): status and config set report a working-tree config
    that differs in snapshot keys, naming the keys and the commit step."""
    repo = make_repo(tmp_path, "docs-basic", commit_init=True)
    run = repo.ragit("config", "set", "ingest.exclude", "docs/notes/**", "--format", "json")
    assert run.code == 0
    (warning,) = [w for w in run.envelope["warnings"] if "ingest.exclude" in w]
    assert "git add .ragit/config.toml && git commit" in warning
    status = repo.ragit("status", "--format", "json").envelope
    assert status["data"]["config"]["worktreeDiffers"] == ["ingest.exclude"]
    assert any("ingest.exclude" in w and "git commit" in w for w in status["warnings"])
    repo.commit({".ragit/config.toml": repo.ws.config_path.read_text(encoding="utf-8")}, "cfg")
    status = repo.ragit("status", "--format", "json").envelope
    assert status["data"]["config"]["worktreeDiffers"] == []
    assert not any("ingest.exclude" in w for w in status["warnings"])


def test_dry_run_plans_the_committed_config_and_previews_the_working_tree_one(
    tmp_path: Path,
) -> None:
    """Implementation choice (docs/contract.md): a dry-run plans exactly what the apply would
    index (the committed config) and counts what the working-tree config would index."""
    repo = make_repo(tmp_path, "docs-basic", commit_init=True)
    _edit_config(repo.ws.config_path, {"ingest.include": ["docs/adr/**"]})
    data = repo.ingest(all=True, dry_run=True)
    assert data["documents"] == 13
    assert data["configSource"]["worktreeDiffers"] == ["ingest.include"]
    assert data["configSource"]["worktreeDocuments"] == 2


def test_a_committed_smaller_size_limit_judges_carried_over_documents_again(
    tmp_path: Path,
) -> None:
    """Contract-mandated (contract §6): a document unchanged since an indexed ancestor is not
    carried over past a stricter committed rule; it is skipped with its reason."""
    repo = make_repo(tmp_path, "docs-basic", commit_init=True)
    repo.ingest(all=True)
    _edit_config(repo.ws.config_path, {"ingest.max_file_bytes": 1024})
    head = repo.commit({".ragit/config.toml": repo.ws.config_path.read_text(encoding="utf-8")}, "x")
    data = repo.ingest()
    assert data["commitSha"] == head
    large = {s["path"] for s in data["skippedFiles"] if "max_file_bytes" in s["reason"]}
    assert large
    assert not large & {d["path"] for d in repo.manifest(head)["docs"]}
