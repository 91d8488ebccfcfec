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
from tests.snapshot._kit import from_template

from fixtures.build import build_fixture

RAGIT = [sys.executable, "-m", "ragit"]
SECRET_DOC = "ghp_RagitFixtureFAKEclassic0000000000003"
SECRET_WRAP = "xoxb-1000000000006-2000000000006-RagitFixtureFAKEbot00006"
SECRET_EVENT = "sk-RagitFixtureFAKElegacyKey00000000000000000000001"
SECRETS = (SECRET_DOC, SECRET_WRAP, SECRET_EVENT)
RFC_LIKE = "docs/notes/3668-async-closure-captures-and-their-lifetimes-in-detail.md"


def ragit(repo: Path, *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [*RAGIT, *args, "--format", "json"], cwd=repo, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True)


def _indexed(root: Path) -> None:
    build_fixture("docs-basic", root)
    ragit(root, "init", "--yes")
    (root / "docs/adr/0009-markup.md").write_text(
        "---\ntype: adr\n---\n# <script>alert('title')</script> & <b>bold</b>\n\n"
        f"## <img src=x onerror=alert(1)> heading\n\nThe deploy token is {SECRET_DOC} here.\n",
        encoding="utf-8",
    )
    # an untyped note titled by no heading: its first heading is a section, as in an RFC
    (root / RFC_LIKE).write_text(
        "- Feature Name: `async_closure_captures`\n- Start Date: 2024-06-25\n\n"
        "## Summary\n\nAsync closures capture what their body mentions.\n\n"
        "## Motivation\n\nClosures and futures meet here.\n",
        encoding="utf-8",
    )
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"Add the markup ADR <script>x</script> {SECRET_DOC}")
    ragit(root, "ingest")
    # a later commit changes the ADR so drift lists it as stale in "Recover now"
    with (root / "docs/adr/0009-markup.md").open("a", encoding="utf-8") as fh:
        fh.write("\nMore.\n")
    git(root, "commit", "-qam", "Extend the markup ADR")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """docs-basic, indexed, plus a document whose title and heading carry markup and a secret
    (built by real processes once per worker, copied per test)."""
    return from_template(tmp_path / "repo", "ops-narrative", _indexed)


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


SECTION_TITLES = ("Recover now", "What to trust", "How we got here")
SECTION_IDS = ("recover-now", "what-to-trust", "how-we-got-here")
PHONE = 375
# Chromium's own console lines on stderr (--enable-logging=stderr): "...:CONSOLE:12] "text"..."
CONSOLE_LINE = re.compile(r":CONSOLE(?::|\(|\])")


def page_problems(browser: str, profile: Path, page: Path, artifacts: Path) -> list[str]:
    """Everything wrong with the page in Chromium, as messages (empty: nothing wrong).

    * no console error or warning, no uncaught exception: the DevTools log of the load and
      Chromium's own console lines on stderr (``--enable-logging=stderr --v=0``);
    * readable at 375 px: in a 375 px mobile viewport (``<meta name="viewport">`` honoured)
      the document is no wider than the viewport, no element reaches past its right edge,
      and the body text is at least 14 px;
    * prints cleanly: with print media every section is displayed and the navigation is
      not; the PDF Chromium prints is a whole PDF whose outline names the three sections.

    The page's Content-Security-Policy forbids scripts, so layout is measured through the
    DevTools protocol (not a page script); screenshots at 1280 and 375 px are kept.
    """
    from tests.ops._cdp import FLAGS, inspect_page, pdf_title_strings

    problems: list[str] = []
    url = page.resolve().as_uri()
    dom = subprocess.run(
        [
            browser,
            *FLAGS,
            f"--user-data-dir={profile / 'dump'}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if dom.returncode != 0:
        problems.append(f"--dump-dom failed: {dom.stderr[-2000:]}")
    problems += [
        f"stderr console: {line}" for line in dom.stderr.splitlines() if CONSOLE_LINE.search(line)
    ]
    for width, height in ((1280, 900), (PHONE, 800)):
        shot = artifacts / f"{page.stem}-{width}.png"
        report = inspect_page(
            browser, profile / str(width), url, width=width, height=height, screenshot=shot
        )
        problems += [f"{width}px console: {line}" for line in report.console]
        if shot.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n" or shot.stat().st_size < 5_000:
            problems.append(f"{width}px: no screenshot")
        if width == PHONE:
            if report.viewport_width != PHONE or report.scroll_width > PHONE:
                problems.append(
                    f"{PHONE}px: document {report.scroll_width}px wide in a "
                    f"{report.viewport_width}px viewport"
                )
            problems += [f"{PHONE}px: wider than the viewport: {e}" for e in report.too_wide]
            if report.body_font_px < 14:
                problems.append(f"{PHONE}px: body text {report.body_font_px}px")
        elif report.broken_words:
            problems.append(f"{width}px: words broken across lines: {report.broken_words}")
        hidden = [k for k in SECTION_IDS if not report.print_visible.get(k)]
        if hidden or report.print_visible.get("nav"):
            problems.append(f"print: sections hidden {hidden}, nav shown {report.print_visible}")
        pdf = report.pdf
        if not pdf.startswith(b"%PDF-") or not pdf.rstrip().endswith(b"%%EOF"):
            problems.append("print: not a whole PDF")
        (artifacts / f"{page.stem}-{width}.pdf").write_bytes(pdf)
        titles = pdf_title_strings(pdf)
        missing = [t for t in SECTION_TITLES if t not in titles]
        if missing:
            problems.append(f"print: the PDF outline lacks {missing} (has {titles})")
    return problems


def test_the_report_in_headless_chromium(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Loads the file offline in Chromium: the DOM, the console, 375 px, print; screenshots.

    The page carries no script and its Content-Security-Policy forbids any, so what the
    browser renders is what a reader without JavaScript sees.
    """
    from tests.ops._cdp import FLAGS

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
    url = report.resolve().as_uri()
    dom = subprocess.run(
        [browser, *FLAGS, f"--user-data-dir={profile / 'dom'}", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = dom.stdout
    for section in SECTION_IDS:
        assert f'<section id="{section}"' in page
    assert all(title in page for title in SECTION_TITLES)
    citations = re.findall(r'<a class="cite" href="#(item-document-[0-9a-f]+)"', page)
    assert citations, "citations are links"
    for anchor in citations:
        assert f'id="{anchor}"' in page  # every citation link has its target
    assert not re.search(r"<script", page, re.IGNORECASE)
    for secret in SECRETS:
        assert secret not in page
    # what a reader sees: titles, plain labels, human dates, short SHAs
    trust = page.split('id="what-to-trust"', 1)[1].split('id="how-we-got-here"', 1)[0]
    row = re.compile(
        r'<tr id="item-document-[0-9a-f]+">.*?<td>(.*?)</td>.*?<td class="opt kind">(.*?)</td>',
        re.S,
    )
    cells = {m.group(1): m.group(2) for m in row.finditer(trust)}  # Knowledge -> Type
    assert any(k.startswith("3668 async closure captures") for k in cells), cells
    assert not any(k.startswith("Summary") for k in cells), cells
    assert "[unknown]" not in page and ">unknown<" not in page
    assert "No memory wrap recorded" not in page
    header = page.split("</header>", 1)[0]
    assert not re.search(r"[0-9a-f]{40}</", header), header  # a short SHA, the full one a title
    assert not re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", re.sub(r'"[^"]*"', "", page))
    source = report.read_text(encoding="utf-8")
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in source
    assert "@media print" in source  # the print stylesheet
    problems = page_problems(browser, profile, report, artifacts)
    print(f"narrative screenshots and PDFs: {artifacts}")
    assert problems == []


def test_the_browser_checks_can_fail(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Throwaway copies of the report with planted faults: every check reports its own."""
    browser = _chromium()
    if browser is None:
        pytest.skip("NO BROWSER: chromium is not installed; the checks were NOT exercised")
    report = repo / ragit(repo, "narrative")["data"]["reportPath"]
    source = report.read_text(encoding="utf-8")
    work = tmp_path_factory.mktemp("narrative-planted")
    # 1. a script the page's policy refuses, a block wider than a phone, no print stylesheet
    planted = work / "planted.html"
    planted.write_text(
        re.sub(r"@media print \{.*\}\n", "", source).replace(
            "<main>",
            '<main><script>console.log("planted")</script><div style="width:900px">wide</div>',
        ),
        encoding="utf-8",
    )
    problems = page_problems(browser, work / "profile-1", planted, work)
    text = "\n".join(problems)
    assert "Content Security Policy" in text, text  # the refused script, in the console
    assert "stderr console:" in text, text  # ... and on Chromium's stderr
    assert f"{PHONE}px: wider than the viewport: div" in text, text
    assert f"{PHONE}px: document" in text, text
    assert "print: sections hidden [], nav shown" in text, text
    # 1b. a word squeezed into a column too narrow for it
    squeezed = work / "squeezed.html"
    squeezed.write_text(
        source.replace(
            "<main>",
            '<main><table style="width:40px"><tr><td style="width:30px">baseline</td>'
            "<td>x</td></tr></table>",
        ),
        encoding="utf-8",
    )
    problems = page_problems(browser, work / "profile-3", squeezed, work)
    assert "1280px: words broken across lines: ['baseline']" in problems, problems
    # 2. without the policy a script runs: an uncaught error is reported
    thrown = work / "thrown.html"
    thrown.write_text(
        re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", source).replace(
            "<main>", '<main><script>throw new Error("planted failure")</script>'
        ),
        encoding="utf-8",
    )
    problems = page_problems(browser, work / "profile-2", thrown, work)
    assert any("uncaught: Error: planted failure" in p for p in problems), problems
