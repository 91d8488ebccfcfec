"""The modules of ``scripts/bench`` (whole-process benchmarks; standard library only)."""
