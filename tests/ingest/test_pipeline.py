"""Ingest behaviour end to end: modes, bases, selectors, dirty candidates, admission, reuse.

Core calls run in-process (:meth:`RagitRepo.ingest`); the CLI runs as a subprocess where
the exit code, the streams or the envelope is what the rule is about.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.snapshot._kit import (
    assert_no_secret,
    indexed_repo,
    make_repo,
    planted_secrets,
    private_cache,  # noqa: F401 - autouse fixture
    ragit_state,
    tree_state,
)

DOCS_BASIC = [
    "1881740a7efa3c1770dd38915e283ab450e01063",
    "b4c4a007b42986708d75e1eb3ba35b8512f9bc42",
    "2cf4e2f57018007e3b3467f3dbfa0b5f37159de0",
    "aae262a94d5414e1de7281861b5377f8c8ada10f",
]


def _docs(manifest: dict) -> dict[str, dict]:
    return {doc["path"]: doc for doc in manifest["docs"]}


# ---------------------------------------------------------------- --all and no-op


def test_ingest_all_indexes_every_markdown_doc_with_its_type_and_never_ragit_files(
    tmp_path: Path,
) -> None:
    """Contract §6: --all ingests every surface markdown doc (README too), typed; never .ragit."""
    repo = make_repo(tmp_path, "docs-basic")
    # A markdown file under .ragit that git tracks: the surface must still never take it.
    repo.git("add", "--", ".gitignore", ".ragit/config.toml")
    repo.write(".ragit/notes.md", "# Notes\n\nRAGit must never index its own directory.\n")
    repo.git("add", "-f", "--", ".ragit/notes.md")
    head = repo.commit({}, "track ragit config and a note under .ragit")

    data = repo.ingest(all=True)

    expected_types = repo.spec["expect"]["docTypes"]
    manifest = repo.manifest(head)
    docs = _docs(manifest)
    assert data["commitSha"] == head and data["mode"] == "apply" and data["fullSnapshot"]
    assert data["documents"] == data["processed"] == len(expected_types) == 13
    assert {path: doc["docType"] for path, doc in docs.items()} == expected_types
    assert "README.md" in docs and docs["README.md"]["docType"] == "unknown"
    assert not [p for p in docs if p.startswith(".ragit/")]
    assert all(doc["chunkIds"] for doc in docs.values())
    unique = {cid for doc in docs.values() for cid in doc["chunkIds"]}
    assert data["embedded"] == len(unique)
    assert repo.status()["store"]["chunkCount"] == len(unique)
    assert manifest["commitSha"] == head and manifest["parentSha"] == DOCS_BASIC[3]
    explicit = repo.ingest(paths=[".ragit/notes.md"], files=[".ragit/**"])
    assert explicit["noop"] is True and explicit["processed"] == 0
    assert not [p for p in _docs(repo.manifest(head)) if p.startswith(".ragit/")]


def test_second_ingest_all_on_the_same_head_writes_nothing(tmp_path: Path) -> None:
    """Contract §6: re-ingesting an unchanged commit is a no-op that rewrites nothing."""
    repo = indexed_repo(tmp_path, "docs-basic")
    before = ragit_state(repo)

    run = repo.ragit("ingest", "--all")

    assert run.code == 0, run.stderr
    assert run.data["noop"] is True
    assert run.data["processed"] == 0 and run.data["embedded"] == 0
    assert run.data["reused"] == 13
    assert ragit_state(repo) == before


def test_ingest_since_parent_rereads_only_the_modified_doc(tmp_path: Path) -> None:
    """Contract §6: --since carries over unchanged documents; only the changed one is read."""
    repo = indexed_repo(tmp_path, "docs-basic")
    path = "docs/adr/0002-idempotency-keys.md"
    old = repo.manifest(DOCS_BASIC[3])
    text = (repo.root / path).read_text(encoding="utf-8") + "\n## Expiry\n\nKeys expire.\n"
    head = repo.commit({path: text}, "document key expiry")

    run = repo.ragit("ingest", "--since", "HEAD~1")

    assert run.code == 0, run.stderr
    data = run.data
    assert data["baseSha"] == DOCS_BASIC[3] and data["baseMode"] == "since"
    assert data["processed"] == 1 and data["reused"] == 12
    assert data["plannedFiles"] == [path]
    assert data["deletedDocumentIds"] == []
    new_docs, old_docs = _docs(repo.manifest(head)), _docs(old)
    for other in set(old_docs) - {path}:
        assert new_docs[other] == old_docs[other]
    assert new_docs[path]["documentId"] == old_docs[path]["documentId"]
    assert new_docs[path]["versionId"] != old_docs[path]["versionId"]
    added = set(new_docs[path]["chunkIds"]) - set(old_docs[path]["chunkIds"])
    assert added and data["embedded"] == len(added)


def test_ingest_since_handles_renames_and_deletions(tmp_path: Path) -> None:
    """Contract §6: a renamed doc keeps its chunk ids under a new documentId; deletions reported."""
    repo = make_repo(tmp_path, "docs-basic")
    repo.ingest(all=True, at=DOCS_BASIC[1])
    base = _docs(repo.manifest(DOCS_BASIC[1]))

    data = repo.ingest(since=DOCS_BASIC[1], at=DOCS_BASIC[2])

    docs = _docs(repo.manifest(DOCS_BASIC[2]))
    old, new = base["docs/spec/posting-api.md"], docs["docs/spec/posting-api-v1.md"]
    assert "docs/spec/posting-api.md" not in docs
    assert new["chunkIds"] == old["chunkIds"]
    assert new["documentId"] != old["documentId"]
    deleted = {base["docs/notes/reconciliation-draft.md"]["documentId"], old["documentId"]}
    assert set(data["deletedDocumentIds"]) == deleted
    assert sorted(data["plannedFiles"]) == [
        "docs/notes/release-checklist.md",
        "docs/plan/2026-q1-roadmap.md",
        "docs/prd/ledger-mvp.md",
        "docs/spec/posting-api-v1.md",
    ]
    unchanged = set(base) & set(docs)
    assert data["reused"] == len(unchanged - {"docs/prd/ledger-mvp.md"})


def test_ingest_since_a_non_ancestor_fails_with_base_not_ancestor(tmp_path: Path) -> None:
    """Contract §3/§6: --since a commit that is not an ancestor of the target → exit 2."""
    repo = make_repo(tmp_path, "branches")
    repo.ingest(all=True, at=repo.spec["branches"]["feature"])
    before = ragit_state(repo)

    run = repo.ragit("ingest", "--since", "feature")

    assert run.code == 2
    assert run.error["code"] == "INGEST_BASE_NOT_ANCESTOR"
    assert run.error["details"] == {
        "baseSha": repo.spec["branches"]["feature"],
        "headSha": repo.spec["head"],
    }
    assert ragit_state(repo) == before


def test_ingest_since_an_unindexed_ancestor_fails_with_base_not_indexed(tmp_path: Path) -> None:
    """Contract §3/§6: --since an ancestor without a manifest → INGEST_BASE_NOT_INDEXED, exit 3."""
    repo = make_repo(tmp_path, "docs-basic")

    run = repo.ragit("ingest", "--since", "HEAD~2")

    assert run.code == 3
    assert run.error["code"] == "INGEST_BASE_NOT_INDEXED"
    assert run.error["details"]["baseSha"] == DOCS_BASIC[1]
    assert run.error["recovery"]["command"] == "ragit ingest --all"
    assert not repo.ws.manifest_dir.exists()


def test_ingest_at_an_older_commit_indexes_that_commit_without_the_dirty_check(
    tmp_path: Path,
) -> None:
    """Contract §6: --at indexes history after the fact; the dirty check applies only to HEAD."""
    repo = make_repo(tmp_path, "dirty")
    older = repo.spec["commits"][0]

    run = repo.ragit("ingest", "--all", "--at", older)

    assert run.code == 0, run.stderr
    assert run.data["commitSha"] == older
    assert run.data["dirtyCandidates"] == []
    assert repo.ws.manifest_path(older).is_file()
    assert not repo.ws.manifest_path(repo.spec["head"]).exists()
    tree = {line.split("\t")[1] for line in repo.git("ls-tree", "-r", older).splitlines()}
    assert set(_docs(repo.manifest(older))) == {p for p in tree if p.endswith(".md")}


# ---------------------------------------------------------------- targeted selectors


def test_targeted_path_reindexes_on_top_of_heads_manifest(tmp_path: Path) -> None:
    """Contract §6: --path starts from HEAD's manifest and re-evaluates only that path."""
    repo = indexed_repo(tmp_path, "docs-basic")
    before = repo.manifest(DOCS_BASIC[3])

    run = repo.ragit("ingest", "--path", "docs/prd/ledger-mvp.md")

    assert run.code == 0, run.stderr
    assert run.data["baseMode"] == "partial-head" and run.data["fullSnapshot"] is False
    assert run.data["noop"] is True and run.data["reused"] == 13
    assert repo.manifest(DOCS_BASIC[3]) == before


def test_targeted_files_glob_builds_on_the_parents_manifest(tmp_path: Path) -> None:
    """Contract §6: without HEAD's manifest, a targeted ingest starts from the parent's."""
    repo = indexed_repo(tmp_path, "docs-basic")
    path = "docs/glossary/terms.md"
    text = (repo.root / path).read_text(encoding="utf-8") + "\n## Payout\n\nMoney out.\n"
    head = repo.commit({path: text, "docs/adr/0003-new.md": "# ADR 3\n\nNew.\n"}, "glossary")

    run = repo.ragit("ingest", "--files", "docs/glossary/**")

    assert run.code == 0, run.stderr
    data = run.data
    assert data["baseMode"] == "partial-parent" and data["baseSha"] == DOCS_BASIC[3]
    assert data["plannedFiles"] == [path] and data["processed"] == 1
    docs = _docs(repo.manifest(head))
    # Only the selected paths are re-evaluated: the new, unselected ADR is not picked up.
    assert "docs/adr/0003-new.md" not in docs
    assert docs[path]["blobSha"] == repo.git("rev-parse", f"HEAD:{path}")


def test_targeted_input_paths_behave_like_path_flags(tmp_path: Path) -> None:
    """Contract §4/§6: --input {"paths": [...]} selects the same documents as --path."""
    repo = make_repo(tmp_path, "docs-basic")
    repo.ingest(all=True, at=DOCS_BASIC[2])
    request = tmp_path / "repo" / "request.json"
    request.write_text(json.dumps({"paths": ["src/app.py", "README.md"]}), encoding="utf-8")

    run = repo.ragit("ingest", "--input", "request.json")

    assert run.code == 0, run.stderr
    data = run.data
    assert data["baseMode"] == "partial-parent" and data["baseSha"] == DOCS_BASIC[2]
    assert data["skippedFiles"] == [{"path": "src/app.py", "reason": "not a markdown document"}]
    assert set(_docs(repo.manifest(DOCS_BASIC[3]))) == set(_docs(repo.manifest(DOCS_BASIC[2])))
    stdin_run = repo.ragit(
        "ingest", "--input", "-", "--dry-run", stdin=json.dumps({"paths": ["README.md"]})
    )
    assert stdin_run.code == 0 and stdin_run.data["baseMode"] == "partial-head"


def test_targeted_ingest_without_any_indexed_base_fails_with_base_not_indexed(
    tmp_path: Path,
) -> None:
    """Contract §6: a targeted ingest needs HEAD's or the parent's manifest."""
    repo = make_repo(tmp_path, "docs-basic")

    run = repo.ragit("ingest", "--path", "README.md")

    assert run.code == 3 and run.error["code"] == "INGEST_BASE_NOT_INDEXED"
    assert run.error["details"] == {"baseSha": DOCS_BASIC[2], "headSha": DOCS_BASIC[3]}


@pytest.mark.parametrize(
    "args",
    [
        ["--input", "-", "--all"],
        ["--input", "-", "--since", "HEAD~1"],
        ["--input", "-", "--path", "README.md"],
        ["--all", "--since", "HEAD~1"],
        ["--files", "../x/*.md"],
        ["--files", "/abs/*.md"],
        ["--path", "../outside.md"],
        ["--path", "/etc/passwd"],
    ],
)
def test_mixed_selectors_and_globs_escaping_the_repo_are_invalid_input(
    tmp_path: Path, args: list[str]
) -> None:
    """Contract §4: --input with domain options, several modes, escaping globs → INPUT_INVALID."""
    repo = make_repo(tmp_path, "docs-basic")

    run = repo.ragit("ingest", *args, stdin=json.dumps({"all": True}))

    assert run.code == 2
    assert run.error["code"] == "INPUT_INVALID"
    assert not repo.ws.manifest_dir.exists() and not repo.ws.store_dir.exists()


@pytest.mark.parametrize(
    "payload", [{"paths": ["../x.md"]}, {"files": "/abs/**"}, {"all": True, "paths": ["README.md"]}]
)
def test_input_payloads_escaping_the_repo_or_mixing_modes_are_invalid_input(
    tmp_path: Path, payload: dict
) -> None:
    """Contract §4: JSON paths/globs are repo-relative and modes exclusive."""
    repo = make_repo(tmp_path, "docs-basic")

    run = repo.ragit("ingest", "--input", "-", stdin=json.dumps(payload))

    assert run.code == 2 and run.error["code"] == "INPUT_INVALID"


# ---------------------------------------------------------------- dirty, not initialized


def test_dirty_doc_candidates_block_apply_and_the_dirty_code_file_does_not(tmp_path: Path) -> None:
    """Contract §6: modified/staged/untracked/deleted docs block apply (exit 3); code does not."""
    repo = make_repo(tmp_path, "dirty")
    before = tree_state(repo.ws.ragit_dir)

    run = repo.ragit("ingest", "--all")

    assert run.code == 3
    assert run.error["code"] == "INGEST_CANDIDATES_DIRTY"
    assert sorted(run.error["details"]["dirtyCandidates"]) == [
        "docs/adr/0001-record-retention.md",
        "docs/adr/0002-export-encryption.md",
        "docs/notes/scratch.md",
        "docs/plan/migration.md",
        "docs/prd/exports.md",
        "docs/spec/export-format.md",
    ]
    assert tree_state(repo.ws.ragit_dir) == before


def test_dirty_candidates_in_a_dry_run_are_blockers_and_nothing_is_written(tmp_path: Path) -> None:
    """Contract §6: --dry-run reports wouldFail/blockers/dirtyCandidates, exit 0, writes nothing."""
    repo = make_repo(tmp_path, "dirty")
    before = ragit_state(repo)

    run = repo.ragit("ingest", "--all", "--dry-run")

    assert run.code == 0, run.stderr
    data = run.data
    assert data["mode"] == "dry-run" and data["wouldFail"] is True
    assert [b["code"] for b in data["blockers"]] == ["INGEST_CANDIDATES_DIRTY"]
    assert "src/worker.py" not in data["dirtyCandidates"]
    assert len(data["dirtyCandidates"]) == 6
    assert data["blockers"][0]["details"]["dirtyCandidates"] == data["dirtyCandidates"]
    assert ragit_state(repo) == before


def test_ingest_in_an_uninitialized_repository_fails_and_dry_run_reports_a_blocker(
    tmp_path: Path,
) -> None:
    """Contract §3/§6: NOT_INITIALIZED on apply (exit 3); a blocker in a dry-run (exit 0)."""
    repo = make_repo(tmp_path, "docs-basic", init=False)

    apply = repo.ragit("ingest", "--all")
    dry = repo.ragit("ingest", "--all", "--dry-run")

    assert apply.code == 3 and apply.error["code"] == "NOT_INITIALIZED"
    assert apply.error["recovery"]["command"] == "ragit init --yes"
    assert dry.code == 0 and dry.data["wouldFail"] is True
    assert "NOT_INITIALIZED" in [b["code"] for b in dry.data["blockers"]]
    assert not (repo.root / ".ragit").exists()
    assert repo.git("status", "--porcelain") == ""


# ---------------------------------------------------------------- markdown edge cases


def test_code_fences_fixture_skips_unreadable_docs_with_reasons_and_chunks_the_rest(
    tmp_path: Path,
) -> None:
    """Implementation choice: binary and invalid-UTF-8 .md and symlinks are skipped with reasons."""
    repo = make_repo(tmp_path, "code-fences")

    data = repo.ingest(all=True)

    skipped = {item["path"]: item["reason"] for item in data["skippedFiles"]}
    assert skipped == {
        "docs/guide/binary.md": "binary content",
        "docs/guide/invalid-utf8.md": "not valid UTF-8",
        "docs/link.md": "symlink (only regular files are ingested)",
    }
    docs = _docs(repo.manifest(repo.spec["head"]))
    assert {p: d["docType"] for p, d in docs.items()} == repo.spec["expect"]["docTypes"]
    assert docs["docs/guide/empty.md"]["chunkIds"] == []
    assert len(docs["docs/guide/huge-section.md"]["chunkIds"]) > 1
    json.dumps(data)  # nothing undecodable leaked into the result


def test_the_snapshot_of_a_root_commit_is_readable(tmp_path: Path) -> None:
    """Contract §5: a commit without a parent gets a manifest with parentSha null that loads."""
    repo = make_repo(tmp_path, "code-fences")
    head = repo.spec["head"]
    assert repo.git("rev-list", "--count", "HEAD") == "1"

    repo.ingest(all=True)

    assert repo.manifest(head)["parentSha"] is None
    data = repo.query("ledger runbook incidents")
    assert data["snapshotSha"] == head and data["hits"]


def test_crlf_and_bom_documents_chunk_like_their_lf_equivalents(tmp_path: Path) -> None:
    """Design §2.2: chunk ids come from normalized text, so CRLF/BOM variants share ids."""
    repo = make_repo(tmp_path, "code-fences")
    crlf = (repo.root / "docs/guide/windows-crlf.md").read_bytes()
    bom = (repo.root / "docs/guide/bom.md").read_bytes()
    assert b"\r\n" in crlf and bom.startswith(b"\xef\xbb\xbf")
    head = repo.commit(
        {
            "docs/guide/windows-lf.md": crlf.replace(b"\r\n", b"\n"),
            "docs/guide/no-bom.md": bom[3:],
        },
        "LF and BOM-less twins",
    )

    repo.ingest(all=True)

    docs = _docs(repo.manifest(head))
    lf, crlf = docs["docs/guide/windows-lf.md"], docs["docs/guide/windows-crlf.md"]
    assert lf["chunkIds"] == crlf["chunkIds"]
    assert docs["docs/guide/no-bom.md"]["chunkIds"] == docs["docs/guide/bom.md"]["chunkIds"]
    assert docs["docs/guide/windows-crlf.md"]["docType"] == "adr"
    assert docs["docs/guide/bom.md"]["docType"] == "spec"


def _set_config(repo, key: str, value: str) -> None:
    run = repo.ragit("config", "set", key, value)
    assert run.code == 0, run.output


@pytest.mark.slow
def test_five_megabyte_markdown_ingests_under_the_limit_and_is_skipped_over_it(
    tmp_path: Path,
) -> None:
    """Contract §6: a doc over ingest.max_file_bytes is skipped with a reason; one at it is not."""
    repo = make_repo(tmp_path, "empty")
    section = "".join(f"Paragraph {i} about ledgers, postings and balances.\n\n" for i in range(40))
    body = "".join(f"## Part {n}\n\n{section}" for n in range(2600))
    text = "# Big handbook\n\n" + body
    big = text.encode("utf-8")[: 5 * 1024 * 1024]
    assert len(big) == 5 * 1024 * 1024
    head = repo.commit({"docs/big.md": big, "README.md": "# Readme\n"}, "big doc")
    size = len(big)

    _set_config(repo, "ingest.max_file_bytes", str(size - 1))
    repo.git("add", "--", ".gitignore", ".ragit/config.toml")
    head = repo.commit({}, "config")
    over = repo.ingest(all=True)

    assert over["skippedFiles"] == [
        {"path": "docs/big.md", "reason": f"larger than ingest.max_file_bytes ({size} B)"}
    ]
    assert set(_docs(repo.manifest(head))) == {"README.md"}

    _set_config(repo, "ingest.max_file_bytes", str(size))
    repo.git("add", "--", ".ragit/config.toml")
    head = repo.commit({}, "raise the limit")
    under = repo.ingest(all=True)

    assert under["skippedFiles"] == []
    big_doc = _docs(repo.manifest(head))["docs/big.md"]
    assert len(big_doc["chunkIds"]) > 1000
    assert repo.query("postings and balances")["hits"]


# ---------------------------------------------------------------- admission and masking


def test_secrets_blocked_docs_are_skipped_and_quarantined_docs_are_stored_masked(
    tmp_path: Path,
) -> None:
    """Contract §6/§7, docs/reference/security.md: blocked docs never stored; quarantined ones
    masked; nothing leaks."""
    from ragit.store.reader import StoreReader

    repo = make_repo(tmp_path, "secrets")
    secrets = planted_secrets(repo)
    admission = repo.spec["expect"]["admission"]

    run = repo.ragit("ingest", "--all")

    assert run.code == 0, run.stderr
    data = run.data
    docs = _docs(repo.manifest(repo.spec["head"]))
    markdown = {p: a for p, a in admission.items() if p.endswith(".md")}
    assert set(docs) == {p for p, a in markdown.items() if a != "block"}
    skipped = {item["path"]: item["reason"] for item in data["skippedFiles"]}
    assert {p for p, r in skipped.items() if r == "blocked by admission control"} == {
        p for p, a in markdown.items() if a == "block"
    }
    assert data["admission"]["quarantined"] == sum(a == "quarantine" for a in markdown.values())

    reader = StoreReader.open_latest(repo.ws)
    try:
        stored = reader.fetch([cid for doc in docs.values() for cid in doc["chunkIds"]])
    finally:
        reader.close()
    texts = "\n".join(chunk.text for chunk in stored.values())
    assert_no_secret(texts, secrets)
    for path, action in markdown.items():
        if action == "quarantine":
            doc_text = "".join(stored[c].text for c in docs[path]["chunkIds"])
            assert "***" in doc_text, path

    topic = repo.ragit(
        "query",
        "token key password secret credentials",
        "--view",
        "full",
        "--top-k",
        "50",
        "--format",
        "both",
    )
    assert topic.code == 0, topic.stderr
    assert {h["path"] for h in topic.data["hits"]} & {
        p for p, a in markdown.items() if a == "quarantine"
    }
    repo.ragit("status")
    repo.ragit("doctor", "--format", "both")
    repo.ragit("ingest", "--all", "--dry-run")
    assert_no_secret(repo.all_output(), secrets)
    for path, (digest, _mtime) in tree_state(repo.ws.ragit_dir).items():
        if digest != "dir":
            assert_no_secret(Path(path).read_bytes().decode("latin-1"), secrets)


def test_explicit_path_of_a_blocked_doc_fails_typed_and_writes_nothing(tmp_path: Path) -> None:
    """Contract §6: explicit selectors never pass admission control; the failure names no secret."""
    repo = indexed_repo(tmp_path, "secrets")
    before = ragit_state(repo)

    run = repo.ragit("ingest", "--path", "docs/runbooks/key-rotation.md")

    assert run.code == 2
    assert run.error["code"] == "INPUT_INVALID"
    assert run.error["details"]["path"] == "docs/runbooks/key-rotation.md"
    assert ragit_state(repo) == before
    assert_no_secret(run.output, planted_secrets(repo))
