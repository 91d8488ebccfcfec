"""Whole-repository operations, one package a room: ``authority`` (the `doc` commands and
`init`'s discovery), ``status``, ``history`` (log, drift, narrative), ``maintenance`` (doctor,
repair, rebuild, migrations, model install), ``security`` (audit, purge) and ``config`` (set,
list)."""
