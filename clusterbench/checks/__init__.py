"""Generic ReFrame check library: base tests with no site names, not registered.

Concrete, registered tests live in the project's ``reframe_checks/`` and
derive from these classes.

Imports: core, machine, site, bench, parsers, references, acceptance
"""
