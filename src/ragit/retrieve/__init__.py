"""Hybrid retrieval restricted to one snapshot: scoring, citations, views, context packs."""
