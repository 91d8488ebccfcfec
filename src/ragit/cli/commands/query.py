"""`ragit query` and `ragit context pack` — snapshot-exact retrieval for agents and people."""

from __future__ import annotations

from typing import Any

from ragit.cli.invocation import Invocation, Outcome


def _header(data: dict[str, Any], first: tuple[str, str], view: str, scope: str) -> list[str]:
    snap = data["snapshot"]
    red = data["redactionSummary"]
    return [
        f"{first[0]}: {first[1]}",
        f"snapshot: {data['snapshotSha']}",
        f"requested_ref: {snap['requestedRef']}  selection: {snap['selection']}  "
        f"status: {snap['status']}",
        f"branch: {snap['branch'] or '-'}  detached: {str(snap['detached']).lower()}  "
        f"worktree_dirty: {str(snap['worktreeDirty']).lower()}",
        f"scope: {scope}  view: {view}  hits: {len(data['hits'])}  "
        f"warnings: {len(data['warnings'])}",
        f"redaction_applied: {str(red['applied']).lower()}  masked_count: {red['maskedCount']}",
    ]


def _hit_lines(hits: list[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    for n, hit in enumerate(hits, 1):
        lines.append("")
        lines.append(
            f"{n}. [{hit['citation']['id']}] `{hit['path']}` · {hit['sectionTitle']} · "
            f"score={hit['scoreFinal']:.4f}"
        )
        body = hit.get("text", hit.get("excerpt", ""))
        for line in str(body).splitlines() or [""]:
            lines.append(f"   {line}")
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


def render_query(data: dict[str, Any], view: str) -> str:
    lines = _header(data, ("question", data["query"]), view, data["scope"])
    lines.append(f"explain: {str(data['explain']).lower()}")
    lines += _hit_lines(data["hits"])
    for warning in data["warnings"]:
        lines.append(f"warning: {warning}")
    return "\n".join(lines)


def render_pack(data: dict[str, Any], view: str, scope: str) -> str:
    sel = data["selection"]
    lines = _header(data, ("goal", data["goal"]), view, scope)
    lines += [
        f"budget: {data['budget']}  used_tokens: {data['usedTokens']}  "
        f"selected_hits: {data['selectedHits']}",
        f"selection_strategy: {sel['strategy']}  candidate_hits: {sel['candidateHits']}  "
        f"unique_citations: {sel['uniqueCitations']}  selected_sources: {sel['selectedSources']}  "
        f"duplicate_citations_skipped: {sel['duplicateCitationsSkipped']}  "
        f"budget_rejected_hits: {sel['budgetRejectedHits']}",
    ]
    lines += _hit_lines(data["hits"])
    for warning in data["warnings"]:
        lines.append(f"warning: {warning}")
    return "\n".join(lines)


def run_query_cmd(inv: Invocation) -> Outcome:
    """Handler for `ragit query`."""
    from ragit.contract.inputs import positive_int_option
    from ragit.retrieve.query import CLI_MAX_TOP_K, QueryInput, QueryRequest, check_query, run_query

    ws = inv.workspace()
    cfg = inv.config()
    if inv.input_source is not None:
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
    check_query(req)
    data = run_query(ws, req)
    return Outcome(
        data=data, text=lambda: render_query(data, req.view), warnings=list(data["warnings"])
    )


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
        ContextPackInput,
        PackRequest,
        check_pack,
        run_context_pack,
    )

    ws = inv.workspace()
    if inv.input_source is not None:
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
    check_pack(req)
    data = run_context_pack(ws, req)
    return Outcome(
        data=data,
        text=lambda: render_pack(data, req.view, req.scope),
        warnings=list(data["warnings"]),
    )
