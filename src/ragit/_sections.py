"""Plain typed records validated by pydantic's lax-mode rules without importing pydantic.

A :class:`Section` declares its keys as annotated class attributes (defaults as the class
values, bounds in ``_rules``). A value of exactly the declared type, within its bounds, is
taken as it is; anything else is judged by a pydantic model generated from the same
declarations on first need, so what is accepted, how it is converted and the error for what
is not are pydantic's. Reading a valid file therefore costs no pydantic import and no model
build — a third of a cold read command's time (docs/benchmarks.md, "Where the time goes").
The configuration sections (:mod:`ragit.config`) are the one user.
"""

from __future__ import annotations

import copy
import sys
import types
import typing
from typing import Any, ClassVar, Literal, TypeVar

_S = TypeVar("_S", bound="Section")
NO_FAST_PATH = object()


class Rule:
    """One key's bounds (pydantic ``Field`` arguments of the same names)."""

    __slots__ = ("ge", "le", "max_length", "min_length")

    def __init__(
        self,
        *,
        ge: float | None = None,
        le: float | None = None,
        min_length: int | None = None,
        max_length: int | None = None,
    ) -> None:
        self.ge, self.le = ge, le
        self.min_length, self.max_length = min_length, max_length

    def admits(self, value: Any) -> bool:
        if self.ge is not None and not value >= self.ge:
            return False
        if self.le is not None and not value <= self.le:
            return False
        if self.min_length is not None and len(value) < self.min_length:
            return False
        return self.max_length is None or len(value) <= self.max_length


class KeyInfo:
    """What ``model_fields`` holds for one key: its type, default and rule."""

    __slots__ = ("annotation", "default", "rule")

    def __init__(self, annotation: Any, default: Any, rule: Rule) -> None:
        self.annotation, self.default, self.rule = annotation, default, rule

    def get_default(self, *, call_default_factory: bool = True) -> Any:
        return copy.deepcopy(self.default)

    def section(self) -> type[Section] | None:
        """The section class this key holds (the keys of ``RagitConfig``), else None."""
        hint = self.annotation
        return hint if isinstance(hint, type) and issubclass(hint, Section) else None

    def fast(self, value: Any) -> Any:
        """``value`` as the key holds it when its type is exactly the declared one and it
        keeps the rule; else :data:`NO_FAST_PATH` (pydantic decides)."""
        return _fast(self.annotation, self.rule, value)


def _fast(annotation: Any, rule: Rule, value: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in typing.get_args(annotation):
            return None
        (inner,) = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _fast(inner, rule, value)
    kind = type(value)
    if origin is Literal:
        ok = kind is str and value in typing.get_args(annotation)
    elif origin is list:
        ok = kind is list and all(type(item) is str for item in value)
        value = list(value) if ok else value
    elif annotation is float and kind is int:
        value, ok = float(value), True
    else:
        ok = kind is annotation and annotation in (str, int, float, bool)
    return value if ok and rule.admits(value) else NO_FAST_PATH


class Section:
    """A config section: its keys are the class's annotated attributes (defaults as class
    values, bounds in ``_rules``); unknown keys are ignored, assignments are validated."""

    _rules: ClassVar[dict[str, Rule]] = {}
    model_fields: ClassVar[dict[str, KeyInfo]] = {}
    _pydantic: ClassVar[Any] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        hints: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            if klass in (Section, object):
                continue
            namespace = vars(sys.modules[klass.__module__])
            own = klass.__dict__.get("__annotations__", {})  # noqa: RUF063 - no inspect import
            for name, text in own.items():
                # Postponed annotations (PEP 563) are the class's own source text.
                hints[name] = (
                    eval(text, namespace, dict(vars(klass)))  # noqa: S307
                    if isinstance(text, str)
                    else text
                )
        cls.model_fields = {
            name: KeyInfo(hint, getattr(cls, name, None), cls._rules.get(name, Rule()))
            for name, hint in hints.items()
            if typing.get_origin(hint) is not ClassVar and not name.startswith("_")
        }
        cls._pydantic = None

    def __init__(self, **values: Any) -> None:
        for name, info in self.model_fields.items():
            object.__setattr__(self, name, info.get_default())
        for name, value in values.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        info = self.model_fields.get(name)
        if info is None:
            raise AttributeError(f"{type(self).__name__} has no key {name!r}")
        value = self._normalize(name, value)
        taken = info.fast(value)
        if taken is NO_FAST_PATH:
            checked = self._pydantic_model().model_validate({name: value})
            taken = self._from_checked(checked).__dict__[name]
        object.__setattr__(self, name, taken)

    @classmethod
    def _normalize(cls, name: str, value: Any) -> Any:
        """A value as the key reads it before validation (aliases); the identity here."""
        return value

    @classmethod
    def _prepared(cls, data: Any) -> Any:
        """``data`` with every key's :meth:`_normalize` applied, sections included."""
        if type(data) is not dict:
            return data
        out = dict(data)
        for name, info in cls.model_fields.items():
            if name in out:
                value = cls._normalize(name, out[name])
                section = info.section()
                out[name] = section._prepared(value) if section is not None else value
        return out

    @classmethod
    def _fast_only(cls, data: Any) -> Any:
        """The section of ``data`` when every key it sets takes the fast path, else
        :data:`NO_FAST_PATH`."""
        if type(data) is not dict:
            return NO_FAST_PATH
        out = cls.__new__(cls)
        for name, info in cls.model_fields.items():
            if name not in data:
                object.__setattr__(out, name, info.get_default())
                continue
            section = info.section()
            taken = section._fast_only(data[name]) if section is not None else info.fast(data[name])
            if taken is NO_FAST_PATH:
                return NO_FAST_PATH
            object.__setattr__(out, name, taken)
        return out

    @classmethod
    def model_validate(cls: type[_S], data: Any) -> _S:
        """The section of the mapping ``data``.

        Raises:
            pydantic.ValidationError: a key RAGit honours holds a value it cannot take.
        """
        data = cls._prepared(data)
        taken = cls._fast_only(data)
        if taken is not NO_FAST_PATH:
            return taken  # type: ignore[no-any-return]
        return cls._from_checked(cls._pydantic_model().model_validate(data))

    @classmethod
    def _from_checked(cls: type[_S], checked: Any) -> _S:
        out = cls.__new__(cls)
        for name, info in cls.model_fields.items():
            value = getattr(checked, name)
            section = info.section()
            object.__setattr__(
                out, name, section._from_checked(value) if section is not None else value
            )
        return out

    @classmethod
    def _pydantic_model(cls) -> Any:
        """The pydantic model of this section, generated from its declarations once."""
        if cls._pydantic is None:
            from pydantic import ConfigDict, Field, create_model

            fields: dict[str, Any] = {}
            for name, info in cls.model_fields.items():
                section = info.section()
                if section is not None:
                    fields[name] = (section._pydantic_model(), Field(default_factory=section))
                    continue
                bounds = {
                    k: getattr(info.rule, k)
                    for k in Rule.__slots__
                    if getattr(info.rule, k) is not None
                }
                fields[name] = (info.annotation, Field(default_factory=info.get_default, **bounds))
            cls._pydantic = create_model(
                cls.__name__, __config__=ConfigDict(extra="ignore"), **fields
            )
        return cls._pydantic

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.model_dump().items())
        return f"{type(self).__name__}({inner})"

    def model_dump(self) -> dict[str, Any]:
        """Every key with its value (sections as nested dicts; lists copied)."""
        out: dict[str, Any] = {}
        for name in self.model_fields:
            value = getattr(self, name)
            out[name] = value.model_dump() if isinstance(value, Section) else copy.copy(value)
        return out

    def model_copy(self: _S, *, deep: bool = False) -> _S:
        return copy.deepcopy(self) if deep else copy.copy(self)
