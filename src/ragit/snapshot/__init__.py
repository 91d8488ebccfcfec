"""Snapshots: git access, manifests and snapshot selection."""
