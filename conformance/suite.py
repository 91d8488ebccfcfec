"""Loading the suite's data: cases, requirements, expected failures.

Everything is plain JSON read with the standard library. The loaders raise
:class:`SuiteError` on data they cannot read; the checker
(``python -m conformance.check``) reports the finer problems.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SUITE_ROOT = Path(__file__).resolve().parent
REPO_ROOT = SUITE_ROOT.parent
TARGETS = ("snapshot", "store", "embed", "memory", "cli", "mcp")
LEVELS = ("contract", "extension")


class SuiteError(Exception):
    """A suite file is missing or is not the JSON it must be."""


@dataclass(frozen=True)
class Case:
    """One case file: its id, target (the directory it lives in) and raw data."""

    id: str
    target: str
    path: Path
    data: dict[str, Any] = field(repr=False)

    @property
    def title(self) -> str:
        return str(self.data.get("title", ""))

    @property
    def level(self) -> str:
        """``contract`` or ``extension`` (a case without a valid level counts as contract)."""
        return "extension" if self.data.get("level") == "extension" else "contract"

    @property
    def requirements(self) -> list[str]:
        """The cited requirement ids, the primary one (failures are reported under it) first."""
        raw = self.data.get("requirements")
        return [r for r in raw if isinstance(r, str)] if isinstance(raw, list) else []

    @property
    def primary_requirement(self) -> str:
        """The first cited requirement id, or ``"-"`` for a case that cites none."""
        return self.requirements[0] if self.requirements else "-"

    @property
    def uses_mcp(self) -> bool:
        """Whether the case needs the MCP implementation (a tool call or a ragit-mcp argv)."""
        steps = [self.data.get("step", {}), *self.data.get("setup", [])]
        return any(
            isinstance(step, dict) and ("mcp" in step or step.get("impl") == "mcp")
            for step in steps
        )


@dataclass(frozen=True)
class Suite:
    """The locations of one suite (the shipped one, or a test's copy)."""

    root: Path = SUITE_ROOT
    fixtures_dir: Path = REPO_ROOT / "fixtures"

    @property
    def cases_dir(self) -> Path:
        return self.root / "cases"

    @property
    def schema_path(self) -> Path:
        return self.root / "case.schema.json"

    @property
    def requirements_path(self) -> Path:
        return self.root / "requirements.json"

    @property
    def contract_fields_path(self) -> Path:
        return self.root / "contract-fields.json"

    @property
    def expected_failures_path(self) -> Path:
        return self.root / "expected-failures.json"

    @property
    def fixture_builder(self) -> Path:
        return self.fixtures_dir / "build.py"

    def case_files(self) -> list[Path]:
        """Every ``cases/*/*.json`` file, sorted by target order then name."""
        files: list[Path] = []
        if not self.cases_dir.is_dir():
            return files
        order = {name: index for index, name in enumerate(TARGETS)}
        for sub in sorted(
            (p for p in self.cases_dir.iterdir() if p.is_dir()),
            key=lambda p: (order.get(p.name, len(order)), p.name),
        ):
            files.extend(sorted(sub.glob("*.json")))
        return files

    def load_cases(self) -> list[Case]:
        """Every case, in file order.

        Raises:
            SuiteError: a case file is not a JSON object.
        """
        return [load_case(path) for path in self.case_files()]

    def load_requirements(self) -> list[dict[str, Any]]:
        """The requirement entries of ``requirements.json``.

        Raises:
            SuiteError: the file is missing or not ``{"requirements": [...]}``.
        """
        data = read_json(self.requirements_path)
        if not isinstance(data, dict) or not isinstance(data.get("requirements"), list):
            raise SuiteError(f'{self.requirements_path}: expected {{"requirements": [...]}}')
        return list(data["requirements"])

    def load_expected_failures(self, path: Path | None = None) -> dict[str, str]:
        """The ``{case id: reason}`` map (``path`` defaults to the suite's file).

        Raises:
            SuiteError: the file is not an object of strings.
        """
        return load_expected_failures(path or self.expected_failures_path)


def read_json(path: Path) -> Any:
    """Parse a UTF-8 JSON file.

    Raises:
        SuiteError: the file cannot be read or parsed.
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SuiteError(f"{path}: {exc}") from exc


def load_case(path: Path) -> Case:
    """Read one case file; its target is the name of its directory.

    Raises:
        SuiteError: the file is not a JSON object.
    """
    data = read_json(path)
    if not isinstance(data, dict):
        raise SuiteError(f"{path}: a case file must hold a JSON object")
    case_id = data.get("id")
    return Case(
        id=case_id if isinstance(case_id, str) else path.stem,
        target=path.parent.name,
        path=path,
        data=data,
    )


def load_expected_failures(path: Path) -> dict[str, str]:
    """Read an expected-failures file: ``{"<case id>": "<reason>"}``.

    Raises:
        SuiteError: the file is not a JSON object mapping ids to non-empty reasons.
    """
    data = read_json(path)
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in data.items()
    ):
        raise SuiteError(f"{path}: expected an object mapping case ids to non-empty reasons")
    return dict(data)
