"""`ragit init` — discover-first bootstrap (contract §12, docs/authority.md).

Scans the repository and reports what knowledge it has and lacks (mode, coverage,
maturity, knowledge map, plan), creates `.ragit/config.toml` and the ignore entries, and
under `--strategy balanced|full` writes the missing stage-1 drafts, templates, AGENTS.md
and the indexes (:mod:`ragit.ops.authority.discover`). The default strategy `minimal` writes exactly
the config and the ignore entries.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

from ragit.cli.invocation import Invocation, Outcome
from ragit.contract.errors import NotAGitRepository
from ragit.workspace import GITIGNORE_ENTRIES, Workspace


def _existing_ignore_lines(path: Path) -> set[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return set()
    return {line.strip() for line in text.splitlines() if line.strip()}


def _append_gitignore(path: Path, entries: list[str]) -> None:
    from ragit._fs import atomic_write_bytes

    try:
        current = path.read_bytes()
    except FileNotFoundError:
        current = b""
    block = "# RAGit runtime state (ragit init)\n" + "".join(f"{e}\n" for e in entries)
    prefix = current
    if prefix and not prefix.endswith(b"\n"):
        prefix += b"\n"
    atomic_write_bytes(path, prefix + block.encode("utf-8"))


def _default_branch(root: Path) -> str | None:
    """The branch HEAD names (born or not), or None when HEAD is detached."""
    from ragit.snapshot._git import GitRepo

    try:
        return GitRepo(root).head().branch
    except Exception:  # an unreadable HEAD keeps the documented default
        return None


def init_repository(
    start: Path,
    *,
    git_init: bool,
    dry_run: bool,
    mode: str = "auto",
    strategy: str = "minimal",
    interactive: bool = False,
) -> dict[str, Any]:
    """Bootstrap RAGit at the repository containing ``start``: the command's data (its shape
    for ``describe``: :class:`ragit.cli.commands.init_data.InitData`).

    Raises:
        NotAGitRepository: outside a repository without ``git_init``.
    """
    from ragit._fs import atomic_write_text
    from ragit.config import default_config_toml
    from ragit.ops.authority.discover.report import discover
    from ragit.ops.authority.discover.scan import scan_repository
    from ragit.ops.authority.discover.surface import propose_surface
    from ragit.snapshot._git import discover_root
    from ragit.snapshot._git import init_repository as git_init_repo

    root = discover_root(start)
    git_initialized = False
    if root is None:
        if not git_init:
            raise NotAGitRepository(str(start))
        git_initialized = True
        root = start if dry_run else git_init_repo(start)
    ws = Workspace(root)
    config_exists = ws.config_path.exists()
    scanned_git = not (git_initialized and dry_run)
    scan = scan_repository(root, git_detected=scanned_git)
    surface = propose_surface(scan.files, config_exists=config_exists)
    existing = _existing_ignore_lines(ws.gitignore_path)
    missing = [e for e in GITIGNORE_ENTRIES if e not in existing and e.rstrip("/") not in existing]
    if dry_run:
        config_status: Literal["created", "exists", "planned"] = (
            "exists" if config_exists else "planned"
        )
        added: list[str] = []
    else:
        if not config_exists:
            written = surface["include"] if surface["status"] == "written" else None
            text = default_config_toml(
                _default_branch(root), project_name=root.name or None, include=written
            )
            atomic_write_text(ws.config_path, text)
        if missing:
            _append_gitignore(ws.gitignore_path, missing)
        config_status = "exists" if config_exists else "created"
        added = missing
    report = discover(
        root,
        git_detected=scanned_git,
        initialized_before=config_exists,
        mode=mode,
        strategy=strategy,
        dry_run=dry_run,
        interactive=interactive,
        scan=scan,
    )
    where = surface["include"] if surface["status"] == "written" else ["README.md", "docs/**"]
    next_actions = [
        f"write or review docs ({', '.join(where)}), then commit them",
        "git add .ragit/config.toml .gitignore && git commit -m 'Track the RAGit config'",
        "ragit ingest --all",
        "ragit hooks install",
        "ragit status",
    ]
    drafts = [a["path"] for a in report["actions"]["planned"] if a["type"] == "skip"]
    if drafts and strategy == "minimal":
        next_actions.insert(0, "ragit init --yes --strategy balanced --dry-run  # see the drafts")
    if surface["command"]:
        next_actions.insert(0, surface["command"])
    created = report["actions"]["created"]
    if created:
        next_actions[0] = "review the inferred drafts (" + ", ".join(created) + "), then commit"
    return {
        "dryRun": dry_run,
        "root": str(root),
        "gitInitialized": git_initialized,
        "config": {"path": ws.relative(ws.config_path), "status": config_status},
        "gitignore": {
            "path": ".gitignore",
            "policy": "safe",
            "plannedEntries": missing,
            "addedEntries": added,
            "existingEntries": [e for e in GITIGNORE_ENTRIES if e not in missing],
        },
        "nextActions": next_actions,
        **report,
        "surface": surface,
        "declined": False,
    }


def _render(data: dict[str, Any]) -> str:
    verb = "would be" if data["dryRun"] else "is"
    lines = [f"RAGit init ({'dry run' if data['dryRun'] else 'applied'}) at {data['root']}"]
    if data["gitInitialized"]:
        lines.append(f"- git repository {verb} initialized")
    lines.append(f"- {data['config']['path']}: {data['config']['status']}")
    if data["dryRun"]:
        lines.append(f"- .gitignore entries planned: {len(data['gitignore']['plannedEntries'])}")
    else:
        lines.append(f"- .gitignore entries added: {len(data['gitignore']['addedEntries'])}")
    surface_line = _render_surface(data)
    if surface_line:
        lines.append(surface_line)
    lines += _render_report(data)
    lines.append("next:")
    lines += [f"  {a}" for a in data["nextActions"]]
    return "\n".join(lines)


def _render_surface(data: dict[str, Any]) -> str | None:
    """What the ingest surface covers of the documents found, and what init did about it."""
    surface = data["surface"]
    if not surface or not surface.get("markdown"):
        return None
    found = f"{surface['defaultCovers']} of {surface['markdown']} markdown documents"
    if surface["status"] == "written":
        verb = "would write" if data["dryRun"] else "wrote"
        return (
            f"- surface: README.md and docs/** hold {found}; {verb} ingest.include = "
            f"{', '.join(surface['include'])} to cover where they are"
        )
    if surface["status"] == "proposed":
        return (
            f"- surface: README.md and docs/** hold {found}; to index the rest run "
            f"`{surface['command']}` ({surface['reason']})"
        )
    return f"- surface: README.md and docs/** hold {found}"


def _render_report(data: dict[str, Any]) -> list[str]:
    """The discovery summary: repository, coverage, maturity, plan."""
    scan = data["scan"]
    if not scan:
        return []
    langs = ", ".join(scan["languages"][:5]) or "none"
    lines = [
        f"repository: {data['repositoryMode']} (strategy {data['strategy']}); "
        f"{scan['codeFileCount']} code files, {scan['docFileCount']} docs; languages: {langs}",
    ]
    if scan["frameworks"]:
        lines.append(f"  frameworks: {', '.join(scan['frameworks'])}")
    if scan["packageManager"]:
        lines.append(f"  package manager: {', '.join(scan['packageManagers'])}")
    if scan["monorepo"]:
        members = len(scan["apps"]) + len(scan["packages"])
        lines.append(
            f"  monorepo: {', '.join(scan['workspaceFiles']) or 'apps/packages'}; {members} units"
        )
    lines.append("coverage:")
    for slot, entry in data["coverage"].items():
        sources = ", ".join(entry["sources"][:3])
        more = "" if len(entry["sources"]) <= 3 else f" (+{len(entry['sources']) - 3})"
        lines.append(f"  {slot:<22} {entry['status']:<10} {sources}{more}")
    lines.append("maturity: " + ", ".join(f"{k} {v}" for k, v in data["maturity"].items()))
    lines.append("plan:")
    for action in data["actions"].get("planned", []):
        lines.append(f"  {action['type']:<6} {action['path']} — {action['reason']}")
    authority = data["bootstrap"].get("docsAuthority") or {}
    if authority:
        lines.append(
            f"docs authority: {authority.get('tracked', 0)} tracked, "
            f"{authority.get('violations', 0)} violations ({authority.get('status')})"
        )
    return lines


def run(inv: Invocation) -> Outcome:
    """Handler for `ragit init`."""
    from ragit.contract.errors import InputInvalid
    from ragit.ops.authority.discover.assess import MODES, STRATEGIES

    mode = str(inv.params.get("mode") or "auto")
    strategy = str(inv.params.get("strategy") or "minimal")
    if mode not in MODES:
        raise InputInvalid("mode", f"unknown mode {mode!r}", allowed=list(MODES))
    if strategy not in STRATEGIES:
        raise InputInvalid("strategy", f"unknown strategy {strategy!r}", allowed=list(STRATEGIES))
    git_init = bool(inv.params.get("git_init"))
    interactive = not inv.params.get("yes") and not inv.dry_run and _stdin_is_terminal()
    if interactive:
        # At a terminal without --yes: show the plan, ask before writing anything.
        import click

        plan = init_repository(
            inv.start_dir, git_init=git_init, dry_run=True, mode=mode, strategy=strategy
        )
        sys.stderr.write(_render(plan) + "\n")
        if not click.confirm("Write these files?", default=True, err=True):
            declined = {**plan, "executionMode": "interactive", "declined": True}
            inv._root, inv._root_searched = Path(declined["root"]), True
            return Outcome(data=declined, text="nothing written (answered no; `ragit init --yes`)")
    data = init_repository(
        inv.start_dir,
        git_init=git_init,
        dry_run=inv.dry_run,
        mode=mode,
        strategy=strategy,
        interactive=interactive,
    )
    inv._root, inv._root_searched = Path(data["root"]), True
    return Outcome(data=data, text=lambda: _render(data))


def _stdin_is_terminal() -> bool:
    """Whether a person can answer a question (never when stdin is a pipe or a file)."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
