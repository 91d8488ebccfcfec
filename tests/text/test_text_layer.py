"""ragit.text sits at the bottom: it imports nothing from ragit but itself."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import json, sys
import ragit.text.english, ragit.text.korean, ragit.text.normalize
import ragit.text.scripts, ragit.text.tokens, ragit.text.morphemes
print(json.dumps(sorted(m for m in sys.modules if m.startswith("ragit"))))
"""


def test_the_text_package_imports_only_the_standard_library() -> None:
    """Implementation choice: every layer may import ragit.text, so it imports no layer."""
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True
    ).stdout
    modules = json.loads(out)
    assert [m for m in modules if m != "ragit" and not m.startswith("ragit.text")] == []
