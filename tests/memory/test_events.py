"""The event ledger and `ragit timeline`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _memkit import SECRET, Repo, tree_state, wrap_payload
from tests.cli._many import run_many

from ragit.artifacts.events import append_events, make_event, read_events
from ragit.workspace import Workspace


def _events(repo: Repo) -> list[dict[str, object]]:
    events, _skipped = read_events(repo.ws)
    return events


def test_every_mutation_appends_one_event_and_dry_runs_none(repo: Repo) -> None:
    """Contract-mandated (docs/reference/memory.md): append-only ledger; dry-runs never append."""
    assert repo.input("memory", "wrap", "--dry-run", payload=wrap_payload()).code == 0
    assert not (repo.root / ".ragit/log/events").exists()
    assert repo.input("memory", "wrap", payload=wrap_payload()).code == 0
    assert (
        repo.input(
            "memory", "promote", payload=[{"kind": "plan", "title": "P", "summary": "s"}]
        ).code
        == 0
    )
    types = [e["eventType"] for e in _events(repo)]
    assert types == ["memory.wrap", "memory.promote"]
    (ledger,) = (repo.root / ".ragit/log/events").iterdir()
    assert ledger.name.endswith(".jsonl") and len(ledger.stem) == 10
    event = json.loads(ledger.read_text(encoding="utf-8").splitlines()[0])
    assert event["eventId"].startswith("evt_") and len(event["eventId"]) == 20
    assert event["version"] == 1
    assert set(event["provenance"]) == {
        "actor",
        "producer",
        "producerVersion",
        "operation",
        "inputRefs",
        "outputRefs",
        "evidenceRefs",
        "contentHash",
    }


def test_event_ids_are_deterministic_and_never_appended_twice(tmp_path: Path) -> None:
    """Contract-mandated: deterministic evt_ ids; duplicates are not re-appended."""
    ws = Workspace(tmp_path)
    (tmp_path / ".ragit").mkdir()
    first = make_event(
        "memory.wrap",
        summary="s",
        content_digest="abc",
        operation="memory.wrap",
        session_id="20260410T090000Z-00000000",
    )
    again = make_event(
        "memory.wrap",
        summary="s",
        content_digest="abc",
        operation="memory.wrap",
        session_id="20260410T090000Z-00000000",
    )
    assert first["eventId"] == again["eventId"]
    assert append_events(ws, [first]) == [first["eventId"]]
    assert append_events(ws, [again]) == []
    other = make_event(
        "memory.wrap",
        summary="s",
        content_digest="abd",
        operation="memory.wrap",
        session_id="20260410T090000Z-00000000",
    )
    assert other["eventId"] != first["eventId"]
    assert len(read_events(ws)[0]) == 1


def test_events_are_masked(tmp_path: Path) -> None:
    """Contract-mandated: nothing RAGit writes holds a raw secret."""
    event = make_event(
        "memory.wrap", summary=f"key {SECRET}", content_digest="x", operation="memory.wrap"
    )
    assert SECRET not in json.dumps(event)


def test_a_torn_line_is_skipped_with_a_warning(repo: Repo) -> None:
    """Implementation choice: a crash mid-append never breaks the reader."""
    assert repo.input("memory", "wrap", payload=wrap_payload()).code == 0
    (ledger,) = (repo.root / ".ragit/log/events").iterdir()
    with open(ledger, "a", encoding="utf-8") as handle:
        handle.write('{"eventId":"evt_0000')
    run = repo.ragit("timeline", "--format", "json")
    assert run.code == 0
    assert run.data["skippedLines"] == 1
    assert run.data["summary"]["eventCount"] == 1


def _history(repo: Repo) -> dict[str, str]:
    a = repo.input("memory", "wrap", payload=wrap_payload()).data
    b = repo.input("memory", "wrap", payload=wrap_payload(goal="second goal", summary="x")).data
    materialized = repo.input(
        "session",
        "materialize",
        payload={
            "goal": "finish the auth flow",
            "episode": {"id": "ep-1"},
            "turns": [
                {
                    "turnId": "t",
                    "role": "user",
                    "content": "Please be brief.",
                    "createdAt": "2026-04-10T09:00:00Z",
                }
            ],
        },
    ).data
    return {
        "a": a["sessionId"],
        "b": b["sessionId"],
        "goal": a["goalId"],
        "materialized": materialized["sessionId"],
    }


def test_timeline_lists_events_newest_first_as_text(repo: Repo) -> None:
    """Implementation choice: the text format groups events by day, newest first."""
    _history(repo)
    run = repo.ragit("timeline", "--format", "text")
    assert run.code == 0
    lines = run.stdout.splitlines()
    assert lines[0] == "events: 3 (showing 3)"
    kinds = [line.split()[1] for line in lines if line[:2].isdigit()]
    assert kinds == ["session.materialize", "memory.wrap", "memory.wrap"]
    assert any(line.startswith("== ") for line in lines)
    assert "goal: goal_" in run.stdout  # default view shows ids
    minimal = repo.ragit("timeline", "--view", "minimal", "--format", "text")
    assert "goal: " not in minimal.stdout
    full = repo.ragit("timeline", "--view", "full", "--format", "text")
    assert "provenance: actor=" in full.stdout


def test_timeline_filters(repo: Repo) -> None:
    """Contract-mandated: --goal, --episode, --session, --kind, --since/--until, -n."""
    ids = _history(repo)
    expected = {
        ("--kind", "memory"): 2,
        ("--kind", "session"): 1,
        ("--session", ids["a"]): 1,
        ("--goal", ids["goal"]): 2,
        ("--episode", "ep-1"): 1,
        ("-n", "1"): 1,
        ("--since", "2999-01-01T00:00:00Z"): 0,
        ("--until", "2000-01-01T00:00:00Z"): 0,
    }
    # The filters, in one interpreter: what each selects is the point, not the process.
    ran = run_many(repo.root, [("timeline", *args) for args in expected], env=repo.env)
    for args, events in expected.items():
        run = ran[" ".join(("timeline", *args))]
        assert run.code == 0 and run.envelope["ok"], run.output
        assert len(run.envelope["data"]["events"]) == events, args
    data = ran["timeline -n 1"].envelope["data"]
    assert data["summary"]["eventCount"] == 3
    assert data["summary"]["byType"] == {"memory.wrap": 2, "session.materialize": 1}
    assert data["filters"]["maxCount"] == 1


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--kind", "bogus"], "kind"),
        (["--since", "yesterday"], "since"),
        (["-n", "0"], "maxCount"),
        (["-n", "1.5"], "maxCount"),
        (["--session", " "], "session"),
    ],
)
def test_timeline_bad_filters_are_input_invalid(repo: Repo, args: list[str], field: str) -> None:
    """Contract-mandated: typed validation of options."""
    run = repo.ragit("timeline", *args, "--format", "json")
    assert run.code == 2
    assert run.error["details"]["field"] == field


def test_timeline_reads_only(repo: Repo) -> None:
    """Contract-mandated: timeline writes nothing."""
    _history(repo)
    before = tree_state(repo.root)
    assert repo.ragit("timeline", "--format", "both").code == 0
    assert tree_state(repo.root) == before
