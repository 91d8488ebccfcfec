"""Reading control-plane JSON records: the read-only half of :mod:`.storage`.

Readers — retrieval of artifact overlay hits, and with it the read-only MCP
server — import this module; writing (:mod:`.storage`) and the memory writer
lock (:mod:`.lock`) live apart so readers never load them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragit import _json


def read_record(path: Path) -> Any | None:
    """A JSON record, or None when the file is missing or unreadable as JSON."""
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    try:
        return _json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
