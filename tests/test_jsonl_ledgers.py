"""The one reader of RAGit's ``*.jsonl`` ledgers (events, admission, quarantine)."""

from __future__ import annotations

from pathlib import Path

from ragit._json import jsonl_objects


def test_ledger_lines_come_by_file_name_then_line_with_torn_lines_as_none(tmp_path: Path) -> None:
    """Implementation choice: a torn or hand-edited line is reported (None), never an error."""
    (tmp_path / "2026-01-02.jsonl").write_text('{"n": 3}\n', encoding="utf-8")
    (tmp_path / "2026-01-01.jsonl").write_text(
        '{"n": 1}\n\n{"n": 2, "cut\n[1, 2]\n{"n": 2}\n', encoding="utf-8"
    )
    (tmp_path / "notes.txt").write_text('{"n": 0}\n', encoding="utf-8")
    assert list(jsonl_objects(tmp_path)) == [{"n": 1}, None, None, {"n": 2}, {"n": 3}]


def test_a_missing_ledger_directory_has_no_lines(tmp_path: Path) -> None:
    """Implementation choice: no ledger yet is an empty ledger."""
    assert list(jsonl_objects(tmp_path / "absent")) == []
