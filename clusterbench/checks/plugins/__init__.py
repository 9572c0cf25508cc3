"""The plugins the benchmark bases of :mod:`clusterbench.checks` mix in.

Each module is one concern a check can take on. Every benchmark base is
judged through :mod:`~clusterbench.checks.plugins.judged` (its verified
output and figures, its external references, its run conditions); the
others add the node facts, build provenance, energy, MPI profiling, Spack
builds and recorded skips. None is a test by itself; none names a site.
"""
