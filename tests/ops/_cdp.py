"""A headless Chromium driven over the DevTools protocol on a pipe (standard library only).

``--remote-debugging-pipe`` makes Chromium read NUL-terminated JSON commands on file
descriptor 3 and write replies and events on descriptor 4. Commands evaluated through the
protocol are not page scripts, so a page whose Content-Security-Policy forbids every script
can still be measured (layout widths, computed styles) without changing the page.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-extensions",
)


class CdpError(RuntimeError):
    pass


class Chromium:
    """One browser process; ``call`` sends a command and returns its result."""

    def __init__(self, browser: str, profile: Path, timeout: float = 60.0) -> None:
        self.timeout = timeout
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Chromium reads commands on descriptor 3 and writes on 4. The ends are moved above 9
        # first, so that neither already is descriptor 3 or 4 in this process.
        r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)
        # A small exec trampoline moves them to 3 and 4 (dash cannot name descriptors > 9).
        wire = (
            "import os, sys; r, w = int(sys.argv[1]), int(sys.argv[2]); os.dup2(r, 3); "
            "os.dup2(w, 4); os.close(r); os.close(w); os.execvp(sys.argv[3], sys.argv[3:])"
        )
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                wire,
                str(r),
                str(w),
                browser,
                *FLAGS,
                "--remote-debugging-pipe",
                f"--user-data-dir={profile}",
            ],
            pass_fds=(r, w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(r)
        os.close(w)
        self._buf = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 16)
                if not chunk:
                    raise CdpError("Chromium closed the pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") != self._next:
                self.events.append(reply)
                continue
            if "error" in reply:
                raise CdpError(f"{method}: {reply['error']}")
            result: dict[str, Any] = reply["result"]
            return result

    def wait_event(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while True:
            for event in self.events:
                if event.get("method") == method:
                    return event
            self.events.append(self._read(deadline))

    def close(self) -> None:
        with contextlib.suppress(CdpError, OSError):
            self.call("Browser.close")
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


@dataclass
class PageReport:
    """What one load of a page showed."""

    console: list[str] = field(default_factory=list)
    scroll_width: int = 0
    viewport_width: int = 0
    too_wide: list[str] = field(default_factory=list)
    body_font_px: float = 0.0
    print_visible: dict[str, bool] = field(default_factory=dict)
    pdf: bytes = b""
    broken_words: list[str] = field(default_factory=list)


# Elements whose box reaches past the viewport (tag#id.class and right edge), at most 10.
_TOO_WIDE = """
(() => {
  const w = document.documentElement.clientWidth, out = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > w + 0.5) {
      out.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
               (el.className ? '.' + String(el.className).split(' ').join('.') : '') +
               ' right=' + Math.round(r.right));
      if (out.length >= 10) break;
    }
  }
  return JSON.stringify(out);
})()
"""

# Words of table cells that the layout broke across two lines ("baseli|ne"), at most 10:
# a word of at most 24 characters whose range has line boxes on more than one line.
# Longer tokens (paths, URLs, code) may wrap: no column could hold them all.
_BROKEN_WORDS = """
(() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.parentElement || !node.parentElement.closest('td, th')) continue;
    const re = /\\S+/g;
    let m;
    while ((m = re.exec(node.data)) !== null) {
      if (m[0].length > 24) continue;
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0)
                           .map(r => Math.round(r.top)));
      if (tops.size > 1) {
        out.push(m[0]);
        if (out.length >= 10) return JSON.stringify(out);
      }
    }
  }
  return JSON.stringify(out);
})()
"""

_PRINT_VISIBLE = """
JSON.stringify(Object.fromEntries(
  ['recover-now', 'what-to-trust', 'how-we-got-here'].map(id => {
    const el = document.getElementById(id);
    return [id, !!el && getComputedStyle(el).display !== 'none' && el.offsetHeight > 0];
  }).concat([['nav', getComputedStyle(document.querySelector('nav')).display !== 'none']])
))
"""


def _console_problems(events: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for event in events:
        method, params = event.get("method"), event.get("params") or {}
        if method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            entry = params["entry"]
            out.append(f"{entry['level']} ({entry['source']}): {entry['text']}")
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = (details.get("exception") or {}).get("description") or details["text"]
            out.append(f"uncaught: {text}")
        elif method == "Runtime.consoleAPICalled" and params["type"] in (
            "error",
            "warning",
            "assert",
        ):
            values = [a.get("value", a.get("description")) for a in params["args"]]
            out.append(f"console.{params['type']}: {values}")
    return out


def inspect_page(
    browser: str,
    profile: Path,
    url: str,
    *,
    width: int,
    height: int,
    screenshot: Path | None = None,
) -> PageReport:
    """Load ``url`` in a ``width`` x ``height`` mobile-style viewport and measure it.

    Collects console errors and warnings (CSP violations included) and uncaught
    exceptions, the document's scroll width against the viewport, elements wider than
    the viewport, the body's font size; then switches to print media, records which
    sections are displayed, and prints the page to PDF.
    """
    chrome = Chromium(browser, profile)
    try:
        target = chrome.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = chrome.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log"):
            chrome.call(f"{domain}.enable", session=session)
        chrome.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
            session=session,
        )
        chrome.call("Page.navigate", {"url": url}, session=session)
        chrome.wait_event("Page.loadEventFired")

        def evaluate(expression: str) -> Any:
            result = chrome.call(
                "Runtime.evaluate",
                {"expression": expression, "returnByValue": True},
                session=session,
            )
            if "exceptionDetails" in result:
                raise CdpError(f"evaluation failed: {result['exceptionDetails']}")
            return result["result"]["value"]

        report = PageReport()
        widths = json.loads(
            evaluate(
                "JSON.stringify([document.documentElement.scrollWidth, "
                "document.documentElement.clientWidth, "
                "parseFloat(getComputedStyle(document.body).fontSize)])"
            )
        )
        report.scroll_width, report.viewport_width, report.body_font_px = widths
        report.too_wide = json.loads(evaluate(_TOO_WIDE))
        report.broken_words = json.loads(evaluate(_BROKEN_WORDS))
        if screenshot is not None:  # the whole page, not only the first screen
            size = chrome.call("Page.getLayoutMetrics", session=session)["cssContentSize"]
            clip = {"x": 0, "y": 0, "width": width, "height": size["height"], "scale": 1}
            shot = chrome.call(
                "Page.captureScreenshot",
                {"format": "png", "clip": clip, "captureBeyondViewport": True},
                session=session,
            )
            screenshot.write_bytes(base64.b64decode(shot["data"]))
        chrome.call("Emulation.setEmulatedMedia", {"media": "print"}, session=session)
        report.print_visible = json.loads(evaluate(_PRINT_VISIBLE))
        chrome.call("Emulation.setEmulatedMedia", {"media": ""}, session=session)
        pdf = chrome.call(
            "Page.printToPDF",
            {"printBackground": False, "generateDocumentOutline": True},
            session=session,
        )
        report.pdf = base64.b64decode(pdf["data"])
        report.console = _console_problems(chrome.events)
        return report
    finally:
        chrome.close()


def pdf_text_fragments(pdf: bytes) -> bytes:
    """The PDF's bytes with every Flate stream inflated (the outline's titles live there)."""
    parts = [pdf]
    start = 0
    while (at := pdf.find(b"stream", start)) != -1:
        begin = at + len(b"stream")
        begin += 2 if pdf[begin : begin + 2] == b"\r\n" else 1
        end = pdf.find(b"endstream", begin)
        if end == -1:
            break
        with contextlib.suppress(zlib.error):
            parts.append(zlib.decompressobj().decompress(pdf[begin:end]))
        start = end + len(b"endstream")
    return b"\n".join(parts)


def pdf_title_strings(pdf: bytes) -> list[str]:
    """The ``/Title`` strings of the PDF (document title and outline entries), decoded."""
    import re

    text = pdf_text_fragments(pdf)
    out: list[str] = []
    for match in re.finditer(rb"/Title\s*(<([0-9A-Fa-f\s]*)>|\(((?:\\.|[^\\)])*)\))", text):
        if match.group(2) is not None:
            raw = bytes.fromhex(match.group(2).decode().replace(" ", ""))
            out.append(raw[2:].decode("utf-16-be") if raw[:2] == b"\xfe\xff" else raw.decode())
        else:
            raw = re.sub(rb"\\(.)", rb"\1", match.group(3))  # literal-string escapes
            if raw[:2] == b"\xfe\xff":
                out.append(raw[2:].decode("utf-16-be", "replace"))
            else:
                out.append(raw.decode("latin-1"))
    return out
