"""The config sections' two validation paths agree: the fast one (exact types) and pydantic's."""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragit._sections import NO_FAST_PATH
from ragit.config import SECTIONS, RagitConfig, validate_config
from ragit.contract.errors import ConfigInvalid

_KEYS = [(section, name) for section, model in SECTIONS.items() for name in model.model_fields]


# What a TOML document can hold for a key, plus the near misses: numeric strings, words of
# every Literal, floats with and without a fraction, bools, lists of mixed items.
def _words() -> list[str]:
    import typing

    out: set[str] = {"markdown", "table", "true", "false", "yes", "1", "0", "5", "5.0", " 7 "}
    for model in SECTIONS.values():
        for info in model.model_fields.values():
            for arg in typing.get_args(info.annotation):
                out.update(str(a) for a in typing.get_args(arg))
                if isinstance(arg, str):
                    out.add(arg)
    return sorted(out)


_SCALARS = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.sampled_from([0, 1, 5, 8, 100, 200, 201, 1024, 4096, 600_000, 600_001]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 0.3, 1.0, 5.0, 5.5, 600.0]),
    st.sampled_from(_words()),
    st.text(max_size=12),
)
_VALUES = st.one_of(
    _SCALARS,
    st.lists(_SCALARS, max_size=4),
    st.dictionaries(st.text(max_size=3), _SCALARS, max_size=2),
)


def _outcome(section: str, name: str, value: Any, *, fast: bool) -> Any:
    model = SECTIONS[section]
    data = model._prepared({name: value})
    if fast:
        taken = model._fast_only(data)
        return None if taken is NO_FAST_PATH else ("ok", taken.model_dump())
    try:
        checked = model._pydantic_model().model_validate(data)
    except Exception as exc:  # pydantic.ValidationError
        return ("error", type(exc).__name__)
    return ("ok", model._from_checked(checked).model_dump())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize(("section", "name"), _KEYS, ids=[f"{s}.{n}" for s, n in _KEYS])
@settings(max_examples=60, deadline=None)
@given(value=_VALUES)
def test_a_value_the_fast_path_takes_is_what_pydantic_makes_of_it(
    section: str, name: str, value: Any
) -> None:
    """Implementation choice: a key's value of the exact declared type is taken without
    pydantic, and only when pydantic's lax mode would accept it unchanged."""
    fast = _outcome(section, name, value, fast=True)
    if fast is not None:
        assert _same(fast, _outcome(section, name, value, fast=False))


def test_a_wrong_value_gets_pydantics_message_and_the_default_as_its_fix() -> None:
    """Contract-mandated (§3): a known key with a wrong value is CONFIG_INVALID naming the
    key, with `config set` of its default as the recovery."""
    with pytest.raises(ConfigInvalid) as caught:
        validate_config({"retrieval": {"top_k": 0}}, ".ragit/config.toml")
    payload = caught.value.payload()
    assert payload["details"]["key"] == "retrieval.top_k"
    assert "greater than or equal to 1" in payload["details"]["reason"]
    assert payload["recovery"]["command"] == "ragit config set retrieval.top_k 5"


def test_lax_values_are_converted_as_pydantic_converts_them() -> None:
    """Implementation choice: a numeric string, an integral float and an alias are read
    as pydantic's lax mode reads them."""
    cfg = RagitConfig.model_validate(
        {"retrieval": {"top_k": "7", "alpha": 1}, "output": {"format": "table"}}
    )
    assert cfg.retrieval.top_k == 7 and cfg.retrieval.alpha == 1.0
    assert isinstance(cfg.retrieval.alpha, float) and cfg.output.format == "text"


def test_defaults_are_never_shared_between_configs() -> None:
    """Implementation choice: each config holds its own lists (a caller may change them)."""
    one, two = RagitConfig(), RagitConfig()
    one.ingest.include.append("handbook/**")
    assert two.ingest.include == ["README.md", "docs/**"]


def test_an_assignment_is_validated_like_a_loaded_value() -> None:
    """Implementation choice: setting a key checks it as loading would."""
    cfg = RagitConfig()
    cfg.retrieval.top_k = "9"  # type: ignore[assignment]
    assert cfg.retrieval.top_k == 9
    with pytest.raises(Exception, match="less than or equal to 200"):
        cfg.retrieval.top_k = 500


def test_loading_a_config_imports_no_pydantic(tmp_path: Any) -> None:
    """Implementation choice: a valid config file is read without importing pydantic."""
    (tmp_path / ".ragit").mkdir()
    (tmp_path / ".ragit" / "config.toml").write_text(
        '[retrieval]\ntop_k = 7\nalpha = 0.5\n[ingest]\ninclude = ["docs/**"]\n'
        '[output]\nformat = "table"\n',
        encoding="utf-8",
    )
    code = (
        "import sys; from pathlib import Path; from ragit.config import load_config; "
        "from ragit.workspace import Workspace; "
        f"c = load_config(Workspace(Path({str(tmp_path)!r}))); "
        "print(c.retrieval.top_k, c.output.format, 'pydantic' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["7", "text", "False"]
