"""`ragit init`'s proposal of an ingest surface that covers the repository's documents.

The default surface (``README.md`` and ``docs/**``) suits a repository whose documents live
under ``docs/``. When it would miss most of the markdown the scan found, `init` proposes
``ingest.include`` = the default plus the top folders (and root files) where the missed
documents are. The proposal is written into a new config when it is clear: at most three
folders hold nine in ten of the missed documents and none of them is vendored or test data.
Otherwise, and whenever the config exists already (never overwritten), it is proposed with
the exact `config set`.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ragit.config import DEFAULT_EXCLUDE, IngestConfig
from ragit.snapshot.surface import SurfaceMatcher, is_markdown

MAX_FOLDERS = 3
SHARE = 0.9
# Folders whose markdown is rarely the repository's own knowledge.
DOUBTFUL = frozenset(
    {
        "vendor",
        "third_party",
        "third-party",
        "external",
        "deps",
        "node_modules",
        "test",
        "tests",
        "testdata",
        "fixtures",
        ".github",
    }
)


def propose_surface(files: Sequence[str], *, config_exists: bool) -> dict[str, Any]:
    """The ``surface`` block of `init`'s report for the scanned ``files``: ``{markdown,
    defaultCovers, status, include, proposedInclude, command, reason}``.

    ``status``: ``default`` (the default surface covers most documents), ``written`` (the
    config `init` creates carries ``include`` = ``proposedInclude``), ``proposed`` (a person
    decides: ``command`` is the `config set` to run, ``reason`` why it was not written).
    """
    defaults = IngestConfig()
    default = SurfaceMatcher(defaults.doc_globs, defaults.include, DEFAULT_EXCLUDE)
    everything = SurfaceMatcher(defaults.doc_globs, [], DEFAULT_EXCLUDE)
    markdown = [f for f in files if is_markdown(f) and everything.matches(f)]
    covered = [f for f in markdown if default.matches(f)]
    block: dict[str, Any] = {
        "markdown": len(markdown),
        "defaultCovers": len(covered),
        "status": "default",
        "include": list(defaults.include),
        "proposedInclude": None,
        "command": None,
        "reason": None,
    }
    missed = [f for f in markdown if not default.matches(f)]
    if not markdown or 2 * len(missed) <= len(markdown):
        return block
    folders = Counter(f.split("/", 1)[0] for f in missed if "/" in f)
    root_files = sorted(f for f in missed if "/" not in f)
    ranked = sorted(folders.items(), key=lambda kv: (-kv[1], kv[0]))
    chosen: list[str] = []
    held = len(root_files)
    for folder, count in ranked:
        if held >= SHARE * len(missed):
            break
        chosen.append(folder)
        held += count
    extra = [f"{folder}/**" for folder in chosen]
    extra += root_files if len(root_files) <= 3 else ["*"]
    include = [*defaults.include, *(g for g in extra if g not in defaults.include)]
    value = json.dumps(include, ensure_ascii=False, separators=(",", ":"))
    block["proposedInclude"] = include
    doubtful = [f for f in chosen if f.lower() in DOUBTFUL]
    if not config_exists and len(chosen) <= MAX_FOLDERS and not doubtful:
        block["status"] = "written"
        block["include"] = include
        return block
    block["status"] = "proposed"
    block["include"] = None  # the config keeps what it holds (or the default)
    block["command"] = f"ragit config set ingest.include {shlex.quote(value)}"
    if config_exists:
        block["reason"] = "the config exists already and is never overwritten"
    elif doubtful:
        block["reason"] = f"{', '.join(doubtful)} may hold vendored or test documents"
    else:
        block["reason"] = f"the documents are spread over {len(ranked)} folders"
    return block
