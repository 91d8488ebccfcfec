"""The real CLI without the options and commands an older implementation lacks, for the suite.

It runs ``python -m ragit`` of the interpreter that runs this script, but first refuses, as
an implementation that never had them would (one line on stderr, exit 1):

- ``ingest --at`` and ``init --format`` (an older ``init`` spells it ``--output``);
- ``config set`` of a key outside the older config (``embedding.base_url``,
  ``ingest.include``, ``security.remote_embedding_policy``, …);
- the commands ``session``, ``artifact`` and ``repair``.

None of these is needed to reach the rule of a case whose setup is plain, so such a case must
pass; a case whose setup needs one is an ERROR; a recovery it prints but cannot run (doctor's
``ragit repair …``) is a FAIL of the rule that promises a runnable recovery.
"""

from __future__ import annotations

import subprocess
import sys

OLD_KEYS = (
    "project.",
    "storage.",
    "embedding.provider",
    "embedding.dimensions",
    "embedding.version",
    "ingest.supported_types",
    "ingest.type_detection",
    "ingest.doc_globs",
    "hooks.",
    "retrieval.",
    "memory.",
    "security.secret_masking",
    "output.",
)
MISSING_COMMANDS = ("session", "artifact", "repair")


def refusal(argv: list[str]) -> str | None:
    """Why an older implementation would refuse ``argv``, or ``None``."""
    if argv and argv[0] in MISSING_COMMANDS:
        return f"error: unknown command '{argv[0]}'"
    if argv[:1] == ["ingest"] and "--at" in argv:
        return "error: unknown option '--at'"
    if argv[:1] == ["init"] and "--format" in argv:
        return "error: unknown option '--format'"
    if argv[:2] == ["config", "set"] and len(argv) > 2 and not argv[2].startswith(OLD_KEYS):
        return f"error: unknown config key '{argv[2]}'"
    return None


def main(argv: list[str]) -> int:
    """Refuse what an older implementation lacks; run everything else as the real CLI."""
    why = refusal(argv)
    if why is not None:
        sys.stderr.write(why + "\n")
        return 1
    return subprocess.run([sys.executable, "-m", "ragit", *argv], check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
