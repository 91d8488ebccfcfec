"""`ragit narrative`: masking, escaping, and the page in a real headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fixtures.build import build_fixture

RAGIT = [sys.executable, "-m", "ragit"]
SECRET_DOC = "ghp_RagitFixtureFAKEclassic0000000000003"
SECRET_WRAP = "xoxb-1000000000006-2000000000006-RagitFixtureFAKEbot00006"
SECRET_EVENT = "sk-RagitFixtureFAKElegacyKey00000000000000000000001"
SECRETS = (SECRET_DOC, SECRET_WRAP, SECRET_EVENT)


def ragit(repo: Path, *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [*RAGIT, *args, "--format", "json"], cwd=repo, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """docs-basic, indexed, plus a document whose title and heading carry markup and a secret."""
    root = tmp_path / "repo"
    build_fixture("docs-basic", root)
    ragit(root, "init", "--yes")
    (root / "docs/adr/0009-markup.md").write_text(
        "---\ntype: adr\n---\n# <script>alert('title')</script> & <b>bold</b>\n\n"
        f"## <img src=x onerror=alert(1)> heading\n\nThe deploy token is {SECRET_DOC} here.\n",
        encoding="utf-8",
    )
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"Add the markup ADR <script>x</script> {SECRET_DOC}")
    ragit(root, "ingest")
    # a later commit changes the ADR so drift lists it as stale in "Recover now"
    with (root / "docs/adr/0009-markup.md").open("a", encoding="utf-8") as fh:
        fh.write("\nMore.\n")
    git(root, "commit", "-qam", "Extend the markup ADR")
    return root


def plant_wrap_and_event(repo: Path) -> None:
    """A wrap event (open loops, next actions) and another event, written raw with secrets."""
    events = repo / ".ragit/log/events/2026-01-01.jsonl"
    events.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            "version": 1,
            "eventId": "evt_0000000000000001",
            "eventType": "memory.wrap",
            "recordedAt": "2026-01-01T10:00:00Z",
            "sessionId": "20260101T100000Z-deadbeef",
            "summary": f"Wrapped the ledger work, token {SECRET_WRAP}",
            "openLoops": [f"Rotate {SECRET_WRAP}", "<script>alert('loop')</script>"],
            "nextActions": ["Write the reconciliation ADR"],
        },
        {
            "version": 1,
            "eventId": "evt_0000000000000002",
            "eventType": "ingest.completed",
            "recordedAt": "2026-01-01T09:00:00Z",
            "summary": f"ingest with OPENAI_API_KEY={SECRET_EVENT}",
        },
    ]
    events.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_report_and_model_are_masked_and_escaped(repo: Path) -> None:
    plant_wrap_and_event(repo)
    data = ragit(repo, "narrative", "--emit-model", "model.json", "--output", "out/report.html")
    assert data["data"]["reportPath"] == "out/report.html"
    html = (repo / "out/report.html").read_text(encoding="utf-8")
    model_text = (repo / "model.json").read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in html
        assert secret not in model_text
    # every value from a document or the ledger is escaped: no markup of theirs survives
    assert not re.search(r"<script", html, re.IGNORECASE)
    assert "<img" not in html and "<b>bold" not in html
    title = "&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;"
    assert title in html
    assert "&lt;script&gt;alert(&#39;loop&#39;)&lt;/script&gt;" in html
    model = json.loads(model_text)
    assert model["schemaVersion"] == 1
    wrap = model["recoverNow"]["latestWrap"]
    assert wrap["nextActions"] == ["Write the reconciliation ADR"]
    assert model["recoverNow"]["firstActions"] == ["ragit ingest"]
    # no external resource: nothing loads from anywhere
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)


def test_default_path_is_ignored_by_git_and_dry_run_writes_nothing(repo: Path) -> None:
    def files() -> list[str]:
        return sorted(
            p.relative_to(repo).as_posix() for p in repo.rglob("*") if ".git" not in p.parts
        )

    before = files()
    planned = ragit(repo, "narrative", "--dry-run", "--open")["data"]
    after = files()
    assert before == after
    assert planned["dryRun"] is True
    assert planned["reportPath"].startswith(".ragit/reports/narrative/")
    ragit(repo, "narrative")
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert ".ragit/reports" not in status
    assert (repo / planned["reportPath"]).is_file()


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-extensions",
)


def test_the_report_in_headless_chromium(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Loads the file offline, reads the DOM, keeps screenshots.

    The page carries no script and its Content-Security-Policy forbids any, so what the
    browser renders is what a reader without JavaScript sees.
    """
    browser = _chromium()
    if browser is None:
        pytest.skip(
            "NO BROWSER: chromium is not installed (apt-get install -y chromium); "
            "the narrative page was NOT checked in a browser"
        )
    plant_wrap_and_event(repo)
    report = repo / ragit(repo, "narrative")["data"]["reportPath"]
    artifacts = tmp_path_factory.mktemp("narrative-screenshots")
    profile = tmp_path_factory.mktemp("chromium-profile")
    flags = [*CHROMIUM_FLAGS, f"--user-data-dir={profile}"]
    url = report.resolve().as_uri()
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = dom.stdout
    for section in ("recover-now", "what-to-trust", "how-we-got-here"):
        assert f'<section id="{section}"' in page
    assert "Recover now" in page and "What to trust" in page and "How we got here" in page
    citations = re.findall(r'<a class="cite" href="#(item-document-[0-9a-f]+)"', page)
    assert citations, "citations are links"
    for anchor in citations:
        assert f'id="{anchor}"' in page  # every citation link has its target
    assert not re.search(r"<script", page, re.IGNORECASE)
    for secret in SECRETS:
        assert secret not in page
    for width, height in ((1280, 900), (375, 800)):
        shot = artifacts / f"narrative-{width}.png"
        proc = subprocess.run(
            [browser, *flags, f"--screenshot={shot}", f"--window-size={width},{height}", url],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0 and shot.is_file() and shot.stat().st_size > 5_000, proc.stderr
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"narrative screenshots: {artifacts}")
