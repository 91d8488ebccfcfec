"""Keeping a repository's state healthy: `doctor`, `repair`, the store rebuild, the
migrations (`migrate store`, `migrate embeddings` on the shared store) and `model install`."""
