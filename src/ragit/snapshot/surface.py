"""Which repository paths are knowledge documents (docs/config.md ``ingest.*``, contract §4, §6).

Paths and globs are repository-relative POSIX strings. :func:`validate_repo_path`
and :func:`validate_repo_glob` enforce contract §4 on user input;
:class:`SurfaceMatcher` decides the implicit surface
``doc_globs ∩ include − exclude``.

Glob semantics (decided here; the original used minimatch-style globs):

* a pattern matches the **whole** path from the repository root, not a basename
  at any depth as in ``.gitignore``: ``README.md`` is the root README only, and
  ``**/README.md`` is every README;
* ``*`` matches any run of characters except ``/`` (dot-files included, and
  every other character of a file name: a newline too), ``?`` one such character,
  ``[abc]`` / ``[a-z]`` / ``[!abc]`` / ``[^abc]`` a class (never ``/``);
* ``**`` as a whole segment matches zero or more directories: ``**/*.md`` matches
  ``README.md`` and ``a/b/c.md``; a trailing ``/**`` matches everything below
  (``docs/**``); ``**`` inside a segment (``docs/**.md``) acts like ``*``;
* ``{a,b}`` alternatives are expanded (nesting allowed, at most 256 expansions);
* a trailing ``/`` means "everything below" (``docs/`` is ``docs/**``);
* a leading ``!`` (gitignore negation) is rejected: use ``ingest.exclude``;
* ``ingest.doc_globs`` match case-insensitively (they name a kind of document by its
  suffix: ``README.MD`` is markdown); ``include`` and ``exclude`` match paths exactly.

The dialect is wcmatch's ``globmatch`` with ``GLOBSTAR | BRACE | DOTMATCH`` (plus
``IGNORECASE`` for ``doc_globs``) on every valid glob; tests/snapshot/test_glob_dialect.py
checks that property against wcmatch itself.

``.ragit`` is never part of the surface: a path with a ``.ragit`` segment is
excluded whatever the configuration says.

Empty lists: an empty ``include`` means no include restriction; an empty
``doc_globs`` means markdown files (:func:`is_markdown`); an empty ``exclude``
excludes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ragit.contract.errors import InputInvalid

MARKDOWN_SUFFIXES: tuple[str, ...] = (".md", ".mdx", ".markdown")
_MAX_EXPANSIONS = 256

__all__ = [
    "MARKDOWN_SUFFIXES",
    "GlobSet",
    "SurfaceMatcher",
    "expand_braces",
    "glob_to_regex",
    "is_markdown",
    "split_globs",
    "validate_repo_glob",
    "validate_repo_path",
]


def is_markdown(path: str) -> bool:
    """Whether ``path`` ends in ``.md``, ``.mdx`` or ``.markdown`` (any case)."""
    return path.lower().endswith(MARKDOWN_SUFFIXES)


# ---------------------------------------------------------------- validation


def _has_control(value: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)


def _check_common(value: str, field: str, kind: str) -> list[str]:
    """Shared checks; returns the non-empty, non-``.`` segments."""
    if not value or not value.strip():
        raise InputInvalid(field, f"{kind} must not be empty")
    if _has_control(value):
        raise InputInvalid(field, f"{kind} contains a control character")
    if "\\" in value:
        raise InputInvalid(
            field, f"{kind} contains a backslash; use '/' as the separator (no escapes)"
        )
    if value.startswith("/") or re.match(r"[A-Za-z]:", value):
        raise InputInvalid(field, f"{kind} must be repository-relative, not absolute")
    if value.startswith("~"):
        raise InputInvalid(field, f"{kind} must be repository-relative, not home-relative")
    segments = [s for s in value.split("/") if s not in ("", ".")]
    if ".." in segments:
        raise InputInvalid(field, f"{kind} must not contain '..' segments")
    if not segments:
        raise InputInvalid(field, f"{kind} must name something inside the repository")
    return segments


def validate_repo_path(path: str, field: str) -> str:
    """Check a repo-relative path and return it normalized.

    Normalization drops ``.`` and empty segments (``./docs//a.md`` → ``docs/a.md``).

    Raises:
        InputInvalid: ``path`` is empty or whitespace, contains a control
            character or a backslash, is absolute (``/x``, ``C:``) or home-relative
            (``~``), has a ``..`` segment, or names the repository root itself.
    """
    return "/".join(_check_common(path, field, "path"))


def _check_classes(glob: str, field: str) -> None:
    depth = 0
    in_class = False
    class_start = 0
    index = 0
    while index < len(glob):
        char = glob[index]
        if in_class:
            if char == "/":
                raise InputInvalid(field, "glob character class must not contain '/'")
            if char == "]" and index > class_start:
                in_class = False
        elif char == "[":
            in_class = True
            class_start = index + 1
            if glob[class_start : class_start + 1] in ("!", "^"):
                class_start += 1
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                raise InputInvalid(field, "glob has an unmatched '}'")
        index += 1
    if in_class:
        raise InputInvalid(field, "glob has an unclosed '['")
    if depth:
        raise InputInvalid(field, "glob has an unclosed '{'")


def validate_repo_glob(glob: str, field: str) -> str:
    """Check a repo-relative glob and return it normalized.

    Normalization drops ``.`` and empty segments and turns a trailing ``/`` into
    ``/**``.

    Raises:
        InputInvalid: the checks of :func:`validate_repo_path`, applied to the
            glob and to each of its brace expansions, plus a leading ``!``, an
            unclosed ``[`` or unbalanced braces, or more than 256 expansions.
    """
    if glob.startswith("!"):
        raise InputInvalid(field, "negated globs are not supported; use ingest.exclude")
    segments = _check_common(glob, field, "glob")
    _check_classes(glob, field)
    expansions = expand_braces(glob)
    if len(expansions) > _MAX_EXPANSIONS:
        raise InputInvalid(field, f"glob expands to more than {_MAX_EXPANSIONS} patterns")
    for expansion in expansions:
        _check_common(expansion, field, "glob")
    normalized = "/".join(segments)
    if glob.endswith("/") and segments[-1] != "**":
        normalized += "/**"
    return normalized


def split_globs(value: str) -> list[str]:
    """Split a comma-separated ``--files`` value; commas inside ``{}`` do not split.

    Surrounding whitespace is trimmed and empty items are dropped.
    """
    items: list[str] = []
    depth = 0
    current: list[str] = []
    for char in value:
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        if char == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


# ---------------------------------------------------------------- translation


def expand_braces(glob: str) -> list[str]:
    """Expand ``{a,b}`` alternatives (nested allowed); stops after 257 results."""
    start = glob.find("{")
    if start == -1:
        return [glob]
    depth = 0
    for end in range(start, len(glob)):
        if glob[end] == "{":
            depth += 1
        elif glob[end] == "}":
            depth -= 1
            if depth == 0:
                break
    else:
        return [glob]  # unbalanced: validation reports it; treat literally here
    inner = glob[start + 1 : end]
    options = split_globs(inner) if inner else [""]
    results: list[str] = []
    for option in options:
        for expanded in expand_braces(glob[:start] + option + glob[end + 1 :]):
            results.append(expanded)
            if len(results) > _MAX_EXPANSIONS:
                return results
    return results


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            while index + 1 < len(segment) and segment[index + 1] == "*":
                index += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            content = index + 1
            negate = segment[content : content + 1] in ("!", "^")
            if negate:
                content += 1
            # A "]" right after "[" or "[!" is a member, not the end.
            close = segment.find("]", content + 1)
            if close == -1:
                out.append(re.escape(char))
            else:
                members = segment[content:close]
                members = members.replace("\\", "\\\\").replace("^", "\\^")
                members = members.replace("[", "\\[").replace("]", "\\]")
                out.append(f"[^/{members}]" if negate else f"(?!/)[{members}]")
                index = close
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def glob_to_regex(glob: str) -> str:
    """Regex source (without anchors) for one brace-free glob."""
    segments = glob.split("/")
    parts: list[str] = []
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:.*/)?")
        else:
            parts.append(_segment_regex(segment) + ("" if last else "/"))
    return "".join(parts)


class GlobSet:
    """A list of globs compiled into one regex; :meth:`matches` is a full match."""

    def __init__(self, globs: Iterable[str], *, field: str, ignore_case: bool = False) -> None:
        """Validate and compile ``globs`` (``field`` names them in errors).

        ``ignore_case``: letters match in either case (``doc_globs``).

        Raises:
            InputInvalid: a glob fails :func:`validate_repo_glob`.
        """
        self.globs: tuple[str, ...] = tuple(validate_repo_glob(g, field) for g in globs)
        sources = [
            glob_to_regex(expansion) for glob in self.globs for expansion in expand_braces(glob)
        ]
        # DOTALL: a file name may hold any character but "/" (git allows a newline), and
        # "**" must cross it like any other.
        flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
        self._regex = re.compile("|".join(f"(?:{s})" for s in sources), flags) if sources else None

    def __bool__(self) -> bool:
        return self._regex is not None

    def matches(self, path: str) -> bool:
        """Whether any glob matches the whole of ``path``."""
        return self._regex is not None and self._regex.fullmatch(path) is not None


def _in_ragit(path: str) -> bool:
    return path == ".ragit" or path.startswith(".ragit/") or "/.ragit/" in f"/{path}"


class SurfaceMatcher:
    """The implicit ingest surface ``doc_globs ∩ include − exclude``, minus ``.ragit``."""

    def __init__(
        self,
        doc_globs: Sequence[str],
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
    ) -> None:
        """Compile the three lists (errors name ``ingest.doc_globs`` etc.).

        Raises:
            InputInvalid: a glob is invalid (:func:`validate_repo_glob`).
        """
        self.doc_globs = GlobSet(doc_globs, field="ingest.doc_globs", ignore_case=True)
        self.include = GlobSet(include, field="ingest.include")
        self.exclude = GlobSet(exclude, field="ingest.exclude")

    def matches(self, path: str) -> bool:
        """Whether the repo path ``path`` is on the implicit surface."""
        if _in_ragit(path):
            return False
        if self.doc_globs:
            if not self.doc_globs.matches(path):
                return False
        elif not is_markdown(path):
            return False
        if self.include and not self.include.matches(path):
            return False
        return not self.exclude.matches(path)

    def filter(self, paths: Iterable[str]) -> list[str]:
        """The paths of ``paths`` on the surface, in their original order."""
        return [path for path in paths if self.matches(path)]
