"""Benchmark knowledge that needs no ReFrame: NPB official values and build
definitions, HPL problem sizes and build files, curves, MPI profiles, the
benchmark sources and their mirror for air-gapped sites.
"""
