"""Instants as people read them: ``3 Dec 2026, 18:14 UTC`` (or the author's offset).

One form for every text output (`log`'s dates, the narrative page); JSON keeps ISO-8601.
"""

from __future__ import annotations

from datetime import datetime


def human_time(iso: str | None) -> str:
    """An ISO-8601 instant as ``3 Dec 2026, 18:14 UTC``, or ``…, 18:14 +09:00`` when the
    instant carries another offset; an unreadable value is returned as it is."""
    if not iso:
        return ""
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    offset = moment.utcoffset()
    zone = "UTC" if not offset else moment.isoformat()[-6:]
    return f"{moment.day} {moment.strftime('%b %Y, %H:%M')} {zone}"
