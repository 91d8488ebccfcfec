"""Secrets in documents, file names and refs: stored nowhere, printed nowhere.

Real repositories and the real CLI: a secret form is ingested, then every file RAGit
wrote (the store's column files, the keyword index, the reader copy, manifests,
ledgers) and every output (query, context pack, memory recall, status, ingest, errors
in JSON and text) is searched for it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.snapshot._kit import (
    RagitRepo,
    make_repo,
    private_cache,  # noqa: F401 - autouse fixture
    tree_state,
)

from ragit.security.output import mask_ref
from ragit.workspace import user_cache_dir

# One form a document (three masked secrets would block the document instead).
FORM_DOCS = {
    "docs/ops/db.md": "# Database\n\n서버 비밀번호는 Xq9#v2Lm 입니다\n",
    "docs/ops/psql.md": "# Backups\n\nRun `PGPASSWORD=Pg7#xLm2Qw pg_dump app`.\n",
    "docs/ops/env.md": "# Environment\n\nSet DB_PASS=Dq8!zKx2Lm for the worker.\n",
    "docs/ops/maven.md": "# Maven\n\n<password>Mv7n#Pw2xQ</password>\n",
    "docs/ops/curl.md": "# Smoke test\n\n    curl -u deploy:Cu7#rlPw2x https://api.example.invalid\n",
    "docs/ops/redis.md": "# Cache\n\nredis://cache:p@ss@Word77@cache.example.invalid:6379/0\n",
    "docs/ops/legacy.md": "# Legacy\n\ndb_password=Xq9v;Zr7#Lm2\n",
    "docs/ops/azure.md": (
        "# Storage\n\nDefaultEndpointsProtocol=https;AccountName=acct;"
        "AccountKey=Fk3mQ9xLz2VbTn8RwPq4Ys7Kd1Hg6Jc5Nv0Ma2Zx3Lq8Wb1Tp6Rn4Y==;"
        "EndpointSuffix=core.windows.net\n"
    ),
    "docs/ops/mail.md": (
        "# Mail\n\n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\n"
    ),
    "docs/ops/aws.md": (
        "# AWS\n\n    aws configure set aws_secret_access_key "
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFAKEKEY0000\n"
    ),
    "docs/ops/ko-password.md": "# 계정\n\n패스워드: Tq7!bW3nYc\n",
}
SECRETS = [
    "Xq9#v2Lm",
    "Pg7#xLm2Qw",
    "Dq8!zKx2Lm",
    "Mv7n#Pw2xQ",
    "Cu7#rlPw2x",
    "p@ss@Word77",
    "Zr7#Lm2",
    "Fk3mQ9xLz2VbTn8RwPq4Ys7Kd1Hg6Jc5Nv0",
    "7Kd1Hg6Jc5Nv0Ma2Zx3Lq8Wb1Tp6Rn4Yc7Vd2Ke5Mh9",
    "wJalrXUtnFEMI/K7MDENG",
    "Tq7!bW3nYc",
]
TOKEN = "ghp_FAKEfilename00000000000000000000001"
RANDOM_TOKEN = "Fk3mQ9xLz2VbTn8RwPq4Ys7Kd1Hg"


def _stored_bytes(repo: RagitRepo) -> dict[str, str]:
    """Every file RAGit wrote: ``.ragit`` and the reader copies in the user cache."""
    files: dict[str, str] = {}
    for root in (repo.ws.ragit_dir, user_cache_dir() / "stores"):
        for path, (digest, _mtime) in tree_state(root).items():
            if digest != "dir":
                files[path] = Path(path).read_bytes().decode("latin-1")
    return files


def _leaks(text: str, secrets: list[str]) -> list[str]:
    return [s for s in secrets if s in text or s.encode("utf-8").decode("latin-1") in text]


def test_new_secret_forms_are_stored_nowhere_and_printed_nowhere(tmp_path: Path) -> None:
    """Contract-mandated (contract §7): masking applies before anything is stored and
    again on every output (query, context pack, memory recall)."""
    repo = make_repo(tmp_path, "docs-basic", commit_init=True)
    repo.commit(FORM_DOCS, "Operations notes")
    ingest = repo.ragit("ingest", "--all", "--format", "json")
    assert ingest.code == 0, ingest.stderr
    assert set(FORM_DOCS) <= set(ingest.data["plannedFiles"])
    assert ingest.data["masked"] >= len(FORM_DOCS)
    for path, text in _stored_bytes(repo).items():
        assert not _leaks(text, SECRETS), path
    for question in ("database password storage account key curl", "비밀번호 패스워드"):
        for args in (
            ("query", question, "--view", "full", "--top-k", "20"),
            ("context", "pack", question, "--budget", "4000"),
            ("memory", "recall", question),
        ):
            run = repo.ragit(*args, "--format", "both")
            assert run.code == 0, run.stderr
    query = repo.ragit("query", "password", "--view", "full", "--top-k", "20", "--format", "json")
    assert {h["path"] for h in query.data["hits"]} & set(FORM_DOCS)
    assert not _leaks(repo.all_output(), SECRETS)


def test_a_secret_in_a_file_name_is_masked_in_every_hit_path_and_output(tmp_path: Path) -> None:
    """Contract-mandated (contract §7: output is re-masked): a file name is output too;
    the hit keeps its identity through its citation."""
    repo = make_repo(tmp_path, "docs-basic", commit_init=True)
    repo.commit({f"docs/{TOKEN}.md": "# Rotation\n\nThe rotation runbook.\n"}, "Add runbook")
    assert repo.ragit("ingest", "--all", "--format", "both").code == 0
    query = repo.ragit("query", "rotation runbook", "--format", "json")
    hit = query.data["hits"][0]
    assert hit["path"] == "docs/ghp_FA***.md"
    assert "hits[0].path" in query.data["redactionSummary"]["sources"]
    assert hit["citation"]["sourceId"]
    for args in (
        ("query", "rotation runbook", "--view", "full"),
        ("context", "pack", "rotation runbook"),
        ("memory", "recall", "rotation runbook"),
        ("ingest", "--all", "--dry-run"),
        ("status",),
        ("log",),
    ):
        run = repo.ragit(*args, "--format", "both")
        assert run.code in (0, 1), run.stderr
    repo.write(f"docs/{TOKEN}.md", "# Rotation\n\nChanged.\n")
    dirty = repo.ragit("ingest", "--format", "both")
    assert dirty.code == 3
    assert TOKEN not in repo.all_output()


@pytest.mark.parametrize(
    "args",
    [
        ("query", "x", "--at", TOKEN),
        ("context", "pack", "x", "--at", TOKEN),
        ("query", "x", "--at", RANDOM_TOKEN),
        ("ingest", "--since", TOKEN),
        ("ingest", "--since", RANDOM_TOKEN),
        ("ingest", "--since", "password=Hunter2hunter"),
    ],
    ids=["query-at", "pack-at", "query-at-random", "since", "since-random", "since-password"],
)
def test_a_secret_given_as_a_ref_is_masked_in_message_and_details(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """Contract-mandated (contract §3: nothing secret in message or details)."""
    repo = make_repo(tmp_path, "docs-basic", commit_init=True)
    raw = args[-1]
    run = repo.ragit(*args, "--format", "json")
    assert run.code == 2, run.output
    error = run.error
    assert error["code"] == "SNAPSHOT_REF_INVALID"
    assert error["details"]["requestedRef"].endswith("***")
    assert raw not in run.output
    text = repo.ragit(*args, "--format", "text")
    assert text.code == 2
    assert raw not in text.output
    assert "requestedRef" in text.stderr


@pytest.mark.parametrize(
    "ref",
    ["HEAD", "HEAD~1", "main", "feature/add-login-2", "v1.2.3", "0b899c401db8", "a" * 40],
)
def test_a_ref_that_is_no_secret_is_echoed_as_given(ref: str) -> None:
    """Implementation choice (docs/contract.md): branch names, tags and SHAs stay readable."""
    assert mask_ref(ref) == ref


@pytest.mark.parametrize(
    ("ref", "shown"),
    [
        (TOKEN, "ghp_FA***"),
        (RANDOM_TOKEN, "Fk3m***"),
        ("glpat-FAKE00000000000000011", "glpat-***"),
    ],
)
def test_a_ref_shaped_like_a_token_is_cut_to_a_short_prefix(ref: str, shown: str) -> None:
    """Implementation choice (docs/contract.md): a ref that looks like a token is a secret."""
    assert mask_ref(ref) == shown


def test_an_error_is_masked_in_message_details_and_recovery() -> None:
    """Contract-mandated (contract §3): whatever raised it, an error leaves masked."""
    from ragit.contract.errors import InputInvalid, SnapshotRefInvalid
    from ragit.security.output import mask_error

    error = InputInvalid("path", f"docs/{TOKEN}.md is not a document", paths=[f"docs/{TOKEN}.md"])
    error.recovery = f"git add -- 'docs/{TOKEN}.md' && git commit -m 'Add it'"
    mask_error(error)
    assert TOKEN not in repr((error.message, error.details, error.recovery))
    assert error.details["paths"] == ["docs/ghp_FA***.md"]
    ref = mask_error(SnapshotRefInvalid(RANDOM_TOKEN))
    assert ref.details == {"requestedRef": "Fk3m***"}
    assert RANDOM_TOKEN not in ref.message
    assert "'Fk3m***'" in ref.message
