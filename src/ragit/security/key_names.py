"""Secret-naming keys and the values assigned to them: what the key rules share.

A key *names a secret* when it is an identifier that ends with a trigger word
(``api_key``, ``PGPASSWORD``, ``clientSecret``, ``AccountKey``); :func:`key_group`
says which kind (``pw`` for passwords, ``aws`` for AWS secret keys, ``gen`` for
the rest). :func:`value_span` finds the value written after it: quoted (with
escapes and the other quote inside), backtick-quoted, or a bare run whose end
depends on the kind (a password may hold ``;`` or ``,``). The rules are listed in
docs/masking.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragit.text.patterns import lazy

IDENT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _word(parts: Sequence[str], sep: str = "[_ -]?") -> str:
    """Regex for a multi-part key word in lower, Capitalized and UPPER case."""
    alts = [f"(?:{p}|{p.capitalize()}|{p.upper()})" for p in parts]
    return sep.join(alts)


_GENERIC_TRIGGERS = [
    _word(["api", "key"]),
    _word(["app", "key"]),
    _word(["account", "key"]),
    _word(["client", "secret"]),
    _word(["private", "key"]),
    _word(["access", "key"]),
    _word(["secret", "key"]),
    _word(["signing", "key"]),
    _word(["encryption", "key"]),
    _word(["master", "key"]),
    _word(["auth", "key"]),
    _word(["auth", "token"]),
    _word(["token"]),
    _word(["secret"]),
    _word(["credentials"]),
    _word(["credential"]),
]
_AWS_TRIGGER = _word(["secret", "access", "key"])
_PASSWORD_TRIGGERS = [
    _word(["passphrase"]),
    _word(["password"]),
    _word(["passwd"]),
    _word(["pwd"]),
    _word(["pass"]),
]
# Searched inside the identifier only, anchored at its end (``\Z`` honours endpos).
_TRIGGER_AT_END = lazy(
    "(?:(?P<aws>"
    + _AWS_TRIGGER
    + ")|(?P<pw>"
    + "|".join(_PASSWORD_TRIGGERS)
    + ")|(?P<gen>"
    + "|".join(_GENERIC_TRIGGERS)
    + r"))\Z"
)
# Every trigger ends with one of these words.
_TRIGGER_TAILS = (
    "key",
    "token",
    "secret",
    "credential",
    "credentials",
    "password",
    "passwd",
    "passphrase",
    "pass",
    "pwd",
)
# Every trigger (and ``signature``) ends with one of these.
TRIGGER_LAST = frozenset("yYtTnNdDeElLsS")


def _starts_subword(text: str, start: int) -> bool:
    """A trigger at ``start`` begins an identifier, follows ``_ - .``, or a camel hump."""
    if start == 0:
        return True
    before = text[start - 1]
    if before not in IDENT or before in "_.-":
        return True
    return (before.islower() or before.isdigit()) and text[start].isupper()


def key_group(text: str, start: int, end: int) -> str | None:
    """``pw``, ``aws`` or ``gen`` when ``text[start:end]`` names a secret, else None.

    The trigger must start a sub-word of the name, or sit anywhere in an
    all-upper-case name (``PGPASSWORD``); the leftmost trigger may fail where a
    shorter one passes ("OAuth token": not "Auth token", but "token"). ``pass``
    counts only as the last part of a compound name (``DB_PASS``, ``smtpPass``):
    alone, or glued to a word (``BYPASS``), it is prose (``PASS: test name``).
    """
    if not text[max(start, end - 11) : end].lower().endswith(_TRIGGER_TAILS):
        return None  # the common case, decided without the regex
    trigger = _TRIGGER_AT_END.search(text, start, end)
    upper_key: bool | None = None
    while trigger is not None:
        at = trigger.start()
        if trigger.group(0).lower() == "pass":
            before = text[at - 1] if at > start else ""
            if before in ("_", "-", ".") or (before.islower() and text[at].isupper()):
                break
        elif _starts_subword(text, at):
            break
        else:
            if upper_key is None:
                name = text[start:end]
                upper_key = not any(c.islower() for c in name)
            if upper_key:
                break
        trigger = _TRIGGER_AT_END.search(text, at + 1, end)
    if trigger is None:
        return None
    return "aws" if trigger.group("aws") else "pw" if trigger.group("pw") else "gen"


def label_of(group: str) -> str:
    return "password" if group == "pw" else "aws_secret_key" if group == "aws" else "kv_secret"


# ---------------------------------------------------------------- values

_QUOTED = {
    '"': lazy(r'"((?:\\.|[^"\\\n]){1,512})"'),
    "'": lazy(r"'((?:\\.|[^'\\\n]){1,512})'"),
    "`": lazy(r"`([^`\n]{1,512})`"),
}
_BARE = lazy(r"[^\s\"'`,;<>()\[\]{}]{1,512}")
_BARE_PASSWORD = lazy(r"[^\s\"'`<>]{1,512}")
# What follows a ``;``, ``,`` or ``&`` that ends a password: another ``key=``.
_NEXT_KEY = lazy(r"[A-Za-z_][A-Za-z0-9_. -]{0,40}=")
_PAIRS = {")": "(", "]": "[", "}": "{"}


def _password_end(text: str, start: int, end: int) -> int:
    """Where a bare password value that runs to ``end`` really ends.

    ``;``, ``,`` or ``&`` ends it when whitespace, the end of the text or another
    ``key=`` follows (``Password=x;Database=y``), and is part of it otherwise
    (``db_password=A;B``); a closing bracket the value never opened is prose.
    """
    for index in range(start, end):
        if text[index] in ";,&":
            after = index + 1
            if after >= end or _NEXT_KEY.match(text, after) is not None:
                end = index
                break
    while end > start and text[end - 1] in _PAIRS:
        closer = text[end - 1]
        body = text[start : end - 1]
        if body.count(_PAIRS[closer]) > body.count(closer):
            break
        end -= 1
    return end


def value_span(text: str, pos: int, *, password: bool) -> tuple[int, int, bool] | None:
    """``(start, end, quoted)`` of the value written at ``pos``, if any.

    Sentence punctuation after a bare value is prose, not secret (``token=abc1.``
    keeps the ``.``); a password keeps it masked (leaking a password's last
    character is worse).
    """
    if pos >= len(text):
        return None
    quote = _QUOTED.get(text[pos])
    if quote is not None:
        match = quote.match(text, pos)
        if match is None:
            return None
        return match.start(1), match.end(1), True
    if password:
        match = _BARE_PASSWORD.match(text, pos)
        if match is None:
            return None
        end = _password_end(text, pos, match.end())
        return (pos, end, False) if end > pos else None
    match = _BARE.match(text, pos)
    if match is None:
        return None
    end = match.end()
    while end > pos and text[end - 1] in ".:":
        end -= 1
    return (pos, end, False) if end > pos else None
