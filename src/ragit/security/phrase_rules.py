"""Secrets written without ``:`` or ``=``: command lines, prose, Korean.

* a secret-naming key and its value separated by spaces — a command-line flag
  (``--password X``, ``--api-key X``), a compound name (``aws configure set
  aws_secret_access_key X``, ``setenv API_TOKEN X``), a password in prose
  (``the password is X``) or in a ``.netrc`` line (``login u password X``);
* ``curl -u user:X`` / ``--user user:X``, and the short password flags of
  ``mysql -pX``, ``docker login -p X`` and ``sshpass -p X``;
* Korean: ``비밀번호는 X 입니다``, ``패스워드: X``, ``토큰은 X`` (a particle or a
  separator, then a value of no Hangul, then the end of the sentence).

Each rule starts from literal hits (``str.find``), as the key rules do. The rules
are listed in docs/masking.md.
"""

from __future__ import annotations

from functools import cache
from itertools import pairwise

from ragit.security.key_names import IDENT, key_group, label_of, value_span
from ragit.security.key_rules import Replacement, replacement
from ragit.security.secret_values import MASK, looks_like_secret_value
from ragit.text.patterns import lazy

# ---------------------------------------------------------------- spaced keys

_TAIL_WORDS = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "pass",
        "pwd",
        "token",
        "secret",
        "key",
        "credential",
        "credentials",
    }
)
# What ``str.find`` looks for: every tail word starts with one of these.
_NEEDLES = ("pass", "pwd", "token", "secret", "key", "credential")
_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "pass", "pwd"})
_SPACES = lazy(r"[ \t]+(?:(?P<copula>is|was)[ \t]+)?")
_WORD_CHAR = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


@cache
def _variants(word: str) -> tuple[str, ...]:
    return tuple({word, word.capitalize(), word.upper()})


def literal_hits(text: str, word: str) -> list[int]:
    """Start offsets of ``word`` in lower, Capitalized and UPPER case, sorted."""
    hits: list[int] = []
    for variant in _variants(word):
        index = text.find(variant)
        while index != -1:
            hits.append(index)
            index = text.find(variant, index + 1)
    hits.sort()
    return hits


def _compound(name: str) -> bool:
    """``api_key``, ``client-secret``, ``apiKey``, ``PGPASSWORD``: not a word of prose."""
    if any(c in "_.-" for c in name):
        return True
    if name.isupper():
        return len(name) > 8
    return any(a.islower() and b.isupper() for a, b in pairwise(name))


def _joined(text: str, hit: int) -> bool:
    """The word at ``hit`` ends a compound name or a flag (``api_key``, ``--token``,
    ``accessToken``, ``GITLAB_TOKEN``), not a word of prose."""
    if hit == 0:
        return False
    before = text[hit - 1]
    return before in "_-." or (before.isalnum() and text[hit].isupper())


def _netrc_entry(text: str, hit: int) -> bool:
    """``password`` inside a ``.netrc`` entry: ``machine``/``login`` on its line or the
    two lines before it."""
    begin = hit
    for _ in range(3):
        begin = text.rfind("\n", 0, begin)
        if begin == -1:
            break
    window = text[begin + 1 : hit]
    return "machine " in window or "login " in window


def _spaced_replacement(text: str, end: int) -> Replacement | None:
    gap = _SPACES.match(text, end)
    if gap is None:
        return None
    start = end
    while start > 0 and end - start < 60 and text[start - 1] in IDENT:
        start -= 1
    key = text[start:end]
    name = key.lstrip("-")
    flag = len(key) - len(name) in (1, 2) and (start == 0 or text[start - 1] in " \t\"'`(")
    name_start = end - len(name)
    group = key_group(text, name_start, end)
    if group is None:
        return None
    compound = False
    if gap.group("copula"):
        if group != "pw":
            return None
        label = "password"
    elif flag:
        label = "cli_credential"
    elif _compound(name):
        label, compound = label_of(group), True
    elif name.lower() == "password" and _netrc_entry(text, start):
        label = "password"
    else:
        return None
    if gap.end() >= len(text) or text[gap.end()] in "-*&`":
        return None  # another flag, a pointer type, a reference, inline code
    span = value_span(text, gap.end(), password=group == "pw")
    if span is None:
        return None
    after = span[1] + (1 if span[2] else 0)
    if after < len(text) and text[after] in ":=":
        return None  # the next word is a key, not this one's value
    value = text[span[0] : span[1]]
    if not looks_like_secret_value(value, password=group == "pw"):
        return None
    if compound and not any(c.isdigit() for c in value):
        return None  # "Token TokenProjection": a declaration's type, not a value
    return replacement(value, span[0], group, label)


def spaced_replacements(text: str) -> list[Replacement]:
    found: list[Replacement] = []
    lowered = text.lower()
    for needle in _NEEDLES:
        if needle not in lowered:
            continue
        prose_word = needle not in ("pass", "pwd")
        for hit in literal_hits(text, needle):
            if prose_word and not _joined(text, hit):
                continue  # "the key insight": only a compound name or a flag counts
            end = hit + len(needle)
            while end < len(text) and text[end] in _WORD_CHAR:
                end += 1
            word = text[hit:end].lower()
            if word not in _TAIL_WORDS or end >= len(text) or text[end] not in " \t":
                continue
            edit = _spaced_replacement(text, end)
            if edit is not None:
                found.append(edit)
    return found


# ---------------------------------------------------------------- curl and short flags

_CURL_USER = lazy(
    r"(?:--user|-u)(?:[ \t]+|=)?(?P<q>[\"']?)[^\s:\"'@/]{0,128}:(?P<v>[^\s\"']{1,256})(?P=q)"
)
_SHORT_FLAGS = (
    # (a literal the line must hold, the flag and its value after it)
    ("mysql", lazy(r"\b(?:mysql|mysqldump|mysqladmin)\b[^\n]*?[ \t]-p(?P<v>[^\s]+)")),
    ("mariadb", lazy(r"\bmariadb(?:-dump)?\b[^\n]*?[ \t]-p(?P<v>[^\s]+)")),
    ("login", lazy(r"\b(?:docker|podman|nerdctl) login\b[^\n]*?[ \t]-p[ \t]+(?P<v>\S+)")),
    ("sshpass", lazy(r"\bsshpass\b[^\n]*?[ \t]-p[ \t]*(?P<v>\S+)")),
)


def _strip_quotes(value: str, start: int) -> tuple[str, int]:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1], start + 1
    return value, start


def _cli_password(value: str) -> bool:
    return not value.isdigit() and looks_like_secret_value(value, password=True)


def cli_replacements(text: str) -> list[Replacement]:
    found: list[Replacement] = []
    index = text.find("-u")
    while index != -1:
        begin = index - 1 if index > 0 and text.startswith("--user", index - 1) else index
        match = _CURL_USER.match(text, begin)
        index = text.find("-u", index + 2)
        if match is None or (begin > 0 and text[begin - 1] not in " \t\"'`"):
            continue
        if _cli_password(match.group("v")):
            found.append(replacement(match.group("v"), match.start("v"), "pw", "cli_credential"))
    for literal, pattern in _SHORT_FLAGS:
        if literal not in text:
            continue
        for match in pattern.finditer(text):
            value, start = _strip_quotes(match.group("v"), match.start("v"))
            if _cli_password(value):
                found.append(replacement(value, start, "pw", "cli_credential"))
    return found


# ---------------------------------------------------------------- Korean

_KO_KEYS = (
    ("비밀번호", "pw"),
    ("패스워드", "pw"),
    ("비번", "pw"),
    ("암호", "pw"),
    ("토큰", "gen"),
    ("시크릿 키", "gen"),
    ("시크릿", "gen"),
    ("비밀 키", "gen"),
    ("비밀키", "gen"),
    ("API 키", "gen"),
    ("액세스 키", "gen"),
    ("인증 키", "gen"),
)
_HANGUL = "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
_HANGUL_ANY = lazy(f"[{_HANGUL}]")
# A separator is enough; after a particle (or a bare space) the sentence must end
# right after the value, so "비밀번호는 SHA-256으로 해시" is prose.
_KO_SEPARATED = lazy(r"[ \t]*[:=：][ \t]*")
_KO_PARTICLE = lazy(r"(?:[는은이가를을][ \t]*|[ \t]+)")
_KO_VALUE = lazy(
    rf"(?P<q>[\"'`])(?P<qv>[^\"'`\n]{{1,256}})(?P=q)|(?P<v>[^\s\"'`{_HANGUL}]{{1,256}})"
)
_KO_END = lazy(r"[ \t]*(?:$|\n|[.!,)。]|입니다|이다|이에요|예요|이야|야|였|이었|임|이고|이며)")


def _ko_replacement(text: str, end: int, group: str) -> Replacement | None:
    password = group == "pw"
    sep = _KO_SEPARATED.match(text, end)
    if sep is not None:
        span = value_span(text, sep.end(), password=password)
        if span is None:
            return None
        start, value = span[0], text[span[0] : span[1]]
    else:
        particle = _KO_PARTICLE.match(text, end)
        if particle is None:
            return None
        value_match = _KO_VALUE.match(text, particle.end())
        if value_match is None or _KO_END.match(text, value_match.end()) is None:
            return None
        quoted = value_match.group("q") is not None
        name = "qv" if quoted else "v"
        start, value = value_match.start(name), value_match.group(name)
        if not password and not quoted:
            value = value.rstrip(".,:)")
    if not value or not looks_like_secret_value(value, password=password):
        return None
    return replacement(value, start, group, label_of(group))


def korean_replacements(text: str) -> list[Replacement]:
    found: list[Replacement] = []
    if text.isascii() or _HANGUL_ANY.search(text) is None:
        return found
    for word, group in _KO_KEYS:
        index = text.find(word)
        while index != -1:
            edit = _ko_replacement(text, index + len(word), group)
            if edit is not None and MASK not in text[edit[0] : edit[1]]:
                found.append(edit)
            index = text.find(word, index + len(word))
    return found
