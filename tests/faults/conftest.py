"""Fault-suite fixtures: one private user cache per test (reader copies live there)."""

from tests.snapshot._kit import private_cache  # noqa: F401 - autouse fixture
