"""The store backend seam: what a backend without a server answers when asked for one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ragit.contract.errors import InputInvalid
from ragit.store.backend import store_backend
from ragit.store.backend_write import migrate_schema, open_purger, open_writer
from ragit.workspace import Workspace

_ZVEC = store_backend("zvec")


@pytest.mark.parametrize(
    "ask",
    [
        _ZVEC.open_reader,
        lambda: _ZVEC.server(Workspace(Path(".")), "repo"),
        lambda: open_purger(_ZVEC, "repo"),
        lambda: migrate_schema(_ZVEC, dry_run=True),
        lambda: open_writer(_ZVEC, repository="repo", namespace="ns", dimensions=3),
    ],
    ids=["open_reader", "server", "open_purger", "migrate_schema", "open_writer"],
)
def test_the_embedded_store_refuses_every_server_capability(ask: Callable[[], object]) -> None:
    """Implementation choice: the embedded store has no server reader, purger, schema
    migration or snapshot writer at the seam; asking is INPUT_INVALID on store.backend,
    never a connection attempt."""
    with pytest.raises(InputInvalid) as caught:
        ask()
    assert caught.value.code == "INPUT_INVALID"
    assert caught.value.details.get("field") == "store.backend"
