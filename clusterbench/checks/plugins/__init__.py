"""The plugins the benchmark bases of :mod:`clusterbench.checks` mix in.

Each module is one concern a check can take on: its verified output and
figures, its external references, the job's state, hardware and build
provenance, energy, MPI profiling, Spack builds, recorded skips. None is a
test by itself; none names a site.
"""
