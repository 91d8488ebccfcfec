"""Instants as people read them."""

from __future__ import annotations

import pytest

from ragit.text.dates import human_time


@pytest.mark.parametrize(
    ("iso", "shown"),
    [
        ("2026-12-03T18:14:11Z", "3 Dec 2026, 18:14 UTC"),
        ("2026-12-03T18:14:11.123Z", "3 Dec 2026, 18:14 UTC"),
        ("2026-01-01T09:05:00+09:00", "1 Jan 2026, 09:05 +09:00"),
        ("not a date", "not a date"),
        (None, ""),
    ],
)
def test_an_instant_reads_as_day_month_year_and_minute(iso: str | None, shown: str) -> None:
    """Implementation choice (docs/history.md): one human form for every text output."""
    assert human_time(iso) == shown
