"""Generic ReFrame check library: base tests with no site names, not registered.

Concrete, registered tests live in the project's ``reframe_checks/`` and
derive from these classes. The benchmark bases are the modules here; the
plugins they mix in (references, job state, provenance, Spack builds, the
verified-output path, ...) are in :mod:`clusterbench.checks.plugins`.

Imports: acceptance, bench, core, judging, machine, parsers, references, site
"""
