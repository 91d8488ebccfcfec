"""`ragit query` and `ragit context pack` — snapshot-exact retrieval for agents and people."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ragit.cli.invocation import Invocation, Outcome
from ragit.cli.render import paint

_EXCERPT_LINES = 10
_EXCERPT_CHARS = 700


def _excerpt_lines(hit: dict[str, Any], view: str) -> list[str]:
    """The hit's text as lines: line breaks and code fences kept (full text only when asked)."""
    if "text" not in hit:
        return [str(hit.get("excerpt", ""))]
    lines = str(hit["text"]).strip("\n").splitlines()
    if view == "full":
        return lines or [""]
    out: list[str] = []
    size = 0
    fenced = False
    for line in lines:
        if len(out) >= _EXCERPT_LINES or size + len(line) > _EXCERPT_CHARS:
            if fenced:
                out.append("```")
            out.append("…")
            break
        out.append(line)
        size += len(line)
        if line.lstrip().startswith("```"):
            fenced = not fenced
    return out or [""]


def emphasis(question: str) -> Callable[[str], str]:
    """Marks the question's words in a line of a hit, at a terminal that takes colour.

    A word is a run of letters or digits of at least 3 characters (any length in Hangul
    or CJK) that is not an English stop word; it matches a word of the text that starts
    with it or with its singular (``closures`` marks ``closure`` and ``closures``).
    Elsewhere (a pipe, ``NO_COLOR``) the line is unchanged.
    """
    from ragit.contract.terminal import colour_enabled

    if not colour_enabled():
        return lambda line: line
    from ragit.text.english import STOP_WORDS, strip_plural
    from ragit.text.scripts import WORD

    stems: list[str] = []
    for word in WORD.findall(question.lower()):
        if word in STOP_WORDS or (len(word) < 3 and word.isascii()):
            continue
        stem = strip_plural(word)
        if stem not in stems:
            stems.append(stem)
    if not stems:
        return lambda line: line
    stems.sort(key=len, reverse=True)
    pattern = re.compile(
        r"(?<![^\W_])(?:" + "|".join(re.escape(s) for s in stems) + r")[^\W_]*", re.IGNORECASE
    )
    return lambda line: pattern.sub(lambda m: paint(m.group(0), "match"), line)


def _hit_lines(
    hits: list[dict[str, Any]], view: str, mark: Callable[[str], str] = lambda line: line
) -> list[str]:
    lines: list[str] = []
    for n, hit in enumerate(hits, 1):
        if n > 1:
            lines.append("")
        title = f" · {hit['sectionTitle']}" if hit.get("sectionTitle") else ""
        lines.append(f"{n}. {paint(hit['path'], 'bold')}{title}  ({hit['scoreFinal']:.3f})")
        lines.extend(f"   {mark(line)}" if line else "" for line in _excerpt_lines(hit, view))
        lines.append(f"   cite: {hit['citation']['id']}")
        if "scoreBreakdown" in hit:
            b = hit["scoreBreakdown"]
            inputs = b["retrieval"]["inputs"]
            lines.append(
                f"   explain: retrieval {b['retrieval']['contribution']:.4f} "
                f"(vector {inputs['vector']['contribution']:.4f} + keyword "
                f"{inputs['keyword']['contribution']:.4f}) + authority "
                f"{b['authority']['contribution']:.4f} + recency {b['recency']['contribution']:.4f}"
            )
    return lines


def _footer(data: dict[str, Any], what: str, view: str, scope: str) -> list[str]:
    snap = data["snapshot"]
    red = data["redactionSummary"]
    where = snap["branch"] or "detached HEAD"
    short = (data["snapshotSha"] or "-")[:12]
    hits = len(data["hits"])
    lines = [
        f"{hits} hit{'s' if hits != 1 else ''} for {what} · snapshot {short} "
        f"({snap['requestedRef']}, {where}) · scope {scope} · view {view}"
    ]
    if red["applied"]:
        lines.append(f"masked: {red['maskedCount']} secret(s) in the output")
    return lines


def _warning_lines(data: dict[str, Any]) -> list[str]:
    """Warnings for a person: the bare dirty-worktree warning (no document among the
    uncommitted changes, so nothing the results could hold) is left to the envelope."""
    from ragit.snapshot.selection import DIRTY_WARNING

    shown = [w for w in data["warnings"] if w != DIRTY_WARNING]
    return [f"{paint('warning:', 'yellow')} {w}" for w in shown]


def render_query(data: dict[str, Any], view: str) -> str:
    """Hits first, then one line of metadata, then warnings."""
    lines = _hit_lines(data["hits"], view, emphasis(data["query"])) or ["no hits"]
    lines += ["", *_footer(data, repr_question(data["query"]), view, data["scope"])]
    lines += _warning_lines(data)
    return "\n".join(lines)


def repr_question(text: str) -> str:
    """A question quoted for a person (double quotes, no Python escapes)."""
    return "\u201c" + text + "\u201d"


def _passage_lines(
    hits: list[dict[str, Any]], mark: Callable[[str], str] = lambda line: line
) -> list[str]:
    """A pack's passages, whole (a pack is its passages), each with its token count."""
    lines: list[str] = []
    for n, hit in enumerate(hits, 1):
        if n > 1:
            lines.append("")
        title = f" · {hit['sectionTitle']}" if hit.get("sectionTitle") else ""
        score = f", {hit['scoreFinal']:.3f}" if "scoreFinal" in hit else ""
        lines.append(f"{n}. {paint(hit['path'], 'bold')}{title}  ({hit['tokens']} tokens{score})")
        text = str(hit["text"]).strip("\n").splitlines() or [""]
        lines.extend(f"   {mark(line)}" if line else "" for line in text)
        lines.append(f"   cite: {hit['citation']['id']}")
    return lines


def render_pack(data: dict[str, Any], view: str, scope: str) -> str:
    """Selected passages first, then the budget and selection, then warnings."""
    sel = data["selection"]
    lines = _passage_lines(data["hits"], emphasis(data["goal"])) or ["nothing selected"]
    lines += ["", *_footer(data, repr_question(data["goal"]), view, scope)]
    lines.append(
        f"budget: {data['usedTokens']} of {data['budget']} tokens used by "
        f"{data['selectedHits']} hit(s) from {sel['selectedSources']} source(s); "
        f"{sel['candidateHits']} candidates, {sel['duplicateCitationsSkipped']} duplicate "
        f"citation(s) skipped, {sel['budgetRejectedHits']} over budget"
    )
    lines += _warning_lines(data)
    return "\n".join(lines)


def _text_view(inv: Invocation, view: str) -> str:
    """The view to retrieve: ``full`` for a text-only default view, to keep line breaks."""
    return "full" if inv.fmt == "text" and view == "default" else view


def run_query_cmd(inv: Invocation) -> Outcome:
    """Handler for `ragit query`."""
    from ragit.contract.inputs import positive_int_option
    from ragit.retrieve.query import CLI_MAX_TOP_K, QueryRequest, check_query, run_query

    ws = inv.workspace()
    cfg = inv.config()
    if inv.input_source is not None:
        from ragit.retrieve.inputs import QueryInput

        payload = inv.read_input(QueryInput)
        req = QueryRequest(
            question=payload.question,
            top_k=payload.top_k if payload.top_k is not None else cfg.retrieval.top_k,
            at=payload.at,
            scope=payload.scope or "durable",
            explain=bool(payload.explain),
            view=inv.view,
        )
    else:
        p = inv.params
        raw_k = p.get("top_k")
        top_k = (
            positive_int_option(raw_k, "topK", CLI_MAX_TOP_K)
            if raw_k is not None
            else cfg.retrieval.top_k
        )
        req = QueryRequest(
            question=p.get("question") or "",
            top_k=top_k,
            at=p.get("at"),
            scope=_scope(p.get("scope")),
            explain=bool(p.get("explain")),
            view=inv.view,
        )
    req = replace(req, wait_s=_wait(inv))
    check_query(req)
    shown = req.view
    data = run_query(ws, replace(req, view=_text_view(inv, shown)))
    extra = _migration_warnings(inv)
    return Outcome(
        data=data,
        text=lambda: _with_warnings(render_query(data, shown), extra),
        warnings=[*data["warnings"], *extra],
    )


def _migration_warnings(inv: Invocation) -> list[str]:
    """The pending embedding migration, for the envelope's warnings (never ``data``, which
    the MCP tools share) and the text."""
    from ragit.contract.errors import RagitError
    from ragit.retrieve.profile_warning import embedding_migration_warning

    try:
        warning = embedding_migration_warning(inv.workspace(), inv.config())
    except RagitError:
        return []
    return [warning] if warning else []


def _with_warnings(text: str, warnings: list[str]) -> str:
    return "\n".join([text, *(f"{paint('warning:', 'yellow')} {w}" for w in warnings)])


def _wait(inv: Invocation) -> float | None:
    """``--wait SECONDS`` / ``--no-wait`` (None: the configured ``retrieval.wait_for_ingest``)."""
    from ragit.contract.inputs import wait_seconds

    return wait_seconds(inv.params.get("wait"), bool(inv.params.get("no_wait")))


def _scope(raw: Any) -> str:
    from ragit.contract.command_spec import SCOPES
    from ragit.contract.errors import InputInvalid

    if raw is None:
        return "durable"
    if raw not in SCOPES:
        raise InputInvalid("scope", f"must be one of {', '.join(SCOPES)}")
    return str(raw)


def run_context_pack_cmd(inv: Invocation) -> Outcome:
    """Handler for `ragit context pack`."""
    from ragit.contract.inputs import positive_int_option
    from ragit.retrieve.query import (
        CLI_MAX_BUDGET,
        DEFAULT_BUDGET,
        PackRequest,
        check_pack,
        run_context_pack,
    )

    ws = inv.workspace()
    if inv.input_source is not None:
        from ragit.retrieve.inputs import ContextPackInput

        payload = inv.read_input(ContextPackInput)
        req = PackRequest(
            goal=payload.goal,
            budget=payload.budget if payload.budget is not None else DEFAULT_BUDGET,
            at=payload.at,
            scope=payload.scope or "durable",
            view=inv.view,
        )
    else:
        p = inv.params
        raw_budget = p.get("budget")
        budget = (
            positive_int_option(raw_budget, "budget", CLI_MAX_BUDGET)
            if raw_budget is not None
            else DEFAULT_BUDGET
        )
        req = PackRequest(
            goal=p.get("goal") or "",
            budget=budget,
            at=p.get("at"),
            scope=_scope(p.get("scope")),
            view=inv.view,
        )
    req = replace(req, wait_s=_wait(inv))
    check_pack(req)
    shown = req.view
    data = run_context_pack(ws, req)
    extra = _migration_warnings(inv)
    return Outcome(
        data=data,
        text=lambda: _with_warnings(render_pack(data, shown, req.scope), extra),
        warnings=[*data["warnings"], *extra],
    )
