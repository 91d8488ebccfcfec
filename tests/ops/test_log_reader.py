"""`ragit log`'s manifest reader: each manifest read once, the same data as the full read."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.ops.test_log_drift import git, ragit
from tests.snapshot._kit import from_template

from ragit.ops.history import log, records
from ragit.ops.history.log import LogRequest, run_log
from ragit.workspace import Workspace

# a path JSON must escape (a quote) and one that is not ASCII
ODD = 'docs/notes/say "hi" café.md'


def _indexed(root: Path) -> None:
    from fixtures.build import build_fixture

    build_fixture("docs-basic", root)
    ragit(root, "init", "--yes")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Track the RAGit config")
    ragit(root, "ingest")
    (root / ODD).write_text("# Say hi\n\nA note with an odd name.\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "Add a note with an odd name")
    ragit(root, "ingest")
    with (root / "docs/prd/ledger-mvp.md").open("a", encoding="utf-8") as fh:
        fh.write("\nAmended.\n")
    git(root, "commit", "-qam", "Amend the PRD")
    ragit(root, "ingest")
    git(root, "rm", "-q", "docs/glossary/terms.md")
    git(root, "commit", "-qm", "Drop the glossary")
    ragit(root, "ingest")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """docs-basic indexed, then three more indexed commits: add, modify, delete (built by
    real processes once per worker, copied per test)."""
    return from_template(tmp_path / "repo", "ops-log-reader", _indexed)


def _slow_only(raw: bytes, sha: str) -> records.Summary:
    raise ValueError(sha)


@pytest.mark.parametrize("view", ["minimal", "default", "full"])
def test_fast_reader_gives_what_the_validated_read_gives(
    repo: Path, view: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(repo)
    fast = run_log(ws, LogRequest(max_count=50, view=view))
    changed = [c["path"] for e in fast["entries"] for c in e["snapshot"].get("changed", [])]
    if view != "minimal":
        assert ODD in changed and "docs/glossary/terms.md" in changed
    monkeypatch.setattr(records.Records, "parse", lambda self, raw, sha: _slow_only(raw, sha))
    assert run_log(ws, LogRequest(max_count=50, view=view)) == fast


def test_each_manifest_is_read_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []
    real = log.read_summary

    def counting(
        ws: Workspace, sha: str, cache: records.Records, shared: object = None
    ) -> records.Summary:
        reads.append(sha)
        assert shared is None  # the embedded store: local manifests
        return real(ws, sha, cache)

    monkeypatch.setattr(log, "read_summary", counting)
    data = run_log(Workspace(repo), LogRequest(max_count=50))
    assert len(data["entries"]) == 4
    assert sorted(reads) == sorted(set(reads)) and len(reads) == 4


def test_a_manifest_in_another_layout_is_read_the_validated_way(repo: Path) -> None:
    """A manifest rewritten with other whitespace (a foreign writer) still reads the same."""
    import json

    ws = Workspace(repo)
    before = run_log(ws, LogRequest(max_count=50, view="full"))
    for path in ws.manifest_dir.glob("*.json"):
        path.write_text(json.dumps(json.loads(path.read_text("utf-8")), indent=1), "utf-8")
    assert run_log(ws, LogRequest(max_count=50, view="full")) == before
