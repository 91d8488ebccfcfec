"""`session materialize`, `artifact review` and the artifact lifecycle."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _memkit import SECRET, Repo, tree_state

SESSION: dict[str, Any] = {
    "goal": "finish the auth flow",
    "episode": {"id": "ep-7", "title": "auth"},
    "turns": [
        {
            "turnId": "t1",
            "role": "user",
            "content": f"Never log the key {SECRET}.",
            "createdAt": "2026-04-10T09:00:00Z",
        },
        {
            "turnId": "t2",
            "role": "user",
            "content": "Please make the answers more concise.",
            "createdAt": "2026-04-10T09:01:00Z",
        },
        {
            "turnId": "t3",
            "role": "assistant",
            "content": "The login test fails with a traceback.",
            "createdAt": "2026-04-10T09:02:00Z",
        },
        {
            "turnId": "t4",
            "role": "assistant",
            "content": "Who owns the refresh endpoint?",
            "createdAt": "2026-04-10T09:03:00Z",
        },
        {
            "turnId": "t5",
            "role": "assistant",
            "content": "Therefore the stable rule is: rotate refresh tokens on every use.",
            "createdAt": "2026-04-10T09:04:00Z",
        },
        {
            "turnId": "t6",
            "role": "system",
            "content": "You must obey.",
            "createdAt": "2026-04-10T09:05:00Z",
        },
        {
            "turnId": "t7",
            "role": "assistant",
            "content": "Done.",
            "createdAt": "2026-04-10T09:06:00Z",
        },
    ],
    "toolTraces": [
        {
            "traceId": "tr1",
            "command": "pytest -q",
            "error": "AssertionError: 401 != 200",
            "createdAt": "2026-04-10T09:07:00Z",
        },
        {"traceId": "tr2", "command": "ls", "output": "a b c", "createdAt": "2026-04-10T09:08:00Z"},
    ],
    "relatedPaths": ["src/auth.py"],
    "createdAt": "2026-04-10T09:10:00Z",
}


def _materialize(repo: Repo, payload: dict[str, Any] = SESSION, *flags: str) -> dict[str, Any]:
    run = repo.input("session", "materialize", *flags, payload=payload)
    assert run.code == 0, run.output
    data: dict[str, Any] = run.data
    return data


def _kinds(data: dict[str, Any]) -> list[str]:
    return sorted(a["kind"] for a in data["artifacts"])


def test_materialize_extracts_candidate_artifacts_and_a_transcript(repo: Repo) -> None:
    """Contract-mandated (docs/reference/memory.md): transcript, captured candidates, ids and data
    fields."""
    data = _materialize(repo)
    assert data["sessionId"].startswith("20260410T091000Z-")
    assert data["goalId"].startswith("goal_") and data["episodeId"] == "ep-7"
    assert _kinds(data) == ["constraint", "failure", "failure", "feedback", "insight", "openLoop"]
    for aid in data["artifactIds"]:
        record = repo.read_json(f".ragit/artifacts/session/{aid}.json")
        assert record["status"] == "captured" and record["tier"] == "candidate"
        assert record["artifactId"] == aid
        assert record["relatedPaths"] == ["src/auth.py"]
        assert record["evidenceRefs"][0]["evidenceId"].startswith("evid_")
    by_kind = {a["kind"]: a for a in data["artifacts"]}
    feedback = repo.read_json(f".ragit/artifacts/session/{by_kind['feedback']['artifactId']}.json")
    assert feedback["authority"] == "user_asserted" and feedback["confidence"] == 1.0
    insight = repo.read_json(f".ragit/artifacts/session/{by_kind['insight']['artifactId']}.json")
    assert insight["authority"] == "assistant_inferred"
    lines = (repo.root / data["transcriptPath"]).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 9
    assert json.loads(lines[-1])["type"] == "toolTrace"
    assert data["eventPath"].startswith(".ragit/log/events/")


def test_materialize_masks_turns_everywhere(repo: Repo) -> None:
    """Contract-mandated: turns are masked before persistence; outputs re-masked."""
    run = repo.input("session", "materialize", payload=SESSION)
    assert run.code == 0
    assert SECRET not in run.output
    assert SECRET not in repo.all_text()
    assert run.data["admission"]["quarantined"] == 1
    assert run.data["redactionSummary"]["sources"] == ["turns[0].content"]


def test_materializing_twice_keeps_reviewed_status_and_transcript(repo: Repo) -> None:
    """Implementation choice: artifact ids hash content, so a replay duplicates nothing."""
    first = _materialize(repo)
    aid = first["artifactIds"][0]
    review = {"updates": [{"artifactId": aid, "nextStatus": "reviewed"}]}
    assert repo.input("artifact", "review", payload=review).code == 0
    second = _materialize(repo)
    assert second["artifactIds"] == []
    assert sorted(second["existingArtifactIds"]) == sorted(first["artifactIds"])
    assert repo.read_json(f".ragit/artifacts/session/{aid}.json")["status"] == "reviewed"
    lines = (repo.root / first["transcriptPath"]).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 9


def test_materialize_dry_run_writes_nothing(repo: Repo) -> None:
    """Contract-mandated: dry-run writes nothing (no transcript, artifact or event)."""
    before = tree_state(repo.root)
    data = _materialize(repo, SESSION, "--dry-run")
    assert data["dryRun"] is True and len(data["artifactIds"]) == 6
    assert tree_state(repo.root) == before


def test_materialize_without_matches_warns(repo: Repo) -> None:
    """Contract-mandated: a warning when no artifact matched."""
    payload = {
        "goal": "g",
        "turns": [
            {
                "turnId": "a",
                "role": "assistant",
                "content": "Done.",
                "createdAt": "2026-04-10T09:00:00Z",
            }
        ],
    }
    run = repo.input("session", "materialize", payload=payload)
    assert run.data["artifactIds"] == []
    assert any("no artifact" in w for w in run.envelope["warnings"])


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        (
            {
                "turns": [
                    {
                        "turnId": "../x",
                        "role": "user",
                        "content": "c",
                        "createdAt": "2026-04-10T09:00:00Z",
                    }
                ]
            },
            "turns[0].turnId",
        ),
        (
            {
                "turns": [
                    {
                        "turnId": "a",
                        "role": "robot",
                        "content": "c",
                        "createdAt": "2026-04-10T09:00:00Z",
                    }
                ]
            },
            "turns[0].role",
        ),
        (
            {"turns": [{"turnId": "a", "role": "user", "content": "c", "createdAt": "now"}]},
            "turns[0].createdAt",
        ),
        ({"turns": [{"turnId": "a", "role": "user", "content": "c"}]}, "turns[0].createdAt"),
        ({"relatedPaths": ["../../etc/passwd"]}, "relatedPaths[0]"),
        ({"relatedPaths": ["/etc/passwd"]}, "relatedPaths[0]"),
        ({"episode": {"id": "a/b"}}, "episode.id"),
        ({"createdAt": "x/../../y"}, "createdAt"),
        ({"transcript": []}, "transcript"),
    ],
)
def test_bad_session_payloads_are_input_invalid(
    repo: Repo, patch: dict[str, Any], field: str
) -> None:
    """Contract-mandated: strict input; paths and ids never traverse."""
    before = tree_state(repo.root)
    run = repo.input("session", "materialize", payload={**SESSION, **patch})
    assert run.code == 2, run.output
    assert run.error["details"]["field"] == field
    assert tree_state(repo.root) == before


# ---------------------------------------------------------------- review


def _ids_by_kind(data: dict[str, Any]) -> dict[str, str]:
    return {a["kind"]: a["artifactId"] for a in data["artifacts"] if a["kind"] != "failure"}


def test_review_applies_allowed_transitions(repo: Repo) -> None:
    """Contract-mandated: captured → reviewed → superseded; history and event recorded."""
    ids = _ids_by_kind(_materialize(repo))
    run = repo.input(
        "artifact",
        "review",
        payload={
            "updates": [
                {"artifactId": ids["insight"], "nextStatus": "reviewed", "reason": "verified"},
                {"artifactId": ids["constraint"], "nextStatus": "archived"},
            ]
        },
    )
    assert run.code == 0
    assert [(u["artifactId"], u["previousStatus"], u["status"]) for u in run.data["updated"]] == [
        (ids["insight"], "captured", "reviewed"),
        (ids["constraint"], "captured", "archived"),
    ]
    record = repo.read_json(f".ragit/artifacts/session/{ids['insight']}.json")
    assert record["status"] == "reviewed"
    assert record["reviewHistory"][0]["reason"] == "verified"
    second = repo.input(
        "artifact",
        "review",
        payload={
            "updates": [
                {
                    "artifactId": ids["feedback"],
                    "nextStatus": "reviewed",
                    "supersedes": [ids["insight"]],
                }
            ]
        },
    )
    assert second.code == 0
    assert (
        repo.read_json(f".ragit/artifacts/session/{ids['insight']}.json")["status"] == "superseded"
    )
    assert repo.read_json(f".ragit/artifacts/session/{ids['feedback']}.json")["supersedes"] == [
        ids["insight"]
    ]


def test_disallowed_transition_and_unknown_id_are_warnings(repo: Repo) -> None:
    """Contract-mandated: disallowed transitions and unknown ids warn; the rest applies."""
    ids = _ids_by_kind(_materialize(repo))
    unknown = "art_session_insight_0123456789abcdef"
    run = repo.input(
        "artifact",
        "review",
        payload={
            "updates": [
                {"artifactId": ids["insight"], "nextStatus": "superseded"},
                {"artifactId": unknown, "nextStatus": "reviewed"},
                {"artifactId": ids["feedback"], "nextStatus": "reviewed"},
            ]
        },
    )
    assert run.code == 0, run.output
    assert [u["artifactId"] for u in run.data["updated"]] == [ids["feedback"]]
    warnings = run.envelope["warnings"]
    assert any("not an allowed transition" in w for w in warnings)
    assert any(unknown in w for w in warnings)
    assert repo.read_json(f".ragit/artifacts/session/{ids['insight']}.json")["status"] == "captured"


def test_review_dry_run_writes_nothing(repo: Repo) -> None:
    """Contract-mandated: dry-run reports the plan and writes nothing."""
    ids = _ids_by_kind(_materialize(repo))
    before = tree_state(repo.root)
    run = repo.input(
        "artifact",
        "review",
        "--dry-run",
        payload={"updates": [{"artifactId": ids["insight"], "nextStatus": "reviewed"}]},
    )
    assert run.data["updated"][0]["status"] == "reviewed"
    assert tree_state(repo.root) == before


@pytest.mark.parametrize(
    ("update", "field"),
    [
        ({"artifactId": "../../../etc/passwd", "nextStatus": "reviewed"}, "updates[0].artifactId"),
        (
            {"artifactId": "art_session_insight_0123456789abcdef/../x", "nextStatus": "reviewed"},
            "updates[0].artifactId",
        ),
        (
            {"artifactId": "art_session_insight_0123456789abcdef", "nextStatus": "promoted"},
            "updates[0].nextStatus",
        ),
        (
            {
                "artifactId": "art_session_insight_0123456789abcdef",
                "nextStatus": "reviewed",
                "x": 1,
            },
            "updates[0].x",
        ),
    ],
)
def test_malformed_review_updates_are_input_invalid(
    repo: Repo, update: dict[str, Any], field: str
) -> None:
    """Implementation choice: a malformed id (it could name a path) is invalid input."""
    run = repo.input("artifact", "review", payload={"updates": [update]})
    assert run.code == 2
    assert run.error["details"]["field"] == field
