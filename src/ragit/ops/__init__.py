"""Cross-package operations: status, doctor, repair."""
