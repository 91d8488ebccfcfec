"""The detached builder of an embedding namespace's HNSW graph (a writer: ``ragit-mcp``
never imports it).

``python -m ragit.store.postgres.graph <repository> <namespace> <dimensions> <min rows>``,
started by :meth:`ragit.store.postgres.write.PgWriter.build_detached` after an ingest's
publication: it connects from the environment, joins the namespace's bulk loaders (the
bulk lock, shared), prints ``ready`` for the ingest (which then leaves them, closes the
builder's input and returns), waits for that end of its input, and builds the index as the
last loader to finish does (:meth:`~ragit.store.postgres.write.PgWriter.build_index`).
Killed, it leaves the index missing or invalid, as a killed loader does: reads stay exact
and an ingest builds it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ragit.store.postgres.write import PgWriter


def main(argv: Sequence[str]) -> int:
    """Build the namespace's graph; 0 when done (built or not needed), 1 on a failure."""
    repository, namespace, dimensions, min_rows = argv
    try:
        writer = PgWriter.open(repository, namespace, int(dimensions))
    except Exception:
        return 1
    with writer:
        try:
            writer.join_load()
        except Exception:
            return 1
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        # The ingest leaves the loaders, then closes this input (or dies): build after.
        sys.stdin.buffer.read()
        try:
            writer.build_index(int(min_rows))
        except Exception:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
