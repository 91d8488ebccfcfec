"""`ragit memory wrap`: session records, the merged working state, masking and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _memkit import SECRET, SECRET_PREFIX, Repo, make_repo, tree_state, wrap_payload


def test_wrap_writes_session_working_state_and_open_loops(repo: Repo) -> None:
    """Contract-mandated: docs/reference/memory.md files and data fields."""
    run = repo.input("memory", "wrap", payload=wrap_payload())
    assert run.code == 0, run.output
    data = run.data
    assert data["sessionId"].startswith("20260410T090000Z-")
    assert data["sessionPath"] == f".ragit/memory/sessions/{data['sessionId']}.json"
    assert data["currentPath"] == ".ragit/memory/working/current.json"
    assert data["openLoopsPath"] == ".ragit/memory/working/open-loops.json"
    assert data["sourceHeadSha"] == repo.head()
    assert data["dryRun"] is False
    session = repo.read_json(data["sessionPath"])
    assert session["goal"] == "finish the auth flow"
    assert session["decisions"][0]["title"] == "Use JWT access tokens"
    current = repo.read_json(data["currentPath"])
    assert current["latestSessionId"] == data["sessionId"]
    assert [loop["title"] for loop in current["openLoops"]] == ["refresh token rotation"]
    loops = repo.read_json(data["openLoopsPath"])
    assert loops["items"] == current["openLoops"]
    assert loops["latestSessionId"] == data["sessionId"]


def test_wrap_default_format_is_json(repo: Repo) -> None:
    """Contract-mandated: memory wrap defaults to --format json."""
    run = repo.ragit("memory", "wrap", "--input", "-", stdin=json.dumps(wrap_payload()))
    assert run.code == 0
    assert json.loads(run.stdout)["command"] == "memory wrap"


def test_wrap_dry_run_writes_nothing(repo: Repo) -> None:
    """Contract-mandated: a dry-run validates and plans, and writes nothing at all."""
    before = tree_state(repo.root)
    run = repo.input("memory", "wrap", "--dry-run", payload=wrap_payload())
    assert run.code == 0
    assert run.data["dryRun"] is True
    assert run.data["sessionId"].startswith("20260410T090000Z-")
    assert tree_state(repo.root) == before


def test_second_wrap_merges_decisions_and_closes_loops(repo: Repo) -> None:
    """Contract-mandated: a second wrap merges (loops by id, closed dropped, decisions add up)."""
    first = repo.input("memory", "wrap", payload=wrap_payload())
    assert first.code == 0
    second = repo.input(
        "memory",
        "wrap",
        payload=wrap_payload(
            summary="Rotation done.",
            decisions=[{"title": "Rotate refresh tokens", "summary": "On every use."}],
            openLoops=[
                {"title": "refresh token rotation", "status": "closed", "nextAction": "none"},
                {"title": "logout endpoint", "nextAction": "add route", "status": "blocked"},
            ],
            nextActions=[],
            createdAt="2026-04-10T10:00:00Z",
        ),
    )
    assert second.code == 0, second.output
    merged = second.data["merged"]
    assert merged["closedLoopIds"] == [second.data["merged"]["closedLoopIds"][0]]
    current = repo.read_json(".ragit/memory/working/current.json")
    assert [d["title"] for d in current["decisions"]] == [
        "Use JWT access tokens",
        "Rotate refresh tokens",
    ]
    assert [(loop["title"], loop["status"]) for loop in current["openLoops"]] == [
        ("logout endpoint", "blocked")
    ]
    assert current["summary"] == "Rotation done."
    assert current["nextActions"] == ["wire the refresh endpoint"]  # kept: the wrap gave none
    assert current["sessionCount"] == 2
    assert len(list((repo.root / ".ragit/memory/sessions").iterdir())) == 2


def test_identical_wrap_is_a_replay_that_changes_nothing(repo: Repo) -> None:
    """Implementation choice: replaying a wrap is idempotent (same session, no duplicate event)."""
    assert repo.input("memory", "wrap", payload=wrap_payload()).code == 0
    before = tree_state(repo.root / ".ragit" / "memory")
    events_before = (repo.root / ".ragit/log/events").glob("*.jsonl")
    lines_before = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in events_before)
    run = repo.input("memory", "wrap", payload=wrap_payload())
    assert run.code == 0
    assert run.data["replayed"] is True
    assert tree_state(repo.root / ".ragit" / "memory") == before
    events_after = (repo.root / ".ragit/log/events").glob("*.jsonl")
    assert sum(len(p.read_text(encoding="utf-8").splitlines()) for p in events_after) == (
        lines_before
    )


def test_two_different_wraps_in_the_same_second_both_survive(repo: Repo) -> None:
    """Contract-mandated: no lost update when two wraps share goal and instant."""
    a = repo.input("memory", "wrap", payload=wrap_payload(summary="first"))
    b = repo.input("memory", "wrap", payload=wrap_payload(summary="second"))
    assert a.code == b.code == 0
    assert b.data["sessionId"] == a.data["sessionId"] + "-2"
    assert repo.read_json(a.data["sessionPath"])["summary"] == "first"
    assert repo.read_json(b.data["sessionPath"])["summary"] == "second"


def test_wrap_masks_secrets_on_disk_and_in_output(repo: Repo) -> None:
    """Contract-mandated: memory inputs are masked before writing; outputs are re-masked."""
    payload = wrap_payload(
        summary=f"Configured the client with api_key={SECRET} today.",
        decisions=[{"title": "Key handling", "summary": f"Keep {SECRET} out of logs"}],
    )
    run = repo.input("memory", "wrap", payload=payload)
    assert run.code == 0
    assert SECRET not in run.output
    assert SECRET not in repo.all_text()
    assert SECRET_PREFIX in repo.read_json(run.data["sessionPath"])["summary"]
    assert run.data["redactionSummary"]["applied"] is True
    assert "summary" in run.data["redactionSummary"]["sources"]
    assert run.data["admission"]["quarantined"] >= 1
    # the security ledgers record the finding without the secret
    ledger = list((repo.root / ".ragit/security/admission").glob("*.jsonl"))
    assert ledger and SECRET not in ledger[0].read_text(encoding="utf-8")


def test_wrap_in_enforce_mode_blocks_a_private_key_with_the_sentinel(repo: Repo) -> None:
    """Contract-mandated (docs/reference/security.md): blocked text is replaced by the admission
    sentinel."""
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        + "MIIEowIBAAKCAQEA7nX1cWq9tYk2Lz8pQ4rVb3mNc6Hd0sF5gJ1aK2eL3iM4oN5p\n" * 3
        + "-----END RSA PRIVATE KEY-----\n"
    )
    run = repo.input("memory", "wrap", payload=wrap_payload(summary=f"key:\n{pem}"))
    assert run.code == 0
    session = repo.read_json(run.data["sessionPath"])
    assert session["summary"] == "[BLOCKED BY RAGIT ADMISSION CONTROL]"
    assert "MIIEowIBAAKCAQEA" not in repo.all_text()
    assert run.data["admission"]["blocked"] == 1


def test_wrap_without_head_still_writes_with_null_sha(tmp_path: Path) -> None:
    """Contract-mandated: missing HEAD → still writes, sourceHeadSha null + warning."""
    repo = make_repo(tmp_path, commit=False)
    run = repo.input("memory", "wrap", payload=wrap_payload())
    assert run.code == 0
    assert run.data["sourceHeadSha"] is None
    assert any("HEAD" in w for w in run.envelope["warnings"])
    assert (repo.root / run.data["sessionPath"]).is_file()


def test_wrap_before_init_is_not_initialized(tmp_path: Path) -> None:
    """Implementation choice: memory writes need `ragit init` (it git-ignores .ragit/memory)."""
    repo = make_repo(tmp_path, init=False)
    run = repo.input("memory", "wrap", payload=wrap_payload())
    assert run.code == 3
    assert run.error["code"] == "NOT_INITIALIZED"
    assert not (repo.root / ".ragit").exists()


def test_decisions_may_be_strings_or_objects(repo: Repo) -> None:
    """Contract-mandated: `decisions` items may be strings or objects."""
    payload = wrap_payload(
        decisions=[
            "plain string decision",
            {"id": "dec-custom", "title": "Object", "summary": "with id", "relatedFiles": ["a.md"]},
        ]
    )
    run = repo.input("memory", "wrap", payload=payload)
    assert run.code == 0, run.output
    ids = [d["id"] for d in repo.read_json(run.data["sessionPath"])["decisions"]]
    assert ids[0].startswith("dec_") and ids[1] == "dec-custom"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        (wrap_payload(extra=1), "extra"),
        (wrap_payload(goal="   "), "goal"),
        (wrap_payload(goal="a\u0000b"), "goal"),
        (wrap_payload(summary="ok\u001b[31m"), "summary"),
        (wrap_payload(createdAt="2026-04-10"), "createdAt"),
        (wrap_payload(createdAt="../../../../tmp/evil"), "createdAt"),
        (wrap_payload(createdAt="2026-04-10T09:00:00Z/../../x"), "createdAt"),
        (
            wrap_payload(openLoops=[{"title": "t", "nextAction": "n", "status": "done"}]),
            "openLoops[0].status",
        ),
        (wrap_payload(openLoops=[{"title": "t"}]), "openLoops[0].nextAction"),
        (
            wrap_payload(decisions=[{"title": "t", "summary": "s", "relatedFiles": ["../x"]}]),
            "decisions[0].relatedFiles[0]",
        ),
        (
            wrap_payload(
                decisions=[{"title": "t", "summary": "s", "relatedFiles": ["/etc/passwd"]}]
            ),
            "decisions[0].relatedFiles[0]",
        ),
        (
            wrap_payload(decisions=[{"title": "t", "summary": "s", "id": "../../x"}]),
            "decisions[0].id",
        ),
        (
            wrap_payload(decisions=[{"title": "t", "summary": "s", "rationale": 3}]),
            "decisions[0].rationale",
        ),
        (wrap_payload(decisions=[7]), "decisions[0]"),
        (wrap_payload(constraints="not a list"), "constraints"),
        (
            wrap_payload(openLoops=[{"title": "t", "nextAction": "n", "sourceSessionId": "a/b"}]),
            "openLoops[0].sourceSessionId",
        ),
    ],
)
def test_bad_wrap_payloads_are_input_invalid(
    repo: Repo, payload: dict[str, object], field: str
) -> None:
    """Contract-mandated: strict keys, enums, paths, instants → INPUT_INVALID, nothing written."""
    before = tree_state(repo.root)
    run = repo.input("memory", "wrap", payload=payload)
    assert run.code == 2, run.output
    assert run.error["code"] == "INPUT_INVALID"
    assert run.error["details"]["field"] == field
    assert tree_state(repo.root) == before


def test_a_ten_megabyte_summary_is_rejected_by_its_field_limit(repo: Repo) -> None:
    """Implementation choice: per-field limits (summary 20,000 chars) bound one request."""
    run = repo.input("memory", "wrap", payload=wrap_payload(summary="x" * (10 * 1024 * 1024)))
    assert run.code == 2
    assert run.error["details"]["field"] == "summary"
    assert "x" * 100 not in run.output


def test_input_file_outside_the_repository_is_rejected(repo: Repo, tmp_path: Path) -> None:
    """Contract-mandated: --input files must lie inside the repository."""
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(wrap_payload()), encoding="utf-8")
    run = repo.ragit("memory", "wrap", "--input", str(outside), "--format", "json")
    assert run.code == 2
    assert run.error["details"]["field"] == "input"


def test_source_head_sha_must_name_a_commit(repo: Repo) -> None:
    """Implementation choice: sourceHeadSha follows the read-ref rule (HEAD, SHA, unique prefix)."""
    assert (
        repo.input("memory", "wrap", payload=wrap_payload(sourceHeadSha="main")).error["code"]
        == "SNAPSHOT_REF_INVALID"
    )
    head = repo.head()
    run = repo.input("memory", "wrap", payload=wrap_payload(sourceHeadSha=head[:10]))
    assert run.data["sourceHeadSha"] == head


def test_concurrent_wraps_from_several_processes_lose_nothing(repo: Repo, tmp_path: Path) -> None:
    """Contract-mandated: wraps are serialized (no lost update, no torn file)."""
    procs = []
    for n in range(6):
        payload = wrap_payload(
            goal=f"goal {n % 2}",
            summary=f"worker {n}",
            decisions=[{"title": f"decision {n}", "summary": f"from worker {n}"}],
            openLoops=[{"title": f"loop {n}", "nextAction": f"act {n}"}],
            createdAt=None,
        )
        del payload["createdAt"]
        source = tmp_path / f"wrap-{n}.json"
        source.write_text(json.dumps(payload), encoding="utf-8")
        procs.append(repo.popen("memory", "wrap", "--input", "-", stdin_path=source))
    outputs = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 6, outputs
    current = repo.read_json(".ragit/memory/working/current.json")
    assert sorted(d["title"] for d in current["decisions"]) == [f"decision {n}" for n in range(6)]
    assert sorted(loop["title"] for loop in current["openLoops"]) == [f"loop {n}" for n in range(6)]
    assert current["sessionCount"] == 6
    sessions = list((repo.root / ".ragit/memory/sessions").iterdir())
    assert len(sessions) == 6
    for path in sessions:
        json.loads(path.read_text(encoding="utf-8"))
    loops = repo.read_json(".ragit/memory/working/open-loops.json")
    assert len(loops["items"]) == 6
