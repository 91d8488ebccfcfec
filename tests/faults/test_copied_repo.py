"""A repository copied without modification times is the same store, not a damaged one.

``cp -r`` without ``-p``, many CI caches and a fresh clone of a repository that commits
``.ragit/`` give every file a new mtime. The canonical-file fingerprint is by content, so
ingest and doctor carry on; flipped bytes are still caught (test_corruption.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.faults._faultkit import ADR, _append, prepare
from tests.snapshot._kit import RagitRepo

from fixtures.build import load_fixture


def test_a_copy_without_mtimes_ingests_and_passes_doctor(tmp_path: Path) -> None:
    """Implementation choice: a copy of a repository (files copied without their mtimes) ingests
    and passes doctor."""
    case = prepare("ingest", tmp_path / "a")
    source = case.repo
    target = tmp_path / "copied"
    shutil.copytree(source.root, target, symlinks=True, copy_function=shutil.copy)
    copied = RagitRepo(target.resolve(), "docs-basic", load_fixture("docs-basic"))
    assert (copied.ws.store_dir / "chunks").is_dir()

    head_before = copied.head()
    report, error = copied.doctor()
    failed = [c["name"] for c in report["checks"] if not c["ok"]]
    assert "store.canonical-files" not in failed, failed

    run = copied.ragit("ingest")
    assert run.code == 0, run.output
    copied.commit(_append(copied, ADR, "\nMore about keys.\n"), "more")
    assert copied.ragit("ingest").code == 0
    report, error = copied.doctor()
    assert error is None, [c for c in report["checks"] if not c["ok"]]
    assert copied.query("idempotency keys", at=head_before, top_k=3)["hits"]
