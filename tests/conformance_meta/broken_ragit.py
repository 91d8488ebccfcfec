"""A deliberately non-conforming RAGit, for trying the conformance suite and its report.

It runs the real CLI (``python -m ragit`` of the interpreter that runs this script)
and breaks three contract rules on purpose, nothing else:

- FMT-004: ``--format both`` output loses its ``---`` line (text, then the envelope);
- EXIT-003: invalid input and usage errors exit 1 instead of 2;
- CMD-009: ``status`` writes a file under ``.ragit/`` (a read command must write nothing).

Run it like any implementation (docs/conformance.md, "Trying the suite")::

    python -m conformance.runner --impl "python tests/conformance_meta/broken_ragit.py" \\
        --run describe-format-both --run status-after-init-writes-nothing ...
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    """Run the real CLI with ``argv``, then break the three rules in its answer."""
    done = subprocess.run([sys.executable, "-m", "ragit", *argv], capture_output=True, check=False)
    stdout = b"\n".join(line for line in done.stdout.split(b"\n") if line != b"---")
    if argv[:1] == ["status"] and Path(".ragit").is_dir():
        Path(".ragit", "status-seen.txt").write_text("status ran here\n", encoding="utf-8")
    sys.stdout.buffer.write(stdout)
    sys.stderr.buffer.write(done.stderr)
    return 1 if done.returncode == 2 else done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
