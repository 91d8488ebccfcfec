"""Secret masking for everything RAGit writes or prints (UR §11.1–11.2, contract §7).

:func:`mask_text` replaces secrets in a string; :func:`mask_json` does the same for
every string inside a JSON value and reports the masked field paths;
:class:`RedactionSummary` is the ``redactionSummary`` object of query, context pack
and memory outputs. The rules below are implemented in :mod:`ragit.security.mask_rules`,
the value heuristics they share in :mod:`ragit.security.secret_values`.

Rules
=====

A replacement keeps a short recognizable prefix and appends ``***``. The prefix is
always shorter than the shortest value the rule matches, and every rule refuses a
value that already contains ``***``, so masking is idempotent: masking masked text
changes nothing and counts 0.

Token formats (matched anywhere, with no letter/digit right before the prefix; the
body must contain a digit unless noted; first 6 characters kept):

==================  ==========================================================
label               format
==================  ==========================================================
``openai_key``      ``sk-`` + 20+ of ``[A-Za-z0-9_-]`` (covers ``sk-proj-``,
                    ``sk-svcacct-``, ``sk-ant-``), with a letter and a digit
``stripe_key``      ``sk_live_|sk_test_|rk_live_|rk_test_|pk_live_`` + 16+
``github_pat``      ``ghp_`` + 20+ alnum; ``github_pat_`` + 20+ ``[A-Za-z0-9_]``
``github_token``    ``gho_|ghu_|ghs_|ghr_`` + 20+ alnum
``gitlab_pat``      ``glpat-`` + 20+ ``[A-Za-z0-9_-]``
``slack_token``     ``xoxb-|xoxp-|xoxa-|xoxr-|xoxs-`` + 10+ ``[A-Za-z0-9-]``
``slack_webhook``   ``https://hooks.slack.com/services/`` + path (path masked)
``aws_access_key``  ``AKIA|ASIA`` + exactly 16 ``[0-9A-Z]`` (no digit rule)
``google_api_key``  ``AIza`` + 35 ``[0-9A-Za-z_-]`` (no digit rule)
``npm_token``       ``npm_`` + 36 alnum
``pypi_token``      ``pypi-AgE`` + 50+ ``[A-Za-z0-9_-]`` (no digit rule)
``huggingface``     ``hf_`` + 30+ alnum with upper and lower case (no digit rule)
``url_credentials`` the password of ``scheme://user:password@host`` (kept:
                    ``user:***``; no digit rule; placeholders such as ``pass``
                    or ``<password>`` are left alone)
``jwt``             ``eyJ…`` ``.`` ``eyJ…`` ``.`` signature (base64url parts,
                    header and payload 10+ chars each)
``private_key``     a PEM ``-----BEGIN … PRIVATE KEY-----`` line followed by
                    40+ base64 characters (``Proc-Type``/``DEK-Info`` headers
                    allowed) up to the matching END line or the end of the
                    base64 run: the whole block becomes
                    ``-----BEGIN … PRIVATE KEY-----***``. A lone header line or a
                    ``...`` placeholder body is not a key and is left alone.
==================  ==========================================================

Key-value forms (``key: value``, ``key=value``, ``"key": "value"``, ``KEY=value``):

* the key is an identifier (``[A-Za-z0-9_.-]``) that **ends** with a trigger word,
  and the trigger starts the identifier, follows ``_ - .``, or starts a camelCase
  hump: ``api_key``, ``apiKey``, ``OPENAI_API_KEY``, ``x-api-key``, ``access_token``,
  ``accessToken``, ``client_secret``, ``secret``, ``secret_key``, ``private_key``,
  ``access_key``, ``signing_key``, ``encryption_key``, ``master_key``, ``auth_key``,
  ``auth_token``, ``credential(s)``, multi-word keys with one space ("API key"),
  ``aws_secret_access_key`` / ``SecretAccessKey`` (label ``aws_secret_key``,
  otherwise ``kv_secret``), and ``password``, ``passwd``, ``pwd``, ``passphrase``,
  ``비밀번호`` (label ``password``). ``tokenizer``, ``token_count``,
  ``max_tokens``, ``secretName`` or ``detoken`` are not keys. Prose such as "the
  token budget", "secret masking", "password policy" has no ``:``/``=`` after the
  trigger and is never touched;
* the separator is ``:``, ``=``, ``:=`` or ``=>`` (a closing quote of a JSON key
  and spaces around it allowed); the value is the quoted string, or the unquoted
  run up to whitespace or one of ``"'`,;<>()[]{}`` (a trailing ``.`` or ``:`` is
  sentence punctuation and kept visible, except after a password key);
* a value is a *placeholder* and left alone when it contains ``***``, ``...`` or
  ``…``, starts with ``<``, ``$``, ``%`` or ``{{``, ``/``, ``./``, ``~/``, contains
  ``://``, is one repeated character, is a well-known filler word (``changeme``,
  ``example``, ``redacted``, ``none``, ``null``, ``true``, ``false``, ``your-…``),
  or is a digit-free (dotted) identifier naming a secret — a reference, not a
  value: ``settings.DB_PASSWORD``, ``process.env.OPENAI_API_KEY``;
* a generic (``kv_secret`` / ``aws_secret_key``) value is masked when it has 8+
  characters and either contains both a letter and a digit, or has 20+ characters
  with both upper- and lower-case letters. So ``token: 1200``,
  ``token: whitespace-separated`` and ``secret: db-credentials`` stay intact;
* a password value is masked when it has 6+ characters and contains a digit, a
  symbol other than ``_ - .``, or an upper-case letter after its first character
  (``hunter22``, ``P@ssword``, ``correctHorse``); ``password: required`` and
  ``password: not_set`` stay intact. The limitation is deliberate: lowercase words
  after ``password:`` are indistinguishable from prose;
* the replacement keeps the key, the separator and the quotes, then at most 4 and
  at most a quarter of the value's characters (``token: abcd***``); password values
  keep nothing (``password=***``).

Headers: ``Authorization: Bearer|Basic|Token|Bot <credential>`` and a bare
``Bearer <credential>`` (label ``bearer_token``; the credential needs 8+ characters
with a letter and a digit, or 20+ with mixed case — a JWT credential is already
masked by the ``jwt`` rule), and ``Cookie:``/``Set-Cookie:`` header lines whose
value holds a ``name=value`` pair with such a value (label ``cookie``; the whole
header value after its first 4 characters is masked).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import Field

from ragit.contract.models import WireModel
from ragit.security.mask_rules import apply_rules

__all__ = [
    "MaskResult",
    "RedactionSummary",
    "mask_json",
    "mask_text",
]


@dataclass(frozen=True)
class MaskResult:
    """The outcome of masking one string.

    ``labels`` lists the rule label of every replacement (rules run in the order
    PEM blocks, token formats, headers, key-value forms; text order within a
    rule), so ``len(labels) == masked_count``.
    """

    text: str
    masked_count: int
    labels: tuple[str, ...]


def mask_text(text: str) -> MaskResult:
    """Mask every secret in ``text`` (rules in the module docstring).

    Pure and idempotent: ``mask_text(mask_text(t).text)`` returns the same text
    with ``masked_count == 0``.
    """
    labels: list[str] = []
    masked = apply_rules(text, labels)
    return MaskResult(text=masked, masked_count=len(labels), labels=tuple(labels))


def _child_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def mask_json(value: object, path: str = "") -> tuple[object, int, list[str]]:
    """Mask every string inside a JSON value, recursively.

    Returns ``(masked value, masked count, masked field paths)``. Paths use dots
    for object keys and ``[i]`` for array items (``goal``, ``turns[0].content``);
    a string at the root is reported as ``path`` or ``"$"`` when ``path`` is empty.
    Object keys are not masked (they are schema, not data); non-string scalars are
    returned unchanged; tuples are treated as arrays. The input is not mutated.
    """
    sources: list[str] = []
    masked, count = _mask_json(value, path, sources)
    return masked, count, sources


def _mask_json(value: object, path: str, sources: list[str]) -> tuple[object, int]:
    if isinstance(value, str):
        result = mask_text(value)
        if result.masked_count:
            sources.append(path or "$")
        return result.text, result.masked_count
    if isinstance(value, Mapping):
        out: dict[object, object] = {}
        total = 0
        for key, item in value.items():
            masked, count = _mask_json(item, _child_path(path, str(key)), sources)
            out[key] = masked
            total += count
        return out, total
    if isinstance(value, (list, tuple)):
        items: list[object] = []
        total = 0
        for index, item in enumerate(value):
            masked, count = _mask_json(item, f"{path}[{index}]", sources)
            items.append(masked)
            total += count
        return items, total
    return value, 0


class RedactionSummary(WireModel):
    """``redactionSummary {applied, maskedCount, sources}`` (UR §11.2).

    Immutable by convention: :meth:`add` and :meth:`merge` return new summaries.
    ``sources`` keeps first-seen order without duplicates.
    """

    applied: bool = False
    masked_count: int = 0
    sources: list[str] = Field(default_factory=list)

    def add(self, source: str, masked_count: int) -> RedactionSummary:
        """This summary plus ``masked_count`` replacements in field ``source``."""
        if masked_count <= 0:
            return self
        return self.merge_sources([source], masked_count)

    def merge_sources(self, sources: Iterable[str], masked_count: int) -> RedactionSummary:
        """This summary plus the result of a :func:`mask_json` call."""
        if masked_count <= 0:
            return self
        merged = list(self.sources)
        for source in sources:
            if source not in merged:
                merged.append(source)
        return RedactionSummary(
            applied=True, masked_count=self.masked_count + masked_count, sources=merged
        )

    def merge(self, other: RedactionSummary) -> RedactionSummary:
        """The union of two summaries (counts add, sources de-duplicated)."""
        return self.merge_sources(other.sources, other.masked_count)
