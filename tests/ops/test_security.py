"""`ragit security audit|purge` (docs/reference/security.md, contract §12) on the secrets fixture.

Raw secrets are planted by hand where an older RAGit could have left them: control-plane JSON
and JSONL files holding fixture secrets, and a snapshot whose store chunks were written
without masking. The fixture's ``plantedSecrets`` list is what must never reach any output.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from tests.snapshot._kit import (
    RagitRepo,
    assert_no_secret,
    hits_key,
    indexed_repo,
    make_repo,
    planted_secrets,
    private_cache,  # noqa: F401 - autouse fixture
    ragit_state,
    tree_state,
)

# Planted values that announce themselves (token formats), and key-value forms.
OPENAI = "sk-RagitFixtureFAKElegacyKey00000000000000000000001"
GITHUB = "ghp_RagitFixtureFAKEclassic0000000000003"
AWS = "AKIAFIXTURE0FAKE0009"
API_KEY = "fixture_FAKE_api_key_0011"

WORKING = ".ragit/memory/working/goal_legacy.json"
EVENTS = ".ragit/log/events/2026-01-01.jsonl"
ARTIFACT = ".ragit/artifacts/session/art_session_legacy.json"
HARNESS_RUN = ".ragit/log/harness-runs/run_legacy.json"
QUARANTINE = ".ragit/security/quarantine/2026-01-01.jsonl"
CLEAN_EVENT = {"type": "memory.wrap", "summary": "wrapped the deploy goal", "n": 1}
LEAKY_DOC = "docs/runbooks/ci-tokens.md"


def _write_json(repo: RagitRepo, path: str, value: Any) -> None:
    repo.write(path, json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def _plant_control_plane(repo: RagitRepo) -> list[str]:
    """Control-plane files as an unmasked writer would have left them; returns their paths."""
    _write_json(
        repo,
        WORKING,
        {
            "goalId": "goal_legacy",
            "summary": f"rotate the batch key {OPENAI} before Friday",
            "next": ["check CI", f"api_key = {API_KEY}"],
            "count": 3,
        },
    )
    leaky = {"type": "memory.wrap", "summary": f"pushed with {GITHUB}", "n": 2}
    repo.write(
        EVENTS,
        json.dumps(CLEAN_EVENT, separators=(",", ":"))
        + "\n"
        + json.dumps(leaky, separators=(",", ":"))
        + "\n",
    )
    _write_json(repo, ARTIFACT, {"artifactId": "art_session_legacy", "body": f"aws {AWS}"})
    _write_json(repo, HARNESS_RUN, {"runId": "run_legacy", "stdout": f"token: {GITHUB}"})
    return sorted([ARTIFACT, HARNESS_RUN, EVENTS, WORKING])


def _plant_quarantine(repo: RagitRepo) -> None:
    line = {"surface": "memory.wrap", "maskedPreview": "sk-Ragi***", "maskedCount": 1}
    repo.write(QUARANTINE, json.dumps(line) + "\n")


def _plant_legacy_chunks(repo: RagitRepo, path: str) -> list[str]:
    """Make HEAD's snapshot look written by a RAGit that did not mask ``path``: its chunks in
    the published store hold the raw text, and the manifest cites them. Returns their ids."""
    from ragit.config import load_config
    from ragit.embed import build_embedder
    from ragit.ingest.rows import chunk_rows
    from ragit.snapshot.manifest import load_manifest, write_manifest
    from ragit.store.lock import WriterLock
    from ragit.store.publishing import publish
    from ragit.store.writer import StoreWriter

    ws = repo.ws
    cfg = load_config(ws)
    head = repo.head()
    raw = repo.git("show", f"{head}:{path}")
    embedder = build_embedder(ws.root, cfg.embedding, cfg.security, mode="cli")
    try:
        rows = chunk_rows(raw)
        vectors = embedder.embed([row.search_en for row in rows])
        profile = embedder.profile.as_dict()
    finally:
        embedder.close()
    rows = [replace(row, vector=vec) for row, vec in zip(rows, vectors, strict=True)]
    ids = [row.chunk_id for row in rows]
    with WriterLock.acquire(ws, command="legacy-writer", head_sha=None) as lock:
        with StoreWriter.open(ws, lock, embedding=profile, dimensions=profile["dimensions"]) as w:
            w.insert(rows)
            assert w.verify(ids) == []
        publish(ws, lock)
    manifest = load_manifest(ws, head)
    docs = [d.model_copy(update={"chunk_ids": ids}) if d.path == path else d for d in manifest.docs]
    assert docs != list(manifest.docs)
    write_manifest(ws, manifest.model_copy(update={"docs": docs}))
    return ids


def _audit(repo: RagitRepo) -> dict[str, Any]:
    from ragit.config import load_config
    from ragit.ops.security.audit import run_audit

    return run_audit(repo.ws, load_config(repo.ws))


def _by_surface(data: dict[str, Any], surface: str) -> list[dict[str, Any]]:
    return [f for f in data["findings"] if f["surface"] == surface]


def test_audit_reports_planted_control_plane_secrets_by_file_and_field_without_values(
    tmp_path: Path,
) -> None:
    """docs/reference/security.md: raw-looking control-plane secrets are warn findings; no output
    holds one."""
    repo = indexed_repo(tmp_path, "secrets")
    planted = _plant_control_plane(repo)

    run = repo.ragit("security", "audit", "--format", "both")

    assert run.code == 0, run.output
    data = run.data
    control = _by_surface(data, "control-plane")
    assert sorted({f["path"] for f in control}) == planted
    assert {(f["path"], f["field"]) for f in control} == {
        (WORKING, "summary"),
        (WORKING, "next[1]"),
        (EVENTS, "[1].summary"),
        (ARTIFACT, "body"),
        (HARNESS_RUN, "stdout"),
    }
    assert {f["severity"] for f in control} == {"warn"}
    assert {f["suggestedAction"] for f in control} == {
        "ragit security purge --target control-plane"
    }
    assert all(f["findingId"].startswith("finding_") and len(f["findingId"]) == 20 for f in control)
    assert data["summary"]["legacyControlPlaneFiles"] == 4
    assert data["summary"]["legacyStoreFindings"] == 0
    assert_no_secret(run.output, planted_secrets(repo))


def test_audit_judges_head_documents_by_their_admission_verdict(tmp_path: Path) -> None:
    """docs/reference/security.md: a document admission would block is critical, a secret-like one
    warn."""
    repo = indexed_repo(tmp_path, "secrets")
    expected = {
        path: {"block": "critical", "quarantine": "warn"}[verdict]
        for path, verdict in repo.spec["expect"]["admission"].items()
        if verdict != "allow" and path.endswith(".md")
    }

    data = _audit(repo)

    docs = _by_surface(data, "repo-doc")
    assert {f["path"]: f["severity"] for f in docs} == expected
    assert data["summary"]["repoDocsFlagged"] == len(expected)
    assert data["providerEgress"] == {
        "provider": "local-placeholder",
        "class": "local",
        "policy": "allow-sanitized",
    }
    assert_no_secret(json.dumps(data), planted_secrets(repo))


def test_audit_findings_are_deterministic_and_the_audit_writes_nothing(tmp_path: Path) -> None:
    """Implementation choice: audit records nothing; finding ids depend only on what is found."""
    repo = indexed_repo(tmp_path, "secrets")
    _plant_control_plane(repo)
    before = tree_state(repo.ws.ragit_dir, repo.root / "docs")

    first = repo.ragit("security", "audit")
    second = repo.ragit("security", "audit")

    assert first.code == second.code == 0
    assert first.data == second.data
    assert len({f["findingId"] for f in first.data["findings"]}) == len(first.data["findings"])
    assert tree_state(repo.ws.ragit_dir, repo.root / "docs") == before


def test_audit_flags_a_remote_provider_under_the_local_only_policy(tmp_path: Path) -> None:
    """docs/reference/security.md: remote egress while remote_embedding_policy is local-only is
    critical."""
    repo = indexed_repo(tmp_path, "docs-basic")
    config = repo.ws.config_path
    text = config.read_text(encoding="utf-8")
    text = text.replace('provider = "local-placeholder"', 'provider = "openai"', 1)
    text = text.replace('model = "placeholder-v1"', 'model = "text-embedding-3-small"', 1)
    text = text.replace(
        'remote_embedding_policy = "allow-sanitized"', 'remote_embedding_policy = "local-only"', 1
    )
    config.write_text(text, encoding="utf-8")

    data = _audit(repo)

    critical = [f for f in data["findings"] if f["severity"] == "critical"]
    assert [(f["surface"], f["field"]) for f in critical] == [
        ("config", "security.remote_embedding_policy")
    ]
    assert data["providerEgress"] == {
        "provider": "openai",
        "class": "remote",
        "policy": "local-only",
    }


def test_purge_control_plane_re_masks_each_leaky_field_and_keeps_everything_else(
    tmp_path: Path,
) -> None:
    """docs/reference/security.md: control-plane purge re-sanitizes in place; the audit is clean
    afterwards."""
    repo = indexed_repo(tmp_path, "secrets")
    planted = _plant_control_plane(repo)
    before = tree_state(repo.ws.ragit_dir)

    run = repo.ragit("security", "purge", "--target", "control-plane")

    assert run.code == 0, run.output
    data = run.data
    assert data["mode"] == "apply" and data["target"] == "control-plane"
    assert sorted(data["rewritten"]) == planted
    assert sorted(p["path"] for p in data["planned"]) == planted
    assert data["deleted"] == [] and data["staleSnapshots"] == []
    for path in planted:
        text = (repo.root / path).read_text(encoding="utf-8")
        assert_no_secret(text, planted_secrets(repo))
    working = json.loads((repo.root / WORKING).read_text(encoding="utf-8"))
    assert working["goalId"] == "goal_legacy" and working["count"] == 3
    assert working["next"][0] == "check CI" and "***" in working["next"][1]
    lines = (repo.root / EVENTS).read_text(encoding="utf-8").splitlines()
    assert lines[0] == json.dumps(CLEAN_EVENT, separators=(",", ":"))  # clean lines keep bytes
    assert json.loads(lines[1])["n"] == 2
    after = _audit(repo)
    assert _by_surface(after, "control-plane") == []
    assert _by_surface(after, "store") == []
    now = tree_state(repo.ws.ragit_dir)
    changed = {
        Path(k).relative_to(repo.root).as_posix()
        for k in set(before) | set(now)
        if before.get(k) != now.get(k)
    }
    # The locks (runtime/) record their owner; nothing else but the leaky files changes.
    assert {k for k in changed if not k.startswith(".ragit/runtime/")} == set(planted)
    assert_no_secret(run.output, planted_secrets(repo))


def test_purge_dry_run_plans_every_target_and_writes_nothing(tmp_path: Path) -> None:
    """docs/reference/security.md / contract §2: --dry-run writes nothing (bytes and mtimes) and
    lists planned[]."""
    repo = indexed_repo(tmp_path, "secrets")
    planted = _plant_control_plane(repo)
    _plant_quarantine(repo)
    before = ragit_state(repo)

    run = repo.ragit("security", "purge", "--dry-run")

    assert run.code == 0, run.output
    data = run.data
    assert data["mode"] == "dry-run" and data["target"] == "all"
    assert data["rewritten"] == [] and data["deleted"] == []
    planned = {(p["target"], p["action"], p["path"]) for p in data["planned"]}
    assert planned == {
        *(("control-plane", "rewrite", path) for path in planted),
        ("quarantine", "delete", QUARANTINE),
        ("store", "rebuild", ".ragit/store"),
    }
    assert ragit_state(repo) == before


def test_purge_store_drops_raw_chunks_and_names_the_snapshot_to_reindex(tmp_path: Path) -> None:
    """docs/reference/security.md (store) with this implementation's design: regenerate from git,
    keep every
    snapshot that regenerates exactly, delete and report the ones that cannot."""
    repo = indexed_repo(tmp_path, "secrets")
    first, head = repo.spec["commits"]
    repo.ingest(all=True, at=first)
    before_first = repo.query("runbook index operations handbook", at=first)
    raw_ids = _plant_legacy_chunks(repo, LEAKY_DOC)
    audit = _audit(repo)
    store = _by_surface(audit, "store")
    assert store and {f["severity"] for f in store} == {"critical"}
    assert {f["path"] for f in store} == {LEAKY_DOC}
    assert {f["field"].split("]")[0].removeprefix("chunks[") for f in store} <= set(raw_ids)
    assert_no_secret(json.dumps(audit), planted_secrets(repo))

    run = repo.ragit("security", "purge", "--target", "store")

    assert run.code == 0, run.output
    data = run.data
    assert data["staleSnapshots"] == [
        {
            "commitSha": head,
            "reason": data["staleSnapshots"][0]["reason"],
            "recovery": f"ragit ingest --all --at {head}",
        }
    ]
    assert data["deleted"] == [f".ragit/manifest/{head}.json"]
    assert not repo.ws.manifest_path(head).exists()
    assert hits_key(repo.query("runbook index operations handbook", at=first)) == hits_key(
        before_first
    )
    pending = _by_surface(_audit(repo), "store")
    assert [(f["severity"], f["path"], f["suggestedAction"]) for f in pending] == [
        ("warn", f".ragit/manifest/{head}.json", f"ragit ingest --all --at {head}")
    ]
    again = repo.ragit("security", "purge", "--target", "store", "--dry-run")
    assert [s["commitSha"] for s in again.data["staleSnapshots"]] == [head]  # still reported

    fix = repo.ragit(*data["staleSnapshots"][0]["recovery"].split()[1:])

    assert fix.code == 0, fix.output
    assert _by_surface(_audit(repo), "store") == []
    hits = repo.query("github token ci", top_k=20, view="full")
    assert LEAKY_DOC in {h["path"] for h in hits["hits"]}
    assert_no_secret(json.dumps(hits), planted_secrets(repo))
    assert repo.doctor()[1] is None
    assert_no_secret(repo.all_output(), planted_secrets(repo))


def test_purge_store_of_a_clean_store_keeps_every_snapshot_answering_the_same(
    tmp_path: Path,
) -> None:
    """Design choice: a store purge loses nothing that was indexed under the current rules."""
    repo = indexed_repo(tmp_path, "secrets")
    before = repo.query("database access password rotation")
    store_id = json.loads((repo.ws.store_dir / "meta.json").read_text(encoding="utf-8"))["storeId"]

    run = repo.ragit("security", "purge", "--target", "store")

    assert run.code == 0, run.output
    assert run.data["staleSnapshots"] == [] and run.data["deleted"] == []
    assert run.data["store"]["storeId"] != store_id
    assert hits_key(repo.query("database access password rotation")) == hits_key(before)
    assert repo.doctor()[1] is None


def test_purge_quarantine_deletes_only_the_quarantine_ledger(tmp_path: Path) -> None:
    """docs/reference/security.md: --target quarantine clears the quarantine ledger and nothing
    else."""
    repo = indexed_repo(tmp_path, "docs-basic")
    _plant_quarantine(repo)
    admission = ".ragit/security/admission/2026-01-01.jsonl"
    repo.write(admission, '{"action":"quarantine"}\n')

    run = repo.ragit("security", "purge", "--target", "quarantine")

    assert run.code == 0, run.output
    assert run.data["deleted"] == [QUARANTINE]
    assert not (repo.root / QUARANTINE).exists()
    assert (repo.root / admission).read_text(encoding="utf-8") == '{"action":"quarantine"}\n'


def test_purge_cache_deletes_the_cache_dir_inside_ragit_and_only_the_layout_elsewhere(
    tmp_path: Path,
) -> None:
    """docs/reference/security.md: --target cache deletes the embedding cache; never a user
    directory."""
    repo = indexed_repo(tmp_path, "docs-basic")
    entry = ".ragit/cache/embeddings/v1/ns/entries/ab.json"
    repo.write(entry, "{}\n")

    inside = repo.ragit("security", "purge", "--target", "cache")

    assert inside.code == 0, inside.output
    assert inside.data["deleted"] == [".ragit/cache/embeddings"]
    assert not (repo.root / ".ragit/cache/embeddings").exists()

    config = repo.ws.config_path
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace('cache_dir = ".ragit/cache/embeddings"', 'cache_dir = "vectors"', 1),
        encoding="utf-8",
    )
    repo.write("vectors/v1/ns/entries/ab.json", "{}\n")
    repo.write("vectors/notes.txt", "mine\n")

    outside = repo.ragit("security", "purge", "--target", "cache")

    assert outside.code == 0, outside.output
    assert outside.data["deleted"] == ["vectors/v1"]
    assert (repo.root / "vectors/notes.txt").read_text(encoding="utf-8") == "mine\n"


def test_purge_needs_init_and_the_writer_lock(tmp_path: Path) -> None:
    """Contract §3: purge apply without init is NOT_INITIALIZED; a live writer makes it busy."""
    bare = make_repo(tmp_path, "docs-basic", init=False, name="bare")
    assert bare.ragit("security", "purge").error["code"] == "NOT_INITIALIZED"
    repo = indexed_repo(tmp_path, "docs-basic")
    from ragit.store.lock import WriterLock

    with WriterLock.acquire(repo.ws, command="test-holder", head_sha=None):
        busy = repo.ragit("security", "purge", "--target", "quarantine")

    assert busy.code == 3 and busy.error["code"] == "STORE_WRITE_BUSY"
    assert not repo.ws.lock_path.exists()
