"""`ragit repair` plans from the `drift` evaluation with its filters and acts only on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ops.test_log_drift import git, item, plant_artifact, ragit, repo

__all__ = ["repo"]  # the fixture, shared with the log and drift tests

ADR = "docs/adr/0001-double-entry-bookkeeping.md"
PRD = "docs/prd/ledger-mvp.md"


def manifest_doc(repo: Path, sha: str, path: str) -> dict[str, Any]:
    data = json.loads((repo / ".ragit/manifest" / f"{sha}.json").read_text(encoding="utf-8"))
    found: dict[str, Any] = next(d for d in data["docs"] if d["path"] == path)
    return found


def edit_adr_and_prd(repo: Path) -> str:
    for path in (ADR, PRD):
        with (repo / path).open("a", encoding="utf-8") as fh:
            fh.write("\nAmended.\n")
    git(repo, "commit", "-qam", "Amend the ADR and the PRD")
    return git(repo, "rev-parse", "HEAD")


def actions(data: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    return [(a["action"], a["status"], a["sourceItemIds"]) for a in data["plannedActions"]]


def test_path_filter_reindexes_only_the_selected_document(repo: Path) -> None:
    head = edit_adr_and_prd(repo)
    drift = ragit(repo, "drift", "--path", "docs/adr/**")["data"]
    adr_id = drift["items"][0]["id"]
    plan = ragit(repo, "repair", "--path", "docs/adr/**")["data"]
    assert plan["filters"]["path"] == "docs/adr/**"
    assert actions(plan) == [("ingest", "planned", [adr_id])]
    assert plan["plannedActions"][0]["args"] == ["--path", ADR]
    assert plan["plannedActions"][0]["command"] == (
        "ragit repair --apply --action ingest --path 'docs/adr/**'"
    )
    assert not (repo / ".ragit/manifest" / f"{head}.json").exists()  # planning wrote nothing

    done = ragit(repo, "repair", "--apply", "--path", "docs/adr/**")["data"]
    assert [a["status"] for a in done["executedActions"]] == ["executed"]
    assert manifest_doc(repo, head, ADR)["blobSha"] == git(repo, "rev-parse", f"HEAD:{ADR}")
    # the PRD was not selected: HEAD's snapshot still holds its parent's version ...
    assert manifest_doc(repo, head, PRD)["blobSha"] == git(repo, "rev-parse", f"HEAD~1:{PRD}")
    # ... and drift says so, although HEAD now has a snapshot
    after = ragit(repo, "drift", "--scope", "durable")["data"]
    stale = [i["title"] for i in after["items"] if i["status"] == "stale"]
    assert stale == [PRD]
    assert item(after, adr_id)["status"] == "fresh"

    # without a filter the rest is repaired too: then nothing is left
    ragit(repo, "repair", "--apply")
    assert ragit(repo, "drift")["data"]["overallStatus"] == "fresh"
    assert ragit(repo, "repair")["data"]["plannedActions"] == []


def test_scope_goal_and_session_select_the_artifacts_acted_on(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    mine = plant_artifact(repo, binding="bound", bound_head=head, related=["src/app.py"])
    other = plant_artifact(
        repo,
        binding="bound",
        bound_head=head,
        related=["src/app.py"],
        goal="goal_ffffffffffff",
        suffix="2",
    )
    record = repo / ".ragit/artifacts/session" / f"{other}.json"
    body = json.loads(record.read_text(encoding="utf-8"))
    body["sourceSessionId"] = "20260101T100000Z-deadbeef"
    record.write_text(json.dumps(body), encoding="utf-8")
    suite = plant_artifact(
        repo,
        scope="harness",
        kind="suite",
        binding="bound",
        bound_head=head,
        title="Suite",
        goal=None,
    )
    plant_artifact(
        repo,
        scope="harness",
        kind="failure",
        status="captured",
        binding="bound",
        bound_head=head,
        input_refs=[suite],
        suffix="1",
        goal=None,
    )
    (repo / "src/app.py").write_text("print('changed')\n", encoding="utf-8")
    git(repo, "commit", "-qam", "Change the app")
    new_head = git(repo, "rev-parse", "HEAD")

    by_goal = ragit(repo, "repair", "--goal", "goal_0123456789ab")["data"]
    assert actions(by_goal) == [("artifact-review", "blocked", [mine])]
    by_session = ragit(repo, "repair", "--session", "20260101T100000Z-deadbeef")["data"]
    assert actions(by_session) == [("artifact-review", "blocked", [other])]
    assert by_session["filters"]["sessionId"] == "20260101T100000Z-deadbeef"

    harness = ragit(repo, "repair", "--scope", "harness")["data"]
    assert actions(harness) == [
        ("harness-verify", "planned", [suite]),
        ("harness-run", "blocked", [suite]),
    ]
    memory = ragit(repo, "repair", "--scope", "memory", "--apply")["data"]
    assert {a["sourceItemIds"][0] for a in memory["plannedActions"]} == {mine, other}
    assert memory["executedActions"] == []  # reviews need an input: nothing ran
    # HEAD is not indexed, but the baseline is a durable item: no scope here plans an ingest
    assert not (repo / ".ragit/manifest" / f"{new_head}.json").exists()
    applied = ragit(repo, "repair", "--scope", "harness", "--apply")["data"]
    assert [(a["action"], a["status"]) for a in applied["executedActions"]] == [
        ("harness-verify", "executed")
    ]
    assert not (repo / ".ragit/manifest" / f"{new_head}.json").exists()
    assert next(a["action"] for a in ragit(repo, "repair")["data"]["plannedActions"]) == "ingest"


def test_a_repair_whose_action_fails_prints_data_null_and_the_actions_error(repo: Path) -> None:
    """Contract §2: a failure envelope carries `data: null`; what ran before the failing
    action is named in the warnings."""
    with (repo / ADR).open("a", encoding="utf-8") as fh:
        fh.write("\nNot committed yet.\n")

    failed = ragit(repo, "repair", "--apply", "--action", "ingest", expect=3)

    assert failed["ok"] is False
    assert failed["data"] is None
    assert failed["error"]["code"] == "INGEST_CANDIDATES_DIRTY"
    assert any("ingest failed" in w for w in failed["warnings"]), failed["warnings"]
