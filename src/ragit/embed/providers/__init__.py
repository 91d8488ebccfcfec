"""Embedding providers: the in-process placeholder and the HTTP providers.

HTTP (httpx) is used only in this package, and only imported when a provider
first sends a request.
"""
