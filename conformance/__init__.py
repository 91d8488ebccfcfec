"""The language-neutral conformance suite of the RAGit contract.

The suite is data (``cases/<target>/<id>.json``, ``requirements.json``,
``expected-failures.json``) plus three small programs that need only the Python
standard library:

- ``python -m conformance.check`` lints the suite itself;
- ``python -m conformance.runner --impl "<command>"`` runs the cases against any
  implementation as a black box (real subprocesses, hermetic environment), on the
  embedded store or, with ``--backend postgres``, on a PostgreSQL server it starts
  from the ``pgserver`` wheel (the one part that needs more than the standard library);
- ``conformance/conftest.py`` collects the same cases as pytest items against the
  ``ragit`` installed next to the running interpreter.

See ``docs/conformance.md`` for the runner protocol and the case format.
"""
