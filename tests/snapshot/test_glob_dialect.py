"""The surface's glob dialect is wcmatch's ``globmatch`` (GLOBSTAR | BRACE | DOTMATCH).

The surface compiles its globs itself (one regex for a whole list, no per-path library
call); these properties hold it to a maintained matcher on every valid glob and every
path git can commit, newlines and other odd characters in names included.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragit.contract.errors import InputInvalid
from ragit.snapshot.surface import GlobSet, SurfaceMatcher, validate_repo_glob

wcglob = pytest.importorskip("wcmatch.glob")

FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTMATCH

# Characters git allows in a file name (anything but "/" and NUL), biased to the ones a
# glob or a regex treats specially.
NAME_CHARS = st.sampled_from(list("abAB.-_ \n\t*?[]{},!^$()+|é한"))
# "." and ".." are no file names; nor, for the oracle, are ".\n" and "..\n": wcmatch tells them
# apart from "." and ".." with a regex `$`, which also matches before a final newline, so it
# wrongly keeps `**` from matching a last segment named ".\n" (the surface matches it).
SEGMENT = st.text(NAME_CHARS, min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..", ".\n", "..\n")
)
PATHS = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join)

GLOB_TOKENS = st.sampled_from(
    ["a", "b", "A", ".", "md", "*", "?", "[ab]", "[!a]", "[^b]", "[a-c]", "{a,b}", "{md,mdx}", "-"]
)
GLOB_SEGMENT = st.one_of(st.just("**"), st.lists(GLOB_TOKENS, min_size=1, max_size=4).map("".join))
GLOBS = st.lists(GLOB_SEGMENT, min_size=1, max_size=4).map("/".join)


def _valid(glob: str) -> str | None:
    try:
        return validate_repo_glob(glob, "glob")
    except InputInvalid:
        return None


def _oracle(path: str, glob: str, *, ignore_case: bool = False) -> bool:
    flags = FLAGS | (wcglob.IGNORECASE if ignore_case else 0)
    return bool(wcglob.globmatch(path, glob, flags=flags))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(glob=GLOBS, path=PATHS)
def test_every_valid_glob_matches_exactly_what_wcmatch_matches(glob: str, path: str) -> None:
    """Implementation choice (docs/config.md): the dialect is wcmatch's, on any file name."""
    normalized = _valid(glob)
    if normalized is None:
        return
    assert GlobSet([normalized], field="g").matches(path) == _oracle(path, normalized)


@settings(max_examples=200, deadline=None)
@given(glob=GLOBS, path=PATHS)
def test_doc_globs_match_like_wcmatch_ignoring_case(glob: str, path: str) -> None:
    """Implementation choice: doc_globs name a document kind, so `README.MD` is markdown."""
    normalized = _valid(glob)
    if normalized is None:
        return
    matched = GlobSet([normalized], field="g", ignore_case=True).matches(path)
    assert matched == _oracle(path, normalized, ignore_case=True)


@pytest.mark.parametrize(
    "path",
    ["docs/a\nb.md", "docs/line\nbreak/c.md", "docs/\n.md", "docs/tab\there.md"],
)
def test_a_file_name_with_a_newline_is_on_the_surface_and_excluded_by_exclude(path: str) -> None:
    """Contract-mandated (contract §6): the surface decides every committed path, odd names
    included; ``ingest.exclude`` removes them like any other."""
    surface = SurfaceMatcher(["**/*.md"], ["docs/**"], [])
    assert surface.matches(path)
    excluding = SurfaceMatcher(["**/*.md"], ["docs/**"], ["docs/**"])
    assert not excluding.matches(path)
