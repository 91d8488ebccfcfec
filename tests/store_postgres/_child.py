"""A writer process for the shared-store tests: ``python _child.py <action> <args>``.

``write <repository> <seed> <n> <shuffle-seed>``: write the rows of ``make_rows(n, seed)``
in a shuffled order, in batches of 50, and print how many this process inserted.
``publish <repository> <seed> <n> <sha>``: write them and publish them as ``sha``.
``migrate``: apply the migrations and print what was applied.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _rows import DIM, make_rows, manifest_bytes

import ragit.store.postgres.write as write_module
from ragit.store.postgres.migrate import migrate
from ragit.store.postgres.write import PgWriter

NAMESPACE = "test-ns"
# The tests' namespaces are small: they get their HNSW graph all the same.
write_module.GRAPH_MIN_ROWS = 0


def main(argv: list[str]) -> None:
    action = argv[0]
    if action == "migrate":
        print(json.dumps(migrate().payload()))
        return
    repository, seed, n = argv[1], int(argv[2]), int(argv[3])
    rows = make_rows(n, seed)
    with PgWriter.open(repository, NAMESPACE, DIM) as writer:
        if action == "write":
            random.Random(int(argv[4])).shuffle(rows)
            written = sum(writer.write(rows[i : i + 50]).written for i in range(0, n, 50))
            print(json.dumps({"written": written}))
        elif action == "publish":
            ids = [r.chunk_id for r in rows]
            writer.write(rows)
            writer.publish(argv[4], manifest_bytes(argv[4], ids), ids)
            print(json.dumps({"published": argv[4]}))


if __name__ == "__main__":
    main(sys.argv[1:])
