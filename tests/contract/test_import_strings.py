"""Every module or attribute RAGit names as a string, to import later, exists.

Command handlers and models, provider factories and lazy exports are written as strings so
that ``ragit --help`` loads no engine; a typo in one surfaces only when that command or
provider first runs. These tests import each one now.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

import ragit
import ragit.embed.minilm as minilm
import ragit.security as security
from ragit.contract.registry import COMMANDS
from ragit.embed.profile import provider_spec, registered_providers

SRC = Path(ragit.__file__).parent
# "ragit.pkg.module:attr" anywhere in the source, and "-m", "ragit.pkg.module" of a subprocess.
ATTR_STRING = re.compile(r"""["'](ragit(?:\.\w+)+):(\w+)["']""")
MODULE_RUN = re.compile(r"""["']-m["'],\s*["'](ragit(?:\.\w+)+)["']""")


def _resolve(path: str) -> object:
    module_name, _, attr = path.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def _source_strings(pattern: re.Pattern[str]) -> list[str]:
    found: set[str] = set()
    for file in SRC.rglob("*.py"):
        for match in pattern.finditer(file.read_text(encoding="utf-8")):
            found.add(":".join(g for g in match.groups() if g))
    return sorted(found)


@pytest.mark.parametrize("spec", COMMANDS, ids=lambda spec: spec.path)
def test_every_command_handler_and_model_named_in_the_registry_imports(spec: object) -> None:
    """Implementation choice: a command's handler is a callable and its models are pydantic
    models, each found at the ``module:attr`` its spec names."""
    assert callable(_resolve(spec.handler))  # type: ignore[attr-defined]
    for model in (spec.input_model, spec.output_model):  # type: ignore[attr-defined]
        if model is not None:
            resolved = _resolve(model)
            assert isinstance(resolved, type) and issubclass(resolved, BaseModel), model


@pytest.mark.parametrize("name", registered_providers())
def test_every_registered_provider_factory_imports(name: str) -> None:
    """Implementation choice: a provider's lazy factory string names a callable."""
    factory = provider_spec(name).factory
    assert callable(_resolve(factory) if isinstance(factory, str) else factory)


def test_every_module_attribute_string_in_the_source_imports() -> None:
    """Implementation choice: any ``"ragit.module:attr"`` string in the source resolves, so
    one added outside the registries is checked too."""
    strings = _source_strings(ATTR_STRING)
    assert len(strings) > len(COMMANDS)  # the scan sees the registry's handlers
    unresolved = []
    for path in strings:
        try:
            _resolve(path)
        except (ImportError, AttributeError):
            unresolved.append(path)
    assert unresolved == []


def test_every_module_run_as_a_subprocess_exists() -> None:
    """Implementation choice: each ``python -m ragit.…`` a command starts is a module."""
    modules = _source_strings(MODULE_RUN)
    assert "ragit.store.compact" in modules
    assert [m for m in modules if importlib.util.find_spec(m) is None] == []


@pytest.mark.parametrize(
    ("package", "names"),
    [(security, sorted(security.__all__)), (minilm, ["MiniLMEncoder", "OrtInt8Encoder"])],
    ids=["ragit.security", "ragit.embed.minilm"],
)
def test_every_lazy_export_of_a_package_resolves(package: object, names: list[str]) -> None:
    """Implementation choice: names a package exports on first access (PEP 562) import."""
    for name in names:
        assert getattr(package, name) is not None, name
