"""Whether a value is a real credential: the heuristics masking and admission share.

A value after a secret-ish key, or inside a header, counts only when it is not a
placeholder or a reference to a secret variable and looks random enough (the rules
are listed in :mod:`ragit.security.masking`). :data:`MASK` is what every
replacement ends with.
"""

from __future__ import annotations

from ragit.text.patterns import lazy

MASK = "***"


_PLACEHOLDER_WORDS = frozenset(
    {
        "changeme",
        "change-me",
        "change_me",
        "example",
        "placeholder",
        "redacted",
        "dummy",
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "secret",
        "password",
        "pass",
        "token",
        "required",
        "optional",
    }
)
_PLACEHOLDER_PREFIXES = ("<", "$", "%", "{{", "/", "./", "~/", "your-", "your_", "your ")
# Punctuation that makes a password-ish value look random; "_", "-" and "." are
# left out because they join words in identifiers and prose (not_set, see-vault).
_SYMBOLS = frozenset("!@#$%^&*()=+[]{};:,<>/?|~`'\"\\")
_REFERENCE = lazy(r"[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)*")
_REFERENCE_WORDS = ("password", "passwd", "pwd", "secret", "token", "key", "credential")


_CALL = lazy(r"[A-Za-z_][A-Za-z0-9_.]*\([^()]*\)(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\([^()]*\))?)*")
_BRACKETS = {"{": "}", "[": "]", "(": ")"}


def _is_reference(value: str) -> bool:
    """A digit-free identifier naming a secret (settings.DB_PASSWORD, OPENAI_API_KEY)."""
    lowered = value.lower()
    return _REFERENCE.fullmatch(value) is not None and any(
        word in lowered for word in _REFERENCE_WORDS
    )


def _is_code(value: str) -> bool:
    """A call (``password.toUpperCase()``, ``getenv("TOKEN")``) or a bracketed expression
    of a reference or placeholder (JSX ``{process.env.API_PASSWORD}``, ``[redacted]``)."""
    if _CALL.fullmatch(value) is not None:
        return True
    if len(value) > 2 and _BRACKETS.get(value[0]) == value[-1]:
        inner = value[1:-1].strip()
        return bool(inner) and (is_placeholder(inner) or _REFERENCE.fullmatch(inner) is not None)
    return False


def is_placeholder(value: str) -> bool:
    lowered = value.lower()
    return (
        MASK in value
        or "..." in value
        or "\u2026" in value
        or "://" in value
        or lowered.startswith(_PLACEHOLDER_PREFIXES)
        or lowered in _PLACEHOLDER_WORDS
        or len(set(lowered)) == 1
        or _is_reference(value)
        or _is_code(value)
    )


def looks_like_secret_value(value: str, *, password: bool = False) -> bool:
    """Whether ``value`` after a secret-ish key is plausibly a real credential.

    The rules are those of the :mod:`ragit.security.masking` docstring: generic values need 8+
    characters and a letter and a digit (or 20+ characters of mixed case);
    password values need 6+ characters and a digit, a symbol (not ``_-.``) or an
    inner capital. Placeholders and references to secret variables never count.
    """
    if is_placeholder(value):
        return False
    if password:
        if len(value) < 6:
            return False
        return (
            any(c.isdigit() for c in value)
            or any(c in _SYMBOLS for c in value)
            or any(c.isupper() for c in value[1:])
        )
    if len(value) < 8:
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if has_digit and has_alpha:
        return True
    return len(value) >= 20 and any(c.isupper() for c in value) and any(c.islower() for c in value)


def visible_prefix(value: str, limit: int = 4) -> str:
    """The visible prefix of a masked value: ≤ ``limit`` and ≤ a quarter of it."""
    return value[: min(limit, len(value) // 4)]
