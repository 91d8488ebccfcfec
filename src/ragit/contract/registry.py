"""The command registry: one definition per leaf command.

Each :class:`~ragit.contract.command_spec.CommandSpec` drives both the click
command (``ragit.cli``) and ``ragit describe``. The registry is plain data so that
``ragit --help`` and ``ragit describe`` load neither pydantic nor any engine; the
JSON Schemas that ``describe`` reports are generated from the pydantic models at
build time by ``scripts/gen_describe.py`` into ``describe.json`` (with a
``--check`` twin). The specs are declared per command group
(:mod:`~ragit.contract.specs_core`, :mod:`~ragit.contract.specs_ops`,
:mod:`~ragit.contract.specs_memory`, :mod:`~ragit.contract.specs_history`).

Only commands that really work are registered.
"""

from __future__ import annotations

from ragit.contract.command_spec import CommandSpec
from ragit.contract.specs_core import CORE_COMMANDS
from ragit.contract.specs_docs import DOC_COMMANDS
from ragit.contract.specs_history import HISTORY_COMMANDS
from ragit.contract.specs_memory import MEMORY_COMMANDS
from ragit.contract.specs_ops import OPS_COMMANDS

COMMANDS: tuple[CommandSpec, ...] = (
    *CORE_COMMANDS,
    *OPS_COMMANDS,
    *MEMORY_COMMANDS,
    *HISTORY_COMMANDS,
    *DOC_COMMANDS,
)


def by_path() -> dict[str, CommandSpec]:
    """Specs keyed by their command path."""
    return {spec.path: spec for spec in COMMANDS}


def families() -> set[str]:
    """Group names that are not leaves themselves (e.g. ``config``)."""
    return {spec.words[0] for spec in COMMANDS if len(spec.words) > 1}
