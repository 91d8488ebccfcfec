"""The test harness: capture, verify, run, pack and promote suites of harness artifacts.

A harness is a suite of captured resources (cases, oracles, checkers,
fixtures…) stored as harness artifacts (:mod:`ragit.artifacts`). One module per
command — :mod:`.capture`, :mod:`.verify`, :mod:`.run`, :mod:`.pack`,
:mod:`.promote` — plus the shared :mod:`.rules` (parsing and checking the
deterministic rules), :mod:`.suites` (resolving a suite and its cases),
:mod:`.executor` (the ``command`` executor) and :mod:`.models` (the strict
``--input`` models). It may import :mod:`ragit.memory`, never the reverse.
"""
